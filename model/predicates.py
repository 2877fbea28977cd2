"""Partition predicates (PREDICATE.*).

A small typed expression language over partition columns, evaluated with SQL
three-valued logic: ``evaluate`` returns True, False or None (unknown), and a
file is selected only when the result is True (PREDICATE.NULLS).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deltaspec.rules import rule

from .values import Value, decode_partition_value


@dataclass(frozen=True)
class Literal:
    value: Any


@dataclass(frozen=True)
class TrueExpr:
    pass


@dataclass(frozen=True)
class FalseExpr:
    pass


@dataclass(frozen=True)
class Compare:
    op: str
    column: str
    literal: Literal


@dataclass(frozen=True)
class In:
    column: str
    literals: tuple[Literal, ...]


@dataclass(frozen=True)
class IsNull:
    column: str


@dataclass(frozen=True)
class IsNotNull:
    column: str


@dataclass(frozen=True)
class Not:
    child: Predicate


@dataclass(frozen=True)
class And:
    children: tuple[Predicate, ...]


@dataclass(frozen=True)
class Or:
    children: tuple[Predicate, ...]


Predicate = TrueExpr | FalseExpr | Compare | In | IsNull | IsNotNull | Not | And | Or
TRUE = TrueExpr()
COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class PredicateError(ValueError):
    """A predicate that is not well formed."""


@rule("PREDICATE.LANGUAGE")
def parse(form: Sequence[Any]) -> Predicate:
    """Read the prefix form of spec/scenarios.md (PREDICATE.LANGUAGE)."""
    if not form:
        raise PredicateError("empty predicate")
    head, *args = form
    if head == "true":
        return TRUE
    if head == "false":
        return FalseExpr()
    if head in {"and", "or"} and args:
        children = tuple(parse(arg) for arg in args)
        return And(children) if head == "and" else Or(children)
    if head == "not" and len(args) == 1:
        return Not(parse(args[0]))
    if head in COMPARISONS and len(args) == 2:
        return Compare(head, str(args[0]), Literal(args[1]))
    if head == "in" and len(args) == 2 and isinstance(args[1], list) and args[1]:
        return In(str(args[0]), tuple(Literal(v) for v in args[1]))
    if head == "is_null" and len(args) == 1:
        return IsNull(str(args[0]))
    if head == "is_not_null" and len(args) == 1:
        return IsNotNull(str(args[0]))
    raise PredicateError(f"not a predicate: {form!r}")


def form(predicate: Predicate) -> list[Any]:
    """The prefix form of ``predicate``: the inverse of ``parse``."""
    match predicate:
        case TrueExpr():
            return ["true"]
        case FalseExpr():
            return ["false"]
        case Compare(op=op, column=c, literal=lit):
            return [op, c, lit.value]
        case In(column=c, literals=lits):
            return ["in", c, [lit.value for lit in lits]]
        case IsNull(column=c):
            return ["is_null", c]
        case IsNotNull(column=c):
            return ["is_not_null", c]
        case Not(child=child):
            return ["not", form(child)]
        case And(children=cs):
            return ["and", *(form(c) for c in cs)]
        case Or(children=cs):
            return ["or", *(form(c) for c in cs)]
    raise PredicateError(f"not a predicate: {predicate!r}")


def columns(predicate: Predicate) -> frozenset[str]:
    match predicate:
        case Compare(column=c) | In(column=c) | IsNull(column=c) | IsNotNull(column=c):
            return frozenset({c})
        case Not(child=child):
            return columns(child)
        case And(children=cs) | Or(children=cs):
            return frozenset().union(*(columns(c) for c in cs))
    return frozenset()


def conjunction(parts: Iterable[Predicate]) -> Predicate:
    items = tuple(p for p in parts if not isinstance(p, TrueExpr))
    if not items:
        return TRUE
    return items[0] if len(items) == 1 else And(items)


@rule("PREDICATE.PARTITION_ONLY")
def partition_only(filters: Iterable[Predicate], partition_columns: Iterable[str]) -> Predicate:
    """PREDICATE.PARTITION_ONLY: AND of the filters that mention partition columns only.

    Each filter is classified whole, as the caller passed it (callers split
    their conditions into conjuncts first; an unsplit ``p = 1 AND x > 5`` is one
    filter). A filter that mentions any other column is a data predicate,
    ignored by conflict detection: it contributes TRUE.
    """
    allowed = frozenset(partition_columns)
    return conjunction(f for f in filters if columns(f) <= allowed)


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


def _spark_order(value: Value) -> Any:
    """Spark's total order on floating point: NaN equals NaN and sorts above every number."""
    if isinstance(value, float):
        return (1, 0.0) if math.isnan(value) else (0, value)
    return value


@rule("PREDICATE.NULLS")
def evaluate(
    predicate: Predicate, row: Mapping[str, Value | None], types: Mapping[str, str]
) -> bool | None:
    """Three-valued evaluation over a typed row; literals are read in the column's type."""

    def literal(column: str, lit: Literal) -> Value | None:
        return decode_partition_value(lit.value, types.get(column, "string"))

    match predicate:
        case TrueExpr():
            return True
        case FalseExpr():
            return False
        case IsNull(column=c):
            return row.get(c) is None
        case IsNotNull(column=c):
            return row.get(c) is not None
        case Compare(op=op, column=c, literal=lit):
            left, right = row.get(c), literal(c, lit)
            if left is None or right is None:
                return None
            return COMPARISONS[op](_spark_order(left), _spark_order(right))
        case In(column=c, literals=lits):
            value = row.get(c)
            if value is None:
                return None
            options = [literal(c, lit) for lit in lits]
            if _spark_order(value) in [_spark_order(o) for o in options if o is not None]:
                return True
            return None if None in options else False
        case Not(child=child):
            inner = evaluate(child, row, types)
            return None if inner is None else not inner
        case And(children=cs):
            return _and3(evaluate(c, row, types) for c in cs)
        case Or(children=cs):
            return _or3(evaluate(c, row, types) for c in cs)
    raise PredicateError(f"not a predicate: {predicate!r}")
