"""The partition predicate language of the model (PREDICATE.*).

``evaluate`` is checked against a brute-force oracle written here with explicit
SQL truth tables over values the test generates already typed; the model only
ever sees their serialized (string) form, so typing, null handling and the
three-valued connectives are all checked at once.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import operator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import examples

from deltaspec.model import machine as m
from deltaspec.model.actions import AddFile, Metadata, RemoveFile, pairs
from deltaspec.model.outcomes import Committed, Conflict, ConflictKind
from deltaspec.model.predicates import (
    TRUE,
    And,
    Compare,
    FalseExpr,
    In,
    IsNotNull,
    IsNull,
    Literal,
    Not,
    Or,
    Predicate,
    PredicateError,
    TrueExpr,
    columns,
    evaluate,
    parse,
    partition_only,
)
from deltaspec.model.transaction import filter_files, matching_files, stage
from deltaspec.model.values import PartitionValueError, decode_partition_value, typed_row

T, F, N = True, False, None
AND3 = {
    (T, T): T, (T, F): F, (T, N): N,
    (F, T): F, (F, F): F, (F, N): F,
    (N, T): N, (N, F): F, (N, N): N,
}  # fmt: skip
OR3 = {
    (T, T): T, (T, F): T, (T, N): T,
    (F, T): T, (F, F): F, (F, N): N,
    (N, T): T, (N, F): N, (N, N): N,
}  # fmt: skip
NOT3 = {T: F, F: T, N: N}
OPS = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}

# --------------------------------------------------------------------------------------------
# Typed value pools and their serializations. Pools are small so that equal values meet often.
# --------------------------------------------------------------------------------------------

TS = [
    dt.datetime(1970, 1, 1, 0, 0, 0, 123456),
    dt.datetime(1970, 1, 1, 0, 0, 0, 500000),
    dt.datetime(1970, 1, 1, 0, 0, 0),
    dt.datetime(2024, 2, 29, 23, 59, 59, 1),
]


def _ts_forms(value: dt.datetime) -> list[str]:
    """Spark's partition-value form, its trimmed-fraction form, and ISO-8601 UTC forms."""
    spark = value.strftime("%Y-%m-%d %H:%M:%S.%f")
    trimmed = spark.rstrip("0").rstrip(".")
    iso = value.strftime("%Y-%m-%dT%H:%M:%S.%f")
    shifted = (value + dt.timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%S.%f") + "+02:00"
    return [spark, trimmed, iso + "Z", iso + "+00:00", shifted]


def _dec_forms(value: decimal.Decimal) -> list[str]:
    return [str(value), str(value.quantize(decimal.Decimal("0.001"))), str(value.normalize())]


def _float_forms(value: float) -> list[Any]:
    return [repr(value), value]


COLUMN_TYPES = {
    "i": "integer",
    "l": "long",
    "s": "string",
    "d": "date",
    "t": "timestamp",
    "m": "decimal(10,2)",
    "b": "boolean",
    "f": "double",
}
POOLS: dict[str, list[Any]] = {
    "i": [-1, 0, 9, 10, 100],
    "l": [-(2**40), 7, 2**40],
    "s": ["a", "ab", "b", "10", "9"],
    "d": [dt.date(1969, 12, 31), dt.date(2024, 1, 9), dt.date(2024, 1, 10)],
    "t": TS,
    "m": [decimal.Decimal(x) for x in ("1.10", "-3.50", "9.75", "10.25")],
    "b": [False, True],
    "f": [-1.25, -0.0, 0.0, 0.5, 9.5, 10.0],
}
FORMS = {
    "i": lambda v: [str(v), v],
    "l": lambda v: [str(v), v],
    "s": lambda v: [v],
    "d": lambda v: [v.isoformat()],
    "t": _ts_forms,
    "m": _dec_forms,
    "b": lambda v: [str(v).lower(), v],
    "f": _float_forms,
}


@st.composite
def raw_value(draw: st.DrawFn, column: str) -> tuple[Any, Any]:
    """(typed value or None, its serialized partition value as a string, '' or None for null)."""
    if draw(st.integers(0, 5)) == 0:
        return None, draw(st.sampled_from([None, ""]))
    value = draw(st.sampled_from(POOLS[column]))
    form = draw(st.sampled_from(FORMS[column](value)))
    return value, str(form) if not isinstance(form, str) else form


@st.composite
def literal_value(draw: st.DrawFn, column: str) -> tuple[Any, Any]:
    """(typed value or None, the JSON literal the model reads); never the empty string."""
    if draw(st.integers(0, 7)) == 0:
        return None, None
    value = draw(st.sampled_from(POOLS[column]))
    return value, draw(st.sampled_from(FORMS[column](value)))


@st.composite
def rows(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    typed: dict[str, Any] = {}
    raw: dict[str, Any] = {}
    for column in COLUMN_TYPES:
        typed[column], raw[column] = draw(raw_value(column))
    if draw(st.booleans()):  # an absent column reads as null
        gone = draw(st.sampled_from(sorted(COLUMN_TYPES)))
        typed[gone] = None
        del raw[gone]
    return typed, raw


# Test-side expression trees: ("cmp", op, col, typed, literal), ("in", col, [(typed, literal)]),
# ("is_null", col), ("is_not_null", col), ("true",), ("false",), ("not", x), ("and"|"or", [xs]).
column_names = st.sampled_from(sorted(COLUMN_TYPES))


@st.composite
def leaves(draw: st.DrawFn) -> tuple[Any, ...]:
    kind = draw(st.sampled_from(["cmp", "cmp", "cmp", "in", "is_null", "is_not_null", "const"]))
    column = draw(column_names)
    if kind == "cmp":
        typed, lit = draw(literal_value(column))
        return ("cmp", draw(st.sampled_from(sorted(OPS))), column, typed, lit)
    if kind == "in":
        items = draw(st.lists(literal_value(column), min_size=1, max_size=3))
        return ("in", column, items)
    if kind == "const":
        return (draw(st.sampled_from(["true", "false"])),)
    return (kind, column)


trees = st.recursive(
    leaves(),
    lambda children: st.one_of(
        st.tuples(st.just("not"), children),
        st.tuples(st.sampled_from(["and", "or"]), st.lists(children, min_size=1, max_size=3)),
    ),
    max_leaves=8,
)


def to_form(node: tuple[Any, ...]) -> list[Any]:
    """The prefix form of PREDICATE.LANGUAGE."""
    match node:
        case ("cmp", op, column, _, lit):
            return [op, column, lit]
        case ("in", column, items):
            return ["in", column, [lit for _, lit in items]]
        case ("not", child):
            return ["not", to_form(child)]
        case ("and" | "or", children):
            return [node[0], *(to_form(c) for c in children)]
        case (kind, column):
            return [kind, column]
        case (kind,):
            return [kind]
    raise AssertionError(node)


def oracle(node: tuple[Any, ...], row: dict[str, Any]) -> bool | None:
    """SQL three-valued logic over already-typed values, by table lookup."""
    match node:
        case ("true",):
            return T
        case ("false",):
            return F
        case ("is_null", column):
            return row[column] is None
        case ("is_not_null", column):
            return row[column] is not None
        case ("cmp", op, column, typed, _):
            if row[column] is None or typed is None:
                return N
            return OPS[op](row[column], typed)
        case ("in", column, items):
            if row[column] is None:
                return N
            if any(typed is not None and typed == row[column] for typed, _ in items):
                return T
            return N if any(typed is None for typed, _ in items) else F
        case ("not", child):
            return NOT3[oracle(child, row)]
        case ("and", children):
            result: bool | None = T
            for child in children:
                result = AND3[(result, oracle(child, row))]
            return result
        case ("or", children):
            result = F
            for child in children:
                result = OR3[(result, oracle(child, row))]
            return result
    raise AssertionError(node)


# --------------------------------------------------------------------------------------------
# PREDICATE.LANGUAGE
# --------------------------------------------------------------------------------------------


def mentioned(node: tuple[Any, ...]) -> set[str]:
    """The columns a test-side tree mentions."""
    match node:
        case ("cmp", _, column, _, _) | ("in", column, _) | ("is_null" | "is_not_null", column):
            return {column}
        case ("not", child):
            return mentioned(child)
        case ("and" | "or", children):
            return set().union(*(mentioned(c) for c in children))
    return set()


def expected_tree(node: tuple[Any, ...]) -> Predicate:
    """The model expression a test-side tree stands for."""
    match node:
        case ("cmp", op, column, _, lit):
            return Compare(op, column, Literal(lit))
        case ("in", column, items):
            return In(column, tuple(Literal(lit) for _, lit in items))
        case ("is_null", column):
            return IsNull(column)
        case ("is_not_null", column):
            return IsNotNull(column)
        case ("true",):
            return TrueExpr()
        case ("false",):
            return FalseExpr()
        case ("not", child):
            return Not(expected_tree(child))
        case ("and", children):
            return And(tuple(expected_tree(c) for c in children))
        case ("or", children):
            return Or(tuple(expected_tree(c) for c in children))
    raise AssertionError(node)


@pytest.mark.rules("PREDICATE.LANGUAGE")
@examples(0.25)
@given(trees)
def test_prefix_form_parses_to_the_matching_tree(node):
    form = to_form(node)
    assert json.loads(json.dumps(form)) == form  # the form is plain JSON
    assert parse(form) == expected_tree(node)


@pytest.mark.rules("PREDICATE.LANGUAGE")
@examples(0.25)
@given(trees)
def test_columns_are_the_columns_the_form_mentions(node):
    assert columns(parse(to_form(node))) == mentioned(node)


@pytest.mark.rules("PREDICATE.LANGUAGE")
@pytest.mark.parametrize(
    "form",
    [
        [],
        ["xor", ["true"], ["true"]],
        ["not"],
        ["not", ["true"], ["true"]],
        ["=", "p"],
        ["=", "p", 1, 2],
        ["in", "p", 1],
        ["is_null"],
        ["is_not_null", "p", "q"],
        ["and", ["bogus"]],
    ],
)
def test_malformed_forms_are_rejected(form):
    with pytest.raises(PredicateError):
        parse(form)


@pytest.mark.rules("PREDICATE.LANGUAGE")
@pytest.mark.parametrize("form", [["in", "p", []], ["and"], ["or"]])
def test_empty_lists_are_not_predicates(form):
    with pytest.raises(PredicateError):
        parse(form)


# --------------------------------------------------------------------------------------------
# PREDICATE.NULLS: SQL three-valued logic
# --------------------------------------------------------------------------------------------

SCHEMA = dict(COLUMN_TYPES)
NULL_LEAF = Compare("=", "i", Literal(None))  # comparing with null is unknown
LEAF = {T: TRUE, F: FalseExpr(), N: NULL_LEAF}
SOME_ROW = typed_row({"i": "1"}, SCHEMA)


@pytest.mark.rules("PREDICATE.NULLS")
@pytest.mark.parametrize(("a", "b"), sorted(AND3, key=repr))
def test_and_or_follow_the_sql_truth_tables(a, b):
    assert evaluate(And((LEAF[a], LEAF[b])), SOME_ROW, SCHEMA) is AND3[(a, b)]
    assert evaluate(Or((LEAF[a], LEAF[b])), SOME_ROW, SCHEMA) is OR3[(a, b)]


@pytest.mark.rules("PREDICATE.NULLS")
@pytest.mark.parametrize("a", [T, F, N])
def test_not_follows_the_sql_truth_table(a):
    assert evaluate(Not(LEAF[a]), SOME_ROW, SCHEMA) is NOT3[a]


@pytest.mark.rules("PREDICATE.NULLS", "PREDICATE.TYPING", "PREDICATE.LANGUAGE")
@examples(0.5)
@given(trees, rows())
def test_evaluate_agrees_with_the_truth_table_oracle(node, row):
    typed, raw = row
    model_row = typed_row(raw, SCHEMA)
    assert model_row == typed
    assert evaluate(parse(to_form(node)), model_row, SCHEMA) is oracle(node, typed)


@pytest.mark.rules("PREDICATE.NULLS")
@examples(0.35)
@given(trees, trees, rows())
def test_three_valued_laws(left, right, row):
    _, raw = row
    model_row = typed_row(raw, SCHEMA)
    a, b = parse(to_form(left)), parse(to_form(right))

    def ev(p: Predicate) -> bool | None:
        return evaluate(p, model_row, SCHEMA)

    assert ev(Not(Not(a))) is ev(a)
    assert ev(Not(And((a, b)))) is ev(Or((Not(a), Not(b))))
    assert ev(Not(Or((a, b)))) is ev(And((Not(a), Not(b))))
    assert ev(And((a, b))) is ev(And((b, a)))
    assert ev(Or((a, b))) is ev(Or((b, a)))
    assert ev(And((a, TRUE))) is ev(a)
    assert ev(Or((a, FalseExpr()))) is ev(a)
    assert ev(And((a, FalseExpr()))) is False
    assert ev(Or((a, TRUE))) is True
    # excluded middle fails exactly on unknown
    assert ev(Or((a, Not(a)))) is (None if ev(a) is None else True)


@pytest.mark.rules("PREDICATE.NULLS")
@pytest.mark.parametrize(
    ("predicate", "value", "expected"),
    [
        (In("i", (Literal(1), Literal(None))), "1", True),
        (In("i", (Literal(1), Literal(None))), "2", None),
        (In("i", (Literal(1), Literal(2))), "3", False),
        (In("i", (Literal(1),)), None, None),
        (Compare("!=", "i", Literal(1)), None, None),
        (Not(Compare("=", "i", Literal(1))), "", None),
        (IsNull("i"), "", True),
        (IsNotNull("i"), "", False),
        (IsNull("i"), "0", False),
    ],
)
def test_null_examples(predicate, value, expected):
    assert evaluate(predicate, typed_row({"i": value}, SCHEMA), SCHEMA) is expected


# --------------------------------------------------------------------------------------------
# PREDICATE.TYPING
# --------------------------------------------------------------------------------------------


def _eval(pred: Predicate, column: str, raw: str | None, type_name: str) -> bool | None:
    schema = {column: type_name}
    return evaluate(pred, typed_row({column: raw}, schema), schema)


@pytest.mark.rules("PREDICATE.TYPING")
@pytest.mark.parametrize(
    ("type_name", "raw", "op", "literal", "expected"),
    [
        ("integer", "10", ">", "9", True),
        ("long", "10", ">", 9, True),
        ("short", "-2", "<", "-10", False),
        ("byte", "007", "=", "7", True),
        ("double", "10.0", ">", "9.5", True),
        ("float", "1e1", "=", 10, True),
        ("decimal(10,2)", "1.10", "=", "1.1", True),
        ("decimal(5,2)", "10.50", ">", "9.75", True),
        ("date", "2024-01-10", ">", "2024-01-09", True),
        ("date", "2024-01-10", "=", "2024-01-10", True),
        ("boolean", "true", "=", True, True),
        ("boolean", "false", "<", "true", True),
        ("string", "10", ">", "9", False),
        ("timestamp", "1970-01-01 00:00:00.123456", "=", "1970-01-01T00:00:00.123456Z", True),
        ("timestamp", "1970-01-01 00:00:00.123456", "<", "1970-01-01 00:00:00.5", True),
        ("timestamp", "1970-01-01 00:00:00.5", "=", "1970-01-01 00:00:00.500000", True),
        ("timestamp", "1970-01-01 01:00:00", "=", "1970-01-01T02:00:00+01:00", True),
        ("timestamp", "1970-01-01 00:00:00", "=", "1970-01-01T00:00:00.000000Z", True),
        ("timestamp_ntz", "2024-02-29 23:59:59.000001", ">", "2024-02-29 23:59:59", True),
    ],
)
def test_values_compare_in_their_column_type(type_name, raw, op, literal, expected):
    assert _eval(Compare(op, "p", Literal(literal)), "p", raw, type_name) is expected


@pytest.mark.rules("PREDICATE.TYPING")
@pytest.mark.parametrize("type_name", ["double", "float"])
def test_negative_zero_equals_zero(type_name):
    assert _eval(Compare("=", "p", Literal("0.0")), "p", "-0.0", type_name) is True
    assert _eval(Compare("<", "p", Literal(0)), "p", "-0.0", type_name) is False


NAN_CASES = [
    ("NaN", "=", "NaN", True),
    ("NaN", ">", "1e308", True),
    ("NaN", ">=", "Infinity", True),
    ("1.0", "<", "NaN", True),
    ("NaN", "!=", "NaN", False),
]


@pytest.mark.rules("PREDICATE.TYPING")
@pytest.mark.parametrize(("raw", "op", "literal", "expected"), NAN_CASES)
def test_nan_equals_nan_and_sorts_last(raw, op, literal, expected):
    assert _eval(Compare(op, "p", Literal(literal)), "p", raw, "double") is expected


@pytest.mark.rules("PREDICATE.TYPING")
@pytest.mark.parametrize(
    ("type_name", "raw", "op", "literal"),
    [
        ("integer", "10", ">", "9"),
        ("decimal(10,2)", "1.10", "=", "1.1"),
        ("double", "10.0", ">", "9.5"),
        ("timestamp", "1970-01-01 00:00:00.123456", "=", "1970-01-01T00:00:00.123456Z"),
        ("timestamp", "1970-01-01 00:00:00.5", "=", "1970-01-01 00:00:00.500000"),
    ],
)
def test_typed_comparison_differs_from_string_comparison(type_name, raw, op, literal):
    typed = _eval(Compare(op, "p", Literal(literal)), "p", raw, type_name)
    as_strings = _eval(Compare(op, "p", Literal(literal)), "p", raw, "string")
    assert typed is True
    assert as_strings is OPS[op](raw, literal) is False


@pytest.mark.rules("PREDICATE.TYPING")
@given(st.integers(-(10**6), 10**6), st.integers(-(10**6), 10**6), st.sampled_from(sorted(OPS)))
def test_integral_partition_values_compare_numerically(left, right, op):
    for type_name in ("integer", "long"):
        pred = Compare(op, "p", Literal(str(right)))
        assert _eval(pred, "p", str(left), type_name) is OPS[op](left, right)


@pytest.mark.rules("PREDICATE.TYPING")
@given(
    st.datetimes(min_value=dt.datetime(1900, 1, 1), max_value=dt.datetime(2200, 1, 1)),
    st.sampled_from(
        ["%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%S.%f+00:00"]
    ),
)
def test_timestamp_forms_read_as_the_same_utc_instant(value, form):
    assert decode_partition_value(value.strftime(form), "timestamp") == value
    assert decode_partition_value(value.strftime("%Y-%m-%d %H:%M:%S.%f"), "timestamp") == value


@pytest.mark.rules("PREDICATE.TYPING")
@pytest.mark.parametrize("type_name", sorted(set(COLUMN_TYPES.values()) | {"timestamp_ntz"}))
def test_empty_string_and_absent_values_are_null(type_name):
    schema = {"p": type_name, "q": type_name}
    assert typed_row({"p": ""}, schema) == {"p": None, "q": None}
    assert evaluate(IsNull("p"), typed_row({"p": ""}, schema), schema) is True


@pytest.mark.rules("PREDICATE.TYPING")
@pytest.mark.parametrize(
    ("raw", "type_name"),
    [("abc", "integer"), ("1.5", "long"), ("maybe", "boolean"), ("2024-13-01", "date"),
     ("x", "decimal(10,2)"), ("noon", "timestamp")],
)  # fmt: skip
def test_unreadable_values_are_errors(raw, type_name):
    with pytest.raises(PartitionValueError):
        decode_partition_value(raw, type_name)


@pytest.mark.rules("PREDICATE.TYPING")
@pytest.mark.parametrize("type_name", ["integer", "long"])
def test_a_fractional_number_is_not_an_integer_literal(type_name):
    with pytest.raises(PartitionValueError):
        decode_partition_value(9.5, type_name)


@pytest.mark.rules("PREDICATE.TYPING")
def test_in_list_literals_are_read_in_the_column_type():
    pred = In("p", (Literal("9"), Literal("10")))
    assert _eval(pred, "p", "10", "integer") is True
    assert _eval(pred, "p", "010", "integer") is True
    assert _eval(pred, "p", "010", "string") is False


# --------------------------------------------------------------------------------------------
# PREDICATE.PARTITION_ONLY
# --------------------------------------------------------------------------------------------

PARTITION_TYPES = {"p": "integer", "q": "string"}
DATA_TYPES = {"x": "integer", "y": "string"}
ALL_TYPES = PARTITION_TYPES | DATA_TYPES
SMALL_POOLS = {"p": [0, 1, 2], "q": ["a", "b"], "x": [0, 5, 9], "y": ["a", "b"]}


@st.composite
def small_leaves(draw: st.DrawFn) -> tuple[Any, ...]:
    column = draw(st.sampled_from(sorted(ALL_TYPES)))
    kind = draw(st.sampled_from(["cmp", "cmp", "in", "is_null"]))
    if kind == "is_null":
        return ("is_null", column)
    value = draw(st.sampled_from(SMALL_POOLS[column]))
    if kind == "in":
        return ("in", column, [(value, str(value))])
    return ("cmp", draw(st.sampled_from(sorted(OPS))), column, value, str(value))


small_trees = st.recursive(
    small_leaves(),
    lambda children: st.one_of(
        st.tuples(st.just("not"), children),
        st.tuples(st.sampled_from(["and", "or"]), st.lists(children, min_size=1, max_size=3)),
    ),
    max_leaves=6,
)


@st.composite
def small_rows(draw: st.DrawFn) -> dict[str, Any]:
    return {c: draw(st.sampled_from([None, *SMALL_POOLS[c]])) for c in ALL_TYPES}


def _raw(row: dict[str, Any]) -> dict[str, str | None]:
    return {c: None if v is None else str(v) for c, v in row.items()}


@pytest.mark.rules("PREDICATE.PARTITION_ONLY")
@examples(0.5)
@given(st.lists(small_trees, max_size=4), st.lists(small_rows(), min_size=1, max_size=6))
def test_partition_only_keeps_exactly_the_partition_elements(filters, sample):
    """Each element of the filter list is classified whole; an unsplit AND is one element."""
    result = partition_only([parse(to_form(f)) for f in filters], PARTITION_TYPES)
    assert columns(result) <= set(PARTITION_TYPES)
    kept = [f for f in filters if mentioned(f) <= set(PARTITION_TYPES)]
    for row in sample:
        partition_row = {c: row[c] for c in PARTITION_TYPES}
        expected: bool | None = T
        for element in kept:
            expected = AND3[(expected, oracle(element, row))]
        got = evaluate(result, typed_row(_raw(partition_row), PARTITION_TYPES), PARTITION_TYPES)
        assert got is expected
        # soundness: a row the full filter selects is never excluded by the partition predicate
        whole: bool | None = T
        for f in filters:
            whole = AND3[(whole, oracle(f, row))]
        if whole is True:
            assert got is True


P1 = Compare("=", "p", Literal(1))
X5 = Compare(">", "x", Literal(5))


@pytest.mark.rules("PREDICATE.PARTITION_ONLY")
@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ([Or((P1, X5))], TRUE),
        ([Not(And((P1, X5)))], TRUE),
        ([And((P1, X5))], TRUE),  # an unsplit conjunction is one data element
        ([P1, X5], P1),
        ([P1, IsNull("q")], And((P1, IsNull("q")))),
        ([TRUE, FalseExpr()], FalseExpr()),
        ([X5], TRUE),
        ([], TRUE),
        ([X5, And((P1, IsNull("q"))), Or((IsNull("p"), X5))], And((P1, IsNull("q")))),
        ([Or((P1, IsNull("q")))], Or((P1, IsNull("q")))),
    ],
)
def test_partition_only_examples(filters, expected):
    assert partition_only(filters, ["p", "q"]) == expected


def _schema_string(fields: dict[str, str]) -> str:
    return json.dumps(
        {
            "type": "struct",
            "fields": [
                {"name": n, "type": t, "nullable": True, "metadata": {}} for n, t in fields.items()
            ],
        }
    )


TABLE = Metadata(
    id="t", schema_string=_schema_string({"p": "integer", "x": "integer"}), partition_columns=("p",)
)


def _add(path: str, p: str | None) -> AddFile:
    return AddFile(path, partition_values=pairs({"p": p}))


def _table(*files: AddFile) -> m.Machine:
    machine = m.begin(m.Machine(), "setup")
    assert isinstance(machine, m.Machine)
    machine = m.update(machine, "setup", lambda t: stage(t, [TABLE, *files]))
    machine = m.commit(machine, "setup", now=1)
    assert m.outcome(machine, "setup") == Committed(0)
    return machine


FILES = (_add("a", "1"), _add("b", "2"), _add("c", None), _add("d", "10"))


@pytest.mark.rules("PREDICATE.PARTITION_ONLY", "PREDICATE.NULLS")
@pytest.mark.parametrize(
    ("filters", "recorded", "read"),
    [
        ([Or((P1, X5))], TRUE, {"a", "b", "c", "d"}),
        ([And((P1, X5))], TRUE, {"a", "b", "c", "d"}),
        ([P1, X5], P1, {"a"}),
        ([Not(P1)], Not(P1), {"b", "d"}),
        ([Compare("!=", "p", Literal(1))], Compare("!=", "p", Literal(1)), {"b", "d"}),
        ([IsNull("p")], IsNull("p"), {"c"}),
        ([Compare(">", "p", Literal("9"))], Compare(">", "p", Literal("9")), {"d"}),
    ],
)
def test_filter_files_records_the_partition_predicate_and_prunes(filters, recorded, read):
    machine = _table(*FILES)
    begun = m.begin(machine, "r")
    assert isinstance(begun, m.Machine)
    machine = m.update(begun, "r", lambda t: filter_files(t, filters))
    reads = machine.writer("r").txn.reads
    assert reads.predicates == (recorded,)
    assert reads.file_paths == read
    snapshot = machine.log.snapshot()
    assert snapshot is not None
    assert {f.path for f in matching_files(snapshot, recorded)} == read


def _append_race(read_predicate: Predicate, winner_partition: str | None) -> m.Machine:
    """A reader of ``read_predicate`` that rewrites one file it read, and a winning blind append
    into ``winner_partition`` that lands first."""
    machine = _table(*FILES)
    for name in ("reader", "winner"):
        begun = m.begin(machine, name)
        assert isinstance(begun, m.Machine)
        machine = begun
    machine = m.update(machine, "reader", lambda t: filter_files(t, [read_predicate]))
    victim = sorted(machine.writer("reader").txn.reads.file_paths)[0]
    victim_add = next(f for f in FILES if f.path == victim)
    machine = m.update(
        machine,
        "reader",
        lambda t: stage(
            t,
            [
                RemoveFile(victim, deletion_timestamp=2),
                AddFile(victim + "'", partition_values=victim_add.partition_values),
            ],
        ),
    )
    machine = m.update(machine, "winner", lambda t: stage(t, [_add("new", winner_partition)]))
    machine = m.commit(machine, "winner", now=2)
    assert m.outcome(machine, "winner") == Committed(1)
    return m.commit(machine, "reader", now=3)


@pytest.mark.rules("PREDICATE.NULLS")
@pytest.mark.parametrize(
    ("read_predicate", "winner_partition", "conflicts"),
    [
        (Not(P1), None, False),  # NOT (p = 1) is unknown for a null p: not read
        (Compare("!=", "p", Literal(1)), None, False),
        (IsNull("p"), None, True),
        (Or((IsNull("p"), P1)), None, True),
        (Not(P1), "3", True),
        (In("p", (Literal(2), Literal(None))), None, False),
        (In("p", (Literal(2), Literal(None))), "2", True),
    ],
)
def test_a_null_partition_value_is_read_only_when_the_predicate_is_true(
    read_predicate, winner_partition, conflicts
):
    machine = _append_race(read_predicate, winner_partition)
    expected = Conflict(ConflictKind.CONCURRENT_APPEND, 1) if conflicts else Committed(2)
    assert m.outcome(machine, "reader") == expected


@pytest.mark.rules("PREDICATE.TYPING")
def test_conflict_detection_compares_partition_values_typed():
    # "10" > "9" as integers, so an append into p=10 is read by p > 9 ...
    machine = _append_race(Compare(">", "p", Literal("9")), "10")
    assert m.outcome(machine, "reader") == Conflict(ConflictKind.CONCURRENT_APPEND, 1)
    # ... and an append into p=2 is not, although "2" > "9" is false only as an integer
    machine = _append_race(Compare(">", "p", Literal("9")), "2")
    assert m.outcome(machine, "reader") == Committed(2)
