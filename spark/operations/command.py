"""What DELETE, UPDATE and MERGE share: the transaction they start, the checks of their SQL,
what a condition reads, their file metrics and their one commit.

Each reads the way delta-spark's command does: its condition's partition part as the read
predicate and the candidate files left after data skipping as the files read; it rewrites only
the files holding matching rows, and commits commitInfo operation names and parameters like
delta-spark's (predicates as JSON arrays, v3.0.0+).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pyspark.sql import DataFrame, SparkSession

from ...impl import errors
from ...impl.actions import Action, AddFile, RemoveFile
from ...impl.snapshot.delta_log import DeltaLog
from ...impl.snapshot.state import Snapshot
from ...impl.txn.transaction import Operation, OptimisticTransaction
from .. import conditions, manifest, rewrite, stats
from .. import schema as schemas
from ..read import table_schema
from ..s3a import local_root
from ..write import assert_removable, require_writable


@dataclass(frozen=True)
class DmlResult:
    version: int | None
    removes: tuple[RemoveFile, ...] = ()
    adds: tuple[AddFile, ...] = ()
    metrics: Mapping[str, str] = field(default_factory=dict)


def start(
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


def check(
    spark: SparkSession,
    snapshot: Snapshot,
    sql: str,
    operation: str,
    frame: DataFrame | None = None,
    deterministic: bool = True,
) -> None:
    """conditions.check over the table's columns (or ``frame``'s)."""
    empty = frame if frame is not None else spark.createDataFrame([], table_schema(snapshot))
    conditions.check(
        empty,
        sql,
        operation=operation,
        table=snapshot.table_path,
        version=snapshot.version,
        columns=column_names(snapshot),
        deterministic=deterministic,
    )


def column_names(snapshot: Snapshot) -> list[str]:
    return schemas.field_names(schemas.parse(snapshot.metadata.schema_string))


def rows(adds: Sequence[AddFile | RemoveFile]) -> int:
    """The rows the files' stats count (none for a file without numRecords)."""
    return sum(stats.num_records(getattr(a, "stats", None)) or 0 for a in adds)


def live_rows(files: Sequence[AddFile]) -> int | None:
    """The rows the files hold (numRecords less a deletion vector's), None if one has no
    numRecords."""
    total = 0
    for f in files:
        records = stats.num_records(f.stats)
        if records is None:
            return None
        total += records - (f.deletion_vector.cardinality if f.deletion_vector else 0)
    return total


@dataclass(frozen=True)
class ConditionRead:
    """What a DELETE or UPDATE read: the predicate commitInfo records, the parsed condition
    (None: no condition) and the candidate files."""

    predicate: str
    condition: conditions.Condition | None
    files: list[AddFile]


def read_condition(
    spark: SparkSession, txn: OptimisticTransaction, condition: str | None
) -> ConditionRead:
    """The whole table without a condition, else the condition's candidates (read_candidates)."""
    if condition is None:
        return ConditionRead("[]", None, txn.filter_files())
    assert txn.snapshot is not None
    parsed = conditions.parse(
        spark, condition, column_names(txn.snapshot), table=txn.log.table_path
    )
    return ConditionRead(
        json.dumps([parsed.rendered]), parsed, rewrite.read_candidates(txn, parsed)
    )


def file_metrics(removed: Sequence[AddFile], added: Sequence[AddFile]) -> dict[str, str]:
    return {
        "numRemovedFiles": str(len(removed)),
        "numRemovedBytes": str(sum(f.size for f in removed)),
        "numAddedFiles": str(len(added)),
        "numAddedBytes": str(sum(a.size for a in added)),
    }


def commit(
    txn: OptimisticTransaction,
    operation: str,
    parameters: dict[str, str],
    metrics: dict[str, str],
    removes: Sequence[RemoveFile],
    adds: Sequence[AddFile],
    before_commit: Callable[[], None] | None,
) -> DmlResult:
    """The command's one commit (none when it changes nothing), then the manifest.
    ``before_commit`` is where tests interleave writers: the data is written, the commit not
    yet attempted."""
    actions: list[Action] = [*removes, *adds]
    if before_commit is not None:
        before_commit()
    version = txn.commit_if_needed(actions, Operation(operation, parameters, metrics=metrics))
    manifest.after_commit(txn.log.table_path, version)
    return DmlResult(version, tuple(removes), tuple(adds), metrics)
