"""SQL conditions: parsed by Spark's own parser, split into conjuncts, and translated where
possible into the partition-predicate language of deltaspec.impl.predicates.

A conjunct that cannot be translated (a function call, a cast, a subquery) is recorded as TRUE
when the transaction records its read predicate: a wider read can only add conflicts, never hide
one (delta-spark v3.2+ widens non-deterministic parts the same way).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession

from ..impl import predicates
from .errors import (
    InvalidConditionError,
    NonDeterministicConditionError,
    NonDeterministicMergeConditionError,
    UnresolvedColumnError,
    UnsupportedSubqueryError,
)

_COMPARISONS = {
    "EqualTo": "=",
    "LessThan": "<",
    "LessThanOrEqual": "<=",
    "GreaterThan": ">",
    "GreaterThanOrEqual": ">=",
}
_FLIPPED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_INTEGRAL = {"byte", "short", "integer", "long"}


class _Untranslatable(Exception):
    pass


@dataclass(frozen=True)
class Conjunct:
    """One top-level AND operand: the columns it names (the last name part; qualifiers in
    ``qualifiers``), and its translation (None when it has none)."""

    columns: frozenset[str]
    qualifiers: frozenset[str]
    expr: predicates.Expr | None


@dataclass(frozen=True)
class Condition:
    """``sql`` as given, ``rendered`` as Spark prints it (delta-spark records ``expression.sql``
    in commitInfo), and its conjuncts."""

    sql: str
    rendered: str
    conjuncts: tuple[Conjunct, ...]

    @property
    def columns(self) -> frozenset[str]:
        return frozenset().union(*(c.columns for c in self.conjuncts))

    def only_over(self, columns: Iterable[str]) -> bool:
        allowed = {c.lower() for c in columns}
        return all(c.lower() in allowed for c in self.columns)

    @property
    def exact(self) -> bool:
        """Every conjunct translated: ``filters()`` is the whole condition."""
        return all(c.expr is not None for c in self.conjuncts)

    def filters(self) -> list[predicates.Expr]:
        """The translated conjuncts (the rest widen to TRUE)."""
        return [c.expr for c in self.conjuncts if c.expr is not None]


def _children(node: Any) -> list[Any]:
    seq = node.children()
    return [seq.apply(i) for i in range(seq.size())]


def _kind(node: Any) -> str:
    return str(node.getClass().getSimpleName())


def _name_parts(node: Any) -> list[str]:
    parts = node.nameParts()
    return [str(parts.apply(i)) for i in range(parts.size())]


def _literal(node: Any) -> Any:
    type_name = str(node.dataType().typeName())
    if type_name == "void":
        return None
    if type_name == "boolean":
        return bool(node.value())
    if type_name in _INTEGRAL:
        return int(str(node.toString()))
    if type_name in {"float", "double"}:
        return float(str(node.toString()))
    if type_name in {"string", "date", "timestamp", "timestamp_ntz"} or type_name.startswith(
        "decimal"
    ):
        return str(node.toString())
    raise _Untranslatable(type_name)


def _column(node: Any, resolve: dict[str, str]) -> str:
    if _kind(node) != "UnresolvedAttribute":
        raise _Untranslatable(_kind(node))
    name = _name_parts(node)[-1]
    return resolve.get(name.lower(), name)


def _translate(node: Any, resolve: dict[str, str]) -> list[Any]:
    kind = _kind(node)
    children = _children(node)
    if kind in {"And", "Or"}:
        return [kind.lower(), *(_translate(c, resolve) for c in children)]
    if kind == "Not":
        return ["not", _translate(children[0], resolve)]
    if kind in {"IsNull", "IsNotNull"}:
        return ["is_null" if kind == "IsNull" else "is_not_null", _column(children[0], resolve)]
    if kind == "Literal" and str(node.dataType().typeName()) == "boolean":
        return ["true"] if node.value() else ["false"]
    if kind in _COMPARISONS or kind == "EqualNullSafe":
        left, right = children
        op = _COMPARISONS.get(kind, "=")
        if _kind(left) == "Literal":
            left, right, op = right, left, _FLIPPED[op]
        if _kind(right) != "Literal":
            raise _Untranslatable(kind)
        column, value = _column(left, resolve), _literal(right)
        if kind == "EqualNullSafe":
            return ["is_null", column] if value is None else ["and", ["is_not_null", column],
                                                              ["=", column, value]]  # fmt: skip
        if value is None:
            raise _Untranslatable("comparison with NULL")
        return [op, column, value]
    if kind == "In":
        column = _column(children[0], resolve)
        if not all(_kind(c) == "Literal" for c in children[1:]):
            raise _Untranslatable("IN with a non-literal")
        values = [_literal(c) for c in children[1:]]
        if any(v is None for v in values):
            raise _Untranslatable("IN with NULL")
        return ["in", column, values]
    raise _Untranslatable(kind)


def _conjuncts(node: Any) -> list[Any]:
    if _kind(node) == "And":
        return [part for child in _children(node) for part in _conjuncts(child)]
    return [node]


def _attributes(node: Any) -> list[list[str]]:
    if _kind(node) == "UnresolvedAttribute":
        return [_name_parts(node)]
    return [parts for child in _children(node) for parts in _attributes(child)]


def parse(
    spark: SparkSession, sql: str, schema_columns: Sequence[str] = (), *, table: str | None = None
) -> Condition:
    """Parse ``sql`` with the session's parser; column names resolve case-insensitively to
    ``schema_columns``."""
    parser = spark._jsparkSession.sessionState().sqlParser()
    try:
        root = parser.parseExpression(sql)
    except Exception as error:  # py4j wraps Spark's ParseException
        raise InvalidConditionError(f"cannot parse {sql!r}: {error}", table=table) from None
    resolve = {c.lower(): c for c in schema_columns}
    conjuncts = []
    for node in _conjuncts(root):
        names = _attributes(node)
        try:
            expr: predicates.Expr | None = predicates.parse(_translate(node, resolve))
        except (_Untranslatable, predicates.InvalidPredicateError):
            expr = None
        conjuncts.append(
            Conjunct(
                columns=frozenset(resolve.get(p[-1].lower(), p[-1]) for p in names),
                qualifiers=frozenset(p[0] for p in names if len(p) > 1),
                expr=expr,
            )
        )
    return Condition(sql, str(root.sql()), tuple(conjuncts))


def partition_tuples_predicate(
    columns: Sequence[str], tuples: Iterable[Sequence[str | None]]
) -> predicates.Expr:
    """OR over partitions of AND over their columns: what a dynamic partition overwrite read."""
    disjuncts = []
    for values in sorted(set(map(tuple, tuples)), key=repr):
        parts = [
            predicates.Expr("is_null", (c,)) if v is None else predicates.Expr("=", (c, v))
            for c, v in zip(columns, values, strict=True)
        ]
        disjuncts.append(predicates.conjoin(parts))
    if not disjuncts:
        return predicates.Expr("false")
    return disjuncts[0] if len(disjuncts) == 1 else predicates.Expr("or", tuple(disjuncts))


_SUBQUERIES = {"ScalarSubquery", "ListQuery", "Exists", "InSubquery", "LateralSubquery"}


def _kinds(node: Any) -> set[str]:
    return {_kind(node)}.union(*(_kinds(c) for c in _children(node)))


def check(
    frame: DataFrame,
    sql: str,
    *,
    operation: str,
    table: str,
    version: int | None,
    columns: Sequence[str],
    deterministic: bool = True,
) -> None:
    """Refuse a user condition before any work, as delta-spark refuses it: a subquery
    (DELTA_UNSUPPORTED_SUBQUERY), a column the table does not have (UNRESOLVED_COLUMN, naming the
    table's ``columns`` and nothing internal), a non-deterministic expression
    (INVALID_NON_DETERMINISTIC_EXPRESSIONS; in MERGE
    DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED).
    ``frame`` is an empty DataFrame with the columns the condition may name (the table's; for
    MERGE the aliased target and source)."""
    spark = frame.sparkSession
    try:
        root = spark._jsparkSession.sessionState().sqlParser().parseExpression(sql)
    except Exception as error:  # py4j wraps Spark's ParseException
        raise InvalidConditionError(
            f"cannot parse {sql!r}: {error}", table=table, version=version
        ) from None
    if _kinds(root) & _SUBQUERIES:
        raise UnsupportedSubqueryError(
            f"Subqueries are not supported in the {operation} (condition = {root.sql()}).",
            table=table,
            version=version,
        )
    try:
        analyzed = frame.where(sql)._jdf.queryExecution().analyzed()
    except AnalysisException as error:
        condition = str(error.getCondition() or "")
        if condition.startswith("UNRESOLVED_COLUMN"):
            raise UnresolvedColumnError(
                f"{operation} condition {sql!r} names a column the table does not have; its "
                f"columns are {list(columns)}",
                table=table,
                version=version,
            ) from None
        raise InvalidConditionError(
            f"{operation} condition {sql!r}: {condition or error}", table=table, version=version
        ) from None
    if deterministic and not analyzed.condition().deterministic():
        refused = (
            NonDeterministicMergeConditionError
            if operation == "MERGE"
            else NonDeterministicConditionError
        )
        raise refused(
            f"The operator expects a deterministic expression, but the {operation} condition "
            f"{sql!r} is not",
            table=table,
            version=version,
        )
