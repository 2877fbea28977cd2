"""A table's state at one version as an adapter reports it (spec/scenarios.md, "Expected
snapshot"), typed.

Every field is None when the adapter does not report it (an engine that cannot list tombstones
or domains, a bridge that leaves a key out); :data:`NO_SNAPSHOT` (every field None) is the answer
for a version that cannot be read. The vectors' JSON spelling is :func:`snapshot_json` /
:func:`parse_snapshot` (harness/wire.py uses them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from . import actions

Json = dict[str, Any]
RowIds = tuple[int | None, int | None]
"""A live file's ``[baseRowId, defaultRowCommitVersion]``."""


@dataclass(frozen=True)
class TableSnapshot:
    """The fields in the order the reference bridge writes them (spec/bridge.md)."""

    version: int | None = None
    files: tuple[str, ...] | None = None
    """Live file paths, sorted."""
    app_txns: Mapping[str, int] | None = None
    domains: Mapping[str, str] | None = None
    tombstones: tuple[str, ...] | None = None
    stats: Mapping[str, str | None] | None = None
    """Live file path -> its stats JSON."""
    row_ids: Mapping[str, RowIds] | None = None
    properties: Mapping[str, str] | None = None
    schema: str | None = None
    """The schemaString."""
    partition_columns: tuple[str, ...] | None = None
    protocol: actions.Protocol | None = None
    """None also for a table without one (the JSON's ``{}``)."""


NO_SNAPSHOT = TableSnapshot()
NO_TABLE = TableSnapshot(version=-1)
"""The latest snapshot where no table exists."""

_TUPLES = frozenset({"files", "tombstones", "partition_columns"})


def protocol_of(protocol: Any) -> actions.Protocol:
    """A protocol as the snapshot holds it, from any object with ``min_reader_version``,
    ``min_writer_version``, ``reader_features`` and ``writer_features`` (the model's, the impl's,
    delta-rs's): feature lists only when present, sorted."""
    readers, writers = protocol.reader_features, protocol.writer_features
    return actions.Protocol(
        min_reader_version=protocol.min_reader_version,
        min_writer_version=protocol.min_writer_version,
        reader_features=None if readers is None else tuple(sorted(readers)),
        writer_features=None if writers is None else tuple(sorted(writers)),
    )


def field_json(name: str, value: Any) -> Any:
    """One snapshot field in the vectors' JSON (a report shows it so)."""
    if value is None:
        return None
    if name == "protocol":
        return value.body()
    if name == "row_ids":
        return {path: list(ids) for path, ids in value.items()}
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    return value


def snapshot_json(snapshot: TableSnapshot) -> Json:
    """The snapshot in the vectors' JSON: the fields reported. A whole snapshot (one that reports
    ``properties``) of a table without metadata or protocol has ``"schema": null`` and
    ``"protocol": {}``."""
    whole = snapshot.properties is not None
    out: Json = {}
    for f in fields(snapshot):
        value = getattr(snapshot, f.name)
        if value is not None:
            out[f.name] = field_json(f.name, value)
        elif whole and f.name in {"schema", "protocol"}:
            out[f.name] = None if f.name == "schema" else {}
    return out


def parse_snapshot(data: Mapping[str, Any]) -> TableSnapshot:
    """A snapshot in the vectors' JSON; unknown keys are ignored."""
    values: dict[str, Any] = {}
    for f in fields(TableSnapshot):
        value = data.get(f.name)
        if value is None:
            continue
        if f.name == "protocol":
            value = actions.Protocol.of(value) if value else None
        elif f.name == "row_ids":
            value = {path: tuple(ids) for path, ids in value.items()}
        elif f.name in _TUPLES:
            value = tuple(value)
        values[f.name] = value
    return TableSnapshot(**values)


def protocol_json(protocol: Any) -> Json:
    """:func:`protocol_of` in the vectors' JSON (a table reader's answer)."""
    return protocol_of(protocol).body()
