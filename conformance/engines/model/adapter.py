"""Runs scenario vectors on the pure model (``deltaspec.model``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from deltaspec.model import machine as m
from deltaspec.model import transaction as t
from deltaspec.model.actions import (
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
from deltaspec.model.checkpoint import (
    checkpoint_file_names,
    checkpoint_read,
    expired_log_versions,
    listed_commit_times,
    min_file_retention_timestamp,
    post_commit,
    tombstones,
    vacuum_deletes,
)
from deltaspec.model.features import misplaced_feature_lists
from deltaspec.model.log import Log, TimestampOutOfRange, version_at_timestamp
from deltaspec.model.outcomes import Committed, Conflict, Outcome, Pending, Rejected, Skipped
from deltaspec.model.predicates import parse
from deltaspec.model.profiles import profile
from deltaspec.model.snapshot import Snapshot, data_file_path
from deltaspec.model.timestamps import version_checksum

from ...harness.adapter import (
    ACTION_LEVEL,
    Capability,
    Json,
    TableSetup,
    WriterSpec,
    protocol_json,
)
from ...harness.runner import run_scenario
from ...harness.scenarios import RunResult, Scenario, schema_string, validated_scenario

TABLE_ID = "00000000-0000-0000-0000-000000000000"


def _protocol(data: Json) -> Protocol:
    """ValueError for feature lists at versions without table features (the model's
    ``misplaced_feature_lists``, ACTION.PROTOCOL_FEATURE_LISTS)."""
    readers, writers = data.get("readerFeatures"), data.get("writerFeatures")
    protocol = Protocol(
        data["minReaderVersion"],
        data["minWriterVersion"],
        None if readers is None else frozenset(readers),
        None if writers is None else frozenset(writers),
    )
    misplaced = misplaced_feature_lists(protocol)
    if misplaced:
        raise ValueError(f"a malformed protocol: {', '.join(misplaced)}")
    return protocol


def _dv_id(data: Json) -> str | None:
    dv = data.get("deletionVector")
    if not dv:
        return None
    return f"{dv.get('storageType', '')}{dv.get('pathOrInlineDv', '')}@{dv.get('offset', '')}"


def _metadata(data: Json, base: Metadata | None) -> Metadata:
    schema = data.get("schemaString")
    if "schema" in data:
        schema = schema_string(data["schema"])
    return Metadata(
        id=data.get("id", base.id if base else TABLE_ID),
        schema_string=schema or (base.schema_string if base else schema_string([])),
        partition_columns=tuple(
            data.get("partitionColumns", base.partition_columns if base else ())
        ),
        configuration=str_pairs(data["configuration"])
        if "configuration" in data
        else (base.configuration if base else ()),
        name=data.get("name", base.name if base else None),
        description=data.get("description", base.description if base else None),
        created_time=data.get("createdTime", base.created_time if base else None),
    )


def action(data: Json, snapshot: Snapshot, now: int) -> Action:
    """One scenario action, with the defaults of spec/scenarios.md."""
    ((kind, body),) = data.items()
    match kind:
        case "add":
            return AddFile(
                path=body["path"],
                partition_values=pairs(body.get("partitionValues")),
                size=body.get("size", 1),
                modification_time=body.get("modificationTime", 0),
                data_change=body.get("dataChange", True),
                stats=body.get("stats"),
                dv_id=_dv_id(body),
                base_row_id=body.get("baseRowId"),
                default_row_commit_version=body.get("defaultRowCommitVersion"),
            )
        case "remove":
            live = snapshot.file_by_path(body["path"])
            values = body.get("partitionValues")
            return RemoveFile(
                path=body["path"],
                deletion_timestamp=body.get("deletionTimestamp", now),
                data_change=body.get("dataChange", True),
                partition_values=pairs(values)
                if values is not None
                else (live.partition_values if live else None),
                size=body.get("size"),
                dv_id=_dv_id(body),
            )
        case "metaData":
            return _metadata(body, snapshot.metadata)
        case "protocol":
            return _protocol(body)
        case "txn":
            return SetTransaction(body["appId"], body["version"], body.get("lastUpdated"))
        case "domainMetadata":
            return DomainMetadata(
                body["domain"], body.get("configuration", ""), body.get("removed", False)
            )
        case "cdc":
            return AddCDCFile(
                body["path"], pairs(body.get("partitionValues")), body.get("size", 1),
                body.get("dataChange", False),
            )  # fmt: skip
        case "commitInfo":
            return CommitInfo(
                timestamp=body.get("timestamp", now),
                operation=body.get("operation", "WRITE"),
                read_version=body.get("readVersion"),
                isolation_level=body.get("isolationLevel"),
                is_blind_append=body.get("isBlindAppend"),
                txn_id=body.get("txnId"),
                in_commit_timestamp=body.get("inCommitTimestamp"),
            )
    raise ValueError(f"unknown action {kind!r}")


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
    return action({known[0]: line[known[0]]}, snapshot, now=0)


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
        _protocol(table.get("protocol", {"minReaderVersion": 1, "minWriterVersion": 2})),
        metadata,
        *(SetTransaction(app, version) for app, version in table.get("app_txns", {}).items()),
        *(DomainMetadata(d, conf) for d, conf in table.get("domains", {}).items()),
        *files,
    )


def record_read(txn: t.Transaction, read: Json) -> t.Transaction:
    """One element of a writer's ``reads`` (spec/scenarios.md)."""
    if "filter" in read:
        return t.filter_files(txn, [parse(p) for p in read["filter"]], read.get("files"))
    if "predicate" in read:
        txn = t.track_read_predicate(txn, parse(read["predicate"]))
    if "files" in read:
        txn = t.track_files_read(txn, read["files"])
    if read.get("whole_table"):
        txn = t.read_whole_table(txn)
    if "app_id" in read:
        txn, _ = t.txn_version(txn, read["app_id"])
    return txn


def outcome_json(outcome: Outcome, machine: m.Machine) -> Json:
    match outcome:
        case Committed(version=v):
            info = machine.log.commits[v].commit_info
            return {"committed": v, "commit_info": commit_info_json(info)}
        case Conflict(kind=k, winner=w):
            return {"conflict": k.value, "winner": w}
        case Rejected(kind=k):
            return {"error": k.value}
        case Skipped():
            return {"skipped": True}
        case Pending():
            return {"pending": True}
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
    """``snapshot`` in the scenario shape; with ``now``, only the tombstones unexpired then."""
    protocol = snapshot.protocol
    kept = snapshot.tombstones.values() if now is None else tombstones(snapshot, now)
    return {
        "version": snapshot.version,
        "files": sorted(path for path, _ in snapshot.files),
        "tombstones": sorted(r.path for r in kept),  # one per key (SNAPSHOT.FILE_KEY)
        "stats": {path: f.stats for (path, _), f in sorted(snapshot.files.items())},
        "row_ids": {
            path: [f.base_row_id, f.default_row_commit_version]
            for (path, _), f in sorted(snapshot.files.items())
        },
        "app_txns": {app: txn.version for app, txn in sorted(snapshot.app_txns.items())},
        "domains": {d: dm.configuration for d, dm in sorted(snapshot.domains.items())},
        "properties": dict(snapshot.metadata.configuration) if snapshot.metadata else {},
        "schema": snapshot.metadata.schema_string if snapshot.metadata else None,
        "partition_columns": list(snapshot.partition_columns),
        "protocol": {} if protocol is None else protocol_json(protocol),
    }


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

    def begin(self, writer: str, spec: WriterSpec, version: int | None, now: int) -> Json | None:
        self.now = now
        if version is not None and 0 <= version < self.log_start:
            return {"error": "VERSION_NOT_FOUND"}  # cleaned up (RETENTION.LOG)
        operation = t.Operation(spec.operation, spec.changes_data)
        began = m.begin(self.machine, writer, operation, version, spec.commit_if_needed)
        if isinstance(began, Rejected):
            return outcome_json(began, self.machine)
        self.machine = began
        return None

    def read(self, writer: str, read: Json) -> None:
        self.machine = m.update(self.machine, writer, lambda txn: record_read(txn, read))

    def stage(self, writer: str, actions: Sequence[Json], now: int) -> None:
        self.now = now
        for data in actions:
            if "add" in data:
                self.data_files.setdefault(data_file_path(data["add"]["path"]), now)

        def staged(txn: t.Transaction) -> t.Transaction:
            return t.stage(txn, [action(a, txn.read_snapshot, now) for a in actions])

        self.machine = m.update(self.machine, writer, staged)

    def _outcome(self, writer: str) -> Json:
        outcome = m.outcome(self.machine, writer)
        if isinstance(outcome, Committed):
            self.committed.add(outcome.version)
            metadata = self.machine.log.snapshots[outcome.version].metadata
            if post_commit(outcome.version, metadata):
                self.checkpoint(outcome.version, self.now)
        return outcome_json(outcome, self.machine)

    def commit(self, writer: str, now: int) -> Json:
        self.now = now
        self.machine = m.commit(self.machine, writer, now)
        return self._outcome(writer)

    def try_write(self, writer: str, now: int) -> Json:
        self.now = now
        self.machine = m.try_write(self.machine, writer, now)
        return self._outcome(writer)

    def resolve(self, writer: str) -> Json:
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

    def snapshot(self, version: int | None = None) -> Json:
        if version is not None and 0 <= version < self.log_start:
            return {}
        snapshot = self.machine.log.snapshot(version)
        return {} if snapshot is None else snapshot_json(snapshot, self.now)

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
        return version_checksum(snapshot, None if info is None else info.in_commit_timestamp)

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
    """Run ``scenario`` on the model and report outcomes in the vector's JSON shape: a vector, or
    a vector's JSON as ``deltaspec.strategies`` draws it (checked against the schema first)."""
    if not isinstance(scenario, Scenario):
        scenario = validated_scenario(scenario, "a vector given as JSON")
    return run_scenario(ModelAdapter(), scenario)
