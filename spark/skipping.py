"""Data skipping on ``add.stats``: which files cannot hold a row a data predicate matches.

The files a command reads are the ones left after partition pruning and data skipping, as in
delta-spark's ``filterFiles`` (TXN.READ_FILES); fewer files read means fewer DeleteRead
conflicts. A file is kept whenever its statistics cannot rule it out.

Float and double bounds compare in Spark's order, as delta-spark's skipping does: NaN equals NaN
and sorts above every number (a maximum of ``NaN`` never rules out ``>``), ``-0.0`` equals
``0.0``. A float column's bound is read back as the float it stands for; its literal may be
compared as a double or cast to float by Spark, so a file is ruled out only when both would.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from ..impl import predicates
from ..impl.codec.java_text import to_float32

_SKIPPABLE = {"=", "<", "<=", ">", ">=", "in", "is_null", "is_not_null"}


def spark_order(value: Any) -> Any:
    """A comparison key in Spark's order: a float NaN above every number (and equal to NaN)."""
    if isinstance(value, float):
        return (1, 0.0) if math.isnan(value) else (0, value)
    return value


def _bound(raw: Any, kind: str, *, upper: bool) -> Any:
    value = predicates.typed(raw, kind)
    if kind == "float":
        value = to_float32(value)
    if upper and isinstance(value, dt.datetime):
        value += dt.timedelta(milliseconds=1)  # maxima are cut to milliseconds
    return spark_order(value)


def _literals(raw: Any, kind: str) -> list[Any]:
    """The literal as each way Spark may compare it with the column (a float: as a double, or
    cast to float)."""
    value = predicates.typed(raw, kind)
    if kind == "float" and isinstance(value, float):
        return [spark_order(value), spark_order(to_float32(value))]
    return [spark_order(value)]


def _excludes(op: str, low: Any, high: Any, values: Sequence[Any]) -> bool:
    """Whether no value in [low, high] satisfies ``op`` with any of ``values``."""
    if op in {"=", "in"}:
        return all(v < low or v > high for v in values)
    return all({"<": low >= v, "<=": low > v, ">": high <= v, ">=": high < v}[op] for v in values)


def _rules_out(expr: predicates.Expr, stats: Mapping[str, Any], kind: str) -> bool:
    column = expr.args[0]
    records = stats.get("numRecords")
    nulls = stats.get("nullCount", {}).get(column)
    if expr.op == "is_null":
        return bool(nulls == 0)
    all_null = isinstance(records, int) and nulls == records
    if expr.op == "is_not_null":
        return all_null
    if all_null:
        return True  # comparisons never hold on null
    low_raw = stats.get("minValues", {}).get(column)
    high_raw = stats.get("maxValues", {}).get(column)
    if low_raw is None or high_raw is None or isinstance(low_raw, dict):
        return False
    low, high = _bound(low_raw, kind, upper=False), _bound(high_raw, kind, upper=True)
    literals = expr.args[1] if expr.op == "in" else (expr.args[1],)
    if any(predicates.typed(v, kind) is None for v in literals):
        return False
    values = [value for raw in literals for value in _literals(raw, kind)]
    return _excludes(expr.op, low, high, values)


def may_match(
    filters: Sequence[predicates.Expr], stats_json: str | None, types: Mapping[str, str]
) -> bool:
    """False only when the statistics prove no row satisfies every filter."""
    if not stats_json:
        return True
    stats = json.loads(stats_json)
    for expr in filters:
        if expr.op not in _SKIPPABLE or expr.args[0] not in types:
            continue
        try:
            if _rules_out(expr, stats, types[expr.args[0]]):
                return False
        except (TypeError, ValueError, ArithmeticError):
            continue
    return True
