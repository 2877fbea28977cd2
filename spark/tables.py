"""``DeltaTable``: delta-spark's Python API (``delta.tables.DeltaTable``) over deltaspec's Spark
path.

Code written against delta-spark runs with one import changed::

    from .tables import DeltaTable   # instead of: from delta.tables import ...

    dt = DeltaTable.forPath(spark, "/data/events")
    dt.delete("day < '2026-01-01'")
    dt.update("id = 7", {"v": "upper(v)"})
    (dt.alias("t").merge(updates.alias("s"), "t.id = s.id")
       .whenMatchedUpdateAll().whenNotMatchedInsertAll()
       .whenNotMatchedBySourceDelete().execute())
    dt.optimize().where("day = '2026-11-01'").executeCompaction()
    dt.restoreToVersion(3); dt.history(10); dt.detail(); dt.vacuum(168)

Every method is a thin layer over the functions below it (``operations``: DML, compaction,
restore, VACUUM; ``manifest``; deltaspec.impl.retention.vacuum), which stay the lower layer.
Conditions and expressions are SQL strings or Columns (a Column is turned back into its SQL
text). Two methods beyond delta-spark's
make races reproducible: ``withCommitHook(fn)`` runs ``fn`` after an operation's data is written
and before it commits, and ``atVersion(n)`` starts DML on the older snapshot ``n``, as if it had
begun before every later commit.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession

from ..impl import errors
from ..impl.actions import CommitInfo
from ..impl.snapshot.delta_log import DeltaLog
from ..impl.snapshot.state import Snapshot
from ..impl.snapshot.timestamps import commit_timestamps
from . import manifest, operations, read
from .errors import InvalidConditionError, UnresolvedColumnError, facade
from .operations import MergeClause, compaction, restore
from .operations.vacuum import vacuum as vacuum_recorded
from .s3a import local_root, table_location

Condition = str | Column
Assignments = Mapping[str, str | Column]

HISTORY_SCHEMA = (
    "version bigint, timestamp timestamp, userId string, userName string, operation string, "
    "operationParameters map<string,string>, job struct<jobId:string,jobName:string,"
    "jobRunId:string,runId:string,jobOwnerId:string,triggerType:string>, "
    "notebook struct<notebookId:string>, clusterId string, readVersion bigint, "
    "isolationLevel string, isBlindAppend boolean, operationMetrics map<string,string>, "
    "userMetadata string, engineInfo string"
)
DETAIL_SCHEMA = (
    "format string, id string, name string, description string, location string, "
    "createdAt timestamp, lastModified timestamp, partitionColumns array<string>, "
    "clusteringColumns array<string>, numFiles bigint, sizeInBytes bigint, "
    "properties map<string,string>, minReaderVersion int, minWriterVersion int, "
    "tableFeatures array<string>"
)
RESTORE_SCHEMA = (
    "table_size_after_restore bigint, num_of_files_after_restore bigint, "
    "num_removed_files bigint, num_restored_files bigint, removed_files_size bigint, "
    "restored_files_size bigint"
)
_HOUR_MS = 3_600_000


def _analyzed(build: Callable[[], DataFrame], what: object) -> Any:
    """The analyzed plan of ``build()``; Spark's analysis errors as our typed errors."""
    try:
        return getattr(build(), "_jdf").queryExecution().analyzed()  # noqa: B009
    except AnalysisException as error:
        condition = str(error.getCondition() or "")
        refused = (
            UnresolvedColumnError
            if condition.startswith("UNRESOLVED_COLUMN")
            else InvalidConditionError
        )
        raise refused(f"cannot resolve {what}: {condition}") from None


def sql_of(condition: Condition, frame: DataFrame) -> str:
    """A condition's SQL text: a string as given; a Column resolved against ``frame`` (the
    columns it may name) and printed as Spark prints a resolved expression (``(id = 2)``)."""
    if isinstance(condition, str):
        return condition
    if not isinstance(condition, Column):
        raise TypeError(f"a condition is a SQL string or a Column, not {type(condition).__name__}")
    return str(_analyzed(lambda: frame.where(condition), condition).condition().sql())


def value_sql(value: str | Column, frame: DataFrame) -> str:
    """An assignment's SQL text: a string as given, a Column resolved against ``frame``."""
    if isinstance(value, str):
        return value
    expression = _analyzed(lambda: frame.select(value), value).projectList().apply(0)
    if str(expression.getClass().getSimpleName()) == "Alias":
        expression = expression.child()
    return str(expression.sql())


def _assignments(values: Assignments | None, frame: DataFrame) -> dict[str, str]:
    return {column: value_sql(value, frame) for column, value in (values or {}).items()}


@dataclass(frozen=True)
class _Race:
    """What makes an operation race on purpose: the hook and the snapshot it starts on."""

    before_commit: Callable[[], None] | None = None
    read_version: int | None = None


@facade
class DeltaTable:
    """A Delta table at a path (delta-spark's ``DeltaTable``)."""

    def __init__(
        self, spark: SparkSession, path: str, alias: str | None = None, race: _Race | None = None
    ) -> None:
        self._spark = spark
        self._path = local_root(path, "DeltaTable")
        self._alias = alias
        self._race = race or _Race()

    # --- finding a table ---------------------------------------------------------------------

    @classmethod
    def forPath(
        cls, sparkSession: SparkSession, path: str, hadoopConf: Mapping[str, str] | None = None
    ) -> DeltaTable:
        """The table at ``path``; a path that holds no Delta table is TableNotFoundError."""
        root = local_root(path, "DeltaTable")
        if not cls.isDeltaTable(sparkSession, root):
            raise errors.TableNotFoundError(f"{root} is not a Delta table", table=root)
        return cls(sparkSession, root)

    @classmethod
    def isDeltaTable(cls, sparkSession: SparkSession, identifier: str) -> bool:
        try:
            root, storage_options = table_location(sparkSession, identifier)
            return DeltaLog(root, storage_options=storage_options).latest_version() >= 0
        except errors.DeltaError:
            return False

    @property
    def path(self) -> str:
        return self._path

    def alias(self, aliasName: str) -> DeltaTable:
        return DeltaTable(self._spark, self._path, aliasName, self._race)

    def toDF(self) -> DataFrame:
        df = read.read_table(self._spark, self._path)
        return df.alias(self._alias) if self._alias else df

    def _frame(self) -> DataFrame:
        """An empty DataFrame with the table's columns (aliased as the table is): what a Column
        condition is resolved against."""
        schema = read.table_schema(DeltaLog(self._path).snapshot())
        df = self._spark.createDataFrame([], schema)
        return df.alias(self._alias) if self._alias else df

    # --- making races reproducible (not in delta-spark) -------------------------------------

    def withCommitHook(self, before_commit: Callable[[], None]) -> DeltaTable:
        """This table, with ``before_commit`` run by every operation after its data files are
        written and before its commit: another writer committing there races it."""
        return DeltaTable(
            self._spark, self._path, self._alias, replace(self._race, before_commit=before_commit)
        )

    def atVersion(self, version: int) -> DeltaTable:
        """This table, with DML starting on the older snapshot ``version``: the operation reads
        that version and commits as if it had begun before every later commit (conflict checks
        against each of them)."""
        return DeltaTable(
            self._spark, self._path, self._alias, replace(self._race, read_version=version)
        )

    # --- DML ---------------------------------------------------------------------------------

    def delete(self, condition: Condition | None = None) -> None:
        operations.delete(
            self._spark,
            self._path,
            None if condition is None else sql_of(condition, self._frame()),
            before_commit=self._race.before_commit,
            read_version=self._race.read_version,
        )

    def update(self, condition: Condition | None = None, set: Assignments | None = None) -> None:
        if set is None:
            raise ValueError("update needs set={column: expression}")
        frame = self._frame()
        operations.update(
            self._spark,
            self._path,
            _assignments(set, frame),
            None if condition is None else sql_of(condition, frame),
            before_commit=self._race.before_commit,
            read_version=self._race.read_version,
        )

    def merge(self, source: DataFrame, condition: Condition) -> DeltaMergeBuilder:
        frame = self._frame().crossJoin(source)
        return DeltaMergeBuilder(self, source, sql_of(condition, frame), frame)

    # --- table services ----------------------------------------------------------------------

    def optimize(self) -> DeltaOptimizeBuilder:
        return DeltaOptimizeBuilder(self)

    def vacuum(self, retentionHours: float | None = None) -> DataFrame:
        """VACUUM (deltaspec.spark.operations.vacuum: deltaspec.impl.retention.vacuum, never a
        live file, never outside the root, never a symlink, recorded as VACUUM START and END
        commits and honouring ``retentionDurationCheck.enabled`` as delta-spark does), then the
        staging directories killed writes left behind, under the same retention. Returns an
        empty DataFrame, as delta-spark's does."""
        retention = None if retentionHours is None else retentionHours * _HOUR_MS
        if retention is not None and retention != retention:  # NaN passes every comparison
            raise errors.VacuumRetentionNegativeError(
                f"retention {retentionHours!r} hours is not a number", table=self._path
            )
        retention_ms = None if retention is None else int(retention)
        vacuum_recorded(self._spark, self._path, retention_ms)
        return self._spark.createDataFrame([], "path string")

    def restoreToVersion(self, version: int) -> DataFrame:
        return self._restored(restore.restore(self._path, version=version,
                                              before_commit=self._race.before_commit))  # fmt: skip

    def restoreToTimestamp(self, timestamp: str) -> DataFrame:
        moment = read.parse_timestamp(self._spark, timestamp)
        return self._restored(
            restore.restore(
                self._path,
                timestamp_ms=moment,
                timestamp_text=timestamp,
                before_commit=self._race.before_commit,
            )
        )

    def _restored(self, result: restore.RestoreResult) -> DataFrame:
        m = result.metrics
        row = [
            int(m["tableSizeAfterRestore"]),
            int(m["numOfFilesAfterRestore"]),
            int(m["numRemovedFiles"]),
            int(m["numRestoredFiles"]),
            int(m["removedFilesSize"]),
            int(m["restoredFilesSize"]),
        ]
        return self._spark.createDataFrame([row], RESTORE_SCHEMA)

    def generate(self, mode: str) -> None:
        if mode != "symlink_format_manifest":
            raise errors.UnsupportedFeatureError(
                f"generate mode {mode!r}: only 'symlink_format_manifest'", table=self._path
            )
        manifest.generate(DeltaLog(self._path).snapshot())

    # --- reading the log ---------------------------------------------------------------------

    def history(self, limit: int | None = None) -> DataFrame:
        """One row per commit, newest first (DESCRIBE HISTORY), from each commit's commitInfo."""
        log = DeltaLog(self._path)
        times = commit_timestamps(log)
        rows = []
        for version in sorted(times, reverse=True)[: limit if limit else None]:
            info = next((a for a in log.read_commit(version) if isinstance(a, CommitInfo)), None)
            rows.append(_history_row(version, times[version], info.fields if info else {}))
        return self._spark.createDataFrame(rows, HISTORY_SCHEMA)

    def detail(self) -> DataFrame:
        """DESCRIBE DETAIL: one row describing the latest snapshot."""
        log = DeltaLog(self._path)
        snapshot = log.snapshot()
        times = commit_timestamps(log)
        return self._spark.createDataFrame([_detail_row(snapshot, times)], DETAIL_SCHEMA)


def _ms(value: Any) -> dt.datetime | None:
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    return dt.datetime.fromtimestamp(value / 1000, tz=dt.UTC).replace(tzinfo=None)


def _history_row(version: int, moment: int, info: Mapping[str, Any]) -> list[Any]:
    def text_map(value: Any) -> dict[str, str] | None:
        if not isinstance(value, Mapping):
            return None
        return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in value.items()}

    read_version = info.get("readVersion")
    return [
        version,
        _ms(moment),
        info.get("userId"),
        info.get("userName"),
        info.get("operation"),
        text_map(info.get("operationParameters")),
        None,
        None,
        info.get("clusterId"),
        read_version if isinstance(read_version, int) else None,
        info.get("isolationLevel"),
        info.get("isBlindAppend"),
        text_map(info.get("operationMetrics")),
        info.get("userMetadata"),
        info.get("engineInfo"),
    ]


def _detail_row(snapshot: Snapshot, times: Mapping[int, int]) -> list[Any]:
    metadata, protocol = snapshot.metadata, snapshot.protocol
    features = sorted(
        {*(protocol.reader_features or ()), *(protocol.writer_features or ())}
        or _legacy_features(protocol.min_writer_version)
    )
    return [
        "delta",
        metadata.id,
        metadata.name,
        metadata.description,
        "file:" + snapshot.table_path,
        _ms(metadata.created_time),
        _ms(times.get(snapshot.version)),
        list(metadata.partition_columns),
        [],
        snapshot.num_files,
        snapshot.total_size,
        dict(metadata.configuration),
        protocol.min_reader_version,
        protocol.min_writer_version,
        features,
    ]


def _legacy_features(writer_version: int) -> set[str]:
    """The features a legacy writer version implies (delta-spark's detail lists them)."""
    by_version = [
        (2, {"appendOnly", "invariants"}),
        (3, {"checkConstraints"}),
        (4, {"changeDataFeed", "generatedColumns"}),
        (5, {"columnMapping"}),
        (6, {"identityColumns"}),
    ]
    return {f for needed, names in by_version if writer_version >= needed for f in names}


@dataclass
@facade
class DeltaMergeBuilder:
    """delta-spark's merge builder: ``when...`` clauses in order, then ``execute()``. Each
    ``when...`` gives a new builder and leaves this one as it was (as delta-spark's, whose
    DeltaMergeBuilder adds a clause to a copy), so one builder can start several MERGEs."""

    table: DeltaTable
    source: DataFrame
    condition: str
    frame: DataFrame  # target and source, aliased: what Column conditions resolve against
    clauses: tuple[MergeClause, ...] = ()

    def _add(self, clause: MergeClause) -> DeltaMergeBuilder:
        return replace(self, clauses=(*self.clauses, clause))

    def _when(self, condition: Condition | None) -> str | None:
        return None if condition is None else sql_of(condition, self.frame)

    def _set(self, values: Assignments | None) -> dict[str, str]:
        return _assignments(values, self.frame)

    def whenMatchedUpdate(
        self, condition: Condition | None = None, set: Assignments | None = None
    ) -> DeltaMergeBuilder:
        return self._add(MergeClause("update", self._when(condition), self._set(set)))

    def whenMatchedUpdateAll(self, condition: Condition | None = None) -> DeltaMergeBuilder:
        return self._add(MergeClause("update", self._when(condition), "*"))

    def whenMatchedDelete(self, condition: Condition | None = None) -> DeltaMergeBuilder:
        return self._add(MergeClause("delete", self._when(condition)))

    def whenNotMatchedInsert(
        self, condition: Condition | None = None, values: Assignments | None = None
    ) -> DeltaMergeBuilder:
        return self._add(MergeClause("insert", self._when(condition), self._set(values)))

    def whenNotMatchedInsertAll(self, condition: Condition | None = None) -> DeltaMergeBuilder:
        return self._add(MergeClause("insert", self._when(condition), "*"))

    def whenNotMatchedBySourceUpdate(
        self, condition: Condition | None = None, set: Assignments | None = None
    ) -> DeltaMergeBuilder:
        clause = MergeClause("update", self._when(condition), self._set(set), by_source=True)
        return self._add(clause)

    def whenNotMatchedBySourceDelete(self, condition: Condition | None = None) -> DeltaMergeBuilder:
        return self._add(MergeClause("delete", self._when(condition), by_source=True))

    def execute(self) -> DataFrame:
        """Run the MERGE; as delta-spark 4.4, a one-row DataFrame of ``num_affected_rows``
        (updated, deleted and inserted), ``num_updated_rows``, ``num_deleted_rows`` and
        ``num_inserted_rows``, from the commit's operationMetrics."""
        target_alias = self.table._alias or "__deltaspec_target"
        source_alias = _alias_of(self.source) or "__deltaspec_source_alias"
        result = operations.merge(
            self.table._spark,
            self.table.path,
            self.source,
            self.condition,
            self.clauses,
            target_alias=target_alias,
            source_alias=source_alias,
            before_commit=self.table._race.before_commit,
            read_version=self.table._race.read_version,
        )
        counts = result.metrics
        updated, deleted, inserted = (
            int(counts[f"numTargetRows{kind}"]) for kind in ("Updated", "Deleted", "Inserted")
        )
        row = (updated + deleted + inserted, updated, deleted, inserted)
        return self.table._spark.createDataFrame([row], MERGE_RESULT_SCHEMA)


MERGE_RESULT_SCHEMA = (
    "num_affected_rows long, num_updated_rows long, num_deleted_rows long, num_inserted_rows long"
)
"""What delta-spark's ``DeltaMergeBuilder.execute()`` returns (MergeIntoCommand's output)."""


def _alias_of(df: DataFrame) -> str | None:
    """The alias a DataFrame was given with ``.alias(name)`` (SubqueryAlias at its top)."""
    plan: Any = getattr(df, "_jdf").queryExecution().logical()  # noqa: B009
    if str(plan.getClass().getSimpleName()) == "SubqueryAlias":
        return str(plan.alias())
    return None


@dataclass
@facade
class DeltaOptimizeBuilder:
    """``optimize().where(partition predicate).executeCompaction()``."""

    table: DeltaTable
    condition: str | None = None

    def where(self, partitionFilter: Condition) -> DeltaOptimizeBuilder:
        self.condition = sql_of(partitionFilter, self.table._frame())
        return self

    def executeCompaction(self) -> DataFrame:
        result = compaction.compact(
            self.table._spark,
            self.table.path,
            where=self.condition,
            before_commit=self.table._race.before_commit,
        )
        metrics = {"numFilesAdded": result.added, "numFilesRemoved": result.removed}
        return self.table._spark.createDataFrame(
            [(self.table.path, metrics)], "path string, metrics map<string,bigint>"
        )

    def executeZOrderBy(self, *cols: str) -> DataFrame:
        raise errors.UnsupportedFeatureError(
            "Z-ordering is not implemented by deltaspec's Spark path", table=self.table.path
        )


__all__ = ["DeltaMergeBuilder", "DeltaOptimizeBuilder", "DeltaTable", "sql_of", "value_sql"]
