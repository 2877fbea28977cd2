"""Our Spark write path (``deltaspec.spark``) behind the adapter interface, at operation level.

Each writer becomes the operation ``engines/operations.py`` translates it to. The
Spark functions read the latest snapshot when they are called and take a ``before_commit`` hook
that runs once the data files are written, just before the commit. So a writer's ``begin`` (its
read snapshot) starts the operation in a thread of its own, which runs until the hook pauses it;
the other steps run meanwhile; its ``commit`` releases the hook and waits for the thread. Writers
that never commit are released with an abort when the adapter closes, and every thread is joined.
A writer can begin only at the latest version (no ``TIME_TRAVEL``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from ....impl import codec, errors
from ....impl.checkpoint.policy import checkpoint_version
from ....impl.snapshot.delta_log import DeltaLog
from ....impl.snapshot.state import Snapshot
from ....spark import (
    MergeClause,
    compact,
    delete,
    local_session,
    merge,
    update,
    write_delta,
)
from ...harness import actions as staged
from ...harness import outcomes, wire
from ...harness.adapter import Capability, Json, TableSetup, Unsupported, WriterSpec
from ...harness.reads import Read
from ...harness.scenarios import schema_string
from ...harness.snapshots import NO_SNAPSHOT, NO_TABLE, TableSnapshot, protocol_json
from .. import operations as ops
from ..table_files import datafiles

_JOIN_SECONDS = 600
Work = Callable[[Callable[[], None]], Any]
"""An operation to run in a writer's thread, given the hook that pauses it before its commit."""


class _Aborted(Exception):
    """Raised in a paused writer's thread when the adapter closes before it commits."""


@dataclass
class _Run:
    """One writer's operation in its thread, paused in ``before_commit`` until released."""

    paused: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    abort: bool = False
    result: Any = None
    error: BaseException | None = None
    thread: threading.Thread | None = None

    def hook(self) -> None:
        self.paused.set()
        self.release.wait()
        if self.abort:
            raise _Aborted("the adapter closed before this writer committed")

    def start(self, work: Work) -> None:
        def target() -> None:
            try:
                self.result = work(self.hook)
            except BaseException as error:  # handed to the committing step
                self.error = error

        self.thread = threading.Thread(target=target, name="deltaspec-spark-writer", daemon=True)
        self.thread.start()
        while not self.paused.wait(0.05):
            if not self.thread.is_alive():
                break

    def finish(self) -> None:
        self.release.set()
        if self.thread is not None:
            self.thread.join(_JOIN_SECONDS)
            if self.thread.is_alive():
                raise TimeoutError("a Spark writer did not finish")


@dataclass
class _Writer:
    spec: WriterSpec
    exists: bool
    reads: list[Read] = field(default_factory=list)
    translation: ops.Translation | None = None
    run: _Run | None = None


def outcome_of(error: BaseException) -> Json:
    """The scenario outcome of an error raised by the Spark path."""
    if isinstance(error, errors.DeltaConcurrentModificationException):
        return {"conflict": error.kind, "winner": error.winning_version}
    if isinstance(error, errors.DeltaError):
        return {"error": error.kind}
    return {"error": "ENGINE_ERROR", "message": f"{type(error).__name__}: {str(error)[:300]}"}


class SparkAdapter:
    """The table lives in ``root``; ``spark`` defaults to ``local_session()``."""

    name = "spark"
    capabilities = frozenset(
        {Capability.WRITE_APPEND, Capability.WRITE_OVERWRITE, Capability.WRITE_REPLACE_WHERE,
         Capability.DELETE, Capability.UPDATE, Capability.MERGE, Capability.COMPACTION,
         Capability.CHECKPOINT}
    )  # fmt: skip

    def __init__(self, root: Path, spark: SparkSession | None = None) -> None:
        self.root = root
        self.spark = spark or local_session()
        self.catalog = datafiles.Catalog()
        self.writers: dict[str, _Writer] = {}

    @property
    def path(self) -> str:
        return str(self.root)

    def create(self, setup: TableSetup) -> None:
        if setup.config:
            raise Unsupported(f"the Spark path takes no session setting {sorted(setup.config)}")
        self.root.mkdir(parents=True, exist_ok=True)
        self.catalog = datafiles.materialize(self.root, setup)

    def _snapshot(self, version: int | None = None) -> Snapshot | None:
        try:
            return DeltaLog(self.path).snapshot(version)
        except errors.TableNotFoundError:
            return None

    def begin(
        self, writer: str, spec: WriterSpec, version: int | None, now: int
    ) -> outcomes.Outcome | None:
        latest = datafiles.latest_version(self.root)
        if version is not None and version != latest:
            raise Unsupported("the Spark path reads the latest snapshot when it starts")
        self.writers[writer] = _Writer(spec, latest >= 0)
        return None

    def read(self, writer: str, read: Read) -> None:
        self.writers[writer].reads.append(read)

    def stage(self, writer: str, actions: Sequence[staged.Action], now: int) -> None:
        state = self.writers[writer]
        intent = ops.Intent.of(state.spec, state.reads, actions)
        snapshot = self._snapshot() if state.exists else None
        view = None if snapshot is None else datafiles.view(self._info(snapshot), self.catalog)
        state.translation = ops.translate(intent, view)
        work = self._work(state.translation, snapshot)
        self.catalog.learn(actions)
        state.run = self._start(work)

    def _start(self, work: Work) -> _Run:
        """Run ``work`` in its own thread until it pauses before its commit."""
        run = _Run()
        run.start(work)
        return run

    def _work(self, translation: ops.Translation, snapshot: Snapshot | None) -> Work:
        """The Spark call for ``translation``, taking the ``before_commit`` hook."""
        operation = translation.operation
        if translation.txn is not None and not isinstance(operation, ops.Append):
            raise Unsupported("the Spark path writes a SetTransaction only with an append")
        if isinstance(operation, ops.Create):
            return self._create(operation)
        assert snapshot is not None
        match operation:
            case ops.Append(files=files):
                txn: dict[str, str | int] = {}
                if translation.txn is not None:
                    txn = {"txnAppId": translation.txn[0], "txnVersion": translation.txn[1]}
                return self._write(self._rows(snapshot, files), "append", txn)
            case ops.Overwrite(files=files):
                return self._write(self._rows(snapshot, files), "overwrite")
            case ops.ReplaceWhere(predicate=predicate, files=files):
                rows = self._rows(snapshot, files)
                return self._write(rows, "overwrite", {"replaceWhere": predicate})
            case ops.Delete(condition=condition):
                return self._delete(condition)
            case ops.Update(condition=condition):
                return self._update({ops.FILE_COLUMN: operation.assignment}, condition)
            case ops.Merge():
                return self._merge(snapshot, operation)
            case ops.Compact(partitions=partitions):
                return self._compact(snapshot, partitions)
            case ops.SetProperties(properties=properties):
                return self._set_properties(properties)
            case _:
                raise Unsupported(f"{self.name} has no operation for {type(operation).__name__}")

    def _delete(self, condition: str | None) -> Work:
        spark, path = self.spark, self.path
        return lambda hook: delete(spark, path, condition, before_commit=hook)

    def _update(self, assignments: Mapping[str, str], condition: str | None) -> Work:
        spark, path = self.spark, self.path
        return lambda hook: update(spark, path, assignments, condition, before_commit=hook)

    def _compact(
        self, snapshot: Snapshot, partitions: Sequence[ops.PartitionValues] | None
    ) -> Work:
        if partitions is not None:
            raise Unsupported("the Spark path compacts a whole table or a date range")
        spark, path = self.spark, self.path
        return lambda hook: compact(spark, path, target_files=1, before_commit=hook)

    def _set_properties(self, properties: Mapping[str, str]) -> Work:
        raise Unsupported("the Spark path has no ALTER TABLE")

    def _write(
        self,
        rows: DataFrame,
        mode: str,
        options: Mapping[str, str | int] | None = None,
        partition_by: Sequence[str] | None = None,
    ) -> Work:
        """write_delta with one row per data file (so no two scenario files share one)."""
        path, extra = self.path, {"maxRecordsPerFile": 1, **(options or {})}
        return lambda hook: write_delta(
            rows, path, mode=mode, partition_by=partition_by, before_commit=hook, **extra
        )

    def _frame(self, schema_json: str, rows: Sequence[tuple[str, ops.PartitionValues]],
               partition_columns: Sequence[str]) -> DataFrame:  # fmt: skip
        table = datafiles.rows_table(schema_json, rows, partition_columns)
        schema = StructType.fromJson(json.loads(schema_json))
        return self.spark.createDataFrame(table.to_pylist(), schema)

    def _rows(self, snapshot: Snapshot, files: Sequence[ops.NewFile]) -> DataFrame:
        metadata = snapshot.metadata
        rows = [(f.name, f.partition) for f in files]
        return self._frame(metadata.schema_string, rows, metadata.partition_columns)

    def _merge(self, snapshot: Snapshot, operation: ops.Merge) -> Work:
        columns = snapshot.metadata.partition_columns
        table, schema_json = datafiles.merge_source(snapshot.metadata.schema_string, columns,
                                                    operation)  # fmt: skip
        source = self.spark.createDataFrame(
            table.to_pylist(), StructType.fromJson(json.loads(schema_json))
        )
        clauses = [
            MergeClause("delete", "s.new_file IS NULL"),
            MergeClause("update", assignments={ops.FILE_COLUMN: "s.new_file"}),
            MergeClause("insert", assignments=datafiles.merge_inserts(columns)),
        ]
        return self._merge_into(source, operation.on(), clauses)

    def _merge_into(self, source: DataFrame, on: str, clauses: Sequence[MergeClause]) -> Work:
        spark, path = self.spark, self.path
        return lambda hook: merge(spark, path, source, on, clauses, before_commit=hook)

    def _create(self, create: ops.Create) -> Work:
        if any(not key.startswith("delta.") for key in create.configuration):
            raise Unsupported("the Spark path sets only delta.* properties when it creates a table")
        schema_json = datafiles.with_row_columns(schema_string(list(create.columns)))
        rows = [(f.name, f.partition) for f in create.files]
        frame = self._frame(schema_json, rows, create.partition_columns)
        return self._write(
            frame, "errorifexists", dict(create.configuration), list(create.partition_columns)
        )

    def commit(self, writer: str, now: int) -> outcomes.Outcome:
        state = self.writers[writer]
        run, translation = state.run, state.translation
        assert run is not None and translation is not None
        run.finish()
        if run.error is not None:
            return self._outcome(run.error)
        landed = getattr(run.result, "version", None)
        if landed is None:
            return outcomes.SKIPPED
        for alias, old in translation.aliases.items():
            self.catalog.add_alias(landed, alias, old)
        return outcomes.Committed(landed, datafiles.commit_info(self.root, landed))

    def _outcome(self, error: BaseException) -> outcomes.Outcome:
        return wire.outcome_from_wire(outcome_of(error))

    def try_write(self, writer: str, now: int) -> outcomes.Outcome:
        raise Unsupported("the Spark path runs its commit loop to the end")

    def resolve(self, writer: str) -> outcomes.Outcome:
        raise Unsupported("the Spark path runs its commit loop to the end")

    def checkpoint(self, version: int, now: int) -> None:
        checkpoint_version(DeltaLog(self.path), version, now_ms=now)

    def _info(self, snapshot: Snapshot) -> datafiles.TableInfo:
        protocol = snapshot.protocol
        files = tuple(
            (add.path, str(self.root / codec.decode_path(add.path)))
            for add in snapshot.files.values()
        )
        return datafiles.TableInfo(
            snapshot.version,
            snapshot.metadata.schema_string,
            tuple(snapshot.metadata.partition_columns),
            dict(snapshot.metadata.configuration),
            protocol_json(protocol),
            {app: t.version for app, t in snapshot.app_transactions.items()},
            {d: dm.configuration for d, dm in snapshot.domains.items()},
            files,
        )

    def snapshot(self, version: int | None = None) -> TableSnapshot:
        snapshot = self._snapshot(version)
        if snapshot is None:
            return NO_TABLE if version in (None, -1) else NO_SNAPSHOT
        return datafiles.table_snapshot(self._info(snapshot), self.catalog)

    def checkpoints(self) -> tuple[int, ...]:
        return datafiles.checkpoint_versions(self.root)

    def verify(self) -> list[str]:
        return datafiles.log_problems(self.root)

    def close(self) -> None:
        """Abort every writer still paused and join every thread."""
        for state in self.writers.values():
            if state.run is not None and state.run.thread is not None:
                state.run.abort = True
                state.run.finish()
        self.writers.clear()
