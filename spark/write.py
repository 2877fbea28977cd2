"""DataFrame writes into a Delta table (delta-spark's WriteIntoDelta).

``DeltaWriter(df).mode("append").partitionBy("p").option("mergeSchema", "true").save(path)``, or
``write_delta(df, path, mode=..., partition_by=..., **options)``. Data files are written by Spark on
the executors (files.py); the commit happens once, on the driver, through
deltaspec.impl.txn.transaction, with the reads WriteIntoDelta records: nothing for an append (a
blind append), the whole table for an overwrite, the predicate for replaceWhere, the partitions
written for a dynamic partition overwrite (overwrite.py). Options: options.py; the metadata a
write commits: metadata_plan.py.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from deltaspec.rules import rule

from ..impl import errors
from ..impl.actions import Action, AddFile, Metadata, Protocol, RemoveFile, SetTransaction
from ..impl.snapshot.delta_log import DeltaLog
from ..impl.table.features import SPARK_PATH_WRITER_FEATURES
from ..impl.txn.transaction import Operation, OptimisticTransaction
from . import deletion_vectors as dvs
from . import files, manifest, rewrite, s3a, stats
from . import schema as schemas
from .errors import (
    CheckConstraintViolationError,
    DeltaPathExistsError,
    NotNullViolationError,
)
from .metadata_plan import plan_metadata, resolve_partitioning
from .options import WriteOptions, dynamic_mode_recorded, dynamic_partition_overwrite, save_mode
from .overwrite import (
    overwrite_removes,
    replace_where_condition,
    require_rows_inside,
)


def _flag(value: Any) -> bool:
    return str(value).strip().lower() == "true"


@dataclass(frozen=True)
class WriteResult:
    """What a write did: the version committed (None when nothing was committed) and why not."""

    version: int | None
    adds: tuple[AddFile, ...] = ()
    removes: tuple[RemoveFile, ...] = ()
    skipped: str | None = None  # "ignore" (table exists) or "txn" (txnVersion already applied)


def require_writable(table_protocol: Protocol, table: str) -> None:
    """The table's writer protocol must be one this path honours."""
    version = table_protocol.min_writer_version
    if version >= 7:
        unsupported = sorted(set(table_protocol.writer_features or ()) - SPARK_PATH_WRITER_FEATURES)
    else:
        unsupported = [f"writer version {version}"] if version > 3 else []
    if unsupported:
        raise errors.UnsupportedFeatureError(
            f"writing through Spark does not support {', '.join(unsupported)}", table=table
        )


def _ordered(df: DataFrame, table: schemas.Schema) -> DataFrame:
    """``df`` with the table's columns in table order and spelling; missing ones as nulls."""
    by_lower = {c.lower(): c for c in df.columns}
    columns = []
    for f in table["fields"]:
        source = by_lower.get(f["name"].lower())
        spark_type = StructType.fromJson({"type": "struct", "fields": [f]}).fields[0].dataType
        value = F.col(f"`{source}`") if source is not None else F.lit(None)
        columns.append(value.cast(spark_type).alias(f["name"]))
    return df.select(*columns)


def _check_constraints(
    df: DataFrame, metadata: Metadata, not_null: Sequence[str], table: str
) -> None:
    """CHECK constraints (a null result violates, as in delta-spark), after NOT NULL, which is
    checked first; without CHECK constraints NOT NULL is checked on the Parquet footers."""
    checks = sorted(
        (k, v) for k, v in metadata.configuration.items() if k.startswith("delta.constraints.")
    )
    if not checks:
        return
    for column in not_null:
        if df.where(F.col(f"`{column}`").isNull()).limit(1).collect():
            raise NotNullViolationError(
                f"NOT NULL constraint violated for column: {column}", table=table
            )
    for key, expression in checks:
        bad = df.where(~rewrite.matches(expression)).limit(1).collect()
        if bad:
            raise CheckConstraintViolationError(
                f"CHECK constraint {key.removeprefix('delta.constraints.')} {expression} "
                f"violated by row with values: {bad[0].asDict()}",
                table=table,
            )


def write_data(
    df: DataFrame,
    root: str,
    metadata: Metadata,
    *,
    data_change: bool = True,
    writer_options: Mapping[str, str] | None = None,
    protocol: Protocol | None = None,
) -> list[AddFile]:
    """``df`` (in table column order) written as data files of the table with ``metadata`` and
    ``protocol`` (files.write_files: statistics of the indexed columns, tightBounds where the
    protocol has deletion vectors, NOT NULL checked); empty files are dropped."""
    table = schemas.parse(metadata.schema_string)
    columns = metadata.partition_columns
    written = files.write_files(
        df,
        root,
        columns,
        stats.indexed_leaves(table, columns, metadata.configuration),
        data_change=data_change,
        not_null=schemas.not_null_columns(table),
        writer_options=writer_options,
        tight=stats.tight_bounds(protocol),
    )
    return rewrite.non_empty(written.adds, root)


def _skipped(txn: OptimisticTransaction, mode: str, opts: WriteOptions, root: str) -> str | None:
    """Why the write commits nothing: "ignore" (SaveMode Ignore, the table exists) or "txn"
    (its txnVersion is applied already); None to go on. An existing table must be writable,
    and removable for an overwrite; ErrorIfExists refuses it."""
    if txn.read_version >= 0:
        assert txn.snapshot is not None
        require_writable(txn.snapshot.protocol, root)
        if mode == "ErrorIfExists":
            raise DeltaPathExistsError(
                f"Cannot write to already existent path {root} without setting OVERWRITE = 'true'",
                table=root,
                version=txn.read_version,
            )
        if mode == "Ignore":
            return "ignore"
        if mode == "Overwrite":
            assert_removable(txn, root)
    if opts.txn_app_id is not None:
        assert opts.txn_version is not None
        if txn.txn_version(opts.txn_app_id) >= opts.txn_version:
            return "txn"
    return None


def write_delta(
    df: DataFrame,
    path: str | os.PathLike[str],
    *,
    mode: str = "errorifexists",
    partition_by: Sequence[str] | None = None,
    before_commit: Callable[[], None] | None = None,
    **options: Any,
) -> WriteResult:
    """Write ``df`` to the Delta table at ``path`` (created on first write). ``before_commit``
    runs after the data files are written and before the commit (tests interleave there)."""
    mode = save_mode(mode)
    opts = WriteOptions.of(options)
    spark = df.sparkSession
    root, storage_options = s3a.table_location(spark, path)
    txn = OptimisticTransaction(DeltaLog(root, storage_options=storage_options))
    now = txn.clock()
    skipped = _skipped(txn, mode, opts, root)
    if skipped is not None:
        return WriteResult(None, skipped=skipped)
    dynamic = dynamic_partition_overwrite(spark, opts, mode, root)
    plan = plan_metadata(txn, df.schema, partition_by, mode, opts, now)
    columns = plan.final.partition_columns
    overwrite = mode == "Overwrite" and txn.read_version >= 0
    condition = None
    if overwrite:
        condition = replace_where_condition(spark, opts, plan.schema, columns, root)
    data = _ordered(df, plan.schema)
    _check_constraints(data, plan.final, schemas.not_null_columns(plan.schema), root)
    if condition is not None:
        require_rows_inside(data, condition, columns, root)
    protocol = dvs.written_protocol(txn.snapshot, plan.final.configuration)
    adds = write_data(
        data,
        root,
        plan.final,
        data_change=opts.data_change,
        writer_options=opts.parquet,
        protocol=protocol,
    )
    rows = sum(stats.num_records(a.stats) or 0 for a in adds)
    removes: list[RemoveFile] = []
    if overwrite:
        removes, kept = overwrite_removes(txn, spark, root, adds, condition, dynamic, opts, now)
        adds.extend(kept)
    return commit_write(
        txn,
        plan.metadata,
        adds,
        removes,
        mode,
        partition_by,
        opts,
        now,
        rows,
        before_commit,
        dynamic=dynamic_mode_recorded(spark, opts),
    )


def commit_write(
    txn: OptimisticTransaction,
    metadata: Metadata | None,
    adds: Sequence[AddFile],
    removes: Sequence[RemoveFile],
    save_mode: str,
    partition_by: Sequence[str] | None,
    opts: WriteOptions,
    now: int,
    num_output_rows: int,
    before_commit: Callable[[], None] | None = None,
    dynamic: bool = False,
) -> WriteResult:
    """The WRITE commit (shared by write_delta and the ``deltaspec`` data source): the new
    metadata if any, the files, the SetTransaction of txnAppId/txnVersion, and commitInfo as
    delta-spark's WriteIntoDelta records it."""
    actions: list[Action] = []
    if metadata is not None:
        if txn.read_version < 0:
            actions.append(dvs.created_protocol(metadata.configuration, Protocol(1, 2)))
        actions.append(metadata)
    actions.extend(adds)
    actions.extend(removes)
    if opts.txn_app_id is not None and opts.txn_version is not None:
        actions.append(SetTransaction(opts.txn_app_id, opts.txn_version, now))
    parameters: dict[str, Any] = {
        "mode": save_mode,
        "partitionBy": json.dumps(list(partition_by or ())),
    }
    if opts.replace_where is not None and save_mode == "Overwrite":
        parameters["predicate"] = opts.replace_where
    if opts.merge_schema:
        parameters["canMergeSchema"] = True
    metrics = {
        "numFiles": str(len(adds)),
        "numOutputRows": str(num_output_rows),
        "numOutputBytes": str(sum(a.size for a in adds)),
    }
    if dynamic:  # the mode, as recorded in any save mode (options.dynamic_mode_recorded)
        parameters["isDynamicPartitionOverwrite"] = True
    if save_mode == "Overwrite" and txn.read_version >= 0:  # as delta-spark 4.4.0 records it
        metrics["numRemovedFiles"] = str(len(removes))
        metrics["numRemovedBytes"] = str(sum(r.size or 0 for r in removes))
    operation = Operation(
        "WRITE",
        parameters,
        metrics=metrics,
        user_metadata=opts.user_metadata,
    )
    if before_commit is not None:
        before_commit()
    version = txn.commit_if_needed(actions, operation)
    manifest.after_commit(txn.log.table_path, version, txn.log)
    return WriteResult(version, tuple(adds), tuple(removes))


def create_table(
    path: str | os.PathLike[str],
    schema: StructType,
    *,
    partition_by: Sequence[str] = (),
    properties: Mapping[str, str] | None = None,
    description: str | None = None,
) -> int:
    """CREATE TABLE at ``path`` with ``schema`` as given (NOT NULL columns stay NOT NULL) and
    table ``properties`` (``delta.constraints.<name>`` adds a CHECK constraint)."""
    root = s3a.local_root(path, "CREATE TABLE")
    txn = OptimisticTransaction(DeltaLog(root), None)
    data = json.loads(schema.json())
    config = dict(properties or {})
    metadata = Metadata(
        id=str(uuid.uuid4()),
        schema_string=schemas.dumps(data),
        partition_columns=resolve_partitioning(partition_by, data, root),
        configuration=config,
        description=description,
        created_time=txn.clock(),
    )
    checks = any(k.startswith("delta.constraints.") for k in config)
    table_protocol = dvs.created_protocol(config, Protocol(1, 3 if checks else 2))
    operation = Operation(
        "CREATE TABLE",
        {
            "isManaged": "false",
            "description": description,
            "partitionBy": json.dumps(list(metadata.partition_columns)),
            "properties": json.dumps(config, separators=(",", ":")),
        },
    )
    return txn.commit([table_protocol, metadata], operation)


@rule("TXN.APPEND_ONLY")
def assert_removable(txn: OptimisticTransaction, root: str) -> None:
    """delta-spark's assertRemovable, before any data is written: append-only tables refuse
    overwrites and DML (TXN.APPEND_ONLY checks it again at commit)."""
    metadata = txn.metadata
    if metadata is not None and _flag(metadata.configuration.get("delta.appendOnly", "false")):
        raise errors.AppendOnlyViolationError(
            "This table is configured to only allow appends. If you would like to permit "
            "updates or deletes, use 'ALTER TABLE <table_name> SET TBLPROPERTIES "
            "(delta.appendOnly=false)'.",
            table=root,
            version=txn.read_version,
        )


class DeltaWriter:
    """Spark's DataFrameWriter shape for Delta: mode, partitionBy, option(s), save."""

    def __init__(self, df: DataFrame) -> None:
        self._df = df
        self._mode = "errorifexists"
        self._partition_by: tuple[str, ...] | None = None
        self._options: dict[str, Any] = {}

    def mode(self, mode: str) -> DeltaWriter:
        self._mode = mode
        return self

    def partitionBy(self, *columns: str) -> DeltaWriter:
        self._partition_by = columns
        return self

    def option(self, key: str, value: Any) -> DeltaWriter:
        self._options[key] = value
        return self

    def options(self, **options: Any) -> DeltaWriter:
        self._options.update(options)
        return self

    def save(self, path: str | os.PathLike[str]) -> WriteResult:
        return write_delta(
            self._df, path, mode=self._mode, partition_by=self._partition_by, **self._options
        )
