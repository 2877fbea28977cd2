"""Partition predicates as the isolation checker reads them, on plain values (PREDICATE.*).

A read predicate arrives in the prefix form of spec/scenarios.md (``["=", "p", 1]``) and
partition values as the log writes them (strings; None or the empty string for null). The
checker needs one thing of a predicate: whether it selects a partition, with SQL three-valued
logic (PREDICATE.NULLS) and values compared in the column's type (PREDICATE.TYPING). This is
that evaluator, on its own: the checker judges the sides, so it shares code with neither.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

Form = Sequence[Any]
Value = str | int | float | bool | dt.date | dt.datetime | decimal.Decimal | bytes
Row = Mapping[str, Value | None]

COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}
INTEGRAL = frozenset({"byte", "short", "integer", "long"})
FRACTIONAL = frozenset({"float", "double"})


class PredicateError(ValueError):
    """A predicate that is not well formed, or a value that does not fit its column's type."""


def check_form(form: Form) -> None:
    """Raise :class:`PredicateError` unless ``form`` is a predicate (PREDICATE.LANGUAGE)."""
    if not form:
        raise PredicateError("empty predicate")
    head, *args = form
    well_formed = (
        head in {"true", "false"}
        or (head in {"and", "or"} and bool(args))
        or (head == "not" and len(args) == 1)
        or (head in COMPARISONS and len(args) == 2)
        or (head == "in" and len(args) == 2 and isinstance(args[1], list) and bool(args[1]))
        or (head in {"is_null", "is_not_null"} and len(args) == 1)
    )
    if not well_formed:
        raise PredicateError(f"not a predicate: {form!r}")
    if head in {"and", "or", "not"}:
        for arg in args:
            check_form(arg)


def selects_everything(form: Form) -> bool:
    """The literal ``["true"]``: every partition, without evaluating."""
    return list(form) == ["true"]


def _timestamp(text: str) -> dt.datetime:
    parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC).replace(tzinfo=None)
    return parsed


def _boolean(raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).lower()
    if text not in {"true", "false"}:
        raise PredicateError(f"{raw!r} is not a boolean")
    return text == "true"


def _integral(raw: Any, type_name: str) -> int:
    if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
        raise PredicateError(f"{raw!r} is not a {type_name}")
    return int(raw)


_READERS: dict[str, Callable[[Any], Value]] = {
    "string": str,
    "float": float,
    "double": float,
    "boolean": _boolean,
    "date": lambda raw: dt.date.fromisoformat(str(raw)),
    "timestamp": lambda raw: _timestamp(str(raw)),
    "timestamp_ntz": lambda raw: _timestamp(str(raw)),
    "binary": lambda raw: str(raw).encode("utf-8"),
}


def read_value(raw: Any, type_name: str) -> Value | None:
    """A partition value (string) or a JSON literal read in ``type_name``; "" is null."""
    if raw is None or raw == "":
        return None
    try:
        if type_name in INTEGRAL:
            return _integral(raw, type_name)
        if type_name.startswith("decimal"):
            return decimal.Decimal(str(raw))
        reader = _READERS.get(type_name)
        if reader is not None:
            return reader(raw)
    except (ValueError, decimal.InvalidOperation) as error:
        raise PredicateError(f"{raw!r} is not a {type_name}: {error}") from error
    raise PredicateError(f"unsupported partition column type {type_name!r}")


def typed_row(
    values: Mapping[str, str | None], types: Mapping[str, str]
) -> dict[str, Value | None]:
    """Partition values by column, typed; absent columns are null."""
    return {name: read_value(values.get(name), type_name) for name, type_name in types.items()}


def _and3(values: Iterable[bool | None]) -> bool | None:
    result: bool | None = True
    for value in values:
        if value is False:
            return False
        if value is None:
            result = None
    return result


def _or3(values: Iterable[bool | None]) -> bool | None:
    result: bool | None = False
    for value in values:
        if value is True:
            return True
        if value is None:
            result = None
    return result


def _order(value: Value) -> Any:
    """Spark's total order on floating point: NaN equals NaN and sorts above every number."""
    if isinstance(value, float):
        return (1, 0.0) if math.isnan(value) else (0, value)
    return value


def _member(value: Value, options: Sequence[Value | None]) -> bool | None:
    if _order(value) in [_order(o) for o in options if o is not None]:
        return True
    return None if None in options else False


def evaluate(form: Form, row: Row, types: Mapping[str, str]) -> bool | None:
    """Three-valued evaluation of a well-formed predicate over a typed row."""
    head, *args = form
    if head in {"true", "false"}:
        return bool(head == "true")
    if head == "not":
        inner = evaluate(args[0], row, types)
        return None if inner is None else not inner
    if head in {"and", "or"}:
        values = (evaluate(arg, row, types) for arg in args)  # lazy: stops where SQL stops
        return _and3(values) if head == "and" else _or3(values)
    column = str(args[0])
    value, type_name = row.get(column), types.get(column, "string")
    if head in {"is_null", "is_not_null"}:
        return (value is None) is (head == "is_null")
    if head == "in":
        if value is None:
            return None
        return _member(value, [read_value(v, type_name) for v in args[1]])
    literal = read_value(args[1], type_name)
    if value is None or literal is None:
        return None
    return bool(COMPARISONS[head](_order(value), _order(literal)))
