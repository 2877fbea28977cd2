"""A MERGE's WHEN clauses: what each is, how they are recorded in commitInfo, and which rows
each applies to (the first applicable clause of its kind wins, in order)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from ... import conditions, rewrite


@dataclass(frozen=True)
class MergeClause:
    """One WHEN clause: ``action`` is "update", "delete" or "insert"; ``assignments`` maps a
    target column to a SQL expression over ``t.``/``s.`` columns ("*" copies same-named source
    columns). ``by_source`` makes an update or delete a WHEN NOT MATCHED BY SOURCE clause: it
    applies to target rows no source row matches, and names target columns only."""

    action: str
    condition: str | None = None
    assignments: Mapping[str, str] | str | None = None
    by_source: bool = False

    def recorded(self) -> dict[str, str]:
        out = {} if self.condition is None else {"predicate": self.condition}
        return {**out, "actionType": self.action}


def assignments(clause: MergeClause, names: Sequence[str], source: str) -> dict[str, str]:
    """The clause's assignments keyed by the table's spelling of each column ("*": every
    column from the same-named source column)."""
    if clause.assignments == "*":
        return {n: f"{source}.`{n}`" for n in names}
    assert isinstance(clause.assignments, Mapping)
    resolve = {n.lower(): n for n in names}
    return {resolve[c.lower().split(".")[-1]]: e for c, e in clause.assignments.items()}


def _clauses_json(spark: SparkSession, clauses: Sequence[MergeClause]) -> str:
    """A MERGE's clauses as delta-spark records them: compact JSON, conditions as Spark prints
    them."""
    recorded = []
    for clause in clauses:
        entry = clause.recorded()
        if clause.condition is not None:
            entry["predicate"] = conditions.parse(spark, clause.condition).rendered
        recorded.append(entry)
    return json.dumps(recorded, separators=(",", ":"))


@dataclass(frozen=True)
class MergeClauses:
    """A MERGE's clauses by kind, each in order: WHEN MATCHED, WHEN NOT MATCHED (inserts) and
    WHEN NOT MATCHED BY SOURCE."""

    matched: list[MergeClause]
    inserts: list[MergeClause]
    by_source: list[MergeClause]

    @classmethod
    def of(cls, clauses: Sequence[MergeClause]) -> MergeClauses:
        return cls(
            [c for c in clauses if c.action in {"update", "delete"} and not c.by_source],
            [c for c in clauses if c.action == "insert"],
            [c for c in clauses if c.by_source],
        )

    @property
    def deletes_every_match(self) -> bool:
        """Whether the only WHEN MATCHED clause is one unconditional delete: then a target row
        several source rows match is deleted either way, which delta-spark allows; any other
        MERGE (one without WHEN MATCHED clauses too) refuses such a row as ambiguous."""
        return (
            len(self.matched) == 1
            and self.matched[0].action == "delete"
            and (self.matched[0].condition is None)
        )

    def parameters(self, spark: SparkSession, on: conditions.Condition) -> dict[str, str]:
        return {
            "predicate": json.dumps([on.rendered]),
            "matchedPredicates": _clauses_json(spark, self.matched),
            "notMatchedPredicates": _clauses_json(spark, self.inserts),
            "notMatchedBySourcePredicates": _clauses_json(spark, self.by_source),
        }


def applying(clauses: Sequence[MergeClause], eligible: Column) -> list[tuple[MergeClause, Column]]:
    """Each clause with the rows it applies to: the ``eligible`` rows no earlier clause took
    whose condition holds (the first applicable clause wins, in order)."""
    out: list[tuple[MergeClause, Column]] = []
    handled = F.lit(False)
    for clause in clauses:
        applies = eligible & ~handled
        if clause.condition is not None:
            applies = applies & rewrite.matches(clause.condition)
        out.append((clause, applies))
        handled = handled | applies
    return out


def apply(
    clauses: Sequence[MergeClause],
    eligible: Column,
    values: dict[str, Column],
    names: Sequence[str],
    source: str,
) -> tuple[Column, Column]:
    """The clauses applied (:func:`applying`): the new ``values`` (updated in place), the
    rows kept (not deleted), and the rows some clause applied to."""
    keep, handled = F.lit(True), F.lit(False)
    for clause, applies in applying(clauses, eligible):
        if clause.action == "delete":
            keep = keep & ~applies
        else:
            for column, expr in assignments(clause, names, source).items():
                values[column] = F.when(applies, F.expr(expr)).otherwise(values[column])
        handled = handled | applies
    return keep, handled


def any_applies(clauses: Sequence[MergeClause]) -> Column:
    """Rows some clause of ``clauses`` may apply to (a clause without condition: every row)."""
    out = F.lit(False)
    for clause in clauses:
        if clause.condition is None:
            return F.lit(True)
        out = out | rewrite.matches(clause.condition)
    return out


def outcomes(clauses: Sequence[MergeClause], eligible: Column) -> tuple[Column, Column]:
    """Of the ``eligible`` rows, those a clause updates and those one deletes
    (:func:`applying`)."""
    updated, deleted = F.lit(False), F.lit(False)
    for clause, applies in applying(clauses, eligible):
        if clause.action == "delete":
            deleted = deleted | applies
        else:
            updated = updated | applies
    return updated, deleted
