"""Runs scenario vectors on the pure model (``deltaspec.model``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from deltaspec.conformance.scenarios import Json, RunResult, Scenario, schema_string
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
from deltaspec.model.log import Log
from deltaspec.model.outcomes import Committed, Conflict, Outcome, Pending, Rejected, Skipped
from deltaspec.model.predicates import parse
from deltaspec.model.profiles import profile
from deltaspec.model.snapshot import Snapshot

TABLE_ID = "00000000-0000-0000-0000-000000000000"


def _protocol(data: Json) -> Protocol:
    readers, writers = data.get("readerFeatures"), data.get("writerFeatures")
    return Protocol(
        data["minReaderVersion"],
        data["minWriterVersion"],
        None if readers is None else frozenset(readers),
        None if writers is None else frozenset(writers),
    )


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


def _record_reads(txn: t.Transaction, reads: list[Json]) -> t.Transaction:
    for read in reads:
        if "filter" in read:
            txn = t.filter_files(txn, [parse(p) for p in read["filter"]], read.get("files"))
            continue
        if "predicate" in read:
            txn = t.track_predicate(txn, parse(read["predicate"]))
        if "files" in read:
            txn = t.track_files(txn, read["files"])
        if read.get("whole_table"):
            txn = t.read_whole_table(txn)
        if "app_id" in read:
            txn, _ = t.txn_version(txn, read["app_id"])
    return txn


def _reads_and_actions(spec: Json, now: int) -> Callable[[t.Transaction], t.Transaction]:
    def record(txn: t.Transaction) -> t.Transaction:
        staged = [action(a, txn.read_snapshot, now) for a in spec.get("actions", [])]
        return t.stage(_record_reads(txn, spec.get("reads", [])), staged)

    return record


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
        "timestamp": info.timestamp,
        "operation": info.operation,
        "readVersion": info.read_version,
        "isolationLevel": info.isolation_level,
        "isBlindAppend": info.is_blind_append,
        "txnId": info.txn_id,
    }
    return {k: v for k, v in fields.items() if v is not None}


def snapshot_json(snapshot: Snapshot) -> Json:
    protocol = snapshot.protocol
    return {
        "version": snapshot.version,
        "files": sorted(path for path, _ in snapshot.files),
        "tombstones": sorted(path for path, _ in snapshot.tombstones),
        "app_txns": {app: txn.version for app, txn in sorted(snapshot.app_txns.items())},
        "domains": {d: dm.configuration for d, dm in sorted(snapshot.domains.items())},
        "properties": dict(snapshot.metadata.configuration) if snapshot.metadata else {},
        "protocol": {} if protocol is None else {
            "minReaderVersion": protocol.min_reader_version,
            "minWriterVersion": protocol.min_writer_version,
            **({"readerFeatures": sorted(protocol.reader_features)}
               if protocol.reader_features is not None else {}),
            **({"writerFeatures": sorted(protocol.writer_features)}
               if protocol.writer_features is not None else {}),
        },
    }  # fmt: skip


def build_machine(scenario: Scenario) -> m.Machine:
    """The scenario's profile and its log before the first step: ``table`` then ``commits``."""
    data = scenario.data
    config = data.get("config", {})
    confs: dict[str, int | bool] = {}
    if "maxCommitAttempts" in config:
        confs["max_commit_attempts"] = config["maxCommitAttempts"]
    if "skipRecordingEmptyCommits" in config:
        confs["skip_recording_empty_commits"] = config["skipRecordingEmptyCommits"]
    log = Log()
    if "table" in data:
        log = _append(log, initial_commit(data["table"]))
    for commit in data.get("commits", []):
        base = log.snapshot() or Snapshot()
        log = _append(log, tuple(action(a, base, now=0) for a in commit))
    return m.Machine(profile=profile(data.get("profile"), **confs), log=log)


def _append(log: Log, actions: tuple[Action, ...]) -> Log:
    appended = log.put_if_absent(log.latest_version + 1, actions, timestamp=0)
    if appended is None:
        raise AssertionError("setup commit collided")
    return appended


def run(scenario: Scenario) -> RunResult:
    """Run ``scenario`` on the model and report outcomes in the vector's JSON shape."""
    machine = build_machine(scenario)
    writers = scenario.data["writers"]
    rejected: dict[str, Json] = {}
    for index, step in enumerate(scenario.data["steps"]):
        now = step.get("time", index)
        if "begin" in step:
            name = step["begin"]
            spec = writers[name]
            operation = t.Operation(spec.get("operation", "WRITE"), spec.get("changes_data"))
            began = m.begin(
                machine, name, operation, step.get("version"), spec.get("commit_if_needed", True)
            )
            if isinstance(began, Rejected):
                rejected[name] = outcome_json(began, machine)
                continue
            machine = began
            machine = m.update(machine, name, _reads_and_actions(spec, now))
        elif "commit" in step:
            machine = m.commit(machine, step["commit"], now)
        elif "try_write" in step:
            machine = m.try_write(machine, step["try_write"], now)
        elif "resolve" in step:
            machine = m.resolve(machine, step["resolve"])
        elif "checkpoint" in step:
            machine = m.Machine(
                machine.profile, machine.log.with_checkpoint(step["checkpoint"]), machine.writers
            )
    outcomes = {name: outcome_json(w.outcome, machine) for name, w in machine.writers.items()}
    outcomes.update(rejected)
    latest = machine.log.snapshot()
    return RunResult(outcomes, snapshot_json(latest) if latest else {})
