"""What a transaction read, as the conflict checks use it (TXN.READ_*, CONFLICT.APPEND_MATCH):
its read predicates, files, whole-table flag and application ids, and which read predicate each
partition row of a winner's adds matches, evaluated once per distinct row."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow.compute as pc

from .. import predicates
from ..actions import AddFile
from ..predicates import PartitionSchema

PartitionRow = tuple[str | None, ...]
"""A file's raw partition values, in the order of the partition schema's columns."""


@dataclass
class PartitionMatches:
    """Which read predicate each distinct partition row matches first, for one read set and one
    partition schema (CONFLICT.APPEND_MATCH): each row is typed and evaluated once, against
    every predicate at once, and the answer is kept for the next winners."""

    schema: predicates.PartitionSchema
    predicates: tuple[predicates.Expr, ...]
    first: dict[PartitionRow, int] = field(default_factory=dict)
    """Row -> index of the first predicate it matches; ``len(predicates)``: none."""

    def first_hit(self, rows: list[PartitionRow]) -> int | None:
        """The index in ``rows`` of the first row matching the earliest predicate any row
        matches (what evaluating predicate by predicate, row by row, stops at), or None.
        An evaluation error is raised only where that order would reach it: when no row
        matches an earlier predicate than the one that failed."""
        distinct = list(dict.fromkeys(rows))
        first, none = self.first, len(self.predicates)
        failure = self._learn([row for row in distinct if row not in first])
        best = min((first.get(row, none) for row in distinct), default=none)
        if failure is not None and best >= failure[0]:
            raise failure[1]
        if best == none:
            return None
        return rows.index(next(row for row in distinct if first.get(row) == best))

    def _learn(self, new: list[PartitionRow]) -> tuple[int, Exception] | None:
        """Record the first matching predicate of each of the ``new`` rows; on an evaluation
        error, record the rows an earlier predicate matched and return (its index, the error)."""
        if not new:
            return None
        keys = [key for _, _, key in self.schema.columns]
        values = [dict(zip(keys, row, strict=True)) for row in new]
        columns = predicates.typed_columns(values, self.schema)
        none = len(self.predicates)
        first = [none] * len(new)
        for index, predicate in enumerate(self.predicates):
            try:
                hits = predicates.matches(predicate, columns, self.schema, len(new))
            except Exception as error:  # raised, or not, by first_hit
                self.first.update((r, f) for r, f in zip(new, first, strict=True) if f < none)
                return index, error
            if hits.true_count:
                for row in pc.indices_nonzero(hits).to_pylist():
                    first[row] = min(first[row], index)
        self.first.update(zip(new, first, strict=True))
        return None


@dataclass(frozen=True)
class ReadSet:
    predicates: tuple[predicates.Expr, ...] = ()
    files: dict[str, AddFile] = field(default_factory=dict)
    whole_table: bool = False
    app_ids: frozenset[str] = frozenset()
    depends_on_files: bool = False
    _matches: dict[PartitionSchema, PartitionMatches] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    def partition_matches(self, schema: PartitionSchema) -> PartitionMatches:
        """The read predicates' matches under ``schema``, kept across winners."""
        found = self._matches.get(schema)
        if found is None:
            found = PartitionMatches(schema, tuple(dict.fromkeys(self.predicates)))
            self._matches[schema] = found
        return found
