"""Delta's serialised deletion vector (PROTOCOL.md "Deletion Vector Format"): the magic number
1681511377 (int32, little-endian), then a portable 64-bit RoaringBitmap. Reading raises
ValueError for bytes that are not one (a bad magic number or cookie, a bitmap cut short, a
container holding more values than its header says); the caller names the table and the file.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from ..actions import DeletionVector
from .z85 import z85_decode

__all__ = [
    "DV_MAGIC",
    "check_inline_vector",
    "inline_bytes",
    "roaring_array",
    "roaring_cardinality",
    "serialize_rows",
]

DV_MAGIC = 1681511377
_RUN_COOKIE = 12347
_NO_RUN_COOKIE = 12346
_ARRAY_LIMIT = 4096


def _roaring32(data: bytes, pos: int, values: list[int] | None) -> tuple[int, int]:
    """One portable 32-bit RoaringBitmap at ``pos``: (its number of values, its end position);
    its values appended to ``values`` unless None (counting only, so a few bytes of runs never
    become billions of values)."""
    (cookie,) = struct.unpack_from("<I", data, pos)
    run_flags: bytes | None = None
    if cookie & 0xFFFF == _RUN_COOKIE:
        count = (cookie >> 16) + 1
        pos += 4
        run_flags = data[pos : pos + (count + 7) // 8]
        pos += (count + 7) // 8
    elif cookie == _NO_RUN_COOKIE:
        (count,) = struct.unpack_from("<I", data, pos + 4)
        pos += 8
    else:
        raise ValueError(f"not a RoaringBitmap (cookie {cookie})")
    header = [struct.unpack_from("<HH", data, pos + 4 * i) for i in range(count)]
    pos += 4 * count
    if run_flags is None or count >= 4:
        pos += 4 * count  # container offsets
    total = 0
    for i, (key, card_minus_one) in enumerate(header):
        high, card = key << 16, card_minus_one + 1
        if run_flags is not None and run_flags[i // 8] >> (i % 8) & 1:
            (runs,) = struct.unpack_from("<H", data, pos)
            pairs = struct.unpack_from(f"<{2 * runs}H", data, pos + 2)
            pos += 2 + 4 * runs
            if sum(length + 1 for length in pairs[1::2]) != card:
                raise ValueError(f"a run container holding other than its {card} values")
            if values is not None:
                for start, length in zip(pairs[::2], pairs[1::2], strict=True):
                    values.extend(high | v for v in range(start, start + length + 1))
        elif card > _ARRAY_LIMIT:
            words = struct.unpack_from("<1024Q", data, pos)
            pos += 8192
            if sum(word.bit_count() for word in words) != card:
                raise ValueError(f"a bitmap container holding other than its {card} values")
            if values is not None:
                for w, word in enumerate(words):
                    while word:
                        low = word & -word
                        values.append(high | (w * 64 + low.bit_length() - 1))
                        word ^= low
        else:
            lows = struct.unpack_from(f"<{card}H", data, pos)
            pos += 2 * card
            if values is not None:
                values.extend(high | v for v in lows)
        total += card
    return total, pos


def _buckets(blob: bytes, values: list[int] | None) -> int:
    """Walk the 64-bit bitmap; the number of values (each appended to ``values`` unless None)."""
    try:
        (magic,) = struct.unpack_from("<i", blob, 0)
        if magic != DV_MAGIC:
            raise ValueError(f"bad deletion vector magic {magic}")
        (buckets,) = struct.unpack_from("<Q", blob, 4)
        pos, total = 12, 0
        for _ in range(buckets):
            (key,) = struct.unpack_from("<I", blob, pos)
            start = len(values) if values is not None else 0
            count, pos = _roaring32(blob, pos + 4, values)
            if values is not None:
                values[start:] = [(key << 32) | v for v in values[start:]]
            total += count
    except struct.error as exc:
        raise ValueError(f"a deletion vector cut short ({len(blob)} bytes): {exc}") from None
    return total


def roaring_array(blob: bytes) -> set[int]:
    """The row indexes of Delta's serialised DV (ValueError for bytes that are not one)."""
    values: list[int] = []
    _buckets(blob, values)
    return set(values)


def roaring_cardinality(blob: bytes) -> int:
    """How many row indexes Delta's serialised DV holds, checking its structure without listing
    them (ValueError for bytes that are not one)."""
    return _buckets(blob, None)


def _roaring32_bytes(values: list[int]) -> bytes:
    """The portable 32-bit RoaringBitmap of sorted, distinct ``values``: no run containers, an
    array container up to 4096 values, a bitmap container above."""
    containers: dict[int, list[int]] = {}
    for value in values:
        containers.setdefault(value >> 16, []).append(value & 0xFFFF)
    header = struct.pack("<II", _NO_RUN_COOKIE, len(containers))
    bodies: list[bytes] = []
    for key, lows in containers.items():
        header += struct.pack("<HH", key, len(lows) - 1)
        if len(lows) <= _ARRAY_LIMIT:
            bodies.append(struct.pack(f"<{len(lows)}H", *lows))
        else:
            words = [0] * 1024
            for low in lows:
                words[low >> 6] |= 1 << (low & 63)
            bodies.append(struct.pack("<1024Q", *words))
    offset = len(header) + 4 * len(containers)
    for body in bodies:
        header += struct.pack("<I", offset)
        offset += len(body)
    return header + b"".join(bodies)


def serialize_rows(rows: Iterable[int]) -> bytes:
    """Delta's serialised DV of ``rows`` (the inverse of :func:`roaring_array`): the magic number,
    then a portable 64-bit RoaringBitmap (bucket count, then per bucket its key and a 32-bit
    bitmap)."""
    buckets: dict[int, list[int]] = {}
    for row in sorted(set(rows)):
        if row < 0:
            raise ValueError(f"a deletion vector holds row indexes >= 0, not {row}")
        buckets.setdefault(row >> 32, []).append(row & 0xFFFFFFFF)
    out = struct.pack("<iQ", DV_MAGIC, len(buckets))
    for key, values in buckets.items():
        out += struct.pack("<I", key) + _roaring32_bytes(values)
    return out


def inline_bytes(dv: DeletionVector) -> bytes:
    """The serialised DV an inline (``i``) vector holds: its Z85 text decoded and cut back to
    ``sizeInBytes`` (ValueError for text that is not Z85 or holds fewer bytes)."""
    data = z85_decode(dv.path_or_inline_dv)
    if not 0 <= dv.size_in_bytes <= len(data):
        raise ValueError(f"{len(data)} bytes inline, sizeInBytes {dv.size_in_bytes}")
    return data[: dv.size_in_bytes]


def check_inline_vector(dv: DeletionVector) -> None:
    """An inline vector is Z85 of a serialised DV holding ``cardinality`` rows, else ValueError."""
    count = roaring_cardinality(inline_bytes(dv))
    if count != dv.cardinality:
        raise ValueError(f"the inline vector holds {count} rows, cardinality {dv.cardinality}")
