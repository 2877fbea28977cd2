"""Writing a MERGE's changes: the touched files' rows after the clauses and the inserted rows
to new files, the actions that replace the touched files (or, with deletion vectors, mark their
changed rows) and what they count (delta-spark's operationMetrics)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ....impl.actions import AddFile, RemoveFile
from ....impl.snapshot.state import Snapshot
from ... import deletion_vectors as dvs
from ... import rewrite
from ...read import FILE_COLUMN, ROW_INDEX_COLUMN
from ...write import write_data
from ..command import live_rows, rows
from .clauses import MergeClause, MergeClauses, apply, assignments
from .filter import MERGE_ROW_COUNTS
from .frames import SOURCE_FLAG, TARGET_ROW, MergeFrames


def _insert_values(
    frames: MergeFrames, inserts: Sequence[MergeClause]
) -> tuple[Column, list[Column]]:
    """WHEN NOT MATCHED clauses over a source row, the first that applies winning: whether one
    applies and the table's columns it inserts (in order, unnamed)."""
    values: dict[str, Column] = {n: F.lit(None) for n in frames.names}
    handled = F.lit(False)
    for clause in inserts:
        applies = ~handled
        if clause.condition is not None:
            applies = applies & rewrite.matches(clause.condition)
        exprs = assignments(clause, frames.names, frames.s)
        for n, expr in exprs.items():
            values[n] = F.when(applies, F.expr(expr)).otherwise(values[n])
        handled = handled | applies
    return handled, [values[n].cast(frames.types[n]) for n in frames.names]


def _rewritten(
    frames: MergeFrames, clauses: MergeClauses, hit: Sequence[AddFile]
) -> DataFrame | None:
    """delta-spark's writeAllChanges: one join of the touched files with the source — a full
    outer join when it also yields the inserts (every source row that matches a target row
    matches one in a touched file once a WHEN MATCHED clause exists) — and its rows after the
    clauses (deleted rows dropped, updated rows changed, the others copied, inserts added)."""
    t, s, names = frames.t, frames.s, frames.names
    with_inserts = bool(clauses.inserts) and bool(clauses.matched)
    if not hit:
        return None
    joined = frames.joined(hit, "full" if with_inserts else "left")
    if not clauses.matched:  # matched rows stay as they are: one row per target row
        # by unqualified names (dropDuplicates resolves no alias): only the target has them
        joined = joined.dropDuplicates([FILE_COLUMN, TARGET_ROW])
    is_target = F.col(f"{t}.{FILE_COLUMN}").isNotNull()
    is_match = is_target & F.col(f"{s}.{SOURCE_FLAG}").isNotNull()
    values = {n: F.col(f"{t}.`{n}`") for n in names}
    keep_matched, handled_matched = apply(clauses.matched, is_match, values, names, s)
    unmatched = is_target & ~is_match
    keep_unmatched, handled_unmatched = apply(clauses.by_source, unmatched, values, names, s)
    kept = keep_matched & keep_unmatched
    if frames.marked is not None:  # deletion vectors: only the changed rows are written
        changed = handled_matched | handled_unmatched
        marked = joined.where(changed).select(f"{t}.{FILE_COLUMN}", f"{t}.{ROW_INDEX_COLUMN}")
        for path, index in marked.collect():
            frames.marked.setdefault(path, set()).add(int(index))
        kept = kept & changed
    columns = [values[n].cast(frames.types[n]) for n in names]
    if not with_inserts:
        return joined.where(kept).select(*(c.alias(n) for c, n in zip(columns, names, strict=True)))
    inserted, inserts = _insert_values(frames, clauses.inserts)
    return joined.where(F.when(is_target, kept).otherwise(inserted)).select(
        *(
            F.when(is_target, c).otherwise(i).alias(n)
            for c, i, n in zip(columns, inserts, names, strict=True)
        )
    )


def _inserted(
    frames: MergeFrames, clauses: MergeClauses, read: Sequence[AddFile], hit: Sequence[AddFile]
) -> DataFrame | None:
    """The inserts the rewrite join did not yield: every source row when no target row matched
    (a WHEN MATCHED clause exists and touched nothing, or nothing was read), else (no WHEN
    MATCHED clause) the source rows no candidate row matches, by delta-spark's anti join."""
    if not clauses.inserts or (clauses.matched and hit):
        return None
    source = frames.source
    if read and not clauses.matched:
        source = source.join(frames.target(read), F.expr(frames.on), "left_anti")
    inserted, columns = _insert_values(frames, clauses.inserts)
    return source.where(inserted).select(
        *(c.alias(n) for c, n in zip(columns, frames.names, strict=True))
    )


def write_rows(
    frames: MergeFrames,
    clauses: MergeClauses,
    read: Sequence[AddFile],
    hit: Sequence[AddFile],
    root: str,
    snapshot: Snapshot,
) -> list[AddFile]:
    """The new files: the ``hit`` files' rows after the clauses and the inserted rows, written
    in one write (with deletion vectors, ``frames.marked`` filled with the changed rows)."""
    output = _rewritten(frames, clauses, hit)
    inserts = _inserted(frames, clauses, read, hit)
    if inserts is not None:
        output = inserts if output is None else output.unionByName(inserts)
    if output is None:
        return []
    return write_data(output, root, snapshot.metadata, protocol=snapshot.protocol)


def merge_metrics(
    frames: MergeFrames,
    hit: Sequence[AddFile],
    written: Sequence[AddFile],
    counts: Mapping[str, int],
    source_rows: int,
) -> dict[str, str]:
    """delta-spark's MERGE operationMetrics (DeltaOperationMetrics.MERGE) but its timings: the
    row counts from the touched-files pass; the rows written (numOutputRows, from the written
    files' numRecords) are the updated, inserted and copied rows, so the inserted rows are what
    is left of them; with deletion vectors nothing is copied."""
    updated = (
        counts["numTargetRowsMatchedUpdated"] + counts["numTargetRowsNotMatchedBySourceUpdated"]
    )
    deleted = (
        counts["numTargetRowsMatchedDeleted"] + counts["numTargetRowsNotMatchedBySourceDeleted"]
    )
    output = rows(written)
    copied = 0
    if frames.marked is None and hit:
        live = live_rows(hit)
        live = frames.target(hit).count() if live is None else live
        copied = live - updated - deleted
    return {
        "numSourceRows": str(source_rows),
        "numTargetRowsInserted": str(output - updated - copied),
        "numTargetRowsUpdated": str(updated),
        **{name: str(counts[name]) for name in MERGE_ROW_COUNTS},
        "numTargetRowsDeleted": str(deleted),
        "numTargetRowsCopied": str(copied),
        "numTargetFilesRemoved": str(len(hit)),
        "numTargetFilesAdded": str(len(written)),
        "numTargetBytesRemoved": str(sum(f.size for f in hit)),
        "numTargetBytesAdded": str(sum(a.size for a in written)),
        "numOutputRows": str(output),
    }


def file_actions(
    frames: MergeFrames,
    hit: Sequence[AddFile],
    written: Sequence[AddFile],
    metrics: dict[str, str],
    root: str,
    now: int,
) -> tuple[list[RemoveFile], list[AddFile], dict[str, str]]:
    """The removes and adds the MERGE commits, with its metrics: the ``hit`` files removed and
    the ``written`` ones added, or with deletion vectors (DV.WRITE) the changed rows marked in
    their files, which are kept."""
    removes = [rewrite.remove(f, now, with_stats=True) for f in hit]
    adds = list(written)
    if frames.marked is not None:
        changes = dvs.mark_deleted(root, hit, frames.marked, now)
        removes, adds = list(changes.removes), [*changes.adds, *adds]
        metrics = {**metrics, "numTargetFilesRemoved": str(changes.files_removed)}
        metrics |= changes.metrics("numTarget")
    return removes, adds, metrics
