"""Runs scenario vectors on the pure model (``deltaspec.model``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ....model import machine as m
from ....model import transaction as t
from ....model.actions import (
    Action,
    AddCDCFile,
    AddFile,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
    pairs,
    str_pairs,
)
from ....model.checkpoint import (
    checkpoint_file_names,
    checkpoint_read,
    expired_log_versions,
    listed_commit_times,
    min_file_retention_timestamp,
    post_commit,
    tombstones,
    vacuum_deletes,
)
from ....model.checksum import version_checksum
from ....model.features import misplaced_feature_lists
from ....model.log import Log, TimestampOutOfRange, version_at_timestamp
from ....model.outcomes import Committed, Conflict, Outcome, Pending, Rejected, Skipped
from ....model.predicates import parse
from ....model.profiles import profile
from ....model.snapshot import Snapshot, data_file_path
from ...harness import actions as staged
from ...harness import outcomes, wire
from ...harness.adapter import ACTION_LEVEL, Capability, Json, TableSetup, WriterSpec
from ...harness.reads import Read
from ...harness.runner import run_scenario
from ...harness.scenarios import RunResult, Scenario, schema_string, validated_scenario
from ...harness.snapshots import NO_SNAPSHOT, TableSnapshot, protocol_of

TABLE_ID = "00000000-0000-0000-0000-000000000000"
DEFAULT_PROTOCOL = {"minReaderVersion": 1, "minWriterVersion": 2}


def _protocol(data: staged.Protocol) -> Protocol:
    """ValueError for feature lists at versions without table features (the model's
    ``misplaced_feature_lists``, ACTION.PROTOCOL_FEATURE_LISTS)."""
    readers, writers = data.reader_features, data.writer_features
    protocol = Protocol(
        data.min_reader_version,
        data.min_writer_version,
        None if readers is None else frozenset(readers),
        None if writers is None else frozenset(writers),
    )
    misplaced = misplaced_feature_lists(protocol)
    if misplaced:
        raise ValueError(f"a malformed protocol: {', '.join(misplaced)}")
    return protocol


def _dv_id(dv: Mapping[str, Any] | None) -> str | None:
    if not dv:
        return None
    return f"{dv.get('storageType', '')}{dv.get('pathOrInlineDv', '')}@{dv.get('offset', '')}"


def _metadata(data: staged.MetaData, base: Metadata | None) -> Metadata:
    schema = data.schema_string if data.gave("schemaString") else None
    if data.schema is not None:
        schema = schema_string(data.schema)
    return Metadata(
        id=data.kept("id", base.id if base else TABLE_ID),
        schema_string=schema or (base.schema_string if base else schema_string([])),
        partition_columns=data.kept("partition_columns", base.partition_columns if base else ()),
        configuration=str_pairs(data.configuration)
        if data.configuration is not None
        else base.configuration
        if base
        else (),
        name=data.kept("name", base.name if base else None),
        description=data.kept("description", base.description if base else None),
        created_time=data.kept("created_time", base.created_time if base else None),
    )


def action(data: staged.Action, snapshot: Snapshot, now: int) -> Action:
    """One scenario action, with the defaults of spec/scenarios.md."""
    match data:
        case staged.Add():
            return AddFile(
                path=data.path,
                partition_values=pairs(data.partition_values),
                size=data.size,
                modification_time=data.modification_time,
                data_change=data.data_change,
                stats=data.stats,
                dv_id=_dv_id(data.deletion_vector),
                base_row_id=data.base_row_id,
                default_row_commit_version=data.default_row_commit_version,
            )
        case staged.Remove():
            live = snapshot.file_by_path(data.path)
            values = data.partition_values
            return RemoveFile(
                path=data.path,
                deletion_timestamp=now
                if data.deletion_timestamp is None
                else data.deletion_timestamp,
                data_change=data.data_change,
                partition_values=pairs(values)
                if values is not None
                else (live.partition_values if live else None),
                size=data.size,
                dv_id=_dv_id(data.deletion_vector),
            )
        case staged.MetaData():
            return _metadata(data, snapshot.metadata)
        case staged.Protocol():
            return _protocol(data)
        case staged.Txn():
            return SetTransaction(data.app_id, data.version, data.last_updated)
        case staged.DomainMetadata():
            return DomainMetadata(data.domain, data.configuration, data.removed)
        case staged.Cdc():
            return AddCDCFile(data.path, pairs(data.partition_values), data.size, data.data_change)
        case staged.CommitInfo():
            return CommitInfo(
                timestamp=now if data.timestamp is None else data.timestamp,
                operation=data.operation if data.operation is not None else "WRITE",
                read_version=data.read_version,
                isolation_level=data.isolation_level,
                is_blind_append=data.is_blind_append,
                txn_id=data.txn_id,
                in_commit_timestamp=data.in_commit_timestamp,
            )
    raise ValueError(f"unknown action {data!r}")


KNOWN_ACTIONS = frozenset(
    {"add", "remove", "metaData", "protocol", "txn", "domainMetadata", "cdc", "commitInfo"}
)


def read_log_action(line: Json, snapshot: Snapshot) -> Action | None:
    """One line of a Delta commit file: its known action, or None (ACTION.UNKNOWN).

    Keys that name no known action, beside or instead of a known one, are
    ignored, and so are unknown fields inside a known action.
    """
    known = [key for key in line if key in KNOWN_ACTIONS]
    if len(known) > 1:
        raise ValueError(f"a line carries several actions: {known}")
    if not known:
        return None
    return action(staged.parse_action({known[0]: line[known[0]]}), snapshot, now=0)


def initial_commit(table: Json) -> tuple[Action, ...]:
    """Version 0 of a scenario's ``table``."""
    columns = table.get("partition_columns", [])
    metadata = Metadata(
        id=TABLE_ID,
        schema_string=schema_string(table["schema"]),
        partition_columns=tuple(columns),
        configuration=str_pairs(table.get("properties")),
        created_time=0,
    )
    files = [
        AddFile(f["path"], pairs(f.get("partition", {c: None for c in columns})))
        for f in table.get("files", [])
    ]
    return (
        CommitInfo(timestamp=0, operation="CREATE TABLE", is_blind_append=False),
        _protocol(staged.Protocol.of(table.get("protocol", DEFAULT_PROTOCOL))),
        metadata,
        *(SetTransaction(app, version) for app, version in table.get("app_txns", {}).items()),
        *(DomainMetadata(d, conf) for d, conf in table.get("domains", {}).items()),
        *files,
    )


def record_read(txn: t.Transaction, read: Read) -> t.Transaction:
    """One element of a writer's ``reads`` (spec/scenarios.md)."""
    if read.filter is not None:
        files = None if read.files is None else list(read.files)
        return t.filter_files(txn, [parse(p) for p in read.filter], files)
    if read.predicate is not None:
        txn = t.track_read_predicate(txn, parse(read.predicate))
    if read.files is not None:
        txn = t.track_files_read(txn, list(read.files))
    if read.whole_table:
        txn = t.read_whole_table(txn)
    if read.app_id is not None:
        txn, _ = t.txn_version(txn, read.app_id)
    return txn


def outcome_of(outcome: Outcome, machine: m.Machine) -> outcomes.Outcome:
    """The model's outcome as the harness's."""
    match outcome:
        case Committed(version=v):
            info = machine.log.commits[v].commit_info
            return outcomes.Committed(v, commit_info_json(info))
        case Conflict(kind=k, winner=w):
            return outcomes.Conflict(k.value, w)
        case Rejected(kind=k):
            return outcomes.Error(k.value)
        case Skipped():
            return outcomes.SKIPPED
        case Pending():
            return outcomes.PENDING
    raise AssertionError(outcome)


def commit_info_json(info: CommitInfo | None) -> Json:
    if info is None:
        return {}
    fields: Mapping[str, Any] = {
        "inCommitTimestamp": info.in_commit_timestamp,
        "timestamp": info.timestamp,
        "operation": info.operation,
        "readVersion": info.read_version,
        "isolationLevel": info.isolation_level,
        "isBlindAppend": info.is_blind_append,
        "txnId": info.txn_id,
    }
    return {k: v for k, v in fields.items() if v is not None}


def snapshot_json(snapshot: Snapshot, now: int | None = None) -> Json:
    """``snapshot`` in the scenario JSON (the table readers' answer)."""
    return wire.to_wire(table_snapshot(snapshot, now))


def table_snapshot(snapshot: Snapshot, now: int | None = None) -> TableSnapshot:
    """``snapshot`` as the harness's; with ``now``, only the tombstones unexpired then."""
    protocol = snapshot.protocol
    kept = snapshot.tombstones.values() if now is None else tombstones(snapshot, now)
    return TableSnapshot(
        version=snapshot.version,
        files=tuple(sorted(path for path, _ in snapshot.files)),
        tombstones=tuple(sorted(r.path for r in kept)),  # one per key (SNAPSHOT.FILE_KEY)
        stats={path: f.stats for (path, _), f in sorted(snapshot.files.items())},
        row_ids={
            path: (f.base_row_id, f.default_row_commit_version)
            for (path, _), f in sorted(snapshot.files.items())
        },
        app_txns={app: txn.version for app, txn in sorted(snapshot.app_txns.items())},
        domains={d: dm.configuration for d, dm in sorted(snapshot.domains.items())},
        properties=dict(snapshot.metadata.configuration) if snapshot.metadata else {},
        schema=snapshot.metadata.schema_string if snapshot.metadata else None,
        partition_columns=tuple(snapshot.partition_columns),
        protocol=None if protocol is None else protocol_of(protocol),
    )


def _append(log: Log, actions: tuple[Action, ...]) -> Log:
    appended = log.write_new(log.latest_version + 1, actions, timestamp=0)
    if appended is None:
        raise AssertionError("setup commit collided")
    return appended


class ModelAdapter:
    """The pure model behind the adapter interface; each call advances an immutable Machine.

    After a successful commit it records the checkpoint that CHECKPOINT.INTERVAL asks for, and
    after every checkpoint it cleans up the log as RETENTION.LOG says, by the clock of the step:
    ``log_start`` is the first version still listed. ``data_files`` are the data files the
    writers' adds name (decoded path → the clock of the step that staged them first), for VACUUM.
    """

    name = "model"
    capabilities = ACTION_LEVEL | {Capability.LOG_CLEANUP, Capability.CHECKSUMS}

    def __init__(self) -> None:
        self.machine = m.Machine()
        self.now = 0
        self.committed: set[int] = set()
        """The versions a writer committed (each leaves ``<v>.crc``, CHECKSUM.WRITE)."""
        self.checkpoint_files: dict[str, int] = {}
        """Checkpoint file name → the clock of the step that wrote it."""
        self.data_files: dict[str, int] = {}

    @property
    def log_start(self) -> int:
        """The oldest commit still listed."""
        return self.machine.log.log_start

    def create(self, setup: TableSetup) -> None:
        log = Log()
        if setup.table is not None:
            log = _append(log, initial_commit(setup.table))
        for commit in setup.commits:
            base = log.snapshot() or Snapshot()
            log = _append(log, tuple(action(a, base, now=0) for a in commit))
        self.machine = m.Machine(profile=profile(setup.profile, **setup.session_settings), log=log)

    def begin(
        self, writer: str, spec: WriterSpec, version: int | None, now: int
    ) -> outcomes.Outcome | None:
        self.now = now
        if version is not None and 0 <= version < self.log_start:
            return outcomes.Error("VERSION_NOT_FOUND")  # cleaned up (RETENTION.LOG)
        operation = t.Operation(spec.operation, spec.changes_data)
        began = m.begin(self.machine, writer, operation, version, spec.commit_if_needed)
        if isinstance(began, Rejected):
            return outcome_of(began, self.machine)
        self.machine = began
        return None

    def read(self, writer: str, read: Read) -> None:
        self.machine = m.update(self.machine, writer, lambda txn: record_read(txn, read))

    def stage(self, writer: str, actions: Sequence[staged.Action], now: int) -> None:
        self.now = now
        for data in actions:
            if isinstance(data, staged.Add):
                self.data_files.setdefault(data_file_path(data.path), now)

        def with_actions(txn: t.Transaction) -> t.Transaction:
            return t.stage(txn, [action(a, txn.read_snapshot, now) for a in actions])

        self.machine = m.update(self.machine, writer, with_actions)

    def _outcome(self, writer: str) -> outcomes.Outcome:
        outcome = m.outcome(self.machine, writer)
        if isinstance(outcome, Committed):
            self.committed.add(outcome.version)
            metadata = self.machine.log.snapshots[outcome.version].metadata
            if post_commit(outcome.version, metadata):
                self.checkpoint(outcome.version, self.now)
        return outcome_of(outcome, self.machine)

    def commit(self, writer: str, now: int) -> outcomes.Outcome:
        self.now = now
        self.machine = m.commit(self.machine, writer, now)
        return self._outcome(writer)

    def try_write(self, writer: str, now: int) -> outcomes.Outcome:
        self.now = now
        self.machine = m.try_write(self.machine, writer, now)
        return self._outcome(writer)

    def resolve(self, writer: str) -> outcomes.Outcome:
        self.machine = m.resolve(self.machine, writer)
        return self._outcome(writer)

    def checkpoint(self, version: int, now: int, parts: int | None = None) -> None:
        """Checkpoint ``version`` (a file that exists keeps its time and content; a table with
        the ``v2Checkpoint`` feature gets no parts, CHECKPOINT.V2_WRITE), then clean up the
        log. Reads start from what the checkpoint a reader uses held when it was written."""
        self.now = now
        log = self.machine.log
        if not 0 <= version <= log.latest_version:
            raise ValueError(f"no version {version} to checkpoint")
        protocol = log.snapshots[version].protocol
        if protocol is not None and "v2Checkpoint" in (protocol.writer_features or ()):
            parts = None
        names = checkpoint_file_names(version, parts)
        written = [name for name in names if name not in self.checkpoint_files]
        for name in names:
            self.checkpoint_files.setdefault(name, now)
        prefix = f"{version:020d}."
        read = checkpoint_read(n for n in self.checkpoint_files if n.startswith(prefix))
        log = log.checkpoint_version(version, now if read in written else None)
        self.machine = replace(self.machine, log=log)
        self._clean_up(version)

    def checkpoint_in_parts(self, version: int, now: int, parts: int) -> None:
        self.checkpoint(version, now, parts)

    def clean_up_log(self, version: int, now: int) -> None:
        """The ``clean_up_log`` step: the log starts at the checkpoint of ``version``."""
        self.now = now
        if version not in self.machine.log.checkpoints:
            raise ValueError(f"clean_up_log {version}: no checkpoint of version {version}")
        self.machine = replace(self.machine, log=self.machine.log.cleaned_up_to(version))
        self.checkpoint_files = {
            name: written
            for name, written in self.checkpoint_files.items()
            if int(name.split(".", 1)[0]) >= version
        }

    def _clean_up(self, version: int) -> None:
        """RETENTION.LOG after checkpointing ``version``, over the files still listed."""
        log = self.machine.log
        metadata = log.snapshots[version].metadata
        if metadata is None or metadata.property("delta.enableExpiredLogCleanup", "true") != "true":
            return
        files: dict[int, list[int]] = {}
        for name, written in sorted(self.checkpoint_files.items()):
            files.setdefault(int(name.split(".", 1)[0]), []).append(written)
        listed = listed_commit_times(
            {c.version: c.timestamp for c in log.commits[self.log_start : version + 1]},
            {v: times for v, times in files.items() if v <= version},
            checksums=True,  # the impl writes <v>.crc after every commit (CHECKSUM.WRITE)
        )
        # versions no longer listed take no part: times far below any listed one
        times = [listed.get(v, v - 2**62) for v in range(version + 1)]
        protocol = log.snapshots[version].protocol
        expired = expired_log_versions(
            times, version, self.now, metadata, self.checkpoints(), protocol, self.machine.profile
        )
        if expired:
            self.machine = replace(self.machine, log=log.cleaned_up_to(expired[-1] + 1))
            self.checkpoint_files = {
                name: written
                for name, written in self.checkpoint_files.items()
                if int(name.split(".", 1)[0]) >= self.log_start
            }

    def snapshot(self, version: int | None = None) -> TableSnapshot:
        if version is not None and 0 <= version < self.log_start:
            return NO_SNAPSHOT
        snapshot = self.machine.log.snapshot(version)
        return NO_SNAPSHOT if snapshot is None else table_snapshot(snapshot, self.now)

    def checkpoints(self) -> tuple[int, ...]:
        return tuple(v for v in self.machine.log.checkpoints if v >= self.log_start)

    def checksum(self, version: int) -> Json | None:
        """CHECKSUM.WRITE: the state fields of the ``<v>.crc`` a writer's commit of ``version``
        left (none for setup commits or cleaned-up versions)."""
        if version not in self.committed or version < self.log_start:
            return None
        snapshot = self.machine.log.snapshots[version]
        info = next(
            (a for a in self.machine.log.commits[version].actions if isinstance(a, CommitInfo)),
            None,
        )
        ict = None if info is None else info.in_commit_timestamp
        return version_checksum(snapshot, ict).file_fields()

    def listed_versions(self) -> tuple[int, ...]:
        """The commit versions still in the log (RETENTION.LOG)."""
        return tuple(range(self.log_start, self.machine.log.latest_version + 1))

    def version_at(self, timestamp: int, now: int) -> Json:
        """Time travel by ``timestamp``: ``{"version": v}`` or ``{"error": KIND}``."""
        self.now = now
        commits = self.machine.log.commits[self.log_start :]
        try:
            return {
                "version": version_at_timestamp(
                    {c.version: c.timestamp for c in commits}, timestamp
                )
            }
        except TimestampOutOfRange as out_of_range:
            return {"error": out_of_range.kind}

    def vacuum(self, retention_ms: int | None, now: int) -> list[str]:
        """The data files VACUUM deletes at ``now`` (the table's retention unless given)."""
        self.now = now
        log = self.machine.log
        snapshot = log.snapshot()
        assert snapshot is not None
        cutoff = (
            min_file_retention_timestamp(snapshot.metadata, now)
            if retention_ms is None
            else now - retention_ms
        )
        deleted = vacuum_deletes(snapshot, log.commits[self.log_start :], self.data_files, cutoff)
        for path in deleted:
            del self.data_files[path]
        return list(deleted)

    def verify(self) -> list[str]:
        return []  # the model's Log cannot hold a gap or a torn commit

    def close(self) -> None:
        pass


def run(scenario: Scenario | Json) -> RunResult:
    """Run ``scenario`` on the model: a vector, or a vector's JSON as ``deltaspec.strategies``
    draws it (checked against the schema first). The outcomes and the snapshot are typed
    (harness/outcomes.py, harness/snapshots.py; ``outcome_json`` and ``snapshot_json`` spell them
    in the vectors' JSON)."""
    if not isinstance(scenario, Scenario):
        scenario = validated_scenario(scenario, "a vector given as JSON")
    return run_scenario(ModelAdapter(), scenario)
