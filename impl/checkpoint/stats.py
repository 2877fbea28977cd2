"""File statistics and partition values in checkpoints (CHECKPOINT.STATS_AS_STRUCT).

``delta.checkpoint.writeStatsAsJson`` (default true) keeps ``add.stats`` as a JSON string;
``delta.checkpoint.writeStatsAsStruct`` (default true since v3.0.0) adds
``add.partitionValues_parsed`` (a struct of the partition columns, typed) and
``add.stats_parsed`` (``numRecords``, ``minValues``, ``maxValues``, ``nullCount``, typed by the
table schema, decoded at once by :mod:`deltaspec.impl.replay.stats`), as delta-spark writes them.
Columns are named by their physical names (column mapping).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from deltaspec.rules import rule

from ..actions import Metadata
from ..codec.partition_values import decode_partition_value
from ..replay.layouts import STATS_PARSED
from ..replay.stats import conform_struct, decode_stats, stats_layout
from ..scan import arrow_type
from ..table.releases import Profile

__all__ = ["add_parsed_columns", "checkpoint_stats_columns"]


LATEST_PROFILE = Profile()
"""The release whose defaults apply when a caller names none."""


def _flag(metadata: Metadata, key: str, default: bool) -> bool:
    value = metadata.configuration.get(key)
    return default if value is None else value.strip().lower() == "true"


@rule("CHECKPOINT.STATS_AS_STRUCT")
def checkpoint_stats_columns(
    metadata: Metadata, profile: Profile = LATEST_PROFILE
) -> tuple[bool, bool]:
    """Whether a checkpoint's ``add`` carries ``stats`` as JSON and whether it carries
    ``stats_parsed`` / ``partitionValues_parsed`` (CHECKPOINT.STATS_AS_STRUCT):
    ``delta.checkpoint.writeStatsAsJson`` (default true) and
    ``delta.checkpoint.writeStatsAsStruct`` (default true since v3.0.0, unset before)."""
    return (
        _flag(metadata, "delta.checkpoint.writeStatsAsJson", True),
        _flag(
            metadata,
            "delta.checkpoint.writeStatsAsStruct",
            profile.has("stats_as_struct_by_default"),
        ),
    )


def _name(field: dict[str, Any]) -> str:
    return str((field.get("metadata") or {}).get("delta.columnMapping.physicalName", field["name"]))


def _leaf_type(delta_type: Any, counts: bool) -> pa.DataType | None:
    """The stats type of one column: its own type (min/max) or int64 (null counts); a struct
    recursively; None for a column without min/max (arrays, maps, booleans, binaries). Every
    column, arrays and maps included, has a null count, as delta-spark collects them."""
    if isinstance(delta_type, dict) and delta_type.get("type") == "struct":
        inner = _struct_of(delta_type["fields"], counts)
        return inner if inner.num_fields else None
    if counts:
        return pa.int64()
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
    counts = _struct_of(data, counts=True)
    fields = [("minValues", values), ("maxValues", values), ("nullCount", counts)]
    # a struct without fields cannot be written to Parquet: left out, as delta-spark does
    return pa.struct([("numRecords", pa.int64()), *((n, t) for n, t in fields if t.num_fields)])


def _spread(rows: pa.Array, present: pa.Array) -> pa.Array:
    """``rows`` placed at the true positions of ``present`` in order, null elsewhere."""
    rank = pc.subtract(pc.cumulative_sum(present.cast(pa.int64())), 1)
    return rows.take(pc.if_else(present, rank, pa.scalar(None, pa.int64())))


def _stats_parsed(adds: pa.StructArray, metadata: Metadata, files: pa.Table | None) -> pa.Array:
    """``stats_parsed``: the statistics typed, laid out as :func:`_stats_type`, with
    ``tightBounds`` when they carry it (delta-spark: on tables with deletion vectors). Taken
    from the live ``files``' own ``stats_parsed`` (read from the last checkpoint) where they have
    it, the ``stats`` strings decoded at once elsewhere; null where a row has none or they cannot
    be read."""
    layout = stats_layout(metadata)
    present = adds.is_valid()
    reusable = files is not None and STATS_PARSED in files.column_names
    if reusable and files is not None and files.num_rows == len(adds) - adds.null_count:
        typed = decode_stats(files.column("stats"), layout, files.column(STATS_PARSED))
        return _laid_out(_spread(typed, present), metadata)
    return _laid_out(decode_stats(adds.field("stats"), layout), metadata)


def _laid_out(decoded: pa.StructArray, metadata: Metadata) -> pa.Array:
    kind = _stats_type(metadata)
    if decoded.field("tightBounds").null_count < len(decoded):  # a table with deletion vectors
        kind = pa.struct([*kind, pa.field("tightBounds", pa.bool_())])
    return conform_struct(decoded, kind)


def _partition_column(values: pa.Array, field: dict[str, Any], kind: pa.DataType) -> pa.Array:
    """One partition column typed (ACTION.PARTITION_VALUES): each distinct string decoded once.
    The physical name is looked up first, then the logical one."""
    raw = pc.map_lookup(values, pa.scalar(_name(field)), "first")
    if _name(field) != field["name"]:
        raw = pc.coalesce(raw, pc.map_lookup(values, pa.scalar(field["name"]), "first"))
    encoded = raw.dictionary_encode()
    distinct = [decode_partition_value(v, field["type"]) for v in encoded.dictionary.to_pylist()]
    return pa.array(distinct, type=kind).take(encoded.indices)


def _partition_values_parsed(values: pa.Array, metadata: Metadata) -> pa.Array:
    schema = json.loads(metadata.schema_string or '{"fields": []}')
    by_name = {f["name"]: f for f in schema["fields"]}
    fields = [by_name[c] for c in metadata.partition_columns if c in by_name]
    kinds = [pa.field(_name(f), arrow_type(f["type"]) or pa.string()) for f in fields]
    columns = [_partition_column(values, f, k.type) for f, k in zip(fields, kinds, strict=True)]
    if not columns:
        return pa.array([{}] * len(values), type=pa.struct([]))
    return pa.StructArray.from_arrays(columns, fields=kinds)


def add_parsed_columns(
    adds: pa.StructArray,
    metadata: Metadata,
    profile: Profile = LATEST_PROFILE,
    files: pa.Table | None = None,
) -> pa.StructArray:
    """The checkpoint's ``add`` struct with ``stats`` kept or dropped and ``stats_parsed`` /
    ``partitionValues_parsed`` appended, as the table's properties and ``profile``'s defaults
    ask (CHECKPOINT.STATS_AS_STRUCT). ``files``: the snapshot's live files, one per valid row of
    ``adds`` in order, whose ``stats_parsed`` (from the last checkpoint) is reused."""
    as_json, as_struct = checkpoint_stats_columns(metadata, profile)
    if as_json and not as_struct:
        return adds
    names = [f.name for f in adds.type]
    children = [adds.field(i) for i in range(len(names))]
    fields = list(adds.type)
    if as_struct:
        if metadata.partition_columns:
            children.append(_partition_values_parsed(adds.field("partitionValues"), metadata))
            fields.append(pa.field("partitionValues_parsed", children[-1].type))
        children.append(_stats_parsed(adds, metadata, files))
        fields.append(pa.field("stats_parsed", children[-1].type))
    if not as_json:
        keep = [i for i, f in enumerate(fields) if f.name != "stats"]
        children, fields = [children[i] for i in keep], [fields[i] for i in keep]
    mask = adds.is_null() if adds.null_count else None
    return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
