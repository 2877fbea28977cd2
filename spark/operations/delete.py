"""DELETE FROM table [WHERE condition] as copy-on-write, or by deletion vectors (DV.WRITE)."""

from __future__ import annotations

import os
from collections.abc import Callable

from pyspark.sql import SparkSession

from ...impl.actions import AddFile
from ...impl.txn.transaction import OptimisticTransaction
from .. import deletion_vectors as dvs
from .. import rewrite, stats
from .command import (
    ConditionRead,
    DmlResult,
    check,
    commit,
    file_metrics,
    read_condition,
    rows,
    start,
)


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
    root, txn, snapshot = start(path, read_version)
    now = txn.clock()
    if condition is not None:
        check(spark, snapshot, condition, "DELETE")
    read = read_condition(spark, txn, condition)
    parsed = read.condition
    rewritten = False  # delta-spark's rewrite path tombstones scanned files, which carry no stats
    partition_columns = snapshot.metadata.partition_columns
    kept: list[AddFile] = []
    if parsed is None or (parsed.exact and parsed.only_over(partition_columns)):
        gone = read.files  # whole files, no rewrite (metadata-only delete)
    elif parsed.only_over(partition_columns):
        # over partition values only, but not all of it for the skipping to evaluate (a function
        # call): every row of a file agrees on it, so the files it holds for go whole, as
        # delta-spark's metadata-only delete removes them
        gone = rewrite.touched(spark, root, snapshot, read.files, parsed.sql)
    elif dvs.enabled(snapshot):
        return _delete_by_vectors(spark, txn, read, parsed.sql, now, before_commit)
    else:
        gone = rewrite.touched(spark, root, snapshot, read.files, parsed.sql)
        kept = rewrite.rewrite_without(spark, root, snapshot, gone, parsed.sql)
        rewritten = True
    removes = [rewrite.remove(f, now, with_stats=not rewritten) for f in gone]
    before = sum(stats.num_records(f.stats) or 0 for f in gone)
    metrics = {
        **file_metrics(gone, kept),
        "numCopiedRows": str(rows(kept)),
        "numDeletedRows": str(before - rows(kept)),
    }
    if metrics["numDeletedRows"] == "0" and metrics["numRemovedFiles"] != "0":
        # files removed whose rows no stats count (a metadata-only delete of files without
        # numRecords): delta-spark leaves the row metrics out rather than report 0 rows
        for name in ("numDeletedRows", "numCopiedRows", "numAddedFiles"):
            del metrics[name]
    parameters = {"predicate": read.predicate}
    return commit(txn, "DELETE", parameters, metrics, removes, kept, before_commit)


def _delete_by_vectors(
    spark: SparkSession,
    txn: OptimisticTransaction,
    read: ConditionRead,
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
    return commit(txn, "DELETE", parameters, metrics, changes.removes, changes.adds, before_commit)
