"""The live files' statistics as typed Arrow columns, decoded on demand (ACTION.ADD).

An ``add``'s ``stats`` is a JSON string ``{"numRecords":n,"minValues":{...},"maxValues":{...},
"nullCount":{...}[,"tightBounds":b]}`` keyed by physical column name, nested by struct field.
:func:`stats_type` derives the typed layout from the table schema (min/max in each column's own
type, null counts as ``int64``, partition columns left out, columns named logically);
:func:`parse_stats` decodes a whole column of strings at once with pyarrow's JSON reader, and
falls back to one row at a time only when the fast path cannot take the column as it is
(``"NaN"`` quoted in a float, a value out of its type's range, an unparsable string): then a
row whose statistics cannot be read gets null statistics, as delta-spark's data skipping treats
them (no statistics: the file is always read). A checkpoint's ``stats_parsed``
(CHECKPOINT.STATS_AS_STRUCT) is taken as it is where a row has it; :func:`conform_struct` lays
it out as the schema says (a column it lacks is null).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from ..actions import Metadata

__all__ = [
    "StatsLayout",
    "conform_struct",
    "decode_stats",
    "parse_stats",
    "stats_layout",
]

_PRIMITIVES: dict[str, pa.DataType] = {
    "byte": pa.int8(),
    "short": pa.int16(),
    "integer": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
}
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")
_NEWLINE = pa.scalar("\n", pa.string())
_EMPTY = pa.scalar("{}", pa.string())
_NOTHING = pa.scalar("", pa.string())
_BLOCK_BYTES = 16 << 20
"""The JSON reader's block size: larger blocks parse with less overhead per block."""


@dataclass(frozen=True)
class StatsLayout:
    """The typed statistics of a table: ``logical`` names the columns as the schema does,
    ``physical`` as the ``stats`` JSON does (they differ under column mapping), ``reading``
    is ``physical`` with dates read as timestamps (pyarrow's JSON reader has no dates)."""

    logical: pa.StructType
    physical: pa.StructType
    reading: pa.StructType


def _value_type(kind: Any) -> pa.DataType | None:
    """The Arrow type of a Delta type's min/max (None: no min/max, e.g. arrays, maps, binary)."""
    if isinstance(kind, str):
        found = _DECIMAL.fullmatch(kind)
        if found:
            return pa.decimal128(int(found.group(1)), int(found.group(2)))
        return _PRIMITIVES.get(kind)
    return None


_Fields = tuple[list[pa.Field], list[pa.Field], list[pa.Field]]


def _fields(schema: dict[str, Any], counts: bool, skip: frozenset[str] = frozenset()) -> _Fields:
    """The (logical, physical, reading) fields of ``schema``'s columns with statistics: null
    counts (``counts``) or min/max values."""
    logical: list[pa.Field] = []
    physical: list[pa.Field] = []
    reading: list[pa.Field] = []
    for field in schema.get("fields", ()):
        name = field["name"]
        if name in skip:
            continue
        stored = (field.get("metadata") or {}).get("delta.columnMapping.physicalName", name)
        kind = field["type"]
        if isinstance(kind, dict) and kind.get("type") == "struct":
            inner = _fields(kind, counts)
            if inner[0]:
                logical.append(pa.field(name, pa.struct(inner[0])))
                physical.append(pa.field(stored, pa.struct(inner[1])))
                reading.append(pa.field(stored, pa.struct(inner[2])))
            continue
        value = pa.int64() if counts else _value_type(kind)
        if value is not None:
            logical.append(pa.field(name, value))
            physical.append(pa.field(stored, value))
            read_as = pa.timestamp("s") if value == pa.date32() else value
            reading.append(pa.field(stored, read_as))
    return logical, physical, reading


def stats_layout(metadata: Metadata) -> StatsLayout:
    """The typed statistics of ``metadata``'s table: ``numRecords``, ``minValues``,
    ``maxValues``, ``nullCount`` (partition columns have none) and ``tightBounds``."""
    schema = json.loads(metadata.schema_string)
    skip = frozenset(metadata.partition_columns)
    values = _fields(schema, counts=False, skip=skip)
    counts = _fields(schema, counts=True, skip=skip)
    layouts: list[list[pa.Field]] = [[], [], []]
    for side in range(3):
        layouts[side].append(pa.field("numRecords", pa.int64()))
        if values[side]:
            layouts[side].append(pa.field("minValues", pa.struct(values[side])))
            layouts[side].append(pa.field("maxValues", pa.struct(values[side])))
        if counts[side]:
            layouts[side].append(pa.field("nullCount", pa.struct(counts[side])))
        layouts[side].append(pa.field("tightBounds", pa.bool_()))
    logical, physical, reading = (pa.struct(fields) for fields in layouts)
    return StatsLayout(logical, physical, reading)


def _json_lines(strings: pa.Array) -> pa.Buffer | None:
    """The strings as JSON lines in one buffer (a null as ``{}``), or None unless every one
    starts with ``{`` and ends with ``}``. With that, a row boundary can only fall between two
    complete objects (after a ``}`` inside a value only ``,``, ``}`` or ``]`` may follow), so
    the reader yields exactly one row per string or fails."""
    if len(strings) == 0:
        return None
    filled = pc.fill_null(strings, _EMPTY)
    framed = pc.and_(pc.starts_with(filled, "{"), pc.ends_with(filled, "}"))
    if not pc.all(framed).as_py():
        return None
    lines = pc.binary_join_element_wise(filled, _NOTHING, _NEWLINE)
    _, offsets, data = lines.buffers()
    bounds = pa.Array.from_buffers(pa.int32(), len(lines) + 1, [None, offsets], offset=lines.offset)
    start, end = bounds[0].as_py(), bounds[-1].as_py()
    return data.slice(start, end - start)


def _as_text(kind: pa.DataType) -> pa.DataType:
    """``kind`` with its timestamps and dates read as strings (cast afterwards)."""
    if pa.types.is_struct(kind):
        return pa.struct([pa.field(f.name, _as_text(f.type)) for f in kind])
    return pa.string() if pa.types.is_timestamp(kind) or pa.types.is_date(kind) else kind


def _read_json(
    data: pa.Buffer, rows: int, reading: pa.StructType, physical: pa.StructType
) -> pa.StructArray | None:
    """The JSON lines ``data`` read as ``reading`` and cast to ``physical``; None if pyarrow
    cannot take them (or reads another number of rows)."""
    options = pa_json.ParseOptions(
        explicit_schema=pa.schema(list(reading)), unexpected_field_behavior="ignore"
    )
    try:
        table = pa_json.read_json(
            pa.BufferReader(data),
            read_options=pa_json.ReadOptions(block_size=_BLOCK_BYTES),
            parse_options=options,
        )
        if table.num_rows != rows:
            return None
        read = pa.StructArray.from_arrays(
            [column.combine_chunks() for column in table.columns], fields=list(reading)
        )
        return read.cast(physical)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _read_fast(strings: pa.Array, layout: StatsLayout) -> pa.StructArray | None:
    """Every row decoded by pyarrow's JSON reader, or None if it cannot take them as they are.

    Timestamps and dates are first read as strings and cast, which costs less than the JSON
    reader's own timestamp parsing; the cast takes a subset of what that parser takes, to the
    same values, so where it refuses one the rows are read again with the typed layout."""
    data = _json_lines(strings)
    if data is None:
        return None
    text = _as_text(layout.reading)
    if text != layout.reading:
        read = _read_json(data, len(strings), text, layout.physical)
        if read is not None:
            return read
    return _read_json(data, len(strings), layout.reading, layout.physical)


def _converter(kind: pa.DataType) -> Callable[[Any], Any]:
    """Converts one JSON value to what pyarrow takes for ``kind``; raises if it cannot."""
    if pa.types.is_struct(kind):
        children = {f.name: _converter(f.type) for f in kind}

        def struct(value: Any) -> Any:
            if not isinstance(value, dict):
                raise ValueError("not an object")
            return {k: c(value[k]) for k, c in children.items() if value.get(k) is not None}

        return struct
    if pa.types.is_timestamp(kind):
        aware = kind.tz is not None
        return lambda v: (
            datetime.fromisoformat(v).astimezone(UTC) if aware else datetime.fromisoformat(v)
        )
    if pa.types.is_date(kind):
        return lambda v: date.fromisoformat(v)
    if pa.types.is_decimal(kind):
        return lambda v: Decimal(str(v))
    if pa.types.is_floating(kind):
        return lambda v: (
            float(v) if isinstance(v, (int, float, str)) and not isinstance(v, bool) else _bad(v)
        )
    if pa.types.is_integer(kind):
        return lambda v: v if type(v) is int else _bad(v)
    if pa.types.is_boolean(kind):
        return lambda v: v if type(v) is bool else _bad(v)
    return lambda v: v if type(v) is str else _bad(v)


def _bad(value: Any) -> Any:
    raise ValueError(f"unexpected statistics value {value!r}")


def _read_slow(strings: pa.Array, layout: StatsLayout) -> pa.StructArray:
    """One row at a time; a row whose statistics cannot be read is null."""
    convert = _converter(layout.physical)
    rows: list[Any] = []
    for text in strings.to_pylist():
        try:
            row = convert(json.loads(text)) if text else None
            if row is not None:
                pa.array([row], type=layout.physical)  # in range for its types
        except (
            ValueError,
            TypeError,
            KeyError,
            InvalidOperation,
            OverflowError,
            RecursionError,
            pa.ArrowException,
        ):
            row = None
        rows.append(row)
    return pa.array(rows, type=layout.physical)


def _renamed(array: pa.Array, logical: pa.DataType) -> pa.Array:
    """``array`` with its struct fields named as ``logical`` (physical and logical names differ
    under column mapping)."""
    if not pa.types.is_struct(logical) or array.type == logical:
        return array
    children = [_renamed(array.field(i), f.type) for i, f in enumerate(logical)]
    mask = array.is_null() if array.null_count else None
    return pa.StructArray.from_arrays(children, fields=list(logical), mask=mask)


def conform_struct(array: pa.Array, kind: pa.DataType) -> pa.Array:
    """``array`` laid out as ``kind``: struct fields matched by name (a missing one null, an
    extra one dropped), leaves cast; ValueError (pyarrow's) for a leaf that cannot be cast."""
    if not pa.types.is_struct(kind):
        return array if array.type == kind else array.cast(kind)
    if not pa.types.is_struct(array.type):
        return pa.nulls(len(array), kind)
    present = {array.type.field(i).name for i in range(array.type.num_fields)}
    children = [
        conform_struct(array.field(f.name), f.type) if f.name in present
        else pa.nulls(len(array), f.type)
        for f in kind
    ]  # fmt: skip
    mask = array.is_null() if array.null_count else None
    return pa.StructArray.from_arrays(children, fields=list(kind), mask=mask)


def decode_stats(
    stats: pa.ChunkedArray | pa.Array,
    layout: StatsLayout,
    parsed: pa.ChunkedArray | pa.Array | None = None,
) -> pa.StructArray:
    """The ``stats`` strings of some adds as one struct per row named physically (as the JSON
    is); null where an add has no statistics or statistics that cannot be read. ``parsed``, a
    checkpoint's ``stats_parsed`` per row (CHECKPOINT.STATS_AS_STRUCT), is taken as it is
    where a row has it: no JSON is decoded for those rows."""
    if parsed is not None:
        return _merged(_chunked(stats), layout, _chunked(parsed))
    strings = stats.combine_chunks() if isinstance(stats, pa.ChunkedArray) else stats
    if strings.type != pa.string():
        strings = strings.cast(pa.string())
    decoded = _read_fast(strings, layout)
    if decoded is None:
        return _read_slow(strings, layout)
    if strings.null_count:
        return pa.StructArray.from_arrays(
            decoded.flatten(), fields=list(layout.physical), mask=strings.is_null()
        )
    return decoded


def _chunked(array: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray:
    return array if isinstance(array, pa.ChunkedArray) else pa.chunked_array([array])


MOST_RUNS = 4096
"""Up to this many runs of rows without ``stats_parsed``, :func:`_merged` joins slices (one copy
of the statistics); past it, one ``take`` over all rows."""


def _merged(
    strings: pa.ChunkedArray, layout: StatsLayout, parsed: pa.ChunkedArray
) -> pa.StructArray:
    """``parsed`` (a checkpoint's ``stats_parsed``) where a row has it, the ``stats`` strings
    decoded where it has not (all of them when ``parsed`` does not fit the schema).

    The rows without it are usually few (the adds of the commits after a checkpoint), so the
    result is the typed rows' slices around them joined with their decoded rows: one copy, not
    a copy of every row into one array and another by ``take``."""
    try:
        typed = pa.chunked_array(
            [conform_struct(chunk, layout.physical) for chunk in parsed.chunks],
            type=layout.physical,
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return decode_stats(strings, layout)
    missing = pc.and_(typed.is_null(), strings.is_valid())
    rows = pc.indices_nonzero(missing).to_numpy()
    if len(rows) == 0:
        return typed.combine_chunks()
    decoded = decode_stats(strings.filter(missing), layout)
    starts = [0, *(i for i in range(1, len(rows)) if rows[i] != rows[i - 1] + 1)]
    if len(starts) > MOST_RUNS:
        count = len(typed)
        position = pc.cumulative_sum(pa.repeat(pa.scalar(1, pa.int64()), count))  # row + 1
        rank = pc.cumulative_sum(missing.cast(pa.int64()))  # decoded row + 1
        index = pc.if_else(missing, pc.add(rank, count - 1), pc.subtract(position, 1))
        return pa.concat_arrays([typed.combine_chunks(), decoded]).take(index)
    pieces: list[pa.Array] = []
    done = 0  # rows of the result so far
    for run, first in enumerate(starts):
        end = starts[run + 1] if run + 1 < len(starts) else len(rows)
        at = int(rows[first])
        pieces.extend(typed.slice(done, at - done).chunks)
        pieces.append(decoded.slice(first, end - first))
        done = at + end - first
    pieces.extend(typed.slice(done).chunks)
    return pa.concat_arrays(pieces)


def parse_stats(
    stats: pa.ChunkedArray | pa.Array,
    layout: StatsLayout,
    parsed: pa.ChunkedArray | pa.Array | None = None,
) -> pa.StructArray:
    """The ``stats`` strings of some adds as one typed struct per row (:func:`stats_layout`),
    named logically; null where an add has no statistics or statistics that cannot be read.
    ``parsed``: as for :func:`decode_stats`."""
    return _renamed(decode_stats(stats, layout, parsed), layout.logical)
