"""A plain reader of a snapshot's rows with pyarrow: every live file, partition values from the
log, deletion vectors applied, column mapping (name and id) resolved. The reference scan that
conformance and tests compare engines with."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from . import arrow_input, codec
from .actions import AddFile
from .deletion_vectors import deleted_rows
from .errors import CorruptDataFileError
from .snapshot.state import Snapshot
from .table import paths

_SIMPLE_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "long": pa.int64(),
    "integer": pa.int32(),
    "short": pa.int16(),
    "byte": pa.int8(),
    "float": pa.float32(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "binary": pa.binary(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
}


def arrow_type(delta_type: Any) -> pa.DataType | None:
    """The Arrow type of a primitive Delta type (None for nested types: read as stored)."""
    if isinstance(delta_type, str):
        if delta_type in _SIMPLE_TYPES:
            return _SIMPLE_TYPES[delta_type]
        match = re.fullmatch(r"decimal\((\d+),\s*(\d+)\)", delta_type)
        if match:
            return pa.decimal128(int(match[1]), int(match[2]))
    return None


def _physical(field: dict[str, Any], mode: str) -> str:
    if mode == "none":
        return str(field["name"])
    return str(field["metadata"].get("delta.columnMapping.physicalName", field["name"]))


def _file_column(data: pa.Table, field: dict[str, Any], mode: str) -> pa.ChunkedArray | None:
    name = _physical(field, mode)
    if name in data.column_names:
        return data.column(name)
    field_id = field.get("metadata", {}).get("delta.columnMapping.id")
    if mode == "id" and field_id is not None:
        for i, parquet_field in enumerate(data.schema):
            meta = parquet_field.metadata or {}
            if meta.get(b"PARQUET:field_id") == str(field_id).encode():
                return data.column(i)
    return None


def scan(snapshot: Snapshot, root: Path, session_zone: timedelta | None = None) -> pa.Table:
    """All rows of the snapshot: every live file read, partition values added, DVs applied."""
    fields = json.loads(snapshot.metadata.schema_string or '{"fields": []}')["fields"]
    mode = snapshot.properties.column_mapping_mode
    partition_columns = set(snapshot.partition_columns)
    pieces: list[pa.Table] = []
    for add in snapshot.files.values():
        pieces.append(_scan_file(add, root, fields, mode, partition_columns, session_zone))
    if not pieces:
        names = [f["name"] for f in fields]
        types = [arrow_type(f["type"]) or pa.null() for f in fields]
        return pa.table({n: pa.array([], t) for n, t in zip(names, types, strict=True)})
    return pa.concat_tables(pieces, promote_options="permissive")


def _scan_file(
    add: AddFile,
    root: Path,
    fields: list[dict[str, Any]],
    mode: str,
    partition_columns: set[str],
    session_zone: timedelta | None,
) -> pa.Table:
    data = _read_data_file(root, add.path)
    rows = data.num_rows
    columns: dict[str, pa.Array | pa.ChunkedArray] = {}
    for field in fields:
        name = field["name"]
        kind = arrow_type(field["type"])
        if name in partition_columns:
            raw = add.partition_values.get(_physical(field, mode))
            value = codec.decode_partition_value(raw, field["type"])
            if session_zone is not None and field["type"] == "timestamp" and value is not None:
                value -= session_zone
            columns[name] = pa.array([value] * rows, type=kind)
            continue
        column = _file_column(data, field, mode)
        if column is None:
            columns[name] = pa.nulls(rows, kind or pa.null())
        else:
            columns[name] = _cast(column, kind, root, add.path)
    table = pa.table(columns) if columns else pa.table({"_": pa.nulls(rows)}).drop(["_"])
    if add.deletion_vector is not None:
        deleted = deleted_rows(root, add.deletion_vector)
        keep = pa.array([i not in deleted for i in range(rows)], type=pa.bool_())
        table = table.filter(keep)
    return table


def _read_data_file(root: Path, path: str) -> pa.Table:
    """The rows of the data file at the log's ``path``, opened through the path rule
    (PATH.DATA_FILE) and read into Arrow's memory, never a Python file pyarrow's threads call
    back into (issue 33); bytes that are not Parquet are CorruptDataFileError."""
    source = arrow_input.reader(paths.open_data_file(str(root), path))
    try:
        return pq.read_table(source)
    except (pa.ArrowException, OSError) as exc:
        raise CorruptDataFileError(
            f"not a readable Parquet file: {str(exc)[:200]}", table=str(root), file=path
        ) from None


def _cast(
    column: pa.ChunkedArray, kind: pa.DataType | None, root: Path, path: str
) -> pa.ChunkedArray:
    """``column`` as the table's ``kind``; a column that cannot be is CorruptDataFileError."""
    if kind is None:
        return column
    try:
        return column.cast(kind)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise CorruptDataFileError(
            f"a column does not fit the table's schema: {str(exc)[:200]}",
            table=str(root),
            file=path,
        ) from None
