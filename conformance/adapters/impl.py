"""Runs scenario vectors on the production implementation (``deltaspec.impl``), on real files.

Each scenario gets a fresh table directory; every commit goes through
``OptimisticTransaction`` and ``LocalLogStore`` exactly as a user's would. The
impl commits atomically from the caller's point of view, so the fine-grained
steps ``try_write`` and ``resolve`` are not available: such scenarios raise
``Unsupported``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from deltaspec.conformance.scenarios import Json, RunResult, Scenario, schema_string
from deltaspec.impl import codec, errors, predicates
from deltaspec.impl.actions import (
    Action,
    AddCDCFile,
    AddFile,
    CommitInfo,
    DeletionVector,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.impl.checkpoint import checkpoint_version
from deltaspec.impl.releases import CURRENT, Release
from deltaspec.impl.snapshot import DeltaLog, Snapshot
from deltaspec.impl.storage import LocalLogStore, commit_name
from deltaspec.impl.transaction import Operation, OptimisticTransaction

TABLE_ID = "00000000-0000-0000-0000-000000000000"


class Unsupported(Exception):
    """The scenario needs a step this adapter cannot take."""


def _protocol(data: Json) -> Protocol:
    readers, writers = data.get("readerFeatures"), data.get("writerFeatures")
    return Protocol(
        data["minReaderVersion"],
        data["minWriterVersion"],
        None if readers is None else tuple(readers),
        None if writers is None else tuple(writers),
    )


def _dv(data: Json) -> DeletionVector | None:
    dv = data.get("deletionVector")
    if not dv:
        return None
    return DeletionVector(
        dv.get("storageType", "u"),
        dv.get("pathOrInlineDv", ""),
        dv.get("sizeInBytes", 1),
        dv.get("cardinality", 1),
        dv.get("offset"),
    )


def to_action(data: Json, snapshot: Snapshot | None, now: int) -> Action:
    """One scenario action with the defaults of spec/scenarios.md."""
    ((kind, body),) = data.items()
    if kind == "add":
        return AddFile(
            body["path"],
            dict(body.get("partitionValues", {})),
            body.get("size", 1),
            body.get("modificationTime", 0),
            body.get("dataChange", True),
            stats=body.get("stats"),
            deletion_vector=_dv(body),
        )
    if kind == "remove":
        values = body.get("partitionValues")
        if values is None and snapshot is not None:
            live = next((f for f in snapshot.files.values() if f.path == body["path"]), None)
            values = None if live is None else live.partition_values
        return RemoveFile(
            body["path"],
            body.get("deletionTimestamp", now),
            body.get("dataChange", True),
            None,
            values,
            body.get("size"),
            deletion_vector=_dv(body),
        )
    if kind == "metaData":
        base = None if snapshot is None else snapshot.metadata
        schema = schema_string(body["schema"]) if "schema" in body else body.get("schemaString")
        return Metadata(
            id=body.get("id", base.id if base else TABLE_ID),
            schema_string=schema or (base.schema_string if base else schema_string([])),
            partition_columns=tuple(
                body.get("partitionColumns", base.partition_columns if base else ())
            ),
            configuration=dict(body["configuration"])
            if "configuration" in body
            else dict(base.configuration)
            if base
            else {},
            name=body.get("name", base.name if base else None),
            description=body.get("description", base.description if base else None),
            created_time=body.get("createdTime", base.created_time if base else None),
        )
    if kind == "protocol":
        return _protocol(body)
    if kind == "txn":
        return SetTransaction(body["appId"], body["version"], body.get("lastUpdated"))
    if kind == "domainMetadata":
        return DomainMetadata(
            body["domain"], body.get("configuration", ""), body.get("removed", False)
        )
    if kind == "cdc":
        return AddCDCFile(
            body["path"],
            dict(body.get("partitionValues", {})),
            body.get("size", 1),
            body.get("dataChange", False),
        )
    if kind == "commitInfo":
        return CommitInfo({"timestamp": now, **body})
    raise ValueError(f"unknown action {kind!r}")


def _initial_commit(table: Json) -> list[Action]:
    columns = table.get("partition_columns", [])
    metadata = Metadata(
        TABLE_ID,
        schema_string(table["schema"]),
        tuple(columns),
        dict(table.get("properties", {})),
        created_time=0,
    )
    protocol = _protocol(table.get("protocol", {"minReaderVersion": 1, "minWriterVersion": 2}))
    files = [
        AddFile(f["path"], dict(f.get("partition", {c: None for c in columns})), 1, 0, True)
        for f in table.get("files", [])
    ]
    return [
        CommitInfo({"timestamp": 0, "operation": "CREATE TABLE", "isBlindAppend": False}),
        protocol,
        metadata,
        *(SetTransaction(app, v) for app, v in table.get("app_txns", {}).items()),
        *(DomainMetadata(d, conf) for d, conf in table.get("domains", {}).items()),
        *files,
    ]


def _outcome(error: errors.DeltaError) -> Json:
    if isinstance(error, errors.DeltaConcurrentModificationException):
        return {"conflict": error.kind, "winner": error.winning_version}
    return {"error": error.kind}


def _snapshot_json(snapshot: Snapshot) -> Json:
    protocol = snapshot.protocol
    out: Json = {
        "version": snapshot.version,
        "files": sorted(path for path, _ in snapshot.files),
        "app_txns": {app: t.version for app, t in sorted(snapshot.app_transactions.items())},
        "domains": {d: dm.configuration for d, dm in sorted(snapshot.domains.items())},
        "properties": dict(snapshot.metadata.configuration) if snapshot.metadata else {},
        "protocol": {},
    }
    if protocol is not None:
        out["protocol"] = {
            "minReaderVersion": protocol.min_reader_version,
            "minWriterVersion": protocol.min_writer_version,
        }
        if protocol.reader_features is not None:
            out["protocol"]["readerFeatures"] = sorted(protocol.reader_features)
        if protocol.writer_features is not None:
            out["protocol"]["writerFeatures"] = sorted(protocol.writer_features)
    return out


def _reads(txn: OptimisticTransaction, reads: list[Json]) -> None:
    for read in reads:
        if "filter" in read:
            filters = [predicates.expr(f) for f in read["filter"]]
            txn.filter_files(filters, read.get("files"))
            continue
        if "predicate" in read:
            txn.track_read_predicate(predicates.expr(read["predicate"]))
        if "files" in read:
            txn.track_files_read(read["files"])
        if read.get("whole_table"):
            txn.read_whole_table()
        if "app_id" in read:
            txn.txn_version(read["app_id"])


def run_in(root: Path, scenario: Scenario) -> RunResult:
    data = scenario.data
    if any("try_write" in s or "resolve" in s for s in data["steps"]):
        raise Unsupported("fine-grained commit steps (try_write / resolve)")
    config = data.get("config", {})
    confs: dict[str, Any] = {}
    if "maxCommitAttempts" in config:
        confs["max_commit_attempts"] = config["maxCommitAttempts"]
    if "skipRecordingEmptyCommits" in config:
        confs["skip_recording_empty_commits"] = config["skipRecordingEmptyCommits"]
    release = Release.parse(data.get("profile", CURRENT), **confs)
    store = LocalLogStore(root)
    setup = [_initial_commit(data["table"])] if "table" in data else []
    clock = {"now": 0}
    log = DeltaLog(str(root), store=store, clock=lambda: clock["now"])
    for version, actions in enumerate(setup):
        store.write_new(commit_name(version), codec.encode_commit(actions))
    for commit in data.get("commits", []):
        base = log.snapshot()
        version = base.version + 1
        store.write_new(
            commit_name(version), codec.encode_commit([to_action(a, base, 0) for a in commit])
        )
    txns: dict[str, OptimisticTransaction] = {}
    outcomes: dict[str, Json] = {}
    for index, step in enumerate(data["steps"]):
        clock["now"] = step.get("time", index)
        if "begin" in step:
            name = step["begin"]
            spec = data["writers"][name]
            at = step.get("version")
            try:
                snapshot = None if at == -1 else log.snapshot(at)
            except errors.TableNotFoundError as error:
                if at is not None:
                    outcomes[name] = _outcome(error)
                    continue
                snapshot = None
            except errors.DeltaError as error:
                outcomes[name] = _outcome(error)
                continue
            txn = OptimisticTransaction(log, snapshot, release=release, clock=lambda: clock["now"])
            _reads(txn, spec.get("reads", []))
            txn.stage(to_action(a, snapshot, clock["now"]) for a in spec.get("actions", []))
            txns[name] = txn
            outcomes[name] = {"pending": True}
        elif "commit" in step:
            name = step["commit"]
            spec = data["writers"][name]
            operation = Operation(
                spec.get("operation", "WRITE"), changes_data=spec.get("changes_data")
            )
            txn = txns[name]
            try:
                if spec.get("commit_if_needed", True):
                    landed = txn.commit_if_needed(operation=operation)
                else:
                    landed = txn.commit(operation=operation)
            except errors.DeltaError as error:
                outcomes[name] = _outcome(error)
                continue
            if landed is None:
                outcomes[name] = {"skipped": True}
                continue
            info = next(a for a in log.read_commit(landed) if isinstance(a, CommitInfo))
            outcomes[name] = {"committed": landed, "commit_info": dict(info.fields)}
        elif "checkpoint" in step:
            checkpoint_version(log, step["checkpoint"], now_ms=clock["now"])
    try:
        final = _snapshot_json(log.snapshot())
    except errors.DeltaError:  # no table, or one a reader must refuse (no metadata before v0.7)
        final = {}
    return RunResult(outcomes, final)


def run(scenario: Scenario) -> RunResult:
    with tempfile.TemporaryDirectory(prefix="deltaspec-") as root:
        return run_in(Path(root), scenario)
