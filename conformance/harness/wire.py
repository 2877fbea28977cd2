"""The typed values of the adapter interface in the JSON of the bridge protocol (spec/bridge.md),
one function each way: :func:`to_wire` and :func:`from_wire`.

Whatever speaks the bridge's JSON to or from a typed adapter goes through these two: the ``cmd``
adapter (typed calls out to a program), the reference bridge program (JSON in, to the impl
adapter), and an in-process host of a bridge's JSON handlers. A value that came from a vector
goes back to the wire exactly as the vector wrote it (actions and reads keep their keys' order).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from .actions import Action, JsonFields, action_json, parse_action
from .adapter import TableSetup, WriterSpec
from .outcomes import Committed, Conflict, Error, Outcome, Pending, Skipped, outcome_json
from .outcomes import parse_outcome as _parse_outcome
from .reads import Read
from .snapshots import TableSnapshot, parse_snapshot, snapshot_json

Json = dict[str, Any]
_OUTCOMES = (Committed, Conflict, Error, Skipped, Pending)


def to_wire(value: JsonFields | Outcome | TableSnapshot | WriterSpec | TableSetup) -> Json:
    """``value`` as the bridge protocol's JSON: an action ``{"add": {...}}``, a read, an outcome,
    a snapshot, a writer's spec ``{"operation", "changes_data", "commit_if_needed"}`` or a table
    setup ``{"profile", "config", "table", "commits"}``."""
    if isinstance(value, _OUTCOMES):
        return outcome_json(value)
    if isinstance(value, TableSnapshot):
        return snapshot_json(value)
    if isinstance(value, WriterSpec):
        return {"operation": value.operation, "changes_data": value.changes_data,
                "commit_if_needed": value.commit_if_needed}  # fmt: skip
    if isinstance(value, TableSetup):
        return {"profile": value.profile, "config": value.config, "table": value.table,
                "commits": [[action_json(a) for a in c] for c in value.commits]}  # fmt: skip
    if isinstance(value, Read):
        return value.body()
    return action_json(cast(Action, value))


def from_wire(kind: Any, data: Mapping[str, Any]) -> Any:
    """The bridge protocol's JSON ``data`` as a value of ``kind``: ``Action`` (the union, or any
    action class), ``Read``, ``Outcome``, ``TableSnapshot``, ``WriterSpec``, ``TableSetup``."""
    if kind is Outcome or kind in _OUTCOMES:
        return _parse_outcome(data)
    if kind is TableSnapshot:
        return parse_snapshot(data)
    if kind is WriterSpec:
        return WriterSpec(data["operation"], data.get("changes_data"),
                          data.get("commit_if_needed", True))  # fmt: skip
    if kind is TableSetup:
        commits = tuple(tuple(parse_action(a) for a in c) for c in data.get("commits") or [])
        return TableSetup(data.get("profile"), data.get("config") or {}, data.get("table"), commits)
    if kind is Read:
        return Read.of(data)
    return parse_action(data)


def outcome_from_wire(data: Mapping[str, Any]) -> Outcome:
    """:func:`from_wire` for an outcome (typed for the callers)."""
    return cast(Outcome, from_wire(Outcome, data))


def snapshot_from_wire(data: Mapping[str, Any]) -> TableSnapshot:
    """:func:`from_wire` for a snapshot (typed for the callers)."""
    return cast(TableSnapshot, from_wire(TableSnapshot, data))
