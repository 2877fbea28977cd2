"""Deletion vectors (PROTOCOL.md "Deletion Vector Format", spec/deletion-vectors.md): which rows
of a data file a DV removes, how a DV is written, and the checks on every add carrying one.
Storage types ``u`` (UUID-named file beside the table), ``p`` (absolute path) and ``i`` (inline,
Z85); the bitmap is Delta's magic number and a portable 64-bit RoaringBitmap."""

from __future__ import annotations

import json
import struct
import uuid
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from deltaspec.impl import errors
from deltaspec.impl.actions import Action, AddFile, DeletionVector, Metadata
from deltaspec.impl.errors import CorruptLogError, UnsupportedFeatureError
from deltaspec.impl.table import paths
from deltaspec.impl.table.releases import Profile
from deltaspec.rules import rule

if TYPE_CHECKING:
    from deltaspec.impl.txn.prepare import Preparing

_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_INDEX = {c: i for i, c in enumerate(_Z85)}
_DV_MAGIC = 1681511377


def z85_decode(text: str) -> bytes:
    """Z85 (the Base85 variant Delta uses for DV ids and inline DVs)."""
    if len(text) % 5:
        raise ValueError(f"Z85 text length {len(text)} is not a multiple of 5")
    out = bytearray()
    for start in range(0, len(text), 5):
        value = 0
        for char in text[start : start + 5]:
            value = value * 85 + _Z85_INDEX[char]
        out += value.to_bytes(4, "big")
    return bytes(out)


def z85_encode(data: bytes) -> str:
    """Z85 of ``data`` zero-padded to a multiple of 4 bytes (a reader cuts an inline DV back to
    ``sizeInBytes``)."""
    padded = data + b"\0" * (-len(data) % 4)
    out: list[str] = []
    for start in range(0, len(padded), 4):
        value = int.from_bytes(padded[start : start + 4], "big")
        chunk = []
        for _ in range(5):
            value, digit = divmod(value, 85)
            chunk.append(_Z85[digit])
        out.extend(reversed(chunk))
    return "".join(out)


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


def deletion_vector_location(dv: DeletionVector) -> str | None:
    """The ``path`` (as ``add.path`` would hold it) of a deletion vector's file, for
    :func:`deltaspec.impl.table.paths.resolve_data_path` to decide (PATH.DATA_FILE), so that a ``u``
    prefix or a ``p`` path leaving the table is refused like any other path; None for an inline
    DV or an unknown storage type. ``u``: ``<prefix>/deletion_vector_<uuid>.bin`` from the Z85
    id (ValueError for a malformed id); ``p``: the stored URI itself."""
    if dv.storage_type == "u":
        prefix, encoded = dv.path_or_inline_dv[:-20], dv.path_or_inline_dv[-20:]
        try:
            name = f"deletion_vector_{uuid.UUID(bytes=z85_decode(encoded))}.bin"
        except KeyError:
            raise ValueError(f"not a Z85 deletion vector id: {encoded!r}") from None
        return f"{prefix}/{name}" if prefix else name
    if dv.storage_type == "p":
        return dv.path_or_inline_dv
    return None


def deleted_rows(root: Path, dv: DeletionVector) -> set[int]:
    """The row indexes a deletion vector removes (storage types u, p and i)."""
    if dv.storage_type == "i":
        blob = z85_decode(dv.path_or_inline_dv)[: dv.size_in_bytes]
    else:
        location = deletion_vector_location(dv)
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


TIGHT_BOUNDS_FORBIDDEN = frozenset({"DELETE", "UPDATE", "MERGE"})
"""Operations whose deletion-vector adds must say ``tightBounds: false`` (DV.ADD_CHECKS)."""


def _refused(
    kind: type[errors.CommitValidationError], txn: Preparing, add: AddFile, why: str
) -> errors.CommitValidationError:
    return kind(
        f"{add.path} carries a deletion vector but {why}",
        table=txn.table,
        version=txn.version,
        file=add.path,
    )


@rule("DV.ADD_CHECKS")
def check_deletion_vector_adds(
    txn: Preparing, actions: list[Action], profile: Profile
) -> list[Action]:
    """Every add with a deletion vector: the table enables deletion vectors, its stats give
    ``numRecords``, and for DELETE, UPDATE and MERGE they say ``tightBounds: false``; else a
    typed error naming the table, the version and the file."""
    with_dv = [a for a in actions if isinstance(a, AddFile) and a.deletion_vector is not None]
    if not with_dv or not profile.has("deletion_vector_add_checks"):
        return actions
    metadata = next((a for a in actions if isinstance(a, Metadata)), txn.read_metadata)
    if metadata is None or not enabled_in(metadata.configuration):
        raise _refused(
            errors.DeletionVectorsDisallowedError,
            txn,
            with_dv[0],
            "the table does not set delta.enableDeletionVectors=true",
        )
    for add in with_dv:
        stats = json.loads(add.stats) if add.stats else {}
        if not isinstance(stats, dict) or stats.get("numRecords") is None:
            raise _refused(
                errors.DeletionVectorMissingNumRecordsError, txn, add, "its stats lack numRecords"
            )
        if stats.get("tightBounds") is True and txn.operation_name in TIGHT_BOUNDS_FORBIDDEN:
            raise _refused(
                errors.DeletionVectorTightBoundsError, txn, add, "its stats claim tight bounds"
            )
    return actions
