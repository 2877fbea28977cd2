"""Deletion vectors (PROTOCOL.md "Deletion Vector Format", spec/deletion-vectors.md): which rows
of a data file a DV removes and how a DV is written. Storage types ``u`` (UUID-named file beside
the table), ``p`` (absolute path) and ``i`` (inline, Z85, :mod:`deltaspec.impl.codec.z85`); the
bitmap is Delta's magic number and a portable 64-bit RoaringBitmap. Where a DV's file lies is the
path rule's (:func:`deltaspec.impl.table.paths.deletion_vector_location`); the checks on every add
carrying a DV run with the other commit checks (DV.ADD_CHECKS, :mod:`deltaspec.impl.txn.prepare`).
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path

from .actions import DeletionVector
from .codec.z85 import z85_decode, z85_encode
from .errors import CorruptLogError, UnsupportedFeatureError
from .table import paths

_DV_MAGIC = 1681511377


def _roaring32(data: bytes, pos: int) -> tuple[list[int], int]:
    """One portable 32-bit RoaringBitmap at ``pos``: its values and the end position."""
    (cookie,) = struct.unpack_from("<I", data, pos)
    run_flags: bytes | None = None
    if cookie & 0xFFFF == 12347:  # SERIAL_COOKIE: has run containers
        count = (cookie >> 16) + 1
        pos += 4
        run_flags = data[pos : pos + (count + 7) // 8]
        pos += (count + 7) // 8
    elif cookie == 12346:  # SERIAL_COOKIE_NO_RUNCONTAINER
        (count,) = struct.unpack_from("<I", data, pos + 4)
        pos += 8
    else:
        raise ValueError(f"not a RoaringBitmap (cookie {cookie})")
    header = [struct.unpack_from("<HH", data, pos + 4 * i) for i in range(count)]
    pos += 4 * count
    if run_flags is None or count >= 4:
        pos += 4 * count  # container offsets
    values: list[int] = []
    for i, (key, card_minus_one) in enumerate(header):
        high = key << 16
        if run_flags is not None and run_flags[i // 8] >> (i % 8) & 1:
            (runs,) = struct.unpack_from("<H", data, pos)
            pos += 2
            for r in range(runs):
                start, length = struct.unpack_from("<HH", data, pos + 4 * r)
                values.extend(high | v for v in range(start, start + length + 1))
            pos += 4 * runs
        elif card_minus_one + 1 > 4096:
            words = struct.unpack_from("<1024Q", data, pos)
            pos += 8192
            for w, word in enumerate(words):
                while word:
                    low = word & -word
                    values.append(high | (w * 64 + low.bit_length() - 1))
                    word ^= low
        else:
            card = card_minus_one + 1
            values.extend(high | v for v in struct.unpack_from(f"<{card}H", data, pos))
            pos += 2 * card
    return values, pos


def roaring_array(blob: bytes) -> set[int]:
    """Delta's serialised DV: magic number, then a portable 64-bit RoaringBitmap."""
    (magic,) = struct.unpack_from("<i", blob, 0)
    if magic != _DV_MAGIC:
        raise ValueError(f"bad deletion vector magic {magic}")
    (buckets,) = struct.unpack_from("<Q", blob, 4)
    pos = 12
    rows: set[int] = set()
    for _ in range(buckets):
        (key,) = struct.unpack_from("<I", blob, pos)
        values, pos = _roaring32(blob, pos + 4)
        rows.update((key << 32) | v for v in values)
    return rows


def deleted_rows(root: Path, dv: DeletionVector) -> set[int]:
    """The row indexes a deletion vector removes (storage types u, p and i)."""
    if dv.storage_type == "i":
        blob = z85_decode(dv.path_or_inline_dv)[: dv.size_in_bytes]
    else:
        location = paths.deletion_vector_location(dv)
        if location is None:
            raise UnsupportedFeatureError(f"deletion vector storage type {dv.storage_type!r}")
        with paths.open_data_file(str(root), location) as handle:  # PATH.DATA_FILE
            data = handle.read()
        offset = dv.offset or 0
        (size,) = struct.unpack_from(">i", data, offset)
        blob = data[offset + 4 : offset + 4 + size]
    rows = roaring_array(blob)
    if len(rows) != dv.cardinality:
        raise CorruptLogError(
            f"deletion vector {dv.unique_id} holds {len(rows)} rows, cardinality {dv.cardinality}",
            table=str(root),
        )
    return rows


_NO_RUN_COOKIE = 12346
_ARRAY_LIMIT = 4096
DV_FILE_FORMAT_VERSION = 1
"""The first byte of a ``deletion_vector_<uuid>.bin`` file."""


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
    out = struct.pack("<iQ", _DV_MAGIC, len(buckets))
    for key, values in buckets.items():
        out += struct.pack("<I", key) + _roaring32_bytes(values)
    return out


def inline_deletion_vector(rows: set[int]) -> DeletionVector:
    """Storage type ``i``: the serialised DV itself, Z85-encoded, in the log."""
    blob = serialize_rows(rows)
    return DeletionVector("i", z85_encode(blob), len(blob), len(rows), None, max(rows))


def write_deletion_vectors(root: str, row_sets: list[set[int]]) -> list[DeletionVector]:
    """Storage type ``u``: every set of ``row_sets`` in one new ``deletion_vector_<uuid>.bin``
    at the table root (PROTOCOL.md "Deletion Vector File Storage Format": a version byte, then
    per DV its big-endian size, the serialised DV and its big-endian CRC-32), each DV naming the
    file by the Z85 of its UUID and its ``offset`` (the position of its size field)."""
    file_id = uuid.uuid4()
    content = bytearray([DV_FILE_FORMAT_VERSION])
    vectors = []
    for rows in row_sets:
        blob = serialize_rows(rows)
        vectors.append(
            DeletionVector(
                "u", z85_encode(file_id.bytes), len(blob), len(rows), len(content), max(rows)
            )
        )
        content += struct.pack(">i", len(blob)) + blob + struct.pack(">I", zlib.crc32(blob))
    target = Path(root) / f"deletion_vector_{file_id}.bin"
    with open(target, "xb") as handle:  # a fresh UUID: never overwrites a file
        handle.write(content)
    return vectors


def enabled_in(configuration: Mapping[str, str]) -> bool:
    """``delta.enableDeletionVectors`` is true (the key in any case, as delta-spark matches
    property keys)."""
    values = [v for k, v in configuration.items() if k.lower() == "delta.enabledeletionvectors"]
    return bool(values) and values[-1].strip().lower() == "true"
