"""What an overwrite replaces and reads (delta-spark's WriteIntoDelta): every file; the
partitions it writes (dynamic partition overwrite); the partitions a replaceWhere over partition
columns names; or, replaceWhere over data columns (v1.1.0+), the matching rows, deleted as DELETE
deletes them, in the same transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession

from deltaspec.rules import rule

from ..impl import predicates
from ..impl.actions import AddFile, RemoveFile
from ..impl.txn.transaction import OptimisticTransaction
from . import conditions, rewrite
from . import schema as schemas
from .errors import (
    NonPartitionColumnReferenceError,
    ReplaceWhereDataChangeError,
    ReplaceWhereMismatchError,
)
from .options import WriteOptions


def replace_where_condition(
    spark: SparkSession,
    opts: WriteOptions,
    schema: schemas.Schema,
    partition_columns: Sequence[str],
    table: str,
) -> conditions.Condition | None:
    """The replaceWhere predicate parsed over the table's columns; over data columns only when
    replaceWhere.dataColumns.enabled and dataChange are on."""
    if opts.replace_where is None:
        return None
    names = schemas.field_names(schema)
    condition = conditions.parse(spark, opts.replace_where, names, table=table)
    if condition.only_over(partition_columns):
        return condition
    if not opts.replace_where_data_columns:
        bad = sorted(condition.columns - set(partition_columns))
        raise NonPartitionColumnReferenceError(
            f"Predicate references non-partition column '{bad[0]}'. Only the partition "
            f"columns may be referenced: {list(partition_columns)}",
            table=table,
        )
    if not opts.data_change:
        raise ReplaceWhereDataChangeError(
            "replaceWhere over data columns needs dataChange=true", table=table
        )
    return condition


def require_rows_inside(
    data: DataFrame, condition: conditions.Condition, partition_columns: Sequence[str], table: str
) -> None:
    """A replaceWhere over data columns writes only rows its predicate matches."""
    if condition.only_over(partition_columns):
        return
    if data.where(~rewrite.matches(condition.sql)).limit(1).collect():
        raise ReplaceWhereMismatchError(
            "Written data does not conform to partial table overwrite condition or "
            f"constraint '{condition.sql}'",
            table=table,
        )


def _partitions_written(
    txn: OptimisticTransaction, adds: Sequence[AddFile], now: int, change: bool
) -> list[RemoveFile]:
    """Dynamic partition overwrite: reads (and removes) the partitions it writes."""
    assert txn.snapshot is not None
    columns = txn.snapshot.metadata.partition_columns
    written = {tuple(a.partition_values.get(c) for c in columns) for a in adds}
    predicate = conditions.partition_tuples_predicate(columns, written)
    txn.track_read_predicate(predicate)
    gone = rewrite.candidates(txn.snapshot, [predicate])
    return [rewrite.remove(f, now, data_change=change) for f in gone]


def _partitions_matching(
    txn: OptimisticTransaction,
    root: str,
    adds: list[AddFile],
    condition: conditions.Condition,
    opts: WriteOptions,
    now: int,
) -> list[RemoveFile]:
    """replaceWhere over partition columns: every written file must be inside it (else the
    written files are deleted); reads and removes the partitions it matches."""
    assert txn.snapshot is not None
    schema = predicates.PartitionSchema.of(txn.snapshot.metadata)
    predicate = predicates.conjoin(condition.filters())
    hits = predicates.matching(predicate, [a.partition_values for a in adds], schema)
    outside = [a for a, hit in zip(adds, hits, strict=True) if not hit]
    if outside:
        rewrite.discard(root, adds)
        raise ReplaceWhereMismatchError(
            f"Data written out does not match replaceWhere '{opts.replace_where}'. Invalid "
            f"data would be written to partitions {outside[0].partition_values}",
            table=root,
        )
    gone = txn.filter_files(condition.filters())
    # whole files by partition: delta-spark 4.4.0 keeps their stats, as its DELETE does
    change = opts.data_change
    return [rewrite.remove(f, now, data_change=change, with_stats=True) for f in gone]


def _rows_matching(
    txn: OptimisticTransaction,
    spark: SparkSession,
    root: str,
    condition: conditions.Condition,
    now: int,
    change: bool,
) -> tuple[list[RemoveFile], list[AddFile]]:
    """replaceWhere over data columns: the matching rows deleted as DELETE deletes them."""
    assert txn.snapshot is not None
    snapshot = txn.snapshot
    read = rewrite.read_candidates(txn, condition)
    hit = rewrite.touched(spark, root, snapshot, read, condition.sql)
    kept = rewrite.rewrite_without(spark, root, snapshot, hit, condition.sql, change)
    return [rewrite.remove(f, now, data_change=change) for f in hit], kept


@rule("TXN.READ_PREDICATES")
def overwrite_removes(
    txn: OptimisticTransaction,
    spark: SparkSession | None,
    root: str,
    adds: list[AddFile],
    condition: conditions.Condition | None,
    dynamic: bool,
    opts: WriteOptions,
    now: int,
) -> tuple[list[RemoveFile], list[AddFile]]:
    """The removes (and rewritten files) of an overwrite, recording what it read: the partitions
    written (``dynamic``), the replaceWhere ``condition``, or else the whole table."""
    assert txn.snapshot is not None
    columns = txn.snapshot.metadata.partition_columns
    change = opts.data_change
    if dynamic and columns:
        return _partitions_written(txn, adds, now, change), []
    if condition is None:
        return [rewrite.remove(f, now, data_change=change) for f in txn.filter_files()], []
    if condition.only_over(columns) and condition.exact:
        return _partitions_matching(txn, root, adds, condition, opts, now), []
    assert spark is not None
    return _rows_matching(txn, spark, root, condition, now, change)
