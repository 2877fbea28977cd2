"""SQL conditions become recorded read predicates: translated conjuncts, untranslatable ones
widened to TRUE; statistics rule files out only when they prove no row can match."""

from __future__ import annotations

import pytest

from deltaspec.impl import codec, predicates
from deltaspec.spark import conditions
from deltaspec.spark.errors import InvalidConditionError
from deltaspec.spark.skipping import may_match

pytestmark = pytest.mark.spark
COLUMNS = ["id", "P", "d", "s"]


@pytest.mark.parametrize(
    ("sql", "forms"),
    [
        ("p = 'a'", [["=", "P", "a"]]),
        ("'a' = p AND id > 3", [["=", "P", "a"], [">", "id", 3]]),
        ("5 > id", [["<", "id", 5]]),
        ("p IN ('a', 'b') AND d = DATE'2024-01-02'", [["in", "P", ["a", "b"]],
                                                      ["=", "d", "2024-01-02"]]),
        ("p IS NULL OR NOT (id <= 1)", [["or", ["is_null", "P"], ["not", ["<=", "id", 1]]]]),
        ("p <=> 'a'", [["and", ["is_not_null", "P"], ["=", "P", "a"]]]),
        ("p <=> NULL", [["is_null", "P"]]),
        ("upper(p) = 'A' AND id = 1", [None, ["=", "id", 1]]),
        ("p IN ('a', NULL)", [None]),
    ],
)  # fmt: skip
def test_conditions_translate_conjunct_by_conjunct(spark, sql, forms):
    parsed = conditions.parse(spark, sql, COLUMNS)
    got = [c.expr for c in parsed.conjuncts]
    assert got == [None if f is None else predicates.parse(f) for f in forms]


def test_untranslatable_conjuncts_widen_the_recorded_predicate(spark):
    parsed = conditions.parse(spark, "upper(p) = 'A' AND id = 1", COLUMNS)
    assert parsed.only_over(["P", "id"]) and not parsed.only_over(["P"])
    assert predicates.partition_only(parsed.filters(), ["P"]) == predicates.TRUE


def test_a_bad_condition_is_a_typed_error(spark):
    with pytest.raises(InvalidConditionError):
        conditions.parse(spark, "id = = 1", COLUMNS, table="/t")


def test_statistics_rule_out_only_what_they_prove():
    stats = codec.encode_stats(10, {"id": 5, "s": "b"}, {"id": 9, "s": "k"}, {"id": 0, "s": 3})
    types = {"id": "long", "s": "string"}

    def check(form):
        return may_match([predicates.parse(form)], stats, types)

    assert not check(["=", "id", 4]) and check(["=", "id", 5]) and check(["=", "id", 9])
    assert not check([">", "id", 9]) and check([">=", "id", 9])
    assert not check(["<", "id", 5]) and check(["<=", "id", 5])
    assert not check(["in", "id", [1, 2, 10]]) and check(["in", "id", [1, 7]])
    assert not check(["is_null", "id"]) and check(["is_null", "s"])
    assert check(["=", "missing", 1]) and may_match([predicates.parse(["=", "id", 1])], None, types)
