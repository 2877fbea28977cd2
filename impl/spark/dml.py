"""DELETE, UPDATE and MERGE as copy-on-write (reference §5.5).

Each reads the way delta-spark's command does: its condition's partition part as the read
predicate and the candidate files left after data skipping as the files read; it rewrites only
the files holding matching rows, and commits commitInfo operation names and parameters like
delta-spark's (predicates as JSON arrays, v3.0.0+).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from deltaspec.impl import errors
from deltaspec.impl.actions import Action, AddFile, RemoveFile
from deltaspec.impl.snapshot import DeltaLog, Snapshot
from deltaspec.impl.spark import conditions, files, manifest, rewrite, stats
from deltaspec.impl.spark import schema as schemas
from deltaspec.impl.spark.errors import MultipleSourceRowMatchError, UnresolvedColumnError
from deltaspec.impl.spark.read import FILE_COLUMN, scan, table_schema
from deltaspec.impl.spark.write import assert_removable, require_writable
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction


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
    root = os.path.abspath(path)
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


def write_rows(
    spark: SparkSession, root: str, snapshot: Snapshot, df: DataFrame, data_change: bool = True
) -> list[AddFile]:
    metadata = snapshot.metadata
    table = schemas.parse(metadata.schema_string)
    leaves = stats.indexed_leaves(table, metadata.partition_columns, metadata.configuration)
    not_null = [f["name"] for f in table["fields"] if not f.get("nullable", True)]
    written = files.write_files(
        df, root, metadata.partition_columns, leaves, data_change=data_change, not_null=not_null
    )
    return rewrite.non_empty(written.adds, root)


def _rows(adds: Sequence[AddFile | RemoveFile]) -> int:
    return sum(stats.num_records(getattr(a, "stats", None)) or 0 for a in adds)


def delete(
    spark: SparkSession,
    path: str | os.PathLike[str],
    condition: str | None = None,
    *,
    before_commit: Callable[[], None] | None = None,
    read_version: int | None = None,
) -> DmlResult:
    """DELETE FROM table [WHERE condition]."""
    root, txn, snapshot = _start(path, read_version)
    now = txn.clock()
    if condition is not None:
        _check(spark, snapshot, condition, "DELETE")
    rewritten = False  # delta-spark's rewrite path tombstones scanned files, which carry no stats
    if condition is None:
        gone = txn.filter_files()
        kept: list[AddFile] = []
        predicate = "[]"
    else:
        parsed = conditions.parse(spark, condition, _names(snapshot), table=root)
        predicate = json.dumps([parsed.rendered])
        read = rewrite.read_candidates(txn, parsed)
        exact = all(c.expr is not None for c in parsed.conjuncts)
        if exact and parsed.only_over(snapshot.metadata.partition_columns):
            gone, kept = read, []  # whole files, no rewrite (metadata-only delete)
        else:
            gone = rewrite.touched(spark, root, snapshot, read, condition)
            kept = rewrite.rewrite_without(spark, root, snapshot, gone, condition)
            rewritten = True
    removes = [rewrite.remove(f, now, with_stats=not rewritten) for f in gone]
    before = sum(stats.num_records(f.stats) or 0 for f in gone)
    metrics = {
        "numRemovedFiles": str(len(removes)),
        "numRemovedBytes": str(sum(f.size for f in gone)),
        "numAddedFiles": str(len(kept)),
        "numAddedBytes": str(sum(a.size for a in kept)),
        "numCopiedRows": str(_rows(kept)),
        "numDeletedRows": str(before - _rows(kept)),
    }
    actions: list[Action] = [*removes, *kept]
    _pause(before_commit)
    version = txn.commit_if_needed(
        actions, Operation("DELETE", {"predicate": predicate}, metrics=metrics)
    )
    manifest.after_commit(root, version)
    return DmlResult(version, tuple(removes), tuple(kept), metrics)


def update(
    spark: SparkSession,
    path: str | os.PathLike[str],
    assignments: Mapping[str, str],
    condition: str | None = None,
    *,
    before_commit: Callable[[], None] | None = None,
    read_version: int | None = None,
) -> DmlResult:
    """UPDATE table SET column = expression, ... [WHERE condition]."""
    root, txn, snapshot = _start(path, read_version)
    now = txn.clock()
    names = _names(snapshot)
    resolve = {n.lower(): n for n in names}
    unknown = [c for c in assignments if c.lower() not in resolve]
    if unknown:
        raise UnresolvedColumnError(
            f"cannot update unknown column {unknown[0]!r}; the table's columns are {names}",
            table=root,
            version=snapshot.version,
        )
    if condition is not None:
        _check(spark, snapshot, condition, "UPDATE")
    empty = spark.createDataFrame([], table_schema(snapshot))
    for expression in assignments.values():
        _check(spark, snapshot, f"({expression}) IS NULL OR TRUE", "UPDATE", empty, False)
    targets = {resolve[c.lower()]: expr for c, expr in assignments.items()}
    if condition is None:
        read = txn.filter_files()
        hit = read
        predicate = "[]"
        matched = F.lit(True)
    else:
        parsed = conditions.parse(spark, condition, names, table=root)
        predicate = json.dumps([parsed.rendered])
        read = rewrite.read_candidates(txn, parsed)
        hit = rewrite.touched(spark, root, snapshot, read, condition)
        matched = rewrite.matches(condition)
    types = {f.name: f.dataType for f in table_schema(snapshot).fields}
    rows = scan(spark, root, snapshot, hit) if hit else None
    adds: list[AddFile] = []
    if rows is not None:
        updated = rows.select(
            *(
                F.when(matched, F.expr(targets[n]).cast(types[n]))
                .otherwise(F.col(f"`{n}`"))
                .alias(n)
                if n in targets
                else F.col(f"`{n}`")
                for n in names
            )
        )
        adds = write_rows(spark, root, snapshot, updated)
    removes = [rewrite.remove(f, now) for f in hit]
    metrics = {
        "numRemovedFiles": str(len(removes)),
        "numRemovedBytes": str(sum(f.size for f in hit)),
        "numAddedFiles": str(len(adds)),
        "numAddedBytes": str(sum(a.size for a in adds)),
    }
    actions: list[Action] = [*removes, *adds]
    _pause(before_commit)
    version = txn.commit_if_needed(
        actions, Operation("UPDATE", {"predicate": predicate}, metrics=metrics)
    )
    manifest.after_commit(root, version)
    return DmlResult(version, tuple(removes), tuple(adds), metrics)


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


def _apply(
    clauses: Sequence[MergeClause],
    eligible: Column,
    values: dict[str, Column],
    names: Sequence[str],
    source: str,
) -> tuple[Column, Column]:
    """The first applicable clause wins (in order): the new ``values`` (updated in place), the
    rows kept (not deleted), and the rows some clause applied to."""
    keep, handled = F.lit(True), F.lit(False)
    for clause in clauses:
        applies = eligible & ~handled
        if clause.condition is not None:
            applies = applies & rewrite.matches(clause.condition)
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
    matched_clauses = [c for c in clauses if c.action in {"update", "delete"} and not c.by_source]
    inserts = [c for c in clauses if c.action == "insert"]
    by_source = [c for c in clauses if c.by_source]
    target_only = replace(
        parsed,
        conjuncts=tuple(c for c in parsed.conjuncts if c.qualifiers == {t} and c.expr is not None),
    )
    # delta-spark: filterFiles(target-only predicates of the ON condition) — predicate + files
    # read; a NOT MATCHED BY SOURCE clause reads every file (target rows outside ON count too)
    narrowed = target_only if target_only.conjuncts and not by_source else None
    read = rewrite.read_candidates(txn, narrowed)
    flagged_source = source.withColumn("__deltaspec_source", F.lit(True)).alias(s)
    target = (
        scan(spark, root, snapshot, read, with_file=True)
        .withColumn("__deltaspec_row", F.monotonically_increasing_id())
        .alias(t)
    )
    hit: list[AddFile] = []
    adds: list[AddFile] = []
    output: DataFrame | None = None
    if (matched_clauses or by_source) and read:
        if matched_clauses:
            joined = target.join(flagged_source, F.expr(on), "inner")
            duplicate = joined.groupBy(f"{t}.__deltaspec_row").count().where("count > 1").limit(1)
            if duplicate.collect():
                raise MultipleSourceRowMatchError(
                    "a target row matched more than one source row", table=root
                )
        rows = target.join(flagged_source, F.expr(on), "left")
        if not matched_clauses:
            rows = rows.dropDuplicates(["__deltaspec_row"])  # matched rows stay as they are
        is_match = F.col(f"{s}.__deltaspec_source").isNotNull()
        touching = F.lit(False)
        if matched_clauses:
            touching = touching | is_match
        if by_source:
            touching = touching | (~is_match & _any_applies(by_source))
        touched_paths = {
            r[0] for r in rows.where(touching).select(f"{t}.{FILE_COLUMN}").distinct().collect()
        }
        hit = [f for f in read if f.path in touched_paths]
        if hit:
            rows = rows.where(F.col(f"{t}.{FILE_COLUMN}").isin(sorted(touched_paths)))
            values = {n: F.col(f"{t}.`{n}`") for n in names}
            keep_matched, _ = _apply(matched_clauses, is_match, values, names, s)
            keep_unmatched, _ = _apply(by_source, ~is_match, values, names, s)
            output = rows.where(keep_matched & keep_unmatched).select(
                *(values[n].cast(types[n]).alias(n) for n in names)
            )
    if inserts:
        unmatched = flagged_source.join(target, F.expr(on), "left_anti")
        pieces = []
        handled = F.lit(False)
        for clause in inserts:
            applies = (
                ~handled
                if clause.condition is None
                else ~handled & rewrite.matches(clause.condition)
            )
            exprs = _assignments(clause, names, s)
            pieces.append(
                unmatched.where(applies).select(
                    *(
                        (F.expr(exprs[n]) if n in exprs else F.lit(None)).cast(types[n]).alias(n)
                        for n in names
                    )
                )
            )
            handled = handled | applies
        for piece in pieces:
            output = piece if output is None else output.unionByName(piece)
    if output is not None:
        adds = write_rows(spark, root, snapshot, output)
    removes = [rewrite.remove(f, now, with_stats=True) for f in hit]
    parameters = {
        "predicate": json.dumps([parsed.rendered]),
        "matchedPredicates": _clauses_json(spark, matched_clauses),
        "notMatchedPredicates": _clauses_json(spark, inserts),
        "notMatchedBySourcePredicates": _clauses_json(spark, by_source),
    }
    metrics = {
        "numTargetFilesRemoved": str(len(removes)),
        "numTargetFilesAdded": str(len(adds)),
        "numTargetBytesRemoved": str(sum(f.size for f in hit)),
        "numTargetBytesAdded": str(sum(a.size for a in adds)),
        "numOutputRows": str(_rows(adds)),
    }
    actions: list[Action] = [*removes, *adds]
    _pause(before_commit)
    version = txn.commit_if_needed(actions, Operation("MERGE", parameters, metrics=metrics))
    manifest.after_commit(root, version)
    return DmlResult(version, tuple(removes), tuple(adds), metrics)
