"""``df.write.format("deltaspec")`` and ``spark.read.format("deltaspec")``: deltaspec's Spark path
as a Spark data source, with delta-spark's option names.

``register(spark)`` (``local_session`` calls it) makes the name known to a session::

    df.write.format("deltaspec").partitionBy("day").save(path)
    spark.read.format("deltaspec").option("versionAsOf", 3).load(path)
    spark.read.format("deltaspec").option("timestampAsOf", "2026-11-01 10:00:00").load(path)

With the JVM data source loaded (jvm_source.py; ``local_session`` loads it) the name is the JVM
class's: it hands a write (every save mode, ``partitionBy``) to :class:`_JvmCallback`, which runs
DeltaWriter on the driver, and reads through the Python data source below, then registered as
``deltaspec_python``. Without it, ``deltaspec`` is the Python data source (PySpark's Python Data
Source API), as described here:

Reading: the log names the files (a time-travel option picks the version); each file is one input
partition, read with pyarrow on an executor, its partition values from the log, rows a deletion
vector marks dropped. Writing: the plan (metadata, schema evolution, the mode's checks) is made
on the driver from the latest snapshot; each task writes its rows with pyarrow as Parquet into
the write's staging directory and reports the files; the driver moves them into place and commits
once through OptimisticTransaction (``write.commit_write``, the commit DeltaWriter makes), as a
transaction that read the planned snapshot. Options: ``mode`` append/overwrite, ``partitionBy``
(also as an option, a comma-separated list), ``mergeSchema``, ``overwriteSchema``,
``partitionOverwriteMode``, ``txnAppId``/``txnVersion``, ``userMetadata``, ``dataChange``,
``delta.*`` properties on creation, ``replaceWhere`` over partition columns (read by
partition_sql). Spark hands a Python data source neither a session nor its parser, so a
``replaceWhere`` over data columns and tables with CHECK constraints are refused here with a
typed error: use ``DeltaWriter`` (Spark's native writer, faster too: docs/guides/pyspark.md,
"Which writer when").
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import traceback
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from py4j.java_gateway import JavaClass
from pyspark.errors import IllegalArgumentException
from pyspark.errors.exceptions import captured
from pyspark.errors.exceptions.captured import CapturedException
from pyspark.java_gateway import ensure_callback_server_started
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.datasource import (
    CaseInsensitiveDict,
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from ..impl import codec, errors
from ..impl.actions import AddFile, Metadata, RemoveFile
from ..impl.deletion_vectors import deleted_rows
from ..impl.predicates import PartitionSchema
from ..impl.snapshot.delta_log import DeltaLog
from ..impl.snapshot.state import Snapshot
from ..impl.snapshot.time_travel import version_at
from ..impl.txn.transaction import OptimisticTransaction
from . import conditions, files, partition_sql, rewrite, stats
from . import deletion_vectors as dvs
from . import errors as spark_errors
from . import schema as schemas
from .errors import (
    InvalidConditionError,
    InvalidOptionError,
    NotNullViolationError,
    ReplaceWhereWithDynamicPartitionOverwriteError,
)
from .jvm_source import PROVIDER
from .metadata_plan import plan_metadata
from .options import WriteOptions
from .overwrite import overwrite_removes
from .read import file_path, parse_timestamp, table_schema
from .s3a import local_root
from .write import DeltaWriter, assert_removable, commit_write, require_writable

NAME = "deltaspec"
SESSION_TIME_ZONE = "__session_time_zone"
"""The read option DeltaspecSource.java sets to the session's time zone (a Python source has no
session to ask)."""
BEHIND_JVM = "deltaspec_python"  # the Python data source's name when the JVM one is "deltaspec"
# partition column types whose text form pyarrow writes as Spark does
_PARTITION_TYPES = {"string", "integer", "long", "short", "byte", "date", "boolean"}


def register(spark: SparkSession) -> None:
    """Make ``format("deltaspec")`` known to ``spark``: the JVM data source when the session has
    it (``jvm_source.configure``; every save mode, ``partitionBy``), with this module's Python
    data source as ``deltaspec_python`` behind it; else the Python data source alone."""
    provider = _jvm_provider(spark)
    if provider is None:
        spark.dataSource.register(DeltaspecDataSource)
        return
    spark.dataSource.register(_BehindJvm)

    ensure_callback_server_started(spark.sparkContext._gateway)  # type: ignore[no-untyped-call]
    provider.setCallback(_JvmCallback(spark))
    _convert_raised_errors()


def python_format(spark: SparkSession) -> str:
    """The format name of the Python data source in ``spark`` (registered): ``deltaspec_python``
    behind the JVM data source, else ``deltaspec``."""
    return NAME if _jvm_provider(spark) is None else BEHIND_JVM


def _jvm_provider(spark: SparkSession) -> Any:
    """The session's ``deltaspec.spark.jvm.DeltaspecSource`` class (Py4J), or None: not loaded,
    or a Spark Connect session (no JVM here)."""
    jvm = getattr(spark, "_jvm", None)
    if jvm is None:
        return None
    # spark.jars live in Spark's class loader, which Py4J's JVM view searches
    found = getattr(jvm, PROVIDER)
    return found if isinstance(found, JavaClass) else None


def _path(options: Mapping[str, str]) -> str:
    path = options.get("path")
    if not path:
        raise InvalidOptionError("format('deltaspec') needs a path: .save(path) or .load(path)")
    return local_root(path, "format('deltaspec') reads, and the Python data source's writes,")


def _snapshot(options: Mapping[str, str]) -> Snapshot:
    """The snapshot a read asks for: latest, ``versionAsOf`` or ``timestampAsOf``."""
    log = DeltaLog(_path(options))
    version, moment = options.get("versionAsOf"), options.get("timestampAsOf")
    if version is not None and moment is not None:
        raise InvalidOptionError("give versionAsOf or timestampAsOf, not both")
    if moment is not None:
        zone = options.get(SESSION_TIME_ZONE)  # DeltaspecSource.java puts it in
        return log.snapshot(version_at(log, parse_timestamp(None, moment, zone)))
    if version is not None:
        text = str(version).strip()
        if not text.isdigit():
            raise InvalidOptionError(f"versionAsOf must be a non-negative integer: {version!r}")
        return log.snapshot(int(text))
    return log.snapshot()


class DeltaspecDataSource(DataSource):
    """The ``deltaspec`` format."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        return table_schema(_snapshot(self.options))

    def reader(self, schema: StructType) -> DataSourceReader:
        return _Reader(_snapshot(self.options), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceArrowWriter:
        return _Writer(dict(self.options), schema, overwrite)


class _BehindJvm(DeltaspecDataSource):
    """The Python data source behind the JVM one (it reads through this)."""

    @classmethod
    def name(cls) -> str:
        return BEHIND_JVM


class _JvmCallback:
    """What ``DeltaspecSource.java`` calls on the driver (its ``DeltaspecCallback``, through
    Py4J's callback server): a write through DeltaWriter, a read's snapshot resolved. Each
    returns None, or the Java exception for the user (:func:`_java_error`)."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark

    def write(self, mode: str, options: Any, jdf: Any) -> Any:
        return self._calling(self._write, mode, dict(options), jdf)

    def checkRead(self, options: Any) -> Any:  # the Java interface's name
        return self._calling(_snapshot, CaseInsensitiveDict(dict(options)))

    def _write(self, mode: str, options: dict[str, str], jdf: Any) -> None:
        lowered = {k.lower(): k for k in options}
        path = options.pop(lowered.get("path", "path"), None)
        if not path:
            _path({})  # the error a missing path raises
        spark_columns = options.pop("__partition_columns", None)
        option_columns = options.pop(lowered.get("partitionby", "partitionBy"), None)
        session = self.spark  # the DataFrame's own session (another of the JVM's, maybe)
        if not jdf.sparkSession().equals(session._jsparkSession):
            session = SparkSession(session.sparkContext, jdf.sparkSession())
        writer = DeltaWriter(DataFrame(jdf, session)).mode(mode).options(**options)
        if spark_columns is not None:
            writer = writer.partitionBy(*json.loads(spark_columns))
        elif option_columns is not None:
            columns = [c.strip() for c in option_columns.split(",") if c.strip()]
            writer = writer.partitionBy(*columns)
        writer.save(str(path))

    def _calling(self, function: Any, *args: Any) -> Any:
        try:
            function(*args)
        except errors.DeltaError as error:
            return _java_error(self.spark, error)
        except CapturedException as error:  # from a Spark call of the write: the JVM's own
            origin = getattr(error, "_origin", None)
            if origin is not None:
                return origin
            return _java_error(self.spark, error)
        except Exception as error:
            return _java_error(self.spark, error)
        return None

    class Java:
        implements: ClassVar[list[str]] = ["deltaspec.spark.jvm.DeltaspecCallback"]


# PySpark's converter returns these for the Java exceptions _java_error made: the very Python
# exceptions the write raised (the last few, in case a Java caller dropped one)
_RAISED: OrderedDict[str, BaseException] = OrderedDict()
_RAISED_KEPT = 64
_RAISED_LOCK = threading.Lock()


def _java_error(spark: SparkSession, error: BaseException) -> Any:
    """``error`` as the Java exception ``DeltaspecSource.error`` makes: PySpark's converter turns
    it into the PySpark exception delta-spark raises, with the Delta error class
    (``getCondition()``) and SQLSTATE; with :func:`_convert_raised_errors` installed, into
    ``error`` itself, as the facade raises it (:func:`spark_errors.as_pyspark`)."""
    if isinstance(error, errors.DeltaError):
        error = spark_errors.as_pyspark(error)
        condition, sqlstate = error.error_class, error.sqlstate or ""
        message = str(error)
    else:
        condition, sqlstate = "INTERNAL_ERROR", "XX000"
        text = "".join(traceback.format_exception_only(type(error), error)).strip()
        message = f"[INTERNAL_ERROR] format('deltaspec') failed in Python: {text}"
    base = "AnalysisException"
    for name, kind in _JAVA_BASES:
        if isinstance(error, kind):
            base = name
            break
    key = uuid.uuid4().hex
    with _RAISED_LOCK:
        _RAISED[key] = error
        while len(_RAISED) > _RAISED_KEPT:
            _RAISED.popitem(last=False)
    factory = getattr(spark._jvm, PROVIDER)
    return factory.error(base, condition, sqlstate, message, key)


_JAVA_BASES: tuple[tuple[str, type[BaseException]], ...] = (
    ("IllegalArgumentException", IllegalArgumentException),
    ("ConcurrentModificationException", errors.DeltaConcurrentModificationException),
)


def _convert_raised_errors() -> None:
    """Make PySpark's exception converter give back the Python exception a write through the
    JVM data source raised (conflicts as ``deltaspec.spark.exceptions``' classes, the typed
    errors as the facade's), the way delta-spark's Python package patches the same converter
    for its conflict exceptions (``delta.exceptions.captured``). Once per process."""
    original = captured.convert_exception
    if getattr(original, "_deltaspec", False):
        return

    def convert(e: Any) -> Any:
        try:
            key = e.pythonError() if str(e.getClass().getName()).startswith(PROVIDER) else None
        except Exception:  # not one of ours, or the JVM is gone
            key = None
        if key is not None:
            with _RAISED_LOCK:
                raised = _RAISED.pop(str(key), None)
            if raised is not None:
                return raised
        return original(e)

    convert._deltaspec = True  # type: ignore[attr-defined]
    convert._original = original  # type: ignore[attr-defined]
    captured.convert_exception = convert


@dataclass(frozen=True)
class _File(InputPartition):
    add: AddFile


class _Reader(DataSourceReader):
    def __init__(self, snapshot: Snapshot, schema: StructType) -> None:
        mode = snapshot.metadata.configuration.get("delta.columnMapping.mode", "none")
        if mode != "none":
            raise errors.UnsupportedFeatureError(
                f"reading column mapping mode {mode!r} is not supported",
                table=snapshot.table_path,
                version=snapshot.version,
            )
        self.root = snapshot.table_path
        self.version = snapshot.version
        self.files = [f for _, f in sorted(snapshot.files.items())]
        self.schema = schema
        self.partition_schema = PartitionSchema.of(snapshot.metadata).columns

    def partitions(self) -> Sequence[InputPartition]:
        return [_File(add) for add in self.files]

    def read(self, partition: InputPartition | None) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, _File):
            return  # Spark reads a table without files as one partition of None
        add = partition.add
        data = pq.read_table(file_path(self.root, add))
        if add.deletion_vector is not None:
            gone = deleted_rows(Path(self.root), add.deletion_vector)
            keep = [i not in gone for i in range(data.num_rows)]
            data = data.filter(pa.array(keep, pa.bool_()))
        values = {
            name: self._partition_value(add, key, kind)
            for name, kind, key in self.partition_schema
            if key in add.partition_values
        }
        yield from _conform(data, _arrow_schema(self.schema), values).to_batches()

    def _partition_value(self, add: AddFile, name: str, kind: str) -> Any:
        """The typed value of ``add``'s partition value of ``name`` (ACTION.PARTITION_VALUES:
        ``""`` is null, a timestamp's offset is converted)."""
        raw = add.partition_values[name]
        try:
            return codec.decode_partition_value(raw, kind)
        except ValueError as error:
            raise errors.CorruptLogError(
                f"the partition value {raw!r} of column {name!r} is not a {kind}: {error}",
                table=self.root,
                version=self.version,
                file=add.path,
            ) from None


def _arrow_schema(schema: StructType) -> pa.Schema:
    """``schema`` in Arrow; a timestamp is an instant, stored adjusted to UTC (as delta-spark's
    Parquet files hold it), whatever the session's time zone."""
    return to_arrow_schema(schema, timezone="UTC")


def _conform(
    data: pa.Table, target: pa.Schema, constants: Mapping[str, Any] | None = None
) -> pa.Table:
    """``data`` in ``target``'s columns and types: by name (case-insensitive), the typed
    partition values of ``constants``, a column the data lacks as nulls."""
    by_lower = {n.lower(): n for n in data.column_names}
    columns = []
    for f in target:
        if constants is not None and f.name in constants:
            value = constants[f.name]
            columns.append(pa.array([value] * data.num_rows, f.type))
        elif f.name.lower() in by_lower:
            columns.append(data.column(by_lower[f.name.lower()]).cast(f.type))
        else:
            columns.append(pa.nulls(data.num_rows, f.type))
    return pa.Table.from_arrays(columns, schema=target)


def _partition_condition(sql: str, partition_columns: Sequence[str], root: str) -> Any:
    """A replaceWhere over partition columns, read without Spark (partition_sql); anything
    else needs Spark's parser: UnsupportedFeatureError pointing to DeltaWriter."""
    try:
        expr = partition_sql.parse(sql, tuple(partition_columns))
    except InvalidConditionError as error:
        raise errors.UnsupportedFeatureError(
            f"format('deltaspec') reads replaceWhere over partition columns only ({error}); "
            "data-column predicates need Spark's SQL parser: use deltaspec.spark.DeltaWriter",
            table=root,
        ) from None
    conjunct = conditions.Conjunct(frozenset(expr.columns()), frozenset(), expr)
    return conditions.Condition(sql, sql, (conjunct,))


@dataclass(frozen=True)
class _Written(WriterCommitMessage):
    """One task's files: (staged path, final relative path, AddFile) and its NOT NULL counts."""

    files: tuple[tuple[str, str, AddFile], ...]
    nulls: Mapping[str, int]


class _Writer(DataSourceArrowWriter):
    """Planned on the driver, pickled to the tasks, committed on the driver."""

    def __init__(self, options: dict[str, str], schema: StructType, overwrite: bool) -> None:
        self.root = root = _path(options)
        self.mode = "Overwrite" if overwrite else "Append"
        lowered = {k.lower(): k for k in options}
        partition_option = options.pop(lowered.get("partitionby", "partitionBy"), None)
        self.partition_by = (
            None
            if partition_option is None
            else [c.strip() for c in str(partition_option).split(",") if c.strip()]
        )
        write_options = {k: v for k, v in options.items() if k.lower() != "path"}
        self.opts = WriteOptions.of(write_options)
        if self.opts.replace_where is not None and self.opts.dynamic_partition_overwrite:
            raise ReplaceWhereWithDynamicPartitionOverwriteError(
                "replaceWhere and partitionOverwriteMode=dynamic cannot both be set", table=root
            )
        txn = OptimisticTransaction(DeltaLog(root))
        if txn.snapshot is None:
            files.table_directory(root)  # on the driver: a task's error would be untyped
        self.read_version = txn.read_version
        self.skip = False
        if txn.snapshot is not None:
            require_writable(txn.snapshot.protocol, root)
            if overwrite:
                assert_removable(txn, root)
            if any(k.startswith("delta.constraints.") for k in txn.snapshot.metadata.configuration):
                raise errors.UnsupportedFeatureError(
                    "CHECK constraints need Spark to evaluate them: use DeltaWriter", table=root
                )
        if self.opts.txn_app_id is not None:
            self.skip = txn.txn_version(self.opts.txn_app_id) >= (self.opts.txn_version or 0)
        self.now = txn.clock()
        plan = plan_metadata(txn, schema, self.partition_by, self.mode, self.opts, self.now)
        self.metadata: Metadata | None = plan.metadata
        self.partition_columns = plan.final.partition_columns
        self.dynamic = bool(self.opts.dynamic_partition_overwrite) and overwrite
        self.replace: conditions.Condition | None = None
        if self.opts.replace_where is not None and overwrite and txn.snapshot is not None:
            self.replace = _partition_condition(
                self.opts.replace_where, self.partition_columns, root
            )
        table = StructType.fromJson(plan.schema)
        for f in table.fields:
            if f.name in self.partition_columns and f.dataType.typeName() not in _PARTITION_TYPES:
                raise errors.UnsupportedFeatureError(
                    f"partition column {f.name!r} of type {f.dataType.simpleString()} through "
                    "format('deltaspec'): use DeltaWriter",
                    table=root,
                )
        self.arrow_schema = _arrow_schema(table)
        self.not_null = schemas.not_null_columns(plan.schema)
        self.leaves = stats.indexed_leaves(
            plan.schema, self.partition_columns, plan.final.configuration
        )
        protocol = dvs.written_protocol(txn.snapshot, plan.final.configuration)
        self.tight = stats.tight_bounds(protocol)
        self.staging = os.path.join(files.STAGING_DIR, str(uuid.uuid4()))

    def write(self, iterator: Iterator[pa.RecordBatch]) -> _Written:
        batches = [b for b in iterator if b.num_rows]
        if self.skip or not batches:
            return _Written((), {})
        data = _conform(pa.Table.from_batches(batches), self.arrow_schema)
        os.makedirs(self.root, exist_ok=True)
        staging = files.safe_directory(self.root, self.staging.split(os.sep))
        columns = list(self.partition_columns)
        groups: list[tuple[dict[str, str | None], pa.Table]] = []
        if columns:
            keys = pa.Table.from_arrays(
                [pc.cast(data.column(c), pa.string()) for c in columns], names=columns
            )
            for values in keys.group_by(columns).aggregate([]).to_pylist():
                mask = pa.array([True] * data.num_rows)
                for c in columns:
                    column = keys.column(c)
                    hit = pc.is_null(column) if values[c] is None else pc.equal(column, values[c])
                    mask = pc.and_(mask, pc.fill_null(hit, False))
                groups.append(({c: values[c] or None for c in columns}, data.filter(mask)))
        else:
            groups.append(({}, data))
        written, nulls = [], dict.fromkeys(self.not_null, 0)
        for values, rows in groups:
            directory = codec.partition_directory([(c, values[c]) for c in columns])
            name = f"part-{uuid.uuid4()}.c000.snappy.parquet"
            final = f"{directory}/{name}" if directory else name
            staged = os.path.join(staging, final.replace("/", "_"))
            pq.write_table(rows.drop_columns(columns), staged, compression="snappy")
            text, counts = stats.file_stats(pq.read_metadata(staged), self.leaves, self.tight)
            for column in self.not_null:
                nulls[column] += counts.get(column, 0) + (
                    column in values and values[column] is None
                )
            info = os.stat(staged)
            add = AddFile(
                path=codec.encode_path(final),
                partition_values=values,
                size=info.st_size,
                modification_time=int(info.st_mtime * 1000),
                data_change=self.opts.data_change,
                stats=text,
            )
            written.append((staged, final, add))
        return _Written(tuple(written), nulls)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        written = [m for m in messages if isinstance(m, _Written)]
        try:
            self._commit(written)
        finally:
            shutil.rmtree(os.path.join(self.root, self.staging), ignore_errors=True)

    def _commit(self, written: Sequence[_Written]) -> None:
        if self.skip:
            return
        violated = [c for c in self.not_null if any(m.nulls.get(c) for m in written)]
        if violated:
            raise NotNullViolationError(
                f"NOT NULL constraint violated for column: {violated[0]}", table=self.root
            )
        log = DeltaLog(self.root)
        snapshot = None if self.read_version < 0 else log.snapshot(self.read_version)
        txn = OptimisticTransaction(log, snapshot)
        adds: list[AddFile] = []
        for message in written:
            for staged, final, add in message.files:
                *directories, name = final.split("/")
                os.rename(staged, os.path.join(files.safe_directory(self.root, directories), name))
                adds.append(add)
        removes: list[RemoveFile] = []
        if snapshot is not None and self.mode == "Overwrite":
            removes, _ = overwrite_removes(
                txn, None, self.root, adds, self.replace, self.dynamic, self.opts, self.now
            )
        rows = sum(stats.num_records(a.stats) or 0 for a in adds)
        try:
            commit_write(
                txn,
                self.metadata,
                adds,
                removes,
                self.mode,
                self.partition_by,
                self.opts,
                self.now,
                rows,
                dynamic=bool(self.opts.dynamic_partition_overwrite),  # no session to ask here
            )
        except (errors.DeltaConcurrentModificationException, errors.CommitValidationError):
            rewrite.discard(self.root, adds)  # certainly not committed: the files are garbage
            raise

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        shutil.rmtree(os.path.join(self.root, self.staging), ignore_errors=True)


__all__ = ["BEHIND_JVM", "NAME", "DeltaspecDataSource", "python_format", "register"]
