"""Compaction: rewrite small files into fewer, larger ones without changing data (OPTIMIZE).

All adds and removes carry ``dataChange=false``, so the commit runs at SnapshotIsolation and
never conflicts with blind appends (ISOLATION.DOWNGRADE); it reads the files it compacts and its
partition predicate, so a concurrent DELETE/UPDATE that removed one of them fails it with
ConcurrentDeleteReadException. With ``retry`` it recommits the same files on the latest snapshot
when all of them are still live, as delta-spark's OptimizeTableCommand does.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession

from ...impl import errors, predicates
from ...impl.actions import Action, AddFile
from ...impl.snapshot.delta_log import DeltaLog
from ...impl.snapshot.state import Snapshot
from ...impl.txn.transaction import Operation, OptimisticTransaction
from .. import conditions, manifest, rewrite
from ..errors import NonPartitionColumnReferenceError
from ..read import scan
from ..s3a import local_root
from ..write import require_writable, write_data

DEFAULT_TARGET_BYTES = 128 * 1024 * 1024


@dataclass(frozen=True)
class CompactionResult:
    table: str
    version: int | None  # None: nothing to compact
    removed: int = 0
    added: int = 0
    attempts: int = 1


@dataclass(frozen=True)
class TableFailure:
    table: str
    error: BaseException


def _date_range(column: str, start: dt.date | None, end: dt.date | None) -> predicates.Expr:
    parts = []
    if start is not None:
        parts.append(predicates.Expr(">=", (column, start.isoformat())))
    if end is not None:
        parts.append(predicates.Expr("<=", (column, end.isoformat())))
    return predicates.conjoin(parts)


def _groups(
    adds: Sequence[AddFile], columns: Sequence[str]
) -> dict[tuple[str | None, ...], list[AddFile]]:
    groups: dict[tuple[str | None, ...], list[AddFile]] = defaultdict(list)
    for add in adds:
        groups[tuple(add.partition_values.get(c) for c in columns)].append(add)
    return dict(groups)


def _predicate(
    spark: SparkSession,
    snapshot: Snapshot,
    root: str,
    date_range: tuple[str | None, dt.date | None, dt.date | None],
    where: str | None,
) -> tuple[predicates.Expr, str]:
    """The partition predicate OPTIMIZE reads with, and as commitInfo records it: the range
    [start, end] of a date partition column, and ``where``, over partition columns only."""
    columns = snapshot.metadata.partition_columns
    date_column, start, end = date_range
    predicate = predicates.TRUE
    if date_column is not None:
        if date_column not in columns:
            raise errors.DeltaError(
                f"{date_column!r} is not a partition column of {list(columns)}", table=root
            )
        predicate = _date_range(date_column, start, end)
    recorded = "[]" if predicate == predicates.TRUE else json.dumps([_predicate_sql(predicate)])
    if where is None:
        return predicate, recorded
    parsed = conditions.parse(spark, where, columns, table=root)
    if not parsed.only_over(columns) or not parsed.exact:
        bad = sorted(parsed.columns - set(columns)) or [where]
        raise NonPartitionColumnReferenceError(
            f"OPTIMIZE predicate {where!r} must be over partition columns {list(columns)} "
            f"(not {bad[0]!r})",
            table=root,
            version=snapshot.version,
        )
    return predicates.conjoin([predicate, *parsed.filters()]), json.dumps([parsed.rendered])


def _compacted_rows(
    spark: SparkSession,
    root: str,
    snapshot: Snapshot,
    groups: Sequence[list[AddFile]],
    target: tuple[int, int | None],
) -> DataFrame:
    """Each group's rows in ``target_files`` partitions, or ones of about ``target_file_bytes``
    (``target``), never more than the group has files."""
    target_file_bytes, target_files = target
    parts: list[DataFrame] = []
    for files in groups:
        size = sum(f.size for f in files)
        count = target_files or max(1, math.ceil(size / target_file_bytes))
        parts.append(scan(spark, root, snapshot, files).repartition(min(count, len(files))))
    data = parts[0]
    for part in parts[1:]:
        data = data.union(part)
    return data


def _operation(recorded: str, removed: Sequence[AddFile], added: Sequence[AddFile]) -> Operation:
    return Operation(
        "OPTIMIZE",
        {"predicate": recorded, "zOrderBy": "[]", "clusterBy": "[]", "auto": False},
        metrics={
            "numRemovedFiles": str(len(removed)),
            "numAddedFiles": str(len(added)),
            "numRemovedBytes": str(sum(f.size for f in removed)),
            "numAddedBytes": str(sum(a.size for a in added)),
        },
    )


@dataclass(frozen=True)
class _Compaction:
    """What one OPTIMIZE commits: the files it read and removes, the predicate it read them
    with, and the files it wrote."""

    root: str
    predicate: predicates.Expr
    compacted: list[AddFile]
    adds: list[AddFile]
    actions: list[Action]
    operation: Operation


def _commit(
    txn: OptimisticTransaction, work: _Compaction, retry: bool, max_attempts: int
) -> CompactionResult:
    """Commit, recording the predicate and the compacted files as read; on a conflict, with
    ``retry``, again on the latest snapshot while attempts remain and every compacted file is
    still live. The written files are deleted when it gives up."""
    attempts = 0
    while True:
        attempts += 1
        txn.track_read_predicate(work.predicate)
        txn.track_files_read(f.path for f in work.compacted)
        try:
            version = txn.commit(work.actions, work.operation)
            manifest.after_commit(work.root, version)
            removed, added = len(work.compacted), len(work.adds)
            return CompactionResult(work.root, version, removed, added, attempts)
        except errors.DeltaConcurrentModificationException:
            if not retry or attempts >= max_attempts:
                rewrite.discard(work.root, work.adds)
                raise
            txn = OptimisticTransaction(DeltaLog(work.root))
            assert txn.snapshot is not None
            live = {f.path for f in txn.snapshot.files.values()}
            if not all(f.path in live for f in work.compacted):
                rewrite.discard(work.root, work.adds)
                raise


def compact(
    spark: SparkSession,
    path: str | os.PathLike[str],
    *,
    date_column: str | None = None,
    start: dt.date | None = None,
    end: dt.date | None = None,
    target_file_bytes: int = DEFAULT_TARGET_BYTES,
    target_files: int | None = None,
    retry: bool = False,
    max_attempts: int = 3,
    before_commit: Callable[[], None] | None = None,
    where: str | None = None,
) -> CompactionResult:
    """Compact the files of each partition in [start, end] of ``date_column`` (a partition
    column), or of the whole table when no column is given, into ``target_files`` files per
    partition or files of about ``target_file_bytes``."""
    root = local_root(path, "OPTIMIZE")
    txn = OptimisticTransaction(DeltaLog(root))
    snapshot = txn.snapshot
    if snapshot is None:
        raise errors.TableNotFoundError(f"{root} is not a Delta table", table=root)
    require_writable(snapshot.protocol, root)
    predicate, recorded = _predicate(spark, snapshot, root, (date_column, start, end), where)
    chosen = rewrite.candidates(snapshot, [predicate])
    columns = snapshot.metadata.partition_columns
    groups = [files for files in _groups(chosen, columns).values() if len(files) > 1]
    if not groups:
        return CompactionResult(root, None)
    compacted = [f for files in groups for f in files]
    data = _compacted_rows(spark, root, snapshot, groups, (target_file_bytes, target_files))
    # no protocol (so no tightBounds) yet: catalog mutant compaction-adds-change-data needs the line
    adds = write_data(data, root, snapshot.metadata, data_change=False)
    now = txn.clock()
    removes = [rewrite.remove(f, now, data_change=False, with_stats=True) for f in compacted]
    actions: list[Action] = [*removes, *adds]
    operation = _operation(recorded, compacted, adds)
    if before_commit is not None:
        before_commit()
    work = _Compaction(root, predicate, compacted, adds, actions, operation)
    return _commit(txn, work, retry, max_attempts)


def _predicate_sql(expr: predicates.Expr) -> str:
    if expr.op == "and":
        return " AND ".join(_predicate_sql(a) for a in expr.args)
    column, value = expr.args
    return f"({column} {expr.op} '{value}')"


def compact_tables(
    spark: SparkSession, paths: Sequence[str | os.PathLike[str]], **options: object
) -> list[CompactionResult | TableFailure]:
    """Compact each table; one table's failure is reported and does not stop the others."""
    outcomes: list[CompactionResult | TableFailure] = []
    for path in paths:
        try:
            outcomes.append(compact(spark, path, **options))  # type: ignore[arg-type]
        except Exception as error:
            outcomes.append(TableFailure(os.path.abspath(path), error))
    return outcomes
