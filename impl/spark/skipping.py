"""Data skipping on ``add.stats``: which files cannot hold a row a data predicate matches.

The files a command reads are the ones left after partition pruning and data skipping, as in
delta-spark's ``filterFiles`` (TXN.READ_FILES); fewer files read means fewer DeleteRead
conflicts. A file is kept whenever its statistics cannot rule it out.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

from deltaspec.impl import predicates

_SKIPPABLE = {"=", "<", "<=", ">", ">=", "in", "is_null", "is_not_null"}


def _bound(raw: Any, kind: str, *, upper: bool) -> Any:
    value = predicates.typed(raw, kind)
    if upper and isinstance(value, dt.datetime):
        value += dt.timedelta(milliseconds=1)  # maxima are cut to milliseconds
    return value


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
    values = [predicates.typed(v, kind) for v in literals]
    if any(v is None for v in values):
        return False
    if expr.op in {"=", "in"}:
        return all(v < low or v > high for v in values)
    value = values[0]
    return bool(
        {
            "<": low >= value,
            "<=": low > value,
            ">": high <= value,
            ">=": high < value,
        }[expr.op]
    )


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
