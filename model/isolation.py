"""Isolation levels and their selection per commit (ISOLATION.*)."""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

from deltaspec.rules import rule

from .actions import Action, CommitInfo, DomainMetadata, Metadata, is_file_action
from .profiles import IsolationRule, Profile
from .properties import isolation_level_name

ROW_TRACKING_DOMAIN = "delta.rowTracking"


@rule("ISOLATION.LEVELS")
class IsolationLevel(Enum):
    """ISOLATION.LEVELS, strongest first."""

    SERIALIZABLE = "Serializable"
    WRITE_SERIALIZABLE = "WriteSerializable"
    SNAPSHOT_ISOLATION = "SnapshotIsolation"


@rule("ISOLATION.TABLE_DEFAULT")
def table_level(metadata: Metadata | None, profile: Profile) -> IsolationLevel:
    """ISOLATION.TABLE_DEFAULT: ``delta.isolationLevel`` (read since v2.1.0), else Serializable."""
    if metadata is None or not profile.has("table_isolation_property"):
        return IsolationLevel.SERIALIZABLE
    declared = metadata.property("delta.isolationLevel", IsolationLevel.SERIALIZABLE.value)
    # compared case-insensitively (TXN.TABLE_PROPERTIES); a commit setting an unknown name is
    # refused before its level is chosen
    return IsolationLevel(isolation_level_name(declared or "") or declared)


def _counts_as_non_file(action: Action, profile: Profile) -> bool:
    if isinstance(action, CommitInfo) or is_file_action(action):
        return False
    is_row_tracking = isinstance(action, DomainMetadata) and action.domain == ROW_TRACKING_DOMAIN
    return not (is_row_tracking and profile.has("domain_metadata"))


@rule("ISOLATION.NONE", "ISOLATION.DOWNGRADE_V05", "ISOLATION.DOWNGRADE")
def isolation_level(
    actions: Iterable[Action],
    changes_data: bool,
    metadata: Metadata | None,
    profile: Profile,
) -> IsolationLevel | None:
    """The level a commit runs its conflict checks under; None before v0.5.0 (ISOLATION.NONE).

    v0.5.0–v1.1.x (ISOLATION.DOWNGRADE_V05): SnapshotIsolation when no file
    action changes data (vacuously for commits without file actions), else
    Serializable. v1.2.0+ (ISOLATION.DOWNGRADE): SnapshotIsolation only for
    commits of file actions alone with no data change, and under
    WriteSerializable only when the operation does not change data; otherwise
    the table's level.
    """
    staged = tuple(actions)
    data_changed = any(is_file_action(a) and getattr(a, "data_change", False) for a in staged)
    if profile.isolation_rule is IsolationRule.NONE:
        return None
    if profile.isolation_rule is IsolationRule.V05:
        return IsolationLevel.SERIALIZABLE if data_changed else IsolationLevel.SNAPSHOT_ISOLATION
    level = table_level(metadata, profile)
    only_files = not any(_counts_as_non_file(a, profile) for a in staged)
    downgradable = level is IsolationLevel.SERIALIZABLE or not changes_data
    if only_files and not data_changed and downgradable:
        return IsolationLevel.SNAPSHOT_ISOLATION
    return level
