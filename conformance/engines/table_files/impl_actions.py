"""The vectors' actions as the impl's action values (with the defaults of spec/scenarios.md): what
the impl commits for a writer, and what a setup commit is written with, through the impl's codec,
for the engines that take a table as files (delta-spark, delta-rs, our Spark path)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....impl.actions import (
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
from ....impl.snapshot.state import Snapshot
from ...harness import actions as staged
from ...harness.adapter import Json
from ...harness.scenarios import schema_string

TABLE_ID = "00000000-0000-0000-0000-000000000000"
DEFAULT_PROTOCOL = {"minReaderVersion": 1, "minWriterVersion": 2}


def _protocol(data: staged.Protocol) -> Protocol:
    readers, writers = data.reader_features, data.writer_features
    return Protocol(
        data.min_reader_version,
        data.min_writer_version,
        None if readers is None else tuple(readers),
        None if writers is None else tuple(writers),
    )


def _dv(dv: Mapping[str, Any] | None) -> DeletionVector | None:
    if not dv:
        return None
    return DeletionVector(
        dv.get("storageType", "u"),
        dv.get("pathOrInlineDv", ""),
        dv.get("sizeInBytes", 1),
        dv.get("cardinality", 1),
        dv.get("offset"),
    )


def _remove(data: staged.Remove, snapshot: Snapshot | None, now: int) -> RemoveFile:
    """A remove; without ``partitionValues`` it takes those of the live file it removes."""
    values = data.partition_values
    if values is None and snapshot is not None:
        live = next((f for f in snapshot.files.values() if f.path == data.path), None)
        values = None if live is None else live.partition_values
    return RemoveFile(
        data.path,
        now if data.deletion_timestamp is None else data.deletion_timestamp,
        data.data_change,
        None,
        None if values is None else dict(values),
        data.size,
        deletion_vector=_dv(data.deletion_vector),
    )


def _metadata(data: staged.MetaData, base: Metadata | None) -> Metadata:
    """A metaData action; what it leaves out is the table's current metadata (or the default)."""
    schema = schema_string(data.schema) if data.schema is not None else data.schema_string
    return Metadata(
        id=data.kept("id", base.id if base else TABLE_ID),
        schema_string=schema or (base.schema_string if base else schema_string([])),
        partition_columns=data.kept("partition_columns", base.partition_columns if base else ()),
        configuration=dict(data.configuration)
        if data.configuration is not None
        else dict(base.configuration)
        if base
        else {},
        name=data.kept("name", base.name if base else None),
        description=data.kept("description", base.description if base else None),
        created_time=data.kept("created_time", base.created_time if base else None),
    )


def to_action(data: staged.Action, snapshot: Snapshot | None, now: int) -> Action:
    """One scenario action with the defaults of spec/scenarios.md."""
    match data:
        case staged.Add():
            return AddFile(
                data.path,
                dict(data.partition_values),
                data.size,
                data.modification_time,
                data.data_change,
                stats=data.stats,
                deletion_vector=_dv(data.deletion_vector),
                base_row_id=data.base_row_id,
                default_row_commit_version=data.default_row_commit_version,
            )
        case staged.Remove():
            return _remove(data, snapshot, now)
        case staged.MetaData():
            return _metadata(data, None if snapshot is None else snapshot.metadata)
        case staged.Protocol():
            return _protocol(data)
        case staged.Txn():
            return SetTransaction(data.app_id, data.version, data.last_updated)
        case staged.DomainMetadata():
            return DomainMetadata(data.domain, data.configuration, data.removed)
        case staged.Cdc():
            return AddCDCFile(data.path, dict(data.partition_values), data.size, data.data_change)
        case staged.CommitInfo():
            return CommitInfo({"timestamp": now, **data.body()})
    raise ValueError(f"unknown action {data!r}")


def initial_commit(table: Json) -> list[Action]:
    columns = table.get("partition_columns", [])
    metadata = Metadata(
        TABLE_ID,
        schema_string(table["schema"]),
        tuple(columns),
        dict(table.get("properties", {})),
        created_time=0,
    )
    protocol = _protocol(staged.Protocol.of(table.get("protocol", DEFAULT_PROTOCOL)))
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
