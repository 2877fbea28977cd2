"""File statistics and partition values in checkpoints (CHECKPOINT.STATS_AS_STRUCT).

``delta.checkpoint.writeStatsAsJson`` (default true) keeps ``add.stats`` as a JSON string;
``delta.checkpoint.writeStatsAsStruct`` adds ``add.partitionValues_parsed`` (a struct of the
partition columns, typed) and ``add.stats_parsed`` (``numRecords``, ``minValues``,
``maxValues``, ``nullCount``, typed by the table schema), as delta-spark writes them. Columns are
named by their physical names (column mapping).

This module never imports ``deltaspec.model``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa

from deltaspec.impl.actions import Metadata
from deltaspec.impl.codec.partition_values import decode_partition_value
from deltaspec.impl.scan import arrow_type
from deltaspec.rules import rule

__all__ = ["add_parsed_columns", "checkpoint_stats_columns"]


def _flag(metadata: Metadata, key: str, default: bool) -> bool:
    value = metadata.configuration.get(key)
    return default if value is None else value.strip().lower() == "true"


@rule("CHECKPOINT.STATS_AS_STRUCT")
def checkpoint_stats_columns(metadata: Metadata) -> tuple[bool, bool]:
    """Whether a checkpoint's ``add`` carries ``stats`` as JSON and whether it carries
    ``stats_parsed`` / ``partitionValues_parsed`` (CHECKPOINT.STATS_AS_STRUCT):
    ``delta.checkpoint.writeStatsAsJson`` (default true) and
    ``delta.checkpoint.writeStatsAsStruct`` (written only when set to true here)."""
    return (
        _flag(metadata, "delta.checkpoint.writeStatsAsJson", True),
        _flag(metadata, "delta.checkpoint.writeStatsAsStruct", False),
    )


def _name(field: dict[str, Any]) -> str:
    return str((field.get("metadata") or {}).get("delta.columnMapping.physicalName", field["name"]))


def _leaf_type(delta_type: Any, counts: bool) -> pa.DataType | None:
    """The stats type of one column: its own type (min/max) or int64 (null counts); a struct
    recursively; None for a column without such stats (arrays, maps, booleans' min/max)."""
    if isinstance(delta_type, dict) and delta_type.get("type") == "struct":
        inner = _struct_of(delta_type["fields"], counts)
        return inner if inner.num_fields else None
    if counts:
        return pa.int64() if isinstance(delta_type, str) else None
    if delta_type in ("boolean", "binary"):
        return None
    return arrow_type(delta_type)


def _struct_of(fields: Sequence[dict[str, Any]], counts: bool) -> pa.StructType:
    out = []
    for field in fields:
        kind = _leaf_type(field["type"], counts)
        if kind is not None:
            out.append(pa.field(_name(field), kind))
    return pa.struct(out)


def _stats_type(metadata: Metadata) -> pa.StructType:
    schema = json.loads(metadata.schema_string or '{"fields": []}')
    partitions = set(metadata.partition_columns)
    data = [f for f in schema["fields"] if f["name"] not in partitions]
    values = _struct_of(data, counts=False)
    return pa.struct(
        [
            ("numRecords", pa.int64()),
            ("minValues", values),
            ("maxValues", values),
            ("nullCount", _struct_of(data, counts=True)),
        ]
    )


_CONVERT: dict[str, Callable[[Any], Any]] = {
    "date32[day]": lambda v: date.fromisoformat(v),
    "timestamp[us, tz=UTC]": lambda v: datetime.fromisoformat(v.replace("Z", "+00:00")),
    "timestamp[us]": lambda v: datetime.fromisoformat(v.replace("Z", "")),
}


def _typed(value: Any, kind: pa.DataType) -> Any:
    """A stats JSON value as a Python value of ``kind``; None when it does not convert."""
    if value is None:
        return None
    if pa.types.is_struct(kind):
        if not isinstance(value, dict):
            return None
        return {f.name: _typed(value.get(f.name), f.type) for f in kind}
    try:
        if pa.types.is_decimal(kind):
            return Decimal(str(value))
        convert = _CONVERT.get(str(kind))
        if convert is not None:
            return convert(value)
        if pa.types.is_string(kind):
            return value if isinstance(value, str) else None
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None
    except (TypeError, ValueError):
        return None


def _stats_parsed(stats: pa.Array, kind: pa.StructType) -> pa.Array:
    rows: list[dict[str, Any] | None] = []
    for text in stats.to_pylist():
        try:
            parsed = None if text is None else json.loads(text)
        except ValueError:
            parsed = None
        rows.append(_typed(parsed, kind) if isinstance(parsed, dict) else None)
    return pa.array(rows, type=kind)


def _partition_values_parsed(values: pa.Array, metadata: Metadata) -> pa.Array:
    schema = json.loads(metadata.schema_string or '{"fields": []}')
    by_name = {f["name"]: f for f in schema["fields"]}
    fields = [by_name[c] for c in metadata.partition_columns if c in by_name]
    kind = pa.struct([pa.field(_name(f), arrow_type(f["type"]) or pa.string()) for f in fields])
    rows = []
    for pairs in values.to_pylist():
        raw = dict(pairs or ())
        rows.append(
            {
                _name(f): decode_partition_value(raw.get(_name(f), raw.get(f["name"])), f["type"])
                for f in fields
            }
        )
    return pa.array(rows, type=kind)


def add_parsed_columns(adds: pa.StructArray, metadata: Metadata) -> pa.StructArray:
    """The checkpoint's ``add`` struct with ``stats`` kept or dropped and ``stats_parsed`` /
    ``partitionValues_parsed`` appended, as the table's properties ask
    (CHECKPOINT.STATS_AS_STRUCT)."""
    as_json, as_struct = checkpoint_stats_columns(metadata)
    if as_json and not as_struct:
        return adds
    names = [f.name for f in adds.type]
    children = [adds.field(i) for i in range(len(names))]
    fields = list(adds.type)
    if as_struct:
        if metadata.partition_columns:
            children.append(_partition_values_parsed(adds.field("partitionValues"), metadata))
            fields.append(pa.field("partitionValues_parsed", children[-1].type))
        children.append(_stats_parsed(adds.field("stats"), _stats_type(metadata)))
        fields.append(pa.field("stats_parsed", children[-1].type))
    if not as_json:
        keep = [i for i, f in enumerate(fields) if f.name != "stats"]
        children, fields = [children[i] for i in keep], [fields[i] for i in keep]
    mask = adds.is_null() if adds.null_count else None
    return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
