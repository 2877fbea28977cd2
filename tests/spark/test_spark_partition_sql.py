"""Partition predicates read without Spark (format("deltaspec")'s replaceWhere)."""

from __future__ import annotations

import pytest

from deltaspec.impl import predicates
from deltaspec.spark import partition_sql
from deltaspec.spark.errors import InvalidConditionError

COLUMNS = ("p", "day", "n")


@pytest.mark.parametrize(
    ("sql", "form"),
    [
        ("p = 'a'", ["=", "p", "a"]),
        ("'a' = P", ["=", "p", "a"]),
        ("day >= '2026-11-01' AND day < '2026-12-01'",
         ["and", [">=", "day", "2026-11-01"], ["<", "day", "2026-12-01"]]),
        ("p IN ('a', 'b') OR p IS NULL", ["or", ["in", "p", ["a", "b"]], ["is_null", "p"]]),
        ("NOT (n = 3) AND n IS NOT NULL", ["and", ["not", ["=", "n", 3]], ["is_not_null", "n"]]),
        ("p = 'it''s'", ["=", "p", "it's"]),
        ("`p` <> 'x'", ["!=", "p", "x"]),
        ("n NOT IN (1, 2)", ["not", ["in", "n", [1, 2]]]),
    ],
)  # fmt: skip
def test_partition_predicates_read_as_spark_reads_them(sql: str, form: list[object]) -> None:
    assert partition_sql.parse(sql, COLUMNS) == predicates.parse(form)


@pytest.mark.parametrize(
    "sql", ["v = 1", "upper(p) = 'A'", "p = NULL", "p =", "p = 'a' AND", "(p = 'a'", "p ~ 1", ""]
)
def test_anything_else_is_a_typed_error(sql: str) -> None:
    with pytest.raises(InvalidConditionError):
        partition_sql.parse(sql, COLUMNS)
