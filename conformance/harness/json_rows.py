"""Rows in JSON (spec/bridge.md, "Rows in JSON"): how a bridge's ``read_rows`` answer carries a
table's rows, and how the fixtures suite turns them back into Arrow to compare them.

A value is written by its Delta type, with no type information beside it: the suite decodes each
column by the type of the expected column it is compared with (the rows Spark read), then compares
as it does an in-process reader's Arrow table (fixtures.py casts to the expected types)."""

from __future__ import annotations

import base64
import datetime
import decimal
import math
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

Json = dict[str, Any]
EPOCH_DATE = datetime.date(1970, 1, 1)
EPOCH = datetime.datetime(1970, 1, 1)
EPOCH_UTC = EPOCH.replace(tzinfo=datetime.UTC)
NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


@dataclass(frozen=True)
class JsonRows:
    """A ``read_rows`` result: column names, and one list of values per row in that order."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]

    @classmethod
    def of(cls, result: Json) -> JsonRows:
        """From the result's JSON; ValueError when it is not ``{"columns", "rows"}``."""
        columns, rows = result.get("columns"), result.get("rows")
        if not isinstance(columns, list) or not isinstance(rows, list):
            raise ValueError(f"read_rows answered {str(result)[:200]}: no columns and rows")
        if any(not isinstance(row, list) or len(row) != len(columns) for row in rows):
            raise ValueError(f"read_rows: a row does not have the {len(columns)} columns")
        return cls(tuple(columns), tuple(tuple(row) for row in rows))

    def as_json(self) -> Json:
        return {"columns": list(self.columns), "rows": [list(row) for row in self.rows]}


def encode_value(value: Any) -> Any:
    """One Arrow value (as ``to_pylist`` gives it) in the JSON of spec/bridge.md."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        return value if math.isfinite(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime.datetime):  # microseconds since the epoch (UTC when zoned)
        epoch = EPOCH if value.tzinfo is None else EPOCH_UTC
        return (value - epoch) // datetime.timedelta(microseconds=1)
    if isinstance(value, datetime.date):
        return (value - EPOCH_DATE).days
    if isinstance(value, dict):
        return {key: encode_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):  # an array, or a map's [key, value] pairs
        return [encode_value(item) for item in value]
    raise TypeError(f"no JSON encoding for {type(value).__name__} {value!r}")


def encode_table(table: pa.Table) -> Json:
    """A whole table as the ``read_rows`` result."""
    columns = [table.column(name).to_pylist() for name in table.column_names]
    rows = [[encode_value(v) for v in row] for row in zip(*columns, strict=True)]
    return {"columns": list(table.column_names), "rows": rows}


def _decode(value: Any, kind: pa.DataType) -> Any:
    """A JSON value as the Python value pyarrow builds a ``kind`` array from."""
    if value is None:
        return None
    if pa.types.is_floating(kind) and isinstance(value, str):
        return NON_FINITE[value]
    if pa.types.is_decimal(kind):
        if not isinstance(value, str):
            raise TypeError(f"a decimal is a JSON string, not {value!r}")
        return decimal.Decimal(value)
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return base64.b64decode(value, validate=True)
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"a date or timestamp is a JSON integer, not {value!r}")
        return value
    if pa.types.is_struct(kind):
        fields = [kind.field(i) for i in range(kind.num_fields)]
        return {f.name: _decode(value.get(f.name), f.type) for f in fields}
    if pa.types.is_map(kind):
        return [(_decode(k, kind.key_type), _decode(v, kind.item_type)) for k, v in value]
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return [_decode(item, kind.value_type) for item in value]
    return value


def _column(values: list[Any], kind: pa.DataType) -> pa.Array:
    if pa.types.is_timestamp(kind) or pa.types.is_date(kind):  # the integers, then the type
        physical = pa.int32() if pa.types.is_date32(kind) else pa.int64()
        return pa.array([_decode(v, kind) for v in values], physical).cast(kind)
    return pa.array([_decode(v, kind) for v in values], kind)


def decode_rows(rows: JsonRows, schema: pa.Schema) -> pa.Table:
    """The columns of ``rows`` that ``schema`` names, typed by it (the others are left out).
    Raises ValueError, TypeError or an Arrow error for a value not in the encoding."""
    index = {name: i for i, name in enumerate(rows.columns)}
    names = [name for name in schema.names if name in index]
    return pa.table(
        {
            name: _column([row[index[name]] for row in rows.rows], schema.field(name).type)
            for name in names
        }
    )
