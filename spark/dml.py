"""DELETE, UPDATE and MERGE as copy-on-write.

Each reads the way delta-spark's command does: its condition's partition part as the read
predicate and the candidate files left after data skipping as the files read; it rewrites only
the files holding matching rows, and commits commitInfo operation names and parameters like
delta-spark's (predicates as JSON arrays, v3.0.0+).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from deltaspec.impl import errors
from deltaspec.impl.actions import Action, AddFile, RemoveFile
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.snapshot.state import Snapshot
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

from . import conditions, manifest, rewrite, stats
from . import deletion_vectors as dvs
from . import schema as schemas
from .errors import MultipleSourceRowMatchError, UnresolvedColumnError, UpdateValueError
from .read import FILE_COLUMN, ROW_INDEX_COLUMN, scan, table_schema
from .s3a import local_root
from .write import assert_removable, require_writable, write_data


@dataclass(frozen=True)
class DmlResult:
    version: int | None
    removes: tuple[RemoveFile, ...] = ()
    adds: tuple[AddFile, ...] = ()
    metrics: Mapping[str, str] = field(default_factory=dict)


def _start(
    path: str | os.PathLike[str], read_version: int | None = None
) -> tuple[str, OptimisticTransaction, Snapshot]:
    """The transaction of a DML command: on the latest snapshot, or on ``read_version`` (an
    older snapshot: the command then commits as one that began back then, checked against every
    commit since, which is how a test reproduces a race without threads)."""
    root = local_root(path, "DML")
    log = DeltaLog(root)
    if read_version is None:
        txn = OptimisticTransaction(log)
    else:
        txn = OptimisticTransaction(log, log.snapshot(read_version))
    if txn.snapshot is None:
        raise errors.TableNotFoundError(f"{root} is not a Delta table", table=root)
    require_writable(txn.snapshot.protocol, root)
    assert_removable(txn, root)
    return root, txn, txn.snapshot


def _check(
    spark: SparkSession,
    snapshot: Snapshot,
    sql: str,
    operation: str,
    frame: DataFrame | None = None,
    deterministic: bool = True,
) -> None:
    """conditions.check over the table's columns (or ``frame``'s)."""
    names = _names(snapshot)
    empty = frame if frame is not None else spark.createDataFrame([], table_schema(snapshot))
    conditions.check(
        empty,
        sql,
        operation=operation,
        table=snapshot.table_path,
        version=snapshot.version,
        columns=names,
        deterministic=deterministic,
    )


def _pause(before_commit: Callable[[], None] | None) -> None:
    """Tests interleave writers here: the data is written, the commit not yet attempted."""
    if before_commit is not None:
        before_commit()


def _names(snapshot: Snapshot) -> list[str]:
    return schemas.field_names(schemas.parse(snapshot.metadata.schema_string))


def _rows(adds: Sequence[AddFile | RemoveFile]) -> int:
    return sum(stats.num_records(getattr(a, "stats", None)) or 0 for a in adds)


@dataclass(frozen=True)
class _Read:
    """What a DELETE or UPDATE read: the predicate commitInfo records, the parsed condition
    (None: no condition) and the candidate files."""

    predicate: str
    condition: conditions.Condition | None
    files: list[AddFile]


def _read(spark: SparkSession, txn: OptimisticTransaction, condition: str | None) -> _Read:
    """The whole table without a condition, else the condition's candidates (read_candidates)."""
    if condition is None:
        return _Read("[]", None, txn.filter_files())
    assert txn.snapshot is not None
    parsed = conditions.parse(spark, condition, _names(txn.snapshot), table=txn.log.table_path)
    return _Read(json.dumps([parsed.rendered]), parsed, rewrite.read_candidates(txn, parsed))


def _file_metrics(removed: Sequence[AddFile], added: Sequence[AddFile]) -> dict[str, str]:
    return {
        "numRemovedFiles": str(len(removed)),
        "numRemovedBytes": str(sum(f.size for f in removed)),
        "numAddedFiles": str(len(added)),
        "numAddedBytes": str(sum(a.size for a in added)),
    }


def _commit(
    txn: OptimisticTransaction,
    operation: str,
    parameters: dict[str, str],
    metrics: dict[str, str],
    removes: Sequence[RemoveFile],
    adds: Sequence[AddFile],
    before_commit: Callable[[], None] | None,
) -> DmlResult:
    """The command's one commit (none when it changes nothing), then the manifest."""
    actions: list[Action] = [*removes, *adds]
    _pause(before_commit)
    version = txn.commit_if_needed(actions, Operation(operation, parameters, metrics=metrics))
    manifest.after_commit(txn.log.table_path, version)
    return DmlResult(version, tuple(removes), tuple(adds), metrics)


def delete(
    spark: SparkSession,
    path: str | os.PathLike[str],
    condition: str | None = None,
    *,
    before_commit: Callable[[], None] | None = None,
    read_version: int | None = None,
) -> DmlResult:
    """DELETE FROM table [WHERE condition]: whole files when the condition is over partition
    columns only, else the files holding a matching row, rewritten without those rows."""
    root, txn, snapshot = _start(path, read_version)
    now = txn.clock()
    if condition is not None:
        _check(spark, snapshot, condition, "DELETE")
    read = _read(spark, txn, condition)
    parsed = read.condition
    rewritten = False  # delta-spark's rewrite path tombstones scanned files, which carry no stats
    if parsed is None or (parsed.exact and parsed.only_over(snapshot.metadata.partition_columns)):
        gone, kept = read.files, []  # whole files, no rewrite (metadata-only delete)
    elif dvs.enabled(snapshot):
        return _delete_by_vectors(spark, txn, read, parsed.sql, now, before_commit)
    else:
        gone = rewrite.touched(spark, root, snapshot, read.files, parsed.sql)
        kept = rewrite.rewrite_without(spark, root, snapshot, gone, parsed.sql)
        rewritten = True
    removes = [rewrite.remove(f, now, with_stats=not rewritten) for f in gone]
    before = sum(stats.num_records(f.stats) or 0 for f in gone)
    metrics = {
        **_file_metrics(gone, kept),
        "numCopiedRows": str(_rows(kept)),
        "numDeletedRows": str(before - _rows(kept)),
    }
    if metrics["numDeletedRows"] == "0" and metrics["numRemovedFiles"] != "0":
        # files removed whose rows no stats count (a metadata-only delete of files without
        # numRecords): delta-spark leaves the row metrics out rather than report 0 rows
        for name in ("numDeletedRows", "numCopiedRows", "numAddedFiles"):
            del metrics[name]
    parameters = {"predicate": read.predicate}
    return _commit(txn, "DELETE", parameters, metrics, removes, kept, before_commit)


def _delete_by_vectors(
    spark: SparkSession,
    txn: OptimisticTransaction,
    read: _Read,
    sql: str,
    now: int,
    before_commit: Callable[[], None] | None,
) -> DmlResult:
    """DELETE on a table with deletion vectors enabled: matching rows marked, no file
    rewritten (DV.WRITE)."""
    assert txn.snapshot is not None
    root = txn.log.table_path
    marked = dvs.marked_rows(spark, root, txn.snapshot, read.files, rewrite.matches(sql))
    changes = dvs.mark_deleted(root, read.files, marked, now)
    metrics = {
        "numRemovedFiles": str(changes.files_removed),
        "numRemovedBytes": "0",
        "numAddedFiles": "0",
        "numAddedBytes": "0",
        "numCopiedRows": "0",
        "numDeletedRows": str(changes.deleted_rows),
        **changes.metrics(),
    }
    parameters = {"predicate": read.predicate}
    return _commit(txn, "DELETE", parameters, metrics, changes.removes, changes.adds, before_commit)


def _update_targets(
    snapshot: Snapshot, assignments: Mapping[str, str], root: str
) -> dict[str, str]:
    """``assignments`` keyed by the table's spelling of each column; unknown columns refused."""
    names = _names(snapshot)
    resolve = {n.lower(): n for n in names}
    unknown = [c for c in assignments if c.lower() not in resolve]
    if unknown:
        raise UnresolvedColumnError(
            f"cannot update unknown column {unknown[0]!r}; the table's columns are {names}",
            table=root,
            version=snapshot.version,
        )
    return {resolve[c.lower()]: expr for c, expr in assignments.items()}


def _updated(
    rows: DataFrame, snapshot: Snapshot, targets: Mapping[str, str], matched: Column
) -> DataFrame:
    """``rows`` with each target column set to its expression where ``matched``."""
    types = {f.name: f.dataType for f in table_schema(snapshot).fields}
    return rows.select(
        *(
            F.when(matched, F.expr(targets[n]).cast(types[n])).otherwise(F.col(f"`{n}`")).alias(n)
            if n in targets
            else F.col(f"`{n}`")
            for n in _names(snapshot)
        )
    )


def _check_constant_values(
    spark: SparkSession, snapshot: Snapshot, targets: Mapping[str, str]
) -> None:
    """Every assignment that names no column is cast to its column's type once, by Spark's ANSI
    cast, before any file is written: a value that does not fit is UpdateValueError (the write
    would have failed midway, or stored null)."""
    types = {f.name: f.dataType for f in table_schema(snapshot).fields}
    for column, expression in targets.items():
        try:
            constant = spark.sql(f"SELECT ({expression}) AS v")
        except AnalysisException:
            continue  # it reads a column: cast row by row as the rows are written
        try:
            constant.select(F.col("v").cast(types[column])).collect()
        except Exception as refused:  # py4j wraps Spark's SparkNumberFormatException & co.
            named = re.search(r"\[([A-Z_]+)", str(refused))
            raise UpdateValueError(
                f"UPDATE cannot set {column} ({types[column].simpleString()}) to {expression}: "
                f"{named.group(1) if named else type(refused).__name__}",
                table=snapshot.table_path,
                version=snapshot.version,
            ) from None


def update(
    spark: SparkSession,
    path: str | os.PathLike[str],
    assignments: Mapping[str, str],
    condition: str | None = None,
    *,
    before_commit: Callable[[], None] | None = None,
    read_version: int | None = None,
) -> DmlResult:
    """UPDATE table SET column = expression, ... [WHERE condition]: the files holding a matching
    row, rewritten with the new values."""
    root, txn, snapshot = _start(path, read_version)
    now = txn.clock()
    targets = _update_targets(snapshot, assignments, root)
    if condition is not None:
        _check(spark, snapshot, condition, "UPDATE")
    empty = spark.createDataFrame([], table_schema(snapshot))
    for expression in assignments.values():
        _check(spark, snapshot, f"({expression}) IS NULL OR TRUE", "UPDATE", empty, False)
    _check_constant_values(spark, snapshot, targets)
    read = _read(spark, txn, condition)
    if condition is None:
        hit, matched, updated = read.files, F.lit(True), _live_rows(read.files)
    else:
        counts = rewrite.matching_rows(spark, root, snapshot, read.files, condition)
        hit = [f for f in read.files if f.path in counts]
        matched, updated = rewrite.matches(condition), sum(counts.values())
    parameters = {"predicate": read.predicate}
    if dvs.enabled(snapshot) and hit:
        changed = _update_by_vectors(spark, root, snapshot, hit, targets, matched, now)
        return _commit(txn, "UPDATE", parameters, changed[2], *changed[:2], before_commit)
    adds: list[AddFile] = []
    if hit:
        rows = scan(spark, root, snapshot, hit)
        adds = write_data(_updated(rows, snapshot, targets, matched), root, snapshot.metadata)
    removes = [rewrite.remove(f, now) for f in hit]
    if updated is None:  # a file without numRecords: the rows counted
        updated = scan(spark, root, snapshot, hit).count() if hit else 0
    metrics = {
        **_file_metrics(hit, adds),
        "numUpdatedRows": str(updated),
        "numCopiedRows": str(_rows(adds) - updated),
    }
    return _commit(txn, "UPDATE", parameters, metrics, removes, adds, before_commit)


def _update_by_vectors(
    spark: SparkSession,
    root: str,
    snapshot: Snapshot,
    hit: Sequence[AddFile],
    targets: Mapping[str, str],
    matched: Column,
    now: int,
) -> tuple[list[RemoveFile], list[AddFile], dict[str, str]]:
    """UPDATE with deletion vectors (DV.WRITE): the matched rows marked deleted in their files
    and written, updated, to new files."""
    rows = scan(spark, root, snapshot, hit).where(matched)
    written = write_data(_updated(rows, snapshot, targets, F.lit(True)), root, snapshot.metadata)
    changes = dvs.mark_deleted(root, hit, dvs.marked_rows(spark, root, snapshot, hit, matched), now)
    adds = [*changes.adds, *written]
    metrics = {
        "numRemovedFiles": str(len(hit)),
        "numRemovedBytes": "0",
        "numAddedFiles": str(len(written)),
        "numAddedBytes": str(sum(a.size for a in written)),
        "numCopiedRows": "0",
        "numUpdatedRows": str(changes.deleted_rows),
        **changes.metrics(),
    }
    return list(changes.removes), adds, metrics


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


def _assignments(clause: MergeClause, names: Sequence[str], source: str) -> dict[str, str]:
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


def _applying(clauses: Sequence[MergeClause], eligible: Column) -> list[tuple[MergeClause, Column]]:
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


def _apply(
    clauses: Sequence[MergeClause],
    eligible: Column,
    values: dict[str, Column],
    names: Sequence[str],
    source: str,
) -> tuple[Column, Column]:
    """The clauses applied (:func:`_applying`): the new ``values`` (updated in place), the
    rows kept (not deleted), and the rows some clause applied to."""
    keep, handled = F.lit(True), F.lit(False)
    for clause, applies in _applying(clauses, eligible):
        if clause.action == "delete":
            keep = keep & ~applies
        else:
            for column, expr in _assignments(clause, names, source).items():
                values[column] = F.when(applies, F.expr(expr)).otherwise(values[column])
        handled = handled | applies
    return keep, handled


def _any_applies(clauses: Sequence[MergeClause]) -> Column:
    """Rows some clause of ``clauses`` may apply to (a clause without condition: every row)."""
    out = F.lit(False)
    for clause in clauses:
        if clause.condition is None:
            return F.lit(True)
        out = out | rewrite.matches(clause.condition)
    return out


def _outcomes(clauses: Sequence[MergeClause], eligible: Column) -> tuple[Column, Column]:
    """Of the ``eligible`` rows, those a clause updates and those one deletes
    (:func:`_applying`)."""
    updated, deleted = F.lit(False), F.lit(False)
    for clause, applies in _applying(clauses, eligible):
        if clause.action == "delete":
            deleted = deleted | applies
        else:
            updated = updated | applies
    return updated, deleted


MERGE_ROW_COUNTS = (
    "numTargetRowsMatchedUpdated",
    "numTargetRowsMatchedDeleted",
    "numTargetRowsNotMatchedBySourceUpdated",
    "numTargetRowsNotMatchedBySourceDeleted",
)
"""What the touched-files pass counts, per touched file (delta-spark's names)."""


@dataclass(frozen=True)
class _MergeClauses:
    """A MERGE's clauses by kind, each in order: WHEN MATCHED, WHEN NOT MATCHED (inserts) and
    WHEN NOT MATCHED BY SOURCE."""

    matched: list[MergeClause]
    inserts: list[MergeClause]
    by_source: list[MergeClause]

    @classmethod
    def of(cls, clauses: Sequence[MergeClause]) -> _MergeClauses:
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


@dataclass(frozen=True)
class _MergeFrames:
    """The two sides of a MERGE: the source flagged aliased ``s`` and how to read the target's
    files as rows (with their file and, with deletion vectors, each row's index) aliased ``t``,
    joined ON ``on``."""

    source: DataFrame
    on: str
    t: str
    s: str
    names: list[str]
    types: dict[str, Any]
    target: Callable[[Sequence[AddFile]], DataFrame]
    marked: dict[str, set[int]] | None = None
    """With deletion vectors: filled with the target rows a clause changed, per file."""

    def joined(self, files: Sequence[AddFile], how: str) -> DataFrame:
        return self.target(files).join(self.source, F.expr(self.on), how)


def _merge_read(
    txn: OptimisticTransaction, on: conditions.Condition, t: str, clauses: _MergeClauses
) -> list[AddFile]:
    """delta-spark: filterFiles(target-only predicates of the ON condition) — predicate + files
    read; a NOT MATCHED BY SOURCE clause reads every file (target rows outside ON count too)."""
    target_only = replace(
        on, conjuncts=tuple(c for c in on.conjuncts if c.qualifiers == {t} and c.expr is not None)
    )
    narrowed = target_only if target_only.conjuncts and not clauses.by_source else None
    return rewrite.read_candidates(txn, narrowed)


def _merge_touched(
    frames: _MergeFrames, clauses: _MergeClauses, read: Sequence[AddFile], root: str
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
    is_match = F.col(f"{s}.__deltaspec_source").isNotNull()
    if clauses.by_source:  # every candidate file: the left join holds every target row
        touching = F.lit(True)
    elif clauses.inserts:
        touching = is_match
    else:  # only WHEN MATCHED clauses: files where one of them may apply
        touching = is_match & _any_applies(clauses.matched)
    flags = [*_outcomes(clauses.matched, is_match), *_outcomes(clauses.by_source, ~is_match)]
    per_row = rows.groupBy(f"{t}.{FILE_COLUMN}", f"{t}.__deltaspec_row").agg(
        F.count(f"{s}.__deltaspec_source").alias("matches"),
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


def _insert_values(
    frames: _MergeFrames, inserts: Sequence[MergeClause]
) -> tuple[Column, list[Column]]:
    """WHEN NOT MATCHED clauses over a source row, the first that applies winning: whether one
    applies and the table's columns it inserts (in order, unnamed)."""
    values: dict[str, Column] = {n: F.lit(None) for n in frames.names}
    handled = F.lit(False)
    for clause in inserts:
        applies = ~handled
        if clause.condition is not None:
            applies = applies & rewrite.matches(clause.condition)
        exprs = _assignments(clause, frames.names, frames.s)
        for n, expr in exprs.items():
            values[n] = F.when(applies, F.expr(expr)).otherwise(values[n])
        handled = handled | applies
    return handled, [values[n].cast(frames.types[n]) for n in frames.names]


def _merge_rewrite(
    frames: _MergeFrames, clauses: _MergeClauses, hit: Sequence[AddFile]
) -> DataFrame | None:
    """delta-spark's writeAllChanges: one join of the touched files with the source — a full
    outer join when it also yields the inserts (every source row that matches a target row
    matches one in a touched file once a WHEN MATCHED clause exists) — and its rows after the
    clauses (deleted rows dropped, updated rows changed, the others copied, inserts added)."""
    t, s, names = frames.t, frames.s, frames.names
    with_inserts = bool(clauses.inserts) and bool(clauses.matched)
    if not hit:
        return None
    rows = frames.joined(hit, "full" if with_inserts else "left")
    if not clauses.matched:  # matched rows stay as they are: one row per target row
        # by unqualified names (dropDuplicates resolves no alias): only the target has them
        rows = rows.dropDuplicates([FILE_COLUMN, "__deltaspec_row"])
    is_target = F.col(f"{t}.{FILE_COLUMN}").isNotNull()
    is_match = is_target & F.col(f"{s}.__deltaspec_source").isNotNull()
    values = {n: F.col(f"{t}.`{n}`") for n in names}
    keep_matched, handled_matched = _apply(clauses.matched, is_match, values, names, s)
    unmatched = is_target & ~is_match
    keep_unmatched, handled_unmatched = _apply(clauses.by_source, unmatched, values, names, s)
    kept = keep_matched & keep_unmatched
    if frames.marked is not None:  # deletion vectors: only the changed rows are written
        changed = handled_matched | handled_unmatched
        marked = rows.where(changed).select(f"{t}.{FILE_COLUMN}", f"{t}.{ROW_INDEX_COLUMN}")
        for path, index in marked.collect():
            frames.marked.setdefault(path, set()).add(int(index))
        kept = kept & changed
    columns = [values[n].cast(frames.types[n]) for n in names]
    if not with_inserts:
        return rows.where(kept).select(*(c.alias(n) for c, n in zip(columns, names, strict=True)))
    inserted, inserts = _insert_values(frames, clauses.inserts)
    return rows.where(F.when(is_target, kept).otherwise(inserted)).select(
        *(
            F.when(is_target, c).otherwise(i).alias(n)
            for c, i, n in zip(columns, inserts, names, strict=True)
        )
    )


def _merge_inserts(
    frames: _MergeFrames, clauses: _MergeClauses, read: Sequence[AddFile], hit: Sequence[AddFile]
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


def _live_rows(files: Sequence[AddFile]) -> int | None:
    """The rows the files hold (numRecords less a deletion vector's), None if one has no
    numRecords."""
    total = 0
    for f in files:
        records = stats.num_records(f.stats)
        if records is None:
            return None
        total += records - (f.deletion_vector.cardinality if f.deletion_vector else 0)
    return total


def _merge_metrics(
    frames: _MergeFrames,
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
    output = _rows(written)
    copied = 0
    if frames.marked is None and hit:
        live = _live_rows(hit)
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


def merge(
    spark: SparkSession,
    path: str | os.PathLike[str],
    source: DataFrame,
    on: str,
    clauses: Sequence[MergeClause],
    *,
    target_alias: str = "t",
    source_alias: str = "s",
    before_commit: Callable[[], None] | None = None,
    read_version: int | None = None,
) -> DmlResult:
    """MERGE INTO table AS t USING source AS s ON ... WHEN MATCHED ... WHEN NOT MATCHED ...
    WHEN NOT MATCHED BY SOURCE ..."""
    root, txn, snapshot = _start(path, read_version)
    now = txn.clock()
    names = _names(snapshot)
    t, s = target_alias, source_alias
    types = {f.name: f.dataType for f in table_schema(snapshot).fields}
    frame = spark.createDataFrame([], table_schema(snapshot)).alias(t).crossJoin(source.alias(s))
    for sql in [on, *(c.condition for c in clauses if c.condition is not None)]:
        _check(spark, snapshot, sql, "MERGE", frame)
    parsed = conditions.parse(spark, on, names, table=root)
    kinds = _MergeClauses.of(clauses)
    read = _merge_read(txn, parsed, t, kinds)
    by_vectors = dvs.enabled(snapshot)

    def target(files: Sequence[AddFile]) -> DataFrame:
        rows = scan(spark, root, snapshot, files, with_file=True, with_row_index=by_vectors)
        return rows.withColumn("__deltaspec_row", F.monotonically_increasing_id()).alias(t)

    flagged_source = source.withColumn("__deltaspec_source", F.lit(True)).alias(s)
    marked: dict[str, set[int]] | None = {} if by_vectors else None
    frames = _MergeFrames(flagged_source, on, t, s, names, types, target, marked)
    hit: list[AddFile] = []
    counts = dict.fromkeys(MERGE_ROW_COUNTS, 0)
    output: DataFrame | None = None
    if (kinds.matched or kinds.by_source) and read:
        hit, counts = _merge_touched(frames, kinds, read, root)
        output = _merge_rewrite(frames, kinds, hit)
    inserts = _merge_inserts(frames, kinds, read, hit)
    if inserts is not None:
        output = inserts if output is None else output.unionByName(inserts)
    adds = [] if output is None else write_data(output, root, snapshot.metadata)
    removes = [rewrite.remove(f, now, with_stats=True) for f in hit]
    metrics = _merge_metrics(frames, hit, adds, counts, source.count())
    if marked is not None:  # DV.WRITE: the changed rows marked, their files kept
        changes = dvs.mark_deleted(root, hit, marked, now)
        removes, adds = list(changes.removes), [*changes.adds, *adds]
        metrics = {**metrics, "numTargetFilesRemoved": str(changes.files_removed)}
        metrics |= changes.metrics("numTarget")
    parameters = kinds.parameters(spark, parsed)
    return _commit(txn, "MERGE", parameters, metrics, removes, adds, before_commit)
