"""Live delta-spark behind the adapter interface, at operation level (``deltaspark-ops``).

The same translation as the ``spark`` adapter (``deltaspec.conformance.engines.operations``: each
writer becomes an append, overwrite, replaceWhere, DELETE, UPDATE, MERGE, OPTIMIZE or ALTER TABLE
over the ``_file``/``_row`` data model of ``datafiles``), executed by delta-spark's own commands:
``df.write.format("delta")`` (modes, ``replaceWhere``, ``txnAppId``/``txnVersion``,
``maxRecordsPerFile``, ``delta.*`` properties on creation), ``delta.tables.DeltaTable``'s
``delete``/``update``/``merge``, ``OPTIMIZE delta.`path` [WHERE …]`` and ``ALTER TABLE delta.`path`
SET TBLPROPERTIES``. Snapshots, time travel for the judged state and checkpoints come from
delta-spark's ``DeltaLog``.

Interleaving, as delta-spark's own concurrency tests do it: each writer's command runs in a Python
thread of its own, which PySpark's pinned-thread mode maps to one JVM thread, with delta-spark's
``PhaseLockingTransactionExecutionObserver`` set as that thread's ``TransactionExecutionObserver``
(shipped in the main jar, package ``org.apache.spark.sql.delta.fuzzer``). Every phase up to the
commit is let through; the command writes its data files, prepares its commit and stops at the
commit phase's entry barrier (``beginDoCommit``, before the first commit attempt and before any
conflict check). The writer's ``commit`` step opens the remaining barriers and joins the thread; a
writer still paused when the adapter closes is aborted by interrupting its JVM thread (the barrier
wait throws ``InterruptedException``, which fails the command without a commit).

Only release 4.4.0's rules apply (``materialize`` declines the other profiles); the session
settings ``maxCommitAttempts`` and ``skipRecordingEmptyCommits`` map to delta-spark's SQL
configuration for the duration of one vector.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from deltaspec.rules import spec_root

from ....impl import codec
from ....impl.predicates import parse
from ....impl.snapshot.state import Snapshot
from ....spark import MergeClause
from ...harness import outcomes, wire
from ...harness.adapter import Capability, Json, TableSetup, Unsupported
from ...harness.snapshots import NO_SNAPSHOT, NO_TABLE, TableSnapshot, protocol_json
from .. import operations as ops
from ..spark.adapter import SparkAdapter, Work, outcome_of
from ..table_files import datafiles
from . import jvm as deltaspark_jvm
from .jvm import delta_log, delta_package, java_view, jvm, scala_none, scala_object
from .session import delta_session
from .spark_api import merge_clauses, table_sql

_JOIN_SECONDS = 600
_SESSION_SETTINGS = {
    "maxCommitAttempts": "spark.databricks.delta.maxCommitAttempts",
    "skipRecordingEmptyCommits": "spark.databricks.delta.skipRecordingEmptyCommits",
}
_WINNER = re.compile(r"committed at version (\d+)")
_CONFLICTING_COMMIT = re.compile(r"Conflicting commit: (\{.*\})")
_ERROR_CLASS = re.compile(r"\[([A-Z_.]+)\]")


@cache
def _kinds_by_error_class() -> dict[str, str]:
    """delta-spark error class -> scenario outcome kind (spec/data/conflict_kinds.json)."""
    table = json.loads((spec_root() / "data" / "conflict_kinds.json").read_text("utf-8"))
    return {
        error_class: kind
        for group in ("conflicts", "errors")
        for kind, entry in table[group].items()
        for error_class in _error_classes(entry)
    }


def _error_classes(entry: dict[str, Any]) -> list[str]:
    """The error classes delta-spark reports a kind with (conflict_kinds.json)."""
    named = [entry["error_class"]] if entry.get("error_class") else []
    return named + list(entry.get("other_error_classes", ()))


def engine_outcome(error: BaseException) -> Json:
    """The scenario outcome of an exception raised by a delta-spark command: its error class
    (without the sub-class, e.g. ``WITH_PARTITION_HINT``) names the kind; a conflict's message
    names the winning version."""
    condition = error.getCondition() if hasattr(error, "getCondition") else None
    if not condition:
        named = _ERROR_CLASS.search(str(error))
        if named is None:
            return outcome_of(error)
        condition = named.group(1)
    kind = _kinds_by_error_class().get(str(condition).split(".")[0])
    if kind is None:
        return {"error": "ENGINE_ERROR", "message": f"{condition}: {str(error)[:300]}"}
    if condition.startswith("DELTA_CONCURRENT") or kind in {"PROTOCOL_CHANGED", "METADATA_CHANGED"}:
        return {"conflict": kind, "winner": _winner(str(error))}
    return {"error": kind}


def _winner(message: str) -> int | None:
    """The winning version a conflict names: "committed at version N", else the ``version`` of
    the conflicting commit's commitInfo that delta-spark appends as JSON."""
    named = _WINNER.search(message)
    if named is not None:
        return int(named.group(1))
    commit = _CONFLICTING_COMMIT.search(message)
    if commit is None:
        return None
    try:
        version = json.loads(commit.group(1)).get("version")
    except json.JSONDecodeError:
        return None
    return version if isinstance(version, int) else None


@dataclass(frozen=True)
class Landed:
    """The version a command committed (None: it committed nothing)."""

    version: int | None


@dataclass
class _PausedCommand:
    """One writer's delta-spark command in its thread, held by its transaction observer at the
    commit phase's entry barrier until released."""

    spark: SparkSession
    root: Path
    abort: bool = False
    result: Any = None
    error: BaseException | None = None
    thread: threading.Thread | None = None
    jvm_thread: Any = None
    phases: Any = field(init=False)
    observer: Any = field(init=False)

    def __post_init__(self) -> None:
        fuzzer = delta_package(self.spark).fuzzer
        self.phases = scala_object(fuzzer, "OptimisticTransactionPhases").forName("deltaspec")
        self.observer = fuzzer.PhaseLockingTransactionExecutionObserver(self.phases)
        # a command's later transactions (OPTIMIZE's retry after a conflict) run unobserved
        no_op = scala_object(delta_package(self.spark), "NoOpTransactionExecutionObserver")
        self.observer.setNextObserver(no_op, True)
        for phase in (self.phases.analysisPhase(), self.phases.initialPhase(),
                      self.phases.preparePhase()):  # fmt: skip
            phase.entryBarrier().unblock()

    @property
    def paused(self) -> bool:
        return bool(self.phases.commitPhase().hasReached())

    def start(self, work: Work) -> None:
        delta = delta_package(self.spark)
        observers = scala_object(delta, "TransactionExecutionObserver")

        def target() -> None:
            self.jvm_thread = jvm(self.spark).java.lang.Thread.currentThread()
            observers.setObserver(self.observer)
            try:
                self.result = work(lambda: None)
            except BaseException as error:  # handed to the committing step
                self.error = error
            finally:
                observers.setObserver(scala_object(delta, "NoOpTransactionExecutionObserver"))

        self.thread = threading.Thread(target=target, name="deltaspec-deltaspark", daemon=True)
        self.thread.start()
        while self.thread.is_alive() and not self.paused:
            time.sleep(0.05)

    def finish(self) -> None:
        assert self.thread is not None
        if self.abort and self.thread.is_alive():
            self.jvm_thread.interrupt()
            self.thread.join(_JOIN_SECONDS)
            return
        before = datafiles.latest_version(self.root)
        if self.thread.is_alive():
            for phase in (self.phases.commitPhase(), self.phases.backfillPhase(),
                          self.phases.postCommitPhase()):  # fmt: skip
                phase.entryBarrier().unblock()
            self.phases.postCommitPhase().exitBarrier().unblock()  # then the next observer
        self.thread.join(_JOIN_SECONDS)
        if self.thread.is_alive():
            raise TimeoutError("a delta-spark command did not finish")
        after = datafiles.latest_version(self.root)
        self.result = Landed(after if after > before else None)


@dataclass(frozen=True)
class _Protocol:
    min_reader_version: int
    min_writer_version: int
    reader_features: list[str] | None
    writer_features: list[str] | None


class DeltaSparkOpsAdapter(SparkAdapter):
    """The table lives in ``root``; ``spark`` defaults to ``delta_session()``."""

    name = "deltaspark-ops"
    capabilities = SparkAdapter.capabilities | {Capability.PROPERTY_CHANGE}

    def __init__(self, root: Path, spark: SparkSession | None = None) -> None:
        super().__init__(root, spark or delta_session())
        self._settings: dict[str, str | None] = {}

    def create(self, setup: TableSetup) -> None:
        unknown = set(setup.config) - set(_SESSION_SETTINGS)
        if unknown:
            raise Unsupported(f"no delta-spark session setting for {sorted(unknown)}")
        for key, value in setup.config.items():
            conf = _SESSION_SETTINGS[key]
            self._settings[conf] = self.spark.conf.get(conf, None)
            self.spark.conf.set(conf, str(value).lower() if isinstance(value, bool) else value)
        self.root.mkdir(parents=True, exist_ok=True)
        self.catalog = datafiles.materialize(self.root, setup)

    def _start(self, work: Work) -> Any:
        run = _PausedCommand(self.spark, self.root)
        run.start(work)
        return run

    def _outcome(self, error: BaseException) -> outcomes.Outcome:
        return wire.outcome_from_wire(engine_outcome(error))

    # The commands, each a delta-spark API call.

    def _table(self) -> Any:
        from delta.tables import DeltaTable  # lazy: delta-spark's Python package is optional

        return DeltaTable.forPath(self.spark, self.path)

    def _write(
        self,
        rows: DataFrame,
        mode: str,
        options: Mapping[str, str | int] | None = None,
        partition_by: Sequence[str] | None = None,
    ) -> Work:
        """``df.write.format("delta")`` with one row per data file."""
        writer = rows.write.format("delta").mode(mode).option("maxRecordsPerFile", 1)
        for key, value in (options or {}).items():
            writer = writer.option(key, str(value))
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        path = self.path
        return lambda _hook: writer.save(path)

    def _delete(self, condition: str | None) -> Work:
        return lambda _hook: self._table().delete(condition)

    def _update(self, assignments: Mapping[str, str], condition: str | None) -> Work:
        return lambda _hook: self._table().update(condition, dict(assignments))

    def _merge_into(self, source: DataFrame, on: str, clauses: Sequence[MergeClause]) -> Work:
        def run(_hook: Any) -> None:
            builder = self._table().alias("t").merge(source.alias("s"), on)
            merge_clauses(builder, clauses).execute()

        return run

    def _compact(
        self, snapshot: Snapshot, partitions: Sequence[ops.PartitionValues] | None
    ) -> Work:
        statement = f"OPTIMIZE {table_sql(self.path)}"
        if partitions is not None:
            columns = datafiles.fields(snapshot.metadata.schema_string)
            types = {f["name"]: f["type"] for f in columns}
            selected = ["or", *(["and", *(_equals(c, v) for c, v in sorted(p.items()))]
                                for p in partitions)]  # fmt: skip
            statement += " WHERE " + ops.predicate_sql(parse(selected), types)
        return lambda _hook: self.spark.sql(statement).collect()

    def _set_properties(self, properties: Mapping[str, str]) -> Work:
        pairs = ", ".join(f"{ops.quote(k)} = {ops.quote(v)}" for k, v in sorted(properties.items()))
        statement = f"ALTER TABLE {table_sql(self.path)} SET TBLPROPERTIES ({pairs})"
        return lambda _hook: self.spark.sql(statement).collect()

    # delta-spark's view of the table.

    def _engine_snapshot(self, version: int | None) -> Any:
        log, none = delta_log(self.spark, self.path), scala_none(self.spark)
        if version is None:
            return log.update(False, none, none)
        return log.getSnapshotAt(version, none, none, False)

    def snapshot(self, version: int | None = None) -> TableSnapshot:
        if datafiles.latest_version(self.root) < 0:
            return NO_TABLE if version in (None, -1) else NO_SNAPSHOT
        return datafiles.table_snapshot(self.engine_info(version), self.catalog)

    def engine_info(self, version: int | None = None) -> datafiles.TableInfo:
        """One version of the table as delta-spark's ``Snapshot`` describes it."""
        snap = self._engine_snapshot(version)
        metadata, protocol = snap.metadata(), snap.protocol()

        def features(option: Any) -> list[str] | None:
            return None if option.isEmpty() else sorted(java_view(self.spark, option.get()))

        files = [add.path() for add in snap.allFiles().collectAsList()]
        domains = {
            d.domain(): d.configuration()
            for d in java_view(self.spark, snap.domainMetadata())
            if not d.removed()
        }
        return datafiles.TableInfo(
            int(snap.version()),
            str(metadata.schemaString()),
            tuple(java_view(self.spark, metadata.partitionColumns())),
            dict(java_view(self.spark, metadata.configuration())),
            protocol_json(
                _Protocol(
                    int(protocol.minReaderVersion()),
                    int(protocol.minWriterVersion()),
                    features(protocol.readerFeatures()),
                    features(protocol.writerFeatures()),
                )
            ),
            {t.appId(): int(t.version()) for t in java_view(self.spark, snap.setTransactions())},
            domains,
            tuple((p, str(self.root / codec.decode_path(p))) for p in sorted(files)),
        )

    def checkpoint(self, version: int, now: int) -> None:
        deltaspark_jvm.checkpoint(self.spark, self.path, version)

    def close(self) -> None:
        super().close()
        # delta-spark caches every DeltaLog (and its snapshots) per path: forget this table's
        hadoop_path = jvm(self.spark).org.apache.hadoop.fs.Path(str(self.root))
        delta_package(self.spark).DeltaLog.invalidateCache(self.spark._jsparkSession, hadoop_path)
        for conf, previous in self._settings.items():
            if previous is None:
                self.spark.conf.unset(conf)
            else:
                self.spark.conf.set(conf, previous)
        self._settings.clear()


def _equals(column: str, value: str | None) -> list[Any]:
    return ["is_null", column] if value is None else ["=", column, value]
