"""Per-file statistics (``add.stats``) from the Parquet footer Spark wrote (ACTION.ADD).

delta-spark aggregates statistics while writing; the footer holds the same minima, maxima and
null counts per column chunk, so reading it costs one small read per file instead of a second
pass over the data. Shape as delta-spark writes it: ``numRecords``, then ``minValues``,
``maxValues`` and ``nullCount`` nested by struct field, over the first
``delta.dataSkippingNumIndexedCols`` (default 32) leaf columns; string minima and maxima cut to 32
characters the way delta-spark cuts them.

Float and double columns get minima and maxima as delta-spark's min/max aggregates give them
(Spark's order: NaN above every number, so the maximum is ``NaN`` when any value is NaN and the
minimum only when all are; infinities are bounds like any number), printed as Java's
``Float.toString``/``Double.toString``. They are taken only from footers parquet-java wrote
(Spark's writer: its bounds order NaN the same way); other writers (parquet-cpp) leave NaN out of
their bounds, and a bound without the NaN could wrongly exclude NaN rows, so none is written for
their files. One difference that cannot matter: among equal zeros delta-spark keeps the first it
meets (``0.0`` or ``-0.0``), the footer the smaller bit pattern; Spark compares them equal.

No minima and maxima for array and map columns (as delta-spark) nor a null count for them (a
footer counts null elements, not null arrays).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyarrow.parquet as pq

from ..impl import codec
from ..impl.actions import Protocol
from ..impl.codec.java_text import java_floating
from ..impl.table import features

STRING_PREFIX = 32
_ELIGIBLE = {"byte", "short", "integer", "long", "date", "timestamp", "timestamp_ntz", "string"}
_FLOATING = {"float", "double"}
NAN_ORDERING_WRITER = "parquet-mr"
"""``created_by`` prefix of the footers whose float bounds include NaN as Spark orders it
(parquet-java, Spark's Parquet writer, checked on 1.17.0)."""
_ASCII_MAX = "\u007f"
_UTF8_MAX = "\U0010ffff"


def leaf_fields(
    schema: Mapping[str, Any], prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(path, Delta type) of each leaf of a Delta schema JSON, depth first in field order."""
    for field in schema.get("fields", []):
        path = (*prefix, field["name"])
        kind = field["type"]
        if isinstance(kind, dict) and kind.get("type") == "struct":
            yield from leaf_fields(kind, path)
        else:
            yield path, kind


def indexed_leaves(
    schema: Mapping[str, Any], partition_columns: tuple[str, ...], configuration: Mapping[str, str]
) -> list[tuple[tuple[str, ...], Any]]:
    """The data-column leaves statistics are collected for (delta.dataSkippingNumIndexedCols)."""
    limit = int(configuration.get("delta.dataSkippingNumIndexedCols", "32"))
    data = {"fields": [f for f in schema.get("fields", []) if f["name"] not in partition_columns]}
    leaves = list(leaf_fields(data))
    return leaves if limit < 0 else leaves[:limit]


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _utf16_take(text: str, units: int) -> str:
    """The longest prefix of ``text`` of at most ``units`` UTF-16 units, plus a whole surrogate
    pair if ``units`` would split one (delta-spark's truncateMinStringAgg)."""
    taken, count = [], 0
    for char in text:
        if count >= units:
            break
        taken.append(char)
        count += 2 if ord(char) > 0xFFFF else 1
    return "".join(taken)


def truncate_min(text: str, prefix: int = STRING_PREFIX) -> str:
    return text if _utf16_len(text) <= prefix else _utf16_take(text, prefix)


def truncate_max(text: str, prefix: int = STRING_PREFIX) -> str | None:
    """delta-spark's truncateMaxStringAgg: a prefix plus a tie-breaker no longer string exceeds."""
    if _utf16_len(text) <= prefix:
        return text
    chars = list(_utf16_take(text, prefix))
    rest = list(text[len(chars) :])
    while _utf16_len("".join(chars)) <= 2 * prefix:
        if not rest:
            return text
        if rest[0] == _UTF8_MAX:
            chars.append(rest.pop(0))
        elif rest[0] < _ASCII_MAX:
            return "".join(chars) + _ASCII_MAX
        else:
            return "".join(chars) + _UTF8_MAX
    return None


def _nest(target: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for name in path[:-1]:
        target = target.setdefault(name, {})
    target[path[-1]] = value


def floating_bounds(lows: Sequence[float], highs: Sequence[float]) -> tuple[float, float]:
    """The minimum and maximum over column chunks in Spark's order: NaN above every number."""
    numbers = [low for low in lows if not math.isnan(low)]
    low = min(numbers) if numbers else math.nan
    high = math.nan if any(math.isnan(h) for h in highs) else max(highs)
    return low, high


def as_float(value: float) -> float:
    """A float column's bound as the double that prints as Java's ``Float.toString`` of it
    (the stats JSON is written with ``Double.toString``)."""
    return value if not math.isfinite(value) else float(java_floating(value, single=True))


def _bounds(kind: str, bounded: Sequence[Any]) -> tuple[Any, Any]:
    """The minimum and maximum of a column over its chunks' bounds, in the JSON's form."""
    if kind in _FLOATING:
        low, high = floating_bounds([s.min for s in bounded], [s.max for s in bounded])
        return (as_float(low), as_float(high)) if kind == "float" else (low, high)
    low = min(s.min for s in bounded)
    high = max(s.max for s in bounded)
    if kind == "string":
        return truncate_min(low), truncate_max(high)
    return low, high


def _chunk_statistics(metadata: pq.FileMetaData) -> dict[tuple[str, ...], list[Any]]:
    chunks: dict[tuple[str, ...], list[Any]] = {}
    for i in range(metadata.num_row_groups):
        group = metadata.row_group(i)
        for j in range(group.num_columns):
            column = group.column(j)
            chunks.setdefault(tuple(column.path_in_schema.split(".")), []).append(column.statistics)
    return chunks


def tight_bounds(protocol: Protocol | None) -> bool | None:
    """The ``tightBounds`` a newly written file's stats carry: true where the table's protocol
    supports deletion vectors (delta-spark 4.4.0 puts it in the stats of every file it writes
    there, as a file just written holds exactly its rows), else left out (None)."""
    supported = protocol is not None and "deletionVectors" in features.features(protocol)
    return True if supported else None


def file_stats(
    metadata: pq.FileMetaData,
    leaves: list[tuple[tuple[str, ...], Any]],
    tight: bool | None = None,
) -> tuple[str, dict[str, int]]:
    """The stats JSON for one file (``tight``: its tightBounds, :func:`tight_bounds`), and the
    null count of every top-level primitive column."""
    chunks = _chunk_statistics(metadata)
    floating = (metadata.created_by or "").startswith(NAN_ORDERING_WRITER)
    minimum: dict[str, Any] = {}
    maximum: dict[str, Any] = {}
    nulls: dict[str, Any] = {}
    null_counts = {
        path[0]: sum(s.null_count for s in chunk)
        for path, chunk in chunks.items()
        if len(path) == 1 and all(s is not None and s.has_null_count for s in chunk)
    }
    groups = metadata.num_row_groups
    for path, kind in leaves:
        stats = chunks.get(path)
        if stats is None or not isinstance(kind, str):
            continue  # arrays and maps: their footer paths are element paths
        if len(stats) != groups or any(s is None or not s.has_null_count for s in stats):
            continue
        count = sum(s.null_count for s in stats)
        _nest(nulls, path, count)
        eligible = (
            kind in _ELIGIBLE or kind.startswith("decimal") or (floating and kind in _FLOATING)
        )
        bounded = [s for s in stats if s.has_min_max]
        unbounded = any(s.num_values > 0 and not s.has_min_max for s in stats)
        if not eligible or not bounded or unbounded:
            continue
        low, high = _bounds(kind, bounded)
        _nest(minimum, path, low)
        if high is not None:
            _nest(maximum, path, high)
    text = codec.encode_stats(metadata.num_rows, minimum, maximum, nulls, tight)
    return text, null_counts


def num_records(stats: str | None) -> int | None:
    if not stats:
        return None
    value = json.loads(stats).get("numRecords")
    return value if isinstance(value, int) else None
