"""Copy-on-write building blocks shared by DELETE, UPDATE, MERGE and replaceWhere.

A command picks candidate files (partition pruning, then data skipping), records them as read
with its partition predicate, finds the files that really hold matching rows with one Spark
scan, and rewrites only those.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F

from deltaspec.rules import rule

from ..impl import codec, predicates
from ..impl.actions import AddFile, RemoveFile
from ..impl.snapshot.state import Snapshot
from ..impl.txn.transaction import OptimisticTransaction
from . import files, object_files, s3a, skipping, stats
from . import schema as schemas
from .conditions import Condition
from .read import FILE_COLUMN, file_path, scan


def column_types(snapshot: Snapshot) -> dict[str, str]:
    fields = schemas.parse(snapshot.metadata.schema_string).get("fields", [])
    return {f["name"]: f["type"] for f in fields if isinstance(f["type"], str)}


def candidates(snapshot: Snapshot, filters: Sequence[predicates.Expr]) -> list[AddFile]:
    """Live files the filters cannot rule out: partition pruning, then data skipping."""
    live = list(snapshot.files.values())
    columns = snapshot.metadata.partition_columns
    partition = predicates.partition_only(filters, columns)
    if partition != predicates.TRUE:
        schema = predicates.PartitionSchema.of(snapshot.metadata)
        hits = predicates.matching(partition, [f.partition_values for f in live], schema)
        live = [f for f, hit in zip(live, hits, strict=True) if hit]
    data_filters = [f for f in filters if not f.columns() <= set(columns)]
    if data_filters:
        types = column_types(snapshot)
        live = [f for f in live if skipping.may_match(data_filters, f.stats, types)]
    return live


@rule("TXN.READ_PREDICATES", "TXN.READ_FILES")
def read_candidates(txn: OptimisticTransaction, condition: Condition | None) -> list[AddFile]:
    """TXN.READ_PREDICATES / TXN.READ_FILES as delta-spark's commands record them: the
    condition's partition part as the predicate, the files left after skipping as files read."""
    if condition is None:
        return txn.filter_files()
    assert txn.snapshot is not None
    filters = condition.filters()
    chosen = candidates(txn.snapshot, filters)
    return txn.filter_files(filters, data_skipped=[f.path for f in chosen])


def matches(condition_sql: str) -> Column:
    """Rows where the condition is true (not false, not null)."""
    return F.coalesce(F.expr(condition_sql), F.lit(False))


def matching_rows(
    spark: SparkSession, root: str, snapshot: Snapshot, files: Sequence[AddFile], sql: str
) -> dict[str, int]:
    """The rows where ``sql`` is true, by the path of the file among ``files`` holding them
    (a file holding none is left out)."""
    if not files:
        return {}
    rows = (
        scan(spark, root, snapshot, files, with_file=True)
        .where(matches(sql))
        .groupBy(FILE_COLUMN)
        .count()
        .collect()
    )
    return {row[0]: int(row[1]) for row in rows}


def touched(
    spark: SparkSession, root: str, snapshot: Snapshot, files: Sequence[AddFile], sql: str
) -> list[AddFile]:
    """The files among ``files`` holding at least one row where ``sql`` is true."""
    hit = matching_rows(spark, root, snapshot, files, sql)
    return [f for f in files if f.path in hit]


def record_count_stats(text: str | None) -> str:
    """A file's stats cut to ``numRecords``, as delta-spark lists the files a command removes
    whole (filterFiles keeping the record count): ``{}`` where the file has no count."""
    count = stats.num_records(text)
    return json.dumps({} if count is None else {"numRecords": count}, separators=(",", ":"))


def remove(
    add: AddFile,
    timestamp: int,
    *,
    data_change: bool = True,
    with_stats: bool = False,
    whole_stats: bool = False,
) -> RemoveFile:
    """The tombstone delta-spark writes for a live file (AddFile.removeWithTimestamp), with the
    stats live delta-spark 4.4.0 gives it: ``with_stats``, the file's ``numRecords`` alone (a
    command that removes files as its snapshot lists them: a DELETE of whole files, a
    replaceWhere over partitions, MERGE, OPTIMIZE, a file whose deletion vector changes);
    ``whole_stats``, all of them (RESTORE); neither, none (WRITE, UPDATE, a DELETE that
    rewrites files: the files it scanned)."""
    kept = add.stats if whole_stats else record_count_stats(add.stats) if with_stats else None
    return RemoveFile(
        path=add.path,
        deletion_timestamp=timestamp,
        data_change=data_change,
        extended_file_metadata=True,
        partition_values=add.partition_values,
        size=add.size,
        stats=kept,
        tags=add.tags,
        deletion_vector=add.deletion_vector,
        base_row_id=add.base_row_id,
        default_row_commit_version=add.default_row_commit_version,
    )


def rewrite_without(
    spark: SparkSession,
    root: str,
    snapshot: Snapshot,
    hit: Sequence[AddFile],
    sql: str,
    data_change: bool = True,
) -> list[AddFile]:
    """New files holding the rows of ``hit`` where ``sql`` is not true."""
    if not hit:
        return []
    metadata = snapshot.metadata
    table = schemas.parse(metadata.schema_string)
    rest = scan(spark, root, snapshot, hit).where(~matches(sql))
    leaves = stats.indexed_leaves(table, metadata.partition_columns, metadata.configuration)
    written = files.write_files(
        rest,
        root,
        metadata.partition_columns,
        leaves,
        data_change=data_change,
        tight=stats.tight_bounds(snapshot.protocol),
    )
    return non_empty(written.adds, root)


def non_empty(adds: Sequence[AddFile], root: str) -> list[AddFile]:
    """The files holding rows; empty ones (Spark writes one for an empty result) are deleted."""
    empty = [a for a in adds if stats.num_records(a.stats) == 0]
    discard(root, empty)
    return [a for a in adds if stats.num_records(a.stats) != 0]


def discard(root: str, adds: Sequence[AddFile]) -> None:
    """Delete data files written but never committed (on S3 through the active session's
    S3A settings)."""
    if object_files.is_s3(root):
        spark = SparkSession.getActiveSession()
        options = s3a.storage_options_of(spark) if spark is not None else {}
        relatives = [codec.decode_path(a.path) for a in adds]
        object_files.delete(root, relatives, options)
        return
    for add in adds:
        with contextlib.suppress(FileNotFoundError):
            os.remove(file_path(root, add))
