"""DataFrame writes into a Delta table (delta-spark's WriteIntoDelta, reference §5.1-5.4).

``DeltaWriter(df).mode("append").partitionBy("p").option("mergeSchema", "true").save(path)``, or
``write_delta(df, path, mode=..., partition_by=..., **options)``. Data files are written by Spark on
the executors (files.py); the commit happens once, on the driver, through
deltaspec.impl.txn.transaction, with the reads WriteIntoDelta records: nothing for an append (a
blind append), the whole table for an overwrite, the predicate for replaceWhere, the partitions
written for a dynamic partition overwrite.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from deltaspec.impl import errors, predicates
from deltaspec.impl.actions import (
    Action,
    AddFile,
    Format,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.impl.snapshot import DeltaLog
from deltaspec.impl.spark import conditions, files, manifest, rewrite, stats
from deltaspec.impl.spark import schema as schemas
from deltaspec.impl.spark.errors import (
    CheckConstraintViolationError,
    DataChangeFalseError,
    DeltaPathExistsError,
    EmptyDataError,
    InvalidOptionError,
    NonPartitionColumnReferenceError,
    NotNullViolationError,
    OverwriteRequiredError,
    OverwriteSchemaWithDynamicPartitionOverwriteError,
    PartitioningMismatchError,
    ReplaceWhereDataChangeError,
    ReplaceWhereMismatchError,
    ReplaceWhereWithDynamicPartitionOverwriteError,
)
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

MODES = {"append": "Append", "overwrite": "Overwrite", "errorifexists": "ErrorIfExists",
         "error": "ErrorIfExists", "default": "ErrorIfExists", "ignore": "Ignore"}  # fmt: skip
# Spark writer options passed through to the Parquet writer.
_PASSTHROUGH = {"maxrecordsperfile": "maxRecordsPerFile", "compression": "compression"}
SUPPORTED_WRITER_FEATURES = frozenset(
    {"appendOnly", "invariants", "checkConstraints", "timestampNtz", "deletionVectors"}
)


def _flag(value: Any) -> bool:
    return str(value).strip().lower() == "true"


def _bool_option(name: str, value: Any, default: bool) -> bool:
    """A boolean option as DeltaOptions reads it: 'true' or 'false' (any case), else an error,
    never read as false."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in {"true", "false"}:
        raise InvalidOptionError(
            f"Invalid value '{value}' for option '{name}', must be 'true' or 'false'"
        )
    return text == "true"


def _version_option(name: str, value: Any) -> int:
    """A non-negative integer option (txnVersion): '1.5', '-1', 'x' or True are errors, never
    truncated."""
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or not text.isascii():
        raise InvalidOptionError(
            f"Invalid value '{value}' for option '{name}', must be a non-negative integer"
        )
    return int(text)


@dataclass(frozen=True)
class WriteOptions:
    """The DataFrameWriter options delta-spark reads (DeltaOptions), keys case-insensitive."""

    replace_where: str | None = None
    dynamic_partition_overwrite: bool | None = None
    merge_schema: bool = False
    overwrite_schema: bool = False
    user_metadata: str | None = None
    txn_app_id: str | None = None
    txn_version: int | None = None
    data_change: bool = True
    # replaceWhere over data columns (v1.1.0+), the default as in delta-spark
    replace_where_data_columns: bool = True
    table_properties: Mapping[str, str] = field(default_factory=dict)
    parquet: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> WriteOptions:
        lowered = {k.lower(): (k, v) for k, v in options.items()}
        get = {k: v for k, (_, v) in lowered.items()}
        mode = get.get("partitionoverwritemode")
        if mode is not None and str(mode).lower() not in {"static", "dynamic"}:
            raise InvalidOptionError(f"partitionOverwriteMode must be static or dynamic: {mode!r}")
        app, version = get.get("txnappid"), get.get("txnversion")
        if (app is None) != (version is None):
            raise InvalidOptionError("txnAppId and txnVersion go together")
        return cls(
            replace_where=None if get.get("replacewhere") is None else str(get["replacewhere"]),
            dynamic_partition_overwrite=None if mode is None else str(mode).lower() == "dynamic",
            merge_schema=_bool_option("mergeSchema", get.get("mergeschema"), False),
            overwrite_schema=_bool_option("overwriteSchema", get.get("overwriteschema"), False),
            user_metadata=None if get.get("usermetadata") is None else str(get["usermetadata"]),
            txn_app_id=None if app is None else str(app),
            txn_version=None if version is None else _version_option("txnVersion", version),
            data_change=_bool_option("dataChange", get.get("datachange"), True),
            replace_where_data_columns=_bool_option(
                "replaceWhere.dataColumns.enabled",
                get.get("replacewhere.datacolumns.enabled"),
                True,
            ),
            table_properties={
                key: str(v) for key, v in options.items() if key.lower().startswith("delta.")
            },
            parquet={_PASSTHROUGH[k]: str(v) for k, (_, v) in lowered.items() if k in _PASSTHROUGH},
        )


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
        unsupported = sorted(set(table_protocol.writer_features or ()) - SUPPORTED_WRITER_FEATURES)
    else:
        unsupported = [f"writer version {version}"] if version > 3 else []
    if unsupported:
        raise errors.UnsupportedFeatureError(
            f"writing through Spark does not support {', '.join(unsupported)}", table=table
        )


def as_nullable(kind: Any) -> Any:
    """Spark's ``asNullable``: delta-spark makes a DataFrame's schema nullable before writing."""
    if isinstance(kind, dict):
        out = {k: as_nullable(v) for k, v in kind.items()}
        for flag in ("nullable", "containsNull", "valueContainsNull"):
            if flag in out:
                out[flag] = True
        return out
    if isinstance(kind, list):
        return [as_nullable(v) for v in kind]
    return kind


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


def _not_null_columns(table: schemas.Schema) -> list[str]:
    return [f["name"] for f in table["fields"] if not f.get("nullable", True)]


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


class _Plan:
    """The metadata a write commits (None: unchanged) and the schema its data is written in."""

    def __init__(
        self,
        txn: OptimisticTransaction,
        df_schema: StructType,
        partition_by: Sequence[str] | None,
        mode: str,
        opts: WriteOptions,
        now: int,
    ) -> None:
        table = txn.log.table_path
        data = as_nullable(json.loads(df_schema.json()))
        current = txn.metadata
        self.metadata: Metadata | None = None
        if current is None:
            if not data["fields"]:
                raise EmptyDataError("the data has no columns", table=table)
            self.metadata = Metadata(
                id=str(uuid.uuid4()),
                schema_string=schemas.dumps(data),
                partition_columns=_resolve(partition_by or (), data, table),
                configuration=dict(opts.table_properties),
                format=Format(),
                created_time=now,
            )
        else:
            existing = schemas.parse(current.schema_string)
            partitioning = current.partition_columns
            wanted = partitioning if partition_by is None else _resolve(partition_by, data, table)
            overwrite_schema = (
                opts.overwrite_schema and mode == "Overwrite" and opts.replace_where is None
            )
            if overwrite_schema and (
                not schemas.same_type(existing, data) or wanted != partitioning
            ):
                self.metadata = Metadata(
                    id=current.id,
                    schema_string=schemas.dumps(data),
                    partition_columns=wanted,
                    configuration={**current.configuration, **opts.table_properties},
                    format=current.format,
                    name=current.name,
                    description=current.description,
                    created_time=current.created_time,
                )
            else:
                if wanted != partitioning:
                    error = (
                        OverwriteRequiredError
                        if mode == "Overwrite"
                        else (PartitioningMismatchError)
                    )
                    raise error(
                        f"partition columns {list(wanted)} differ from the table's "
                        f"{list(partitioning)}",
                        table=table,
                    )
                if opts.merge_schema:
                    merged = schemas.merge(existing, data)
                    if merged != existing:
                        self.metadata = Metadata(
                            id=current.id,
                            schema_string=schemas.dumps(merged),
                            partition_columns=partitioning,
                            configuration=current.configuration,
                            format=current.format,
                            name=current.name,
                            description=current.description,
                            created_time=current.created_time,
                        )
                else:
                    schemas.require_compatible(existing, data, path=table)
        if self.metadata is not None and not opts.data_change:
            raise DataChangeFalseError(
                "a write with dataChange=false cannot change the table's metadata", table=table
            )
        final = self.metadata or current
        assert final is not None
        self.final: Metadata = final
        self.schema: schemas.Schema = schemas.parse(final.schema_string)


def _resolve(columns: Sequence[str], data: schemas.Schema, table: str) -> tuple[str, ...]:
    names = {n.lower(): n for n in schemas.field_names(data)}
    resolved = []
    for column in columns:
        if column.lower() not in names:
            raise PartitioningMismatchError(
                f"partition column {column!r} is not in the data", table=table
            )
        resolved.append(names[column.lower()])
    return tuple(resolved)


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
    save_mode = MODES.get(mode.lower())
    if save_mode is None:
        raise InvalidOptionError(
            f'The specified save mode "{mode}" is invalid. Valid save modes include "append", '
            '"overwrite", "ignore", "error", "errorifexists", and "default".'
        )
    opts = WriteOptions.of(options)
    root = os.path.abspath(path)
    log = DeltaLog(root)
    txn = OptimisticTransaction(log)
    now = txn.clock()
    exists = txn.read_version >= 0
    if exists:
        assert txn.snapshot is not None
        require_writable(txn.snapshot.protocol, root)
        if save_mode == "ErrorIfExists":
            raise DeltaPathExistsError(
                f"Cannot write to already existent path {root} without setting OVERWRITE = 'true'",
                table=root,
                version=txn.read_version,
            )
        if save_mode == "Ignore":
            return WriteResult(None, skipped="ignore")
        if save_mode == "Overwrite":
            assert_removable(txn, root)
    if opts.txn_app_id is not None:
        assert opts.txn_version is not None
        if txn.txn_version(opts.txn_app_id) >= opts.txn_version:
            return WriteResult(None, skipped="txn")
    dynamic = opts.dynamic_partition_overwrite
    if dynamic is None:
        conf = df.sparkSession.conf.get("spark.sql.sources.partitionOverwriteMode", "static")
        dynamic = str(conf).lower() == "dynamic"
    elif dynamic and opts.replace_where is not None:
        raise ReplaceWhereWithDynamicPartitionOverwriteError(
            "replaceWhere and partitionOverwriteMode=dynamic cannot both be set", table=root
        )
    if opts.replace_where is not None:
        dynamic = False  # replaceWhere wins over a session-wide dynamic mode
    if dynamic and opts.overwrite_schema and save_mode == "Overwrite":
        raise OverwriteSchemaWithDynamicPartitionOverwriteError(
            "overwriteSchema cannot be used with dynamic partition overwrite", table=root
        )
    plan = _Plan(txn, df.schema, partition_by, save_mode, opts, now)
    partition_columns = plan.final.partition_columns
    condition = None
    if opts.replace_where is not None and save_mode == "Overwrite" and exists:
        names = schemas.field_names(plan.schema)
        condition = conditions.parse(df.sparkSession, opts.replace_where, names, table=root)
        partition_only = condition.only_over(partition_columns)
        if not partition_only and not opts.replace_where_data_columns:
            bad = sorted(condition.columns - set(partition_columns))
            raise NonPartitionColumnReferenceError(
                f"Predicate references non-partition column '{bad[0]}'. Only the partition "
                f"columns may be referenced: {list(partition_columns)}",
                table=root,
            )
        if not partition_only and not opts.data_change:
            raise ReplaceWhereDataChangeError(
                "replaceWhere over data columns needs dataChange=true", table=root
            )
    data = _ordered(df, plan.schema)
    _check_constraints(data, plan.final, _not_null_columns(plan.schema), root)
    if condition is not None and not condition.only_over(partition_columns):
        outside = data.where(~rewrite.matches(opts.replace_where or "")).limit(1).collect()
        if outside:
            raise ReplaceWhereMismatchError(
                "Written data does not conform to partial table overwrite condition or "
                f"constraint '{opts.replace_where}'",
                table=root,
            )
    leaves = stats.indexed_leaves(plan.schema, partition_columns, plan.final.configuration)
    written = files.write_files(
        data,
        root,
        partition_columns,
        leaves,
        data_change=opts.data_change,
        not_null=_not_null_columns(plan.schema),
        writer_options=opts.parquet,
    )
    adds = rewrite.non_empty(written.adds, root)
    removes: list[RemoveFile] = []
    if exists and save_mode == "Overwrite":
        spark = df.sparkSession
        removes, kept = overwrite_removes(txn, spark, root, adds, condition, dynamic, opts, now)
        adds.extend(kept)
    return commit_write(
        txn,
        plan.metadata,
        adds,
        removes,
        save_mode,
        partition_by,
        opts,
        now,
        written.num_records,
        before_commit,
        dynamic=bool(dynamic and partition_columns),
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
    if save_mode == "Overwrite" and txn.read_version >= 0:  # as delta-spark 4.4.0 records it
        if dynamic:
            parameters["isDynamicPartitionOverwrite"] = True
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
    manifest.after_commit(txn.log.table_path, version)
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
    root = os.path.abspath(path)
    txn = OptimisticTransaction(DeltaLog(root), None)
    data = json.loads(schema.json())
    config = dict(properties or {})
    metadata = Metadata(
        id=str(uuid.uuid4()),
        schema_string=schemas.dumps(data),
        partition_columns=_resolve(partition_by, data, root),
        configuration=config,
        description=description,
        created_time=txn.clock(),
    )
    checks = any(k.startswith("delta.constraints.") for k in config)
    table_protocol = Protocol(1, 3 if checks else 2)
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
    """The removes (and rewritten files) of an overwrite, recording what it read."""
    assert txn.snapshot is not None
    snapshot = txn.snapshot
    metadata = snapshot.metadata
    columns = metadata.partition_columns
    change = opts.data_change
    if dynamic and columns:
        written = {tuple(a.partition_values.get(c) for c in columns) for a in adds}
        predicate = conditions.partition_tuples_predicate(columns, written)
        txn.track_read_predicate(predicate)
        gone = rewrite.candidates(snapshot, [predicate])
        return [rewrite.remove(f, now, data_change=change) for f in gone], []
    if condition is None:
        return [rewrite.remove(f, now, data_change=change) for f in txn.filter_files()], []
    if condition.only_over(columns) and all(c.expr is not None for c in condition.conjuncts):
        schema = predicates.PartitionSchema.of(metadata)
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
        return [rewrite.remove(f, now, data_change=change, with_stats=True) for f in gone], []
    # data columns (v1.1.0+): delete the matching rows as DELETE does, in this transaction
    assert spark is not None
    read = rewrite.read_candidates(txn, condition)
    hit = rewrite.touched(spark, root, snapshot, read, condition.sql)
    kept = rewrite.rewrite_without(spark, root, snapshot, hit, condition.sql, change)
    return [rewrite.remove(f, now, data_change=change) for f in hit], kept


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
