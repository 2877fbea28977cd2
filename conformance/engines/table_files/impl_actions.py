"""The vectors' actions as the impl's action values (with the defaults of spec/scenarios.md): what
the impl commits for a writer, and what a setup commit is written with, through the impl's codec,
for the engines that take a table as files (delta-spark, delta-rs, our Spark path)."""

from __future__ import annotations

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
from deltaspec.impl.snapshot.state import Snapshot

from ...harness.adapter import Json
from ...harness.scenarios import schema_string

TABLE_ID = "00000000-0000-0000-0000-000000000000"


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


def _remove(body: Json, snapshot: Snapshot | None, now: int) -> RemoveFile:
    """A remove; without ``partitionValues`` it takes those of the live file it removes."""
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


def _metadata(body: Json, base: Metadata | None) -> Metadata:
    """A metaData action; what it leaves out is the table's current metadata (or the default)."""
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
            base_row_id=body.get("baseRowId"),
            default_row_commit_version=body.get("defaultRowCommitVersion"),
        )
    if kind == "remove":
        return _remove(body, snapshot, now)
    if kind == "metaData":
        return _metadata(body, None if snapshot is None else snapshot.metadata)
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


def initial_commit(table: Json) -> list[Action]:
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
