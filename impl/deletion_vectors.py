"""Deletion vectors (PROTOCOL.md "Deletion Vector Format", spec/deletion-vectors.md): which rows
of a data file a DV removes and how a DV is written. Storage types ``u`` (UUID-named file beside
the table), ``p`` (absolute path) and ``i`` (inline, Z85, :mod:`deltaspec.impl.codec.z85`); the
bitmap is Delta's magic number and a portable 64-bit RoaringBitmap
(:mod:`deltaspec.impl.codec.roaring`). Where a DV's file lies is the
path rule's (:func:`deltaspec.impl.table.paths.deletion_vector_location`); the checks on every add
carrying a DV run with the other commit checks (DV.ADD_CHECKS, :mod:`deltaspec.impl.txn.prepare`).
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Mapping
from pathlib import Path

from .actions import DeletionVector
from .codec.roaring import inline_bytes, roaring_array, serialize_rows
from .codec.z85 import z85_encode
from .errors import CorruptLogError, UnsupportedFeatureError
from .log.regular_files import access_error
from .table import paths


def deleted_rows(root: Path, dv: DeletionVector) -> set[int]:
    """The row indexes a deletion vector removes (storage types u, p and i); CorruptLogError
    naming the table and the vector's file (its text for an inline one) for bytes that are not a
    deletion vector holding ``cardinality`` rows."""
    location = None
    try:
        if dv.storage_type == "i":
            blob = inline_bytes(dv)
        elif (location := paths.deletion_vector_location(dv)) is None:
            raise UnsupportedFeatureError(f"deletion vector storage type {dv.storage_type!r}")
        else:
            with paths.open_data_file(str(root), location) as handle:  # PATH.DATA_FILE
                blob = _stored_vector(handle.read(), dv.offset or 0, dv.size_in_bytes)
        rows = roaring_array(blob)
    except (ValueError, struct.error) as exc:
        raise CorruptLogError(
            f"deletion vector {dv.unique_id[:80]}: {exc}", table=str(root), file=location
        ) from None
    if len(rows) != dv.cardinality:
        raise CorruptLogError(
            f"deletion vector {dv.unique_id} holds {len(rows)} rows, cardinality {dv.cardinality}",
            table=str(root),
            file=location,
        )
    return rows


DV_FILE_FORMAT_VERSION = 1
"""The first byte of a ``deletion_vector_<uuid>.bin`` file."""


def _stored_vector(data: bytes, offset: int, expected_size: int) -> bytes:
    """The serialised DV at ``offset`` of a DV file's ``data``: its big-endian size (the
    ``sizeInBytes`` the log gives), the bytes, then their big-endian CRC-32, which must match
    (delta-spark refuses a mismatch of either, ``DELTA_DELETION_VECTOR_SIZE_MISMATCH``,
    ``DELTA_DELETION_VECTOR_CHECKSUM_MISMATCH``); ValueError or struct.error otherwise."""
    (size,) = struct.unpack_from(">i", data, offset)
    if size != expected_size:
        raise ValueError(f"the file stores {size} bytes, the log says {expected_size}")
    blob = data[offset + 4 : offset + 4 + size]
    (checksum,) = struct.unpack_from(">I", data, offset + 4 + size)
    if len(blob) != size or checksum != zlib.crc32(blob):
        raise ValueError("the stored CRC-32 does not match the deletion vector's bytes")
    return blob


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
    name = f"deletion_vector_{file_id}.bin"
    try:
        with open(Path(root) / name, "xb") as handle:  # a fresh UUID: never overwrites a file
            handle.write(content)
    except OSError as refused:  # named by no commit yet: VACUUM removes what may be left
        raise access_error(refused, table=root, file=name) from None
    return vectors


def enabled_in(configuration: Mapping[str, str]) -> bool:
    """``delta.enableDeletionVectors`` is true (the key in any case, as delta-spark matches
    property keys)."""
    values = [v for k, v in configuration.items() if k.lower() == "delta.enabledeletionvectors"]
    return bool(values) and values[-1].strip().lower() == "true"
