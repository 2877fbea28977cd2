"""The production implementation (``deltaspec.impl``) behind the adapter interface.

Each table gets its own directory; every commit goes through ``OptimisticTransaction``
and ``LocalLogStore`` exactly as a user's would.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ....impl import codec, errors, predicates
from ....impl.actions import (
    CommitInfo,
)
from ....impl.checkpoint.policy import checkpoint_version
from ....impl.log.faults import Fault, FaultPlan, FaultyLogStore
from ....impl.log.local_store import LocalLogStore
from ....impl.log.names import (
    commit_name,
    parse_commit_name,
)
from ....impl.log.store import LogStore
from ....impl.retention.vacuum import vacuum
from ....impl.snapshot import time_travel
from ....impl.snapshot.delta_log import DeltaLog
from ....impl.snapshot.state import Snapshot
from ....impl.table.paths import resolve_data_path
from ....impl.table.releases import CURRENT, Profile
from ....impl.txn.transaction import Operation, OptimisticTransaction
from ...harness import actions as staged
from ...harness import outcomes, wire
from ...harness.adapter import ACTION_LEVEL, Capability, Json, TableSetup, Unsupported, WriterSpec
from ...harness.reads import Read
from ...harness.runner import run_scenario
from ...harness.scenarios import RunResult, Scenario
from ...harness.snapshots import NO_SNAPSHOT, NO_TABLE, TableSnapshot, protocol_of
from ..table_files.impl_actions import initial_commit, to_action
from ..table_files.logfiles import (
    checkpoint_versions,
    delete_log_below,
    read_checksum_file,
    verify_stored_log,
)


def _outcome(error: errors.DeltaError) -> outcomes.Outcome:
    if isinstance(error, errors.DeltaConcurrentModificationException):
        return outcomes.Conflict(error.kind, error.winning_version)
    return outcomes.Error(error.kind)


def table_snapshot(snapshot: Snapshot) -> TableSnapshot:
    protocol = snapshot.protocol
    return TableSnapshot(
        version=snapshot.version,
        files=tuple(sorted(path for path, _ in snapshot.files)),
        tombstones=tuple(sorted(path for path, _ in snapshot.tombstones)),
        stats={path: f.stats for (path, _), f in sorted(snapshot.files.items())},
        row_ids={
            path: (f.base_row_id, f.default_row_commit_version)
            for (path, _), f in sorted(snapshot.files.items())
        },
        app_txns={app: t.version for app, t in sorted(snapshot.app_transactions.items())},
        domains={d: dm.configuration for d, dm in sorted(snapshot.domains.items())},
        properties=dict(snapshot.metadata.configuration) if snapshot.metadata else {},
        schema=snapshot.metadata.schema_string if snapshot.metadata else None,
        partition_columns=tuple(snapshot.partition_columns),
        protocol=None if protocol is None else protocol_of(protocol),
    )


def snapshot_json(snapshot: Snapshot) -> Json:
    """``snapshot`` in the scenario JSON (the table readers' answer)."""
    return wire.to_wire(table_snapshot(snapshot))


def record_read(txn: OptimisticTransaction, read: Read) -> None:
    """One element of a writer's ``reads`` (spec/scenarios.md)."""
    if read.filter is not None:
        files = None if read.files is None else list(read.files)
        txn.filter_files([predicates.parse(f) for f in read.filter], files)
        return
    if read.predicate is not None:
        txn.track_read_predicate(predicates.parse(read.predicate))
    if read.files is not None:
        txn.track_files_read(list(read.files))
    if read.whole_table:
        txn.read_whole_table()
    if read.app_id is not None:
        txn.txn_version(read.app_id)


def _is_commit_name(name: str) -> bool:
    return parse_commit_name(name) is not None


def _touch(path: str, now: int) -> None:
    """Give ``path`` the modification time ``now`` (ms), the clock of the step that wrote it."""
    os.utime(path, ns=(now * 1_000_000, now * 1_000_000))


class ImplAdapter:
    """The production log on real files under ``root``, one ``OptimisticTransaction`` per writer.

    The impl commits atomically from the caller's point of view, so the commit loop cannot
    be stepped (no ``Capability.COMMIT_STEPS``). Files get the step's clock as their
    modification time (spec/scenarios.md): log files once written, data files (created empty
    when an add names one) when staged. The store injects the storage faults ``inject`` asks
    for, into commit writes only.
    """

    name = "impl"
    capabilities = (ACTION_LEVEL - {Capability.COMMIT_STEPS}) | {
        Capability.LOG_CLEANUP,
        Capability.CHECKSUMS,
    }

    def __init__(self, root: Path, store: LogStore | None = None) -> None:
        self.root = root
        self.now = 0
        self.store = store if store is not None else LocalLogStore(root)
        self.faulty = FaultyLogStore(self.store, FaultPlan(writes_to=_is_commit_name))
        self.log = DeltaLog(str(root), store=self.faulty, clock=self.clock)
        self.release = Profile.parse(CURRENT)
        self.txns: dict[str, tuple[OptimisticTransaction, WriterSpec]] = {}
        self.stamped: set[str] = set()

    def _stamp_log(self) -> None:
        """The log files written since the last stamp get the current step's clock."""
        for info in self.store.list_from():
            if info.name not in self.stamped:
                local = self.store.local_path(info.name)
                if local is not None:
                    _touch(local, self.now)
                self.stamped.add(info.name)

    def _write_data_files(self, actions: Sequence[staged.Action]) -> None:
        for data in actions:
            if not isinstance(data, staged.Add):
                continue
            try:
                relative = resolve_data_path(str(self.root), data.path)
            except ValueError:
                continue  # no file of the table: the commit is refused (TXN.WRITE_BOUNDARY)
            full = os.path.join(self.root, relative)
            if not os.path.exists(full):
                os.makedirs(os.path.dirname(full), exist_ok=True)
                with open(full, "wb"):
                    pass
                _touch(full, self.now)

    def clock(self) -> int:
        return self.now

    def create(self, setup: TableSetup) -> None:
        self.release = Profile.parse(setup.profile or CURRENT, **setup.session_settings)
        if setup.table is not None:
            self.store.write_new(commit_name(0), codec.encode_commit(initial_commit(setup.table)))
        for commit in setup.commits:
            version = self.log.latest_version() + 1
            base = self.log.snapshot() if version > 0 else None
            actions = [to_action(a, base, 0) for a in commit]
            self.store.write_new(commit_name(version), codec.encode_commit(actions))

    def begin(
        self, writer: str, spec: WriterSpec, version: int | None, now: int
    ) -> outcomes.Outcome | None:
        self.now = now
        try:
            snapshot = None if version == -1 else self.log.snapshot(version)
        except errors.TableNotFoundError as error:
            if version is not None:
                return _outcome(error)
            snapshot = None
        except errors.DeltaError as error:
            return _outcome(error)
        txn = OptimisticTransaction(self.log, snapshot, profile=self.release, clock=self.clock)
        self.txns[writer] = (txn, spec)
        return None

    def read(self, writer: str, read: Read) -> None:
        record_read(self.txns[writer][0], read)

    def stage(self, writer: str, actions: Sequence[staged.Action], now: int) -> None:
        self.now = now
        self._write_data_files(actions)
        txn = self.txns[writer][0]
        txn.stage(to_action(a, txn.snapshot, now) for a in actions)

    def commit(self, writer: str, now: int) -> outcomes.Outcome:
        self.now = now
        txn, spec = self.txns[writer]
        operation = Operation(spec.operation, changes_data=spec.changes_data)
        try:
            if spec.commit_if_needed:
                landed = txn.commit_if_needed(operation=operation)
            else:
                landed = txn.commit(operation=operation)
        except errors.DeltaError as error:
            return _outcome(error)
        finally:
            self._stamp_log()
        if landed is None:
            return outcomes.SKIPPED
        info = next(a for a in self.log.read_commit(landed) if isinstance(a, CommitInfo))
        return outcomes.Committed(landed, dict(info.fields))

    def try_write(self, writer: str, now: int) -> outcomes.Outcome:
        raise Unsupported("the impl's commit loop cannot be stepped")

    def resolve(self, writer: str) -> outcomes.Outcome:
        raise Unsupported("the impl's commit loop cannot be stepped")

    def checkpoint(self, version: int, now: int) -> None:
        self.now = now
        checkpoint_version(self.log, version, now_ms=now)
        self._stamp_log()

    def clean_up_log(self, version: int, now: int) -> None:
        self.now = now
        delete_log_below(self.store, version)

    def checksum(self, version: int) -> Json | None:
        return read_checksum_file(self.store, version)

    def checkpoint_in_parts(self, version: int, now: int, parts: int) -> None:
        """A multi-part checkpoint of ``version`` (classic where the table forbids parts)."""
        self.now = now
        checkpoint_version(self.log, version, now_ms=now, parts=parts)
        self._stamp_log()

    def listed_versions(self) -> tuple[int, ...]:
        """The commit versions in the log."""
        names = (info.name for info in self.store.list_from())
        return tuple(sorted(v for n in names if (v := parse_commit_name(n)) is not None))

    def version_at(self, timestamp: int, now: int) -> Json:
        """Time travel by ``timestamp``: ``{"version": v}`` or ``{"error": KIND}``."""
        self.now = now
        try:
            return {"version": time_travel.version_at(self.log, timestamp)}
        except errors.DeltaError as error:
            return {"error": error.kind}

    def vacuum(self, retention_ms: int | None, now: int) -> list[str]:
        """The data files VACUUM deletes at ``now`` (the table's retention unless given)."""
        self.now = now
        result = vacuum(
            self.log, retention_ms=retention_ms, enforce_retention=retention_ms is None, now_ms=now
        )
        return list(result.deleted)

    def inject(self, fault: str) -> None:
        """The next commit write fails as ``fault`` says (``Fault`` by name)."""
        self.faulty.force(Fault[fault])

    def snapshot(self, version: int | None = None) -> TableSnapshot:
        try:
            return table_snapshot(self.log.snapshot(version))
        except errors.TableNotFoundError:
            return NO_SNAPSHOT if version not in (None, -1) else NO_TABLE
        except errors.DeltaError:  # one a reader must refuse (no metadata before v0.7)
            return NO_SNAPSHOT

    def checkpoints(self) -> tuple[int, ...]:
        return checkpoint_versions([info.name for info in self.store.list_from()])

    def verify(self) -> list[str]:
        return verify_stored_log(self.store, self.log)

    def close(self) -> None:
        self.txns.clear()


class ObjectStoreImplAdapter(ImplAdapter):
    """The impl with its log on an object store (``deltaspec check --store``), data files on
    disk under ``root``. The server, not the step's clock, times every log file, so this adapter
    is on the wall clock for what depends on file times (the model's clock is the step's): log
    cleanup by retention is off for its tables, and time travel by timestamp and VACUUM (its
    data files are on disk, not on the store) are not compared."""

    wall_clock = True
    version_at = None  # type: ignore[assignment]
    vacuum = None  # type: ignore[assignment]


def run_in(root: Path, scenario: Scenario) -> RunResult:
    return run_scenario(ImplAdapter(root), scenario)


def run(scenario: Scenario) -> RunResult:
    with tempfile.TemporaryDirectory(prefix="deltaspec-") as root:
        return run_in(Path(root), scenario)
