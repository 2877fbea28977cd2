"""The Arrow layouts of a snapshot's live files and tombstones, and the conversions to them.

Live files and tombstones are held as Arrow tables (:data:`FILES_SCHEMA`,
:data:`TOMBSTONES_SCHEMA`), one row per logical file, snake_case; :class:`ColumnSpec` ties each
column to its name in Delta's JSON and checkpoints. Like delta-spark's state, both store
``dataChange = false`` and tombstones carry no ``stats`` or ``tags`` (CHECKPOINT.CONTENTS).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..actions import AddFile, DeletionVector, RemoveFile
from .selection import select_array

__all__ = [
    "ADD_COLUMNS",
    "DV_COLUMNS",
    "FILES_SCHEMA",
    "FILE_COLUMNS",
    "NON_FILE_COLUMNS",
    "REMOVE_COLUMNS",
    "STATS_PARSED",
    "TOMBSTONES_SCHEMA",
    "ZERO",
    "ColumnSpec",
    "adds_to_table",
    "dv_from_row",
    "removes_to_table",
    "string_map",
    "struct_column_to_table",
    "tags_map",
]

# Typed scalars: comparing with a bare Python ``0`` or ``False`` makes pyarrow try (and fail) to
# import dateutil on every call, about 50 us each.
ZERO = pa.scalar(0, pa.int64())
_FALSE = pa.scalar(False, pa.bool_())


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """One field: its name in Delta's JSON and checkpoints, its name here, its type here."""

    delta: str
    name: str
    type: pa.DataType
    children: tuple[ColumnSpec, ...] = ()


_STRING_MAP = pa.map_(pa.string(), pa.string())

DV_COLUMNS = (
    ColumnSpec("storageType", "storage_type", pa.string()),
    ColumnSpec("pathOrInlineDv", "path_or_inline_dv", pa.string()),
    ColumnSpec("offset", "offset", pa.int32()),
    ColumnSpec("sizeInBytes", "size_in_bytes", pa.int32()),
    ColumnSpec("cardinality", "cardinality", pa.int64()),
    ColumnSpec("maxRowIndex", "max_row_index", pa.int64()),
)
_DV_TYPE = pa.struct([pa.field(c.name, c.type) for c in DV_COLUMNS])

ADD_COLUMNS = (
    ColumnSpec("path", "path", pa.string()),
    ColumnSpec("partitionValues", "partition_values", _STRING_MAP),
    ColumnSpec("size", "size", pa.int64()),
    ColumnSpec("modificationTime", "modification_time", pa.int64()),
    ColumnSpec("dataChange", "data_change", pa.bool_()),
    ColumnSpec("tags", "tags", _STRING_MAP),
    ColumnSpec("deletionVector", "deletion_vector", _DV_TYPE, DV_COLUMNS),
    ColumnSpec("baseRowId", "base_row_id", pa.int64()),
    ColumnSpec("defaultRowCommitVersion", "default_row_commit_version", pa.int64()),
    ColumnSpec("clusteringProvider", "clustering_provider", pa.string()),
    ColumnSpec("stats", "stats", pa.string()),
)
REMOVE_COLUMNS = (
    ColumnSpec("path", "path", pa.string()),
    ColumnSpec("deletionTimestamp", "deletion_timestamp", pa.int64()),
    ColumnSpec("dataChange", "data_change", pa.bool_()),
    ColumnSpec("extendedFileMetadata", "extended_file_metadata", pa.bool_()),
    ColumnSpec("partitionValues", "partition_values", _STRING_MAP),
    ColumnSpec("size", "size", pa.int64()),
    ColumnSpec("deletionVector", "deletion_vector", _DV_TYPE, DV_COLUMNS),
    ColumnSpec("baseRowId", "base_row_id", pa.int64()),
    ColumnSpec("defaultRowCommitVersion", "default_row_commit_version", pa.int64()),
)

FILES_SCHEMA: pa.Schema = pa.schema([pa.field(c.name, c.type) for c in ADD_COLUMNS])
"""Columns of :meth:`Snapshot.files_table`: one row per live file (an ``add``), snake_case."""

TOMBSTONES_SCHEMA: pa.Schema = pa.schema([pa.field(c.name, c.type) for c in REMOVE_COLUMNS])
"""Columns of :meth:`Snapshot.tombstones_table`: one row per tombstone (a ``remove``)."""

STATS_PARSED = "stats_parsed"
"""A checkpoint's typed statistics (CHECKPOINT.STATS_AS_STRUCT): kept beside the live files as
read, as an extra column after :data:`FILES_SCHEMA`'s, when the checkpoint has them."""

FILE_COLUMNS = {"add": ADD_COLUMNS, "remove": REMOVE_COLUMNS}
_SCHEMAS = {"add": FILES_SCHEMA, "remove": TOMBSTONES_SCHEMA}
NON_FILE_COLUMNS = (
    "txn",
    "metaData",
    "protocol",
    "domainMetadata",
    "checkpointMetadata",
    "sidecar",
)


def _conform(array: pa.Array, cols: Sequence[ColumnSpec]) -> list[pa.Array]:
    """The children of a checkpoint struct chunk laid out as ``cols`` (renamed, cast, padded).

    Checkpoints written by different releases have different field sets (old ones lack
    ``deletionVector``, ``tags``, ``stats``...; PROTOCOL: a missing column is null).
    """
    struct_type = array.type
    index = {struct_type.field(i).name: i for i in range(struct_type.num_fields)}
    flat = array.flatten()
    out: list[pa.Array] = []
    for col in cols:
        position = index.get(col.delta)
        if position is None:
            out.append(pa.nulls(len(array), col.type))
            continue
        child = flat[position]
        if col.children:
            if not pa.types.is_struct(child.type):
                raise TypeError(f"{col.delta} is not a struct")
            inner = _conform(child, col.children)
            out.append(
                pa.StructArray.from_arrays(
                    inner,
                    fields=list(col.type),
                    mask=pc.is_null(child) if child.null_count else None,
                )
            )
        elif child.type != col.type:
            out.append(child.cast(col.type))
        else:
            out.append(child)
    return out


def struct_column_to_table(column: pa.ChunkedArray, kind: str) -> pa.Table:
    """Valid rows of a checkpoint's ``add``/``remove`` column as a FILES/TOMBSTONES table."""
    cols = FILE_COLUMNS[kind]
    schema = _SCHEMAS[kind]
    parsed = kind == "add" and column.type.get_field_index(STATS_PARSED) >= 0
    if parsed:
        schema = schema.append(pa.field(STATS_PARSED, column.type.field(STATS_PARSED).type))
    chunks: list[list[pa.Array]] = []
    for chunk in column.chunks:
        pieces = select_array(chunk, pc.is_valid(chunk)) if chunk.null_count else [chunk]
        for valid in pieces:
            if len(valid):
                stats = [valid.field(STATS_PARSED)] if parsed else []
                chunks.append(_conform(valid, cols) + stats)
    if not chunks:
        return schema.empty_table()
    arrays = [pa.chunked_array([c[i] for c in chunks], type=f.type) for i, f in enumerate(schema)]
    table = pa.Table.from_arrays(arrays, schema=schema)
    # delta-spark's state holds adds and tombstones with dataChange = false (SNAPSHOT.RECONCILE)
    return table.set_column(
        schema.get_field_index("data_change"),
        "data_change",
        pa.repeat(_FALSE, table.num_rows),
    )


def _dv_row(dv: DeletionVector | None) -> dict[str, Any] | None:
    if dv is None:
        return None
    return {
        "storage_type": dv.storage_type,
        "path_or_inline_dv": dv.path_or_inline_dv,
        "offset": dv.offset,
        "size_in_bytes": dv.size_in_bytes,
        "cardinality": dv.cardinality,
        "max_row_index": dv.max_row_index,
    }


def adds_to_table(adds: Sequence[AddFile]) -> pa.Table:
    """Live files from ``add`` actions (dataChange stored as false)."""
    if not adds:
        return FILES_SCHEMA.empty_table()
    return pa.Table.from_pydict(
        {
            "path": [a.path for a in adds],
            "partition_values": [a.partition_values for a in adds],
            "size": [a.size for a in adds],
            "modification_time": [a.modification_time for a in adds],
            "data_change": [False] * len(adds),
            "tags": [a.tags for a in adds],
            "deletion_vector": [_dv_row(a.deletion_vector) for a in adds],
            "base_row_id": [a.base_row_id for a in adds],
            "default_row_commit_version": [a.default_row_commit_version for a in adds],
            "clustering_provider": [a.clustering_provider for a in adds],
            "stats": [a.stats for a in adds],
        },
        schema=FILES_SCHEMA,
    )


def removes_to_table(removes: Sequence[RemoveFile]) -> pa.Table:
    """Tombstones from ``remove`` actions (no stats or tags; dataChange stored as false)."""
    if not removes:
        return TOMBSTONES_SCHEMA.empty_table()
    return pa.Table.from_pydict(
        {
            "path": [r.path for r in removes],
            "deletion_timestamp": [r.deletion_timestamp for r in removes],
            "data_change": [False] * len(removes),
            "extended_file_metadata": [r.extended_file_metadata for r in removes],
            "partition_values": [r.partition_values for r in removes],
            "size": [r.size for r in removes],
            "deletion_vector": [_dv_row(r.deletion_vector) for r in removes],
            "base_row_id": [r.base_row_id for r in removes],
            "default_row_commit_version": [r.default_row_commit_version for r in removes],
        },
        schema=TOMBSTONES_SCHEMA,
    )


def dv_from_row(row: dict[str, Any] | None) -> DeletionVector | None:
    if row is None:
        return None
    return DeletionVector(
        storage_type=row["storage_type"],
        path_or_inline_dv=row["path_or_inline_dv"],
        size_in_bytes=row["size_in_bytes"],
        cardinality=row["cardinality"],
        offset=row["offset"],
        max_row_index=row["max_row_index"],
    )


def string_map(value: list[tuple[str, str | None]] | None) -> dict[str, str | None] | None:
    return None if value is None else dict(value)


def tags_map(value: list[tuple[str, str | None]] | None) -> dict[str, str] | None:
    return None if value is None else {k: v for k, v in value if v is not None}
