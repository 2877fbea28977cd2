"""Partition predicates for the production path, evaluated column-wise with pyarrow.

Expressions are built from the language-neutral prefix form of spec/scenarios.md
(PREDICATE.LANGUAGE). Evaluation runs over every candidate file at once: each
partition column becomes one typed Arrow array, comparisons use Kleene logic, and
a file matches only where the result is true (PREDICATE.NULLS).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from deltaspec.rules import rule

from .actions import Metadata

_ARROW_TYPES: dict[str, pa.DataType] = {
    "string": pa.string(),
    "byte": pa.int64(),
    "short": pa.int64(),
    "integer": pa.int64(),
    "long": pa.int64(),
    "float": pa.float64(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "date": pa.date32(),
    "timestamp": pa.timestamp("us"),
    "timestamp_ntz": pa.timestamp("us"),
    "binary": pa.binary(),
}
_OPS = {"=": "equal", "!=": "not_equal", "<": "less", "<=": "less_equal", ">": "greater",
        ">=": "greater_equal"}  # fmt: skip


class InvalidPredicateError(ValueError):
    """A predicate form that does not parse, or a literal that does not fit its column."""


@dataclass(frozen=True, slots=True)
class Expr:
    """One node: ``op`` is the prefix head, ``args`` its operands (columns, literals, children)."""

    op: str
    args: tuple[Any, ...] = ()

    def columns(self) -> frozenset[str]:
        if self.op in _OPS or self.op in {"in", "is_null", "is_not_null"}:
            return frozenset({self.args[0]})
        return frozenset().union(*(a.columns() for a in self.args if isinstance(a, Expr)))


TRUE = Expr("true")


@rule("PREDICATE.LANGUAGE")
def parse(form: Sequence[Any]) -> Expr:
    """Build an expression from its prefix form, rejecting anything malformed."""
    if not isinstance(form, list | tuple) or not form:
        raise InvalidPredicateError(f"not a predicate: {form!r}")
    head, rest = form[0], list(form[1:])
    if head in {"true", "false"} and not rest:
        return Expr(head)
    if head in {"and", "or"} and rest:
        return Expr(head, tuple(parse(r) for r in rest))
    if head == "not" and len(rest) == 1:
        return Expr(head, (parse(rest[0]),))
    if head in _OPS and len(rest) == 2 and isinstance(rest[0], str):
        return Expr(head, (rest[0], rest[1]))
    if head == "in" and len(rest) == 2 and isinstance(rest[1], list) and rest[1]:
        return Expr(head, (rest[0], tuple(rest[1])))
    if head in {"is_null", "is_not_null"} and len(rest) == 1 and isinstance(rest[0], str):
        return Expr(head, (rest[0],))
    raise InvalidPredicateError(f"not a predicate: {form!r}")


def conjoin(parts: Iterable[Expr]) -> Expr:
    kept = [p for p in parts if p != TRUE]
    return TRUE if not kept else kept[0] if len(kept) == 1 else Expr("and", tuple(kept))


@rule("PREDICATE.PARTITION_ONLY")
def partition_only(filters: Iterable[Expr], partition_columns: Iterable[str]) -> Expr:
    """PREDICATE.PARTITION_ONLY: the AND of the filters over partition columns only; each filter
    is judged whole, and one that touches a data column contributes TRUE."""
    allowed = set(partition_columns)
    return conjoin(f for f in filters if f.columns() <= allowed)


@dataclass(frozen=True)
class PartitionSchema:
    """Logical partition column -> (Spark type, key in ``partitionValues``)."""

    columns: tuple[tuple[str, str, str], ...]

    @classmethod
    def of(cls, metadata: Metadata) -> PartitionSchema:
        fields = {
            f["name"]: f for f in json.loads(metadata.schema_string or "{}").get("fields", [])
        }
        mapped = metadata.configuration.get("delta.columnMapping.mode", "none") != "none"
        columns = []
        for name in metadata.partition_columns:
            field = fields.get(name, {})
            spark_type = field.get("type", "string")
            physical = field.get("metadata", {}).get("delta.columnMapping.physicalName")
            columns.append((name, spark_type if isinstance(spark_type, str) else "struct",
                            physical if mapped and physical else name))  # fmt: skip
        return cls(tuple(columns))

    def type_of(self, column: str) -> str:
        return next((t for name, t, _ in self.columns if name == column), "string")


def _timestamp(text: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    return value.astimezone(dt.UTC).replace(tzinfo=None) if value.tzinfo else value


@rule("PREDICATE.TYPING")
def typed(raw: Any, spark_type: str) -> Any:
    """A serialized partition value or JSON literal as a Python value of the column's type."""
    if raw is None or raw == "":
        return None
    try:
        if spark_type == "string":
            return str(raw)
        if spark_type in {"byte", "short", "integer", "long"}:
            if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                raise InvalidPredicateError(f"{raw!r} is not an integer")
            return int(raw)
        if spark_type in {"float", "double"}:
            return float(raw)
        if spark_type.startswith("decimal"):
            return decimal.Decimal(str(raw))
        if spark_type == "boolean":
            text = str(raw).lower()
            if text not in {"true", "false"}:
                raise InvalidPredicateError(f"{raw!r} is not a boolean")
            return text == "true"
        if spark_type == "date":
            return dt.date.fromisoformat(str(raw))
        if spark_type in {"timestamp", "timestamp_ntz"}:
            return _timestamp(str(raw))
        if spark_type == "binary":
            return str(raw).encode()
    except (ValueError, decimal.InvalidOperation) as error:
        raise InvalidPredicateError(f"{raw!r} is not a {spark_type}") from error
    raise InvalidPredicateError(f"unsupported partition type {spark_type}")


def _arrow_type(spark_type: str) -> pa.DataType:
    if spark_type.startswith("decimal"):
        precision, scale = (int(x) for x in spark_type[8:-1].split(","))
        return pa.decimal128(precision, scale)
    return _ARROW_TYPES.get(spark_type, pa.string())


def typed_columns(
    partition_values: Sequence[Mapping[str, str | None]], schema: PartitionSchema
) -> dict[str, pa.Array]:
    """One typed Arrow array per partition column over many files; each distinct raw value is
    converted once."""
    arrays = {}
    for name, spark_type, key in schema.columns:
        cache: dict[str | None, Any] = {}
        values = []
        for pv in partition_values:
            raw = pv.get(key)
            if raw not in cache:
                cache[raw] = typed(raw, spark_type)
            values.append(cache[raw])
        arrays[name] = pa.array(values, type=_arrow_type(spark_type))
    return arrays


def _is_nan(array: pa.Array) -> pa.Array:
    return pc.is_nan(array) if pa.types.is_floating(array.type) else pc.equal(array, array)


def _compare(op: str, column: pa.Array, literal: Any) -> pa.Array:
    """Spark order on floating point: NaN equals NaN and sorts above every number."""
    floating = pa.types.is_floating(column.type)
    if floating and isinstance(literal, float) and math.isnan(literal):
        nan = pc.is_nan(column)
        below = pc.invert(nan)
        return {"=": nan, "!=": below, "<": below, "<=": pc.or_kleene(nan, below),
                ">": pc.and_kleene(nan, pc.invert(nan)), ">=": nan}[op]  # fmt: skip
    result = getattr(pc, _OPS[op])(column, pa.scalar(literal, type=column.type))
    if floating and op in {">", ">="}:
        result = pc.or_kleene(result, pc.is_nan(column))
    if floating and op == "=":
        result = pc.and_kleene(result, pc.invert(pc.is_nan(column)))
    return result


@rule("PREDICATE.NULLS")
def evaluate(predicate: Expr, columns: Mapping[str, pa.Array], schema: PartitionSchema,
             length: int) -> pa.Array:  # fmt: skip
    """Kleene (three-valued) truth of ``predicate`` for every row of ``columns``."""

    def column(name: str) -> pa.Array:
        if name in columns:
            return columns[name]
        return pa.nulls(length, type=pa.string())

    def literal(name: str, raw: Any) -> Any:
        return typed(raw, schema.type_of(name))

    match predicate.op:
        case "true" | "false":
            return pa.array([predicate.op == "true"] * length, type=pa.bool_())
        case "and" | "or":
            combine = pc.and_kleene if predicate.op == "and" else pc.or_kleene
            parts = [evaluate(child, columns, schema, length) for child in predicate.args]
            result = parts[0]
            for part in parts[1:]:
                result = combine(result, part)
            return result
        case "not":
            return pc.invert(evaluate(predicate.args[0], columns, schema, length))
        case "is_null":
            return pc.is_null(column(predicate.args[0]))
        case "is_not_null":
            return pc.is_valid(column(predicate.args[0]))
        case "in":
            name, options = predicate.args
            parts = [Expr("=", (name, option)) for option in options]
            return evaluate(Expr("or", tuple(parts)), columns, schema, length)
    name, raw = predicate.args
    value = literal(name, raw)
    if value is None:
        return pa.nulls(length, type=pa.bool_())
    return _compare(predicate.op, column(name), value)


def matches(
    predicate: Expr, columns: Mapping[str, pa.Array], schema: PartitionSchema, length: int
) -> pa.BooleanArray:
    """For each row of :func:`typed_columns`: is the predicate true (unknown is false)?"""
    truth = evaluate(predicate, columns, schema, length)
    return pc.fill_null(truth, False)


def matching(
    predicate: Expr, partition_values: Sequence[Mapping[str, str | None]], schema: PartitionSchema
) -> list[bool]:
    """For each file's partition values: is the predicate true?"""
    if not partition_values:
        return []
    columns = typed_columns(partition_values, schema)
    truth = matches(predicate, columns, schema, len(partition_values))
    return [bool(v) for v in truth.to_pylist()]
