"""Typed partition values (ACTION.PARTITION_VALUES, PREDICATE.TYPING).

Partition values travel as strings (None for null, and the empty string means
null too); conflict detection compares them typed by the partition schema.
Timestamps without an explicit zone are read as UTC: the model has no session
time zone.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Mapping
from typing import Any

from deltaspec.rules import rule

from .actions import Metadata

Value = str | int | float | bool | dt.date | dt.datetime | decimal.Decimal | bytes
INTEGRAL = {"byte", "short", "integer", "long"}
FRACTIONAL = {"float", "double"}


class PartitionValueError(ValueError):
    """A partition value or literal that cannot be read in its column's type."""


def _fields(metadata: Metadata) -> dict[str, Any]:
    return {f["name"]: f for f in json.loads(metadata.schema_string)["fields"]}


def partition_schema(metadata: Metadata) -> dict[str, str]:
    """Partition column (logical) name -> Spark type name, in partition-column order."""
    fields = _fields(metadata)
    return {
        name: _type_name(fields.get(name, {}).get("type", "string"))
        for name in metadata.partition_columns
    }


def partition_keys(metadata: Metadata) -> dict[str, str]:
    """Partition column (logical) name -> its key in ``partitionValues``.

    With column mapping (``delta.columnMapping.mode`` name or id) the key is the
    column's physical name (ACTION.PARTITION_VALUES); otherwise the name itself.
    """
    mapped = metadata.property("delta.columnMapping.mode", "none") != "none"
    fields = _fields(metadata)
    keys = {}
    for name in metadata.partition_columns:
        field_metadata = fields.get(name, {}).get("metadata", {})
        physical = field_metadata.get("delta.columnMapping.physicalName") if mapped else None
        keys[name] = physical or name
    return keys


def _type_name(spark_type: Any) -> str:
    return spark_type if isinstance(spark_type, str) else "struct"


def _timestamp(text: str) -> dt.datetime:
    parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    return parsed


@rule("ACTION.PARTITION_VALUES")
def decode_partition_value(raw: Any, type_name: str) -> Value | None:
    """Read a serialized partition value (or a predicate's JSON literal) in ``type_name``."""
    if raw is None or raw == "":
        return None
    try:
        if type_name == "string":
            return str(raw)
        if type_name in INTEGRAL:
            if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                raise PartitionValueError(f"{raw!r} is not a {type_name}")
            return int(raw)
        if type_name in FRACTIONAL:
            return float(raw)
        if type_name.startswith("decimal"):
            return decimal.Decimal(str(raw))
        if type_name == "boolean":
            if isinstance(raw, bool):
                return raw
            text = str(raw).lower()
            if text not in {"true", "false"}:
                raise PartitionValueError(f"{raw!r} is not a boolean")
            return text == "true"
        if type_name == "date":
            return dt.date.fromisoformat(str(raw))
        if type_name in {"timestamp", "timestamp_ntz"}:
            return _timestamp(str(raw))
        if type_name == "binary":
            return str(raw).encode("utf-8")
    except (ValueError, decimal.InvalidOperation) as error:
        raise PartitionValueError(f"{raw!r} is not a {type_name}: {error}") from error
    raise PartitionValueError(f"unsupported partition column type {type_name!r}")


def typed_row(
    values: Mapping[str, str | None], schema: Mapping[str, str]
) -> dict[str, Value | None]:
    """A file's partition values typed by the partition schema; absent columns are null."""
    return {
        name: decode_partition_value(values.get(name), type_name)
        for name, type_name in schema.items()
    }


@rule("PREDICATE.TYPING")
def partition_row(values: Mapping[str, str | None], metadata: Metadata) -> dict[str, Value | None]:
    """A file's partition values by logical column name, typed by the partition schema
    (PREDICATE.TYPING), read through the physical keys under column mapping."""
    keys = partition_keys(metadata)
    physical = {name: values.get(key) for name, key in keys.items()}
    return typed_row(physical, partition_schema(metadata))
