"""Per-file statistics (``add.stats``) from the Parquet footer Spark wrote (ACTION.ADD).

delta-spark aggregates statistics while writing; the footer holds the same minima, maxima and
null counts per column chunk, so reading it costs one small read per file instead of a second
pass over the data. Shape as delta-spark writes it: ``numRecords``, then ``minValues``,
``maxValues`` and ``nullCount`` nested by struct field, over the first
``delta.dataSkippingNumIndexedCols`` (default 32) leaf columns; string minima and maxima cut to 32
characters the way delta-spark cuts them.

Two deliberate differences: no minima and maxima for float and double columns (Parquet footers
leave NaN out of their bounds, delta-spark does not, so a bound from the footer could wrongly
exclude NaN rows), and none for array and map columns (as delta-spark) nor a null count for them
(a footer counts null elements, not null arrays).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow.parquet as pq

from deltaspec.impl import codec

STRING_PREFIX = 32
_ELIGIBLE = {"byte", "short", "integer", "long", "date", "timestamp", "timestamp_ntz", "string"}
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


def file_stats(
    metadata: pq.FileMetaData, leaves: list[tuple[tuple[str, ...], Any]]
) -> tuple[str, dict[str, int]]:
    """The stats JSON for one file, and the null count of every top-level primitive column."""
    chunks: dict[tuple[str, ...], list[Any]] = {}
    for i in range(metadata.num_row_groups):
        group = metadata.row_group(i)
        for j in range(group.num_columns):
            column = group.column(j)
            chunks.setdefault(tuple(column.path_in_schema.split(".")), []).append(column.statistics)
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
        eligible = kind in _ELIGIBLE or kind.startswith("decimal")
        bounded = [s for s in stats if s.has_min_max]
        unbounded = any(s.num_values > 0 and not s.has_min_max for s in stats)
        if not eligible or not bounded or unbounded:
            continue
        low = min(s.min for s in bounded)
        high = max(s.max for s in bounded)
        if kind == "string":
            low, high = truncate_min(low), truncate_max(high)
        _nest(minimum, path, low)
        if high is not None:
            _nest(maximum, path, high)
    text = codec.encode_stats(metadata.num_rows, minimum, maximum, nulls)
    return text, null_counts


def num_records(stats: str | None) -> int | None:
    if not stats:
        return None
    value = json.loads(stats).get("numRecords")
    return value if isinstance(value, int) else None
