"""What a MERGE's conditions select: the target files it reads (its conflict read set) and,
of those, the files it touches, with the row counts of each kind of clause."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pyspark.sql import functions as F

from ....impl.actions import AddFile
from ....impl.txn.transaction import OptimisticTransaction
from ... import conditions, rewrite
from ...errors import MultipleSourceRowMatchError
from ...read import FILE_COLUMN
from .clauses import MergeClauses, any_applies, outcomes
from .frames import SOURCE_FLAG, TARGET_ROW, MergeFrames

MERGE_ROW_COUNTS = (
    "numTargetRowsMatchedUpdated",
    "numTargetRowsMatchedDeleted",
    "numTargetRowsNotMatchedBySourceUpdated",
    "numTargetRowsNotMatchedBySourceDeleted",
)
"""What the touched-files pass counts, per touched file (delta-spark's names)."""


def files_read(
    txn: OptimisticTransaction, on: conditions.Condition, t: str, clauses: MergeClauses
) -> list[AddFile]:
    """delta-spark: filterFiles(target-only predicates of the ON condition) — predicate + files
    read; a NOT MATCHED BY SOURCE clause reads every file (target rows outside ON count too)."""
    target_only = replace(
        on, conjuncts=tuple(c for c in on.conjuncts if c.qualifiers == {t} and c.expr is not None)
    )
    narrowed = target_only if target_only.conjuncts and not clauses.by_source else None
    return rewrite.read_candidates(txn, narrowed)


def touched_files(
    frames: MergeFrames, clauses: MergeClauses, read: Sequence[AddFile], root: str
) -> tuple[list[AddFile], dict[str, int]]:
    """delta-spark's findTouchedFiles: one join of the candidates with the source gives the
    files the MERGE rewrites and, in the same pass, whether a target row matched two source rows
    (ambiguous, but for a lone unconditional delete) and how many target rows each kind of
    clause updates and deletes (:data:`MERGE_ROW_COUNTS`). As delta-spark 4.4 (ClassicMerge
    Executor), a file is touched by any row of the join when the MERGE has NOT MATCHED BY
    SOURCE clauses (every candidate file), by a matched row when it has inserts, and by a
    matched row some WHEN MATCHED clause's condition may hold for when it has only those; with
    deletion vectors only the files with changed rows are rewritten (DV.WRITE)."""
    t, s = frames.t, frames.s
    rows = frames.joined(read, "left" if clauses.by_source else "inner")
    is_match = F.col(f"{s}.{SOURCE_FLAG}").isNotNull()
    if clauses.by_source:  # every candidate file: the left join holds every target row
        touching = F.lit(True)
    elif clauses.inserts:
        touching = is_match
    else:  # only WHEN MATCHED clauses: files where one of them may apply
        touching = is_match & any_applies(clauses.matched)
    flags = [*outcomes(clauses.matched, is_match), *outcomes(clauses.by_source, ~is_match)]
    per_row = rows.groupBy(f"{t}.{FILE_COLUMN}", f"{t}.{TARGET_ROW}").agg(
        F.count(f"{s}.{SOURCE_FLAG}").alias("matches"),
        F.max(touching.cast("int")).alias("touched"),
        *(F.max(f.cast("int")).alias(n) for f, n in zip(flags, MERGE_ROW_COUNTS, strict=True)),
    )
    per_file = per_row.groupBy(FILE_COLUMN).agg(
        F.max("matches").alias("matches"),
        F.max("touched").alias("touched"),
        *(F.sum(n).alias(n) for n in MERGE_ROW_COUNTS),
    )
    found = per_file.where("touched = 1 OR matches > 1").collect()
    if any(r["matches"] > 1 for r in found) and not clauses.deletes_every_match:
        raise MultipleSourceRowMatchError(
            "a target row matched more than one source row", table=root
        )
    touched = {r[FILE_COLUMN] for r in found if r["touched"] == 1}
    counts = {n: sum(r[n] or 0 for r in found if r["touched"] == 1) for n in MERGE_ROW_COUNTS}
    return [f for f in read if f.path in touched], counts
