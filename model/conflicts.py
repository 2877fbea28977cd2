"""Conflict detection: one pure function per rule, run per winning commit (CONFLICT.*).

Each check takes the prepared commit (as rebased so far) and one winning
commit, and returns either the commit rebased onto the winner or the
``Conflict`` that ends it. The winner's value (``WinningCommit``: winning_commit) sits below
the checks, so that the row-tracking rebase can take it too; it is re-exported here.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields, replace

from deltaspec.rules import rule

from . import features
from .actions import AddFile, DomainMetadata, Metadata, Protocol, as_dict
from .isolation import ROW_TRACKING_DOMAIN, IsolationLevel
from .outcomes import Conflict, ConflictKind, ErrorKind
from .predicates import evaluate
from .prepared_commit import PreparedCommit
from .profiles import CheckOrder, Profile
from .rowtracking import reassign_row_tracking
from .values import partition_row, partition_schema
from .winning_commit import WinningCommit as WinningCommit

Verdict = PreparedCommit | Conflict | ErrorKind
"""The commit rebased onto the winner, the conflict that ends it, or the error that ends it
(a winner's protocol this writer cannot write, TXN.WRITER_PROTOCOL)."""
Check = Callable[[PreparedCommit, WinningCommit, Profile], Verdict]


@rule("CONFLICT.PROTOCOL")
def check_protocol(current: PreparedCommit, winner: WinningCommit, profile: Profile) -> Verdict:
    """CONFLICT.PROTOCOL: a winner's protocol is adopted, unless the release cannot write it
    (v0.3.0+, TXN.WRITER_PROTOCOL), the transaction also commits a protocol or (v3.0.0+) the
    winner removes features."""
    if winner.protocol is None:
        return current
    if profile.has("winner_protocol_write_check") and not features.writes_to(
        winner.protocol, profile
    ):
        return ErrorKind.UNSUPPORTED_WRITE_PROTOCOL
    rebased = replace(current, protocol=winner.protocol)
    if current.has_protocol:
        return Conflict(ConflictKind.PROTOCOL_CHANGED, winner.version)
    read_protocol = current.txn.read_snapshot.protocol
    if profile.has("feature_protocols") and features.removes_features(
        winner.protocol, read_protocol
    ):
        return Conflict(ConflictKind.PROTOCOL_CHANGED, winner.version)
    return rebased


@rule("CONFLICT.METADATA", "CONFLICT.METADATA_RESOLUTION")
def check_metadata(current: PreparedCommit, winner: WinningCommit, profile: Profile) -> Verdict:
    """CONFLICT.METADATA (before v4.1.0) or CONFLICT.METADATA_RESOLUTION (v4.1.0+)."""
    if not winner.metadata_updates:
        return current
    if not profile.has("metadata_resolution") or current.metadata_changed:
        return Conflict(ConflictKind.METADATA_CHANGED, winner.version)
    adopted = winner.metadata_updates[0]
    if current.metadata is None or not _metadata_change_resolvable(
        current.metadata, adopted, current.protocol, profile
    ):
        return Conflict(ConflictKind.METADATA_CHANGED, winner.version)
    return replace(current, metadata=adopted)


_ALLOWED_KEYS_V41 = frozenset(
    {
        "delta.enableRowTracking",
        "delta.rowTracking.materializedRowIdColumnName",
        "delta.rowTracking.materializedRowCommitVersionColumnName",
        "delta.columnMapping.mode",
        "delta.columnMapping.maxColumnId",
        "delta.enableDeletionVectors",
    }
)
_ALLOWED_KEYS_V43 = _ALLOWED_KEYS_V41 | {
    "delta.checkpointPolicy",
    "delta.enableInCommitTimestamps",
    "delta.inCommitTimestampEnablementVersion",
    "delta.inCommitTimestampEnablementTimestamp",
}


def _column_mapping_enabled(old: Metadata, new: Metadata) -> bool:
    return old.property("delta.columnMapping.mode", "none") == "none" and (
        new.property("delta.columnMapping.mode") == "name"
    )


def _key_change_allowed(
    key: str, value: str, is_new: bool, old: Metadata, new: Metadata, protocol: Protocol | None
) -> bool:
    def supported(feature: str) -> bool:
        return features.supports(protocol, feature)

    rules: dict[str, Callable[[], bool]] = {
        "delta.enableRowTracking": lambda: supported("rowTracking") and value == "true",
        "delta.rowTracking.materializedRowIdColumnName": lambda: (
            new.property("delta.enableRowTracking") == "true"
        ),
        "delta.rowTracking.materializedRowCommitVersionColumnName": lambda: (
            new.property("delta.enableRowTracking") == "true"
        ),
        "delta.columnMapping.mode": lambda: (
            _column_mapping_enabled(old, new) and supported("columnMapping")
        ),
        "delta.enableDeletionVectors": lambda: supported("deletionVectors") and value == "true",
        "delta.checkpointPolicy": lambda: supported("v2Checkpoint") and value == "v2",
        "delta.enableInCommitTimestamps": lambda: (
            supported("inCommitTimestamp") and value == "true"
        ),
        "delta.inCommitTimestampEnablementVersion": lambda: is_new,
        "delta.inCommitTimestampEnablementTimestamp": lambda: is_new,
    }
    rule = rules.get(key)
    return True if rule is None else rule()


def _schema_change_resolvable(old: Metadata, new: Metadata) -> bool:
    """Only column-mapping field metadata may differ, and only while enabling name mapping."""
    if not _column_mapping_enabled(old, new):
        return False
    old_fields = json.loads(old.schema_string)["fields"]
    new_fields = json.loads(new.schema_string)["fields"]
    if len(old_fields) != len(new_fields):
        return False
    for a, b in zip(old_fields, new_fields, strict=True):
        if (a["name"], a["type"], a.get("nullable")) != (b["name"], b["type"], b.get("nullable")):
            return False
        meta_a, meta_b = a.get("metadata", {}), b.get("metadata", {})
        changed = {k for k in meta_a.keys() | meta_b.keys() if meta_a.get(k) != meta_b.get(k)}
        if not all(k.startswith("delta.columnMapping.") for k in changed):
            return False
    return True


def _metadata_change_resolvable(
    old: Metadata, new: Metadata, protocol: Protocol | None, profile: Profile
) -> bool:
    """CONFLICT.METADATA_RESOLUTION: configuration and schema are the only fields that differ,
    no key is removed, every added or changed key is allow-listed and passes its rule."""
    differing = {f.name for f in fields(Metadata) if getattr(old, f.name) != getattr(new, f.name)}
    if not differing <= {"configuration", "schema_string"}:
        return False
    if "configuration" in differing:
        old_conf, new_conf = as_dict(old.configuration), as_dict(new.configuration)
        if old_conf.keys() - new_conf.keys():
            return False
        allowed = _ALLOWED_KEYS_V43 if profile.has("more_resolvable_keys") else _ALLOWED_KEYS_V41
        changed = {k: v for k, v in new_conf.items() if old_conf.get(k, None) != v}
        if not changed.keys() <= allowed:
            return False
        for key, value in changed.items():
            if not _key_change_allowed(key, value or "", key not in old_conf, old, new, protocol):
                return False
    return "schema_string" not in differing or _schema_change_resolvable(old, new)


@rule("CONFLICT.DOMAIN")
def check_domains(current: PreparedCommit, winner: WinningCommit, profile: Profile) -> Verdict:
    """CONFLICT.DOMAIN: both commit the same domain (the row-tracking domain excepted)."""
    if not features.supports(current.protocol, "domainMetadata"):
        return current
    ours = {
        a.domain
        for a in current.actions
        if isinstance(a, DomainMetadata) and a.domain != ROW_TRACKING_DOMAIN
    }
    if ours & {d.domain for d in winner.domains}:
        return Conflict(ConflictKind.CONCURRENT_TRANSACTION, winner.version)
    return current


@rule("CONFLICT.APP_TXN")
def check_app_txns(current: PreparedCommit, winner: WinningCommit, profile: Profile) -> Verdict:
    """CONFLICT.APP_TXN: the winner wrote a SetTransaction for an app id this transaction read."""
    if any(t.app_id in current.txn.reads.app_ids for t in winner.app_txns):
        return Conflict(ConflictKind.CONCURRENT_TRANSACTION, winner.version)
    return current


@rule("CONFLICT.APPEND_CANDIDATES")
def candidate_adds(
    current: PreparedCommit, winner: WinningCommit, profile: Profile
) -> tuple[AddFile, ...]:
    """CONFLICT.APPEND_CANDIDATES: the winner's adds this transaction should have seen."""
    match current.isolation_level:
        case IsolationLevel.SNAPSHOT_ISOLATION | None:
            return ()
        case IsolationLevel.SERIALIZABLE:
            return winner.added_files
        case IsolationLevel.WRITE_SERIALIZABLE:
            sees_blind = profile.has("downgrade_v12") and current.metadata_changed
            if winner.is_blind_append and not sees_blind:
                return ()
            return winner.added_files


@rule("CONFLICT.APPEND_MATCH", "CONFLICT.APPEND_SHORTCUTS")
def check_added_files(current: PreparedCommit, winner: WinningCommit, profile: Profile) -> Verdict:
    """CONFLICT.APPEND_MATCH with CONFLICT.APPEND_SHORTCUTS (v3.1.0+)."""
    candidates = candidate_adds(current, winner, profile)
    if not candidates:
        return current
    reads = current.txn.reads
    read_snapshot = current.txn.read_snapshot
    conflict = Conflict(ConflictKind.CONCURRENT_APPEND, winner.version)
    if profile.has("append_shortcuts"):
        if current.is_blind_append:
            return current
        if reads.whole_table or not read_snapshot.partition_columns:
            return conflict
    schema_source = (
        read_snapshot.metadata if profile.has("read_time_partition_schema") else current.metadata
    )
    if schema_source is None:
        return current
    schema = partition_schema(schema_source)
    for predicate in reads.predicates:
        for add in candidates:
            row = partition_row(as_dict(add.partition_values), schema_source)
            if evaluate(predicate, row, schema) is True:
                return conflict
    return current


@rule("CONFLICT.DELETE_READ", "CONFLICT.DELETE_READ_WHOLE_TABLE")
def check_deleted_vs_read(
    current: PreparedCommit, winner: WinningCommit, profile: Profile
) -> Verdict:
    """CONFLICT.DELETE_READ and CONFLICT.DELETE_READ_WHOLE_TABLE (v0.8.0+)."""
    removed = {r.path for r in winner.removed_files}
    if removed & current.txn.reads.file_paths:
        return Conflict(ConflictKind.CONCURRENT_DELETE_READ, winner.version)
    if removed and current.txn.reads.whole_table and profile.has("whole_table_delete_read"):
        return Conflict(ConflictKind.CONCURRENT_DELETE_READ, winner.version)
    return current


@rule("CONFLICT.DELETE_DELETE")
def check_deleted_vs_deleted(
    current: PreparedCommit, winner: WinningCommit, profile: Profile
) -> Verdict:
    """CONFLICT.DELETE_DELETE: both removed the same path."""
    ours = {r.path for r in current.removed_files}
    if ours & {r.path for r in winner.removed_files}:
        return Conflict(ConflictKind.CONCURRENT_DELETE_DELETE, winner.version)
    return current


@rule("CONFLICT.LEGACY_WRITE")
def check_legacy_write(current: PreparedCommit, winner: WinningCommit, profile: Profile) -> Verdict:
    """CONFLICT.LEGACY_WRITE (v0.2.0–v0.4.x): the transaction read files, the winner wrote any."""
    if current.txn.reads.depends_on_files and winner.has_file_actions:
        return Conflict(ConflictKind.CONCURRENT_WRITE, winner.version)
    return current


@rule("CONFLICT.ANY_COMMIT_V01")
def check_any_commit(current: PreparedCommit, winner: WinningCommit, profile: Profile) -> Verdict:
    """CONFLICT.ANY_COMMIT_V01: v0.1.0 fails on any concurrent commit."""
    return Conflict(ConflictKind.CONCURRENT_MODIFICATION, winner.version)


@rule("CONFLICT.ORDER_V02", "CONFLICT.ORDER_V05", "CONFLICT.ORDER_V32")
def check_order(profile: Profile) -> tuple[Check, ...]:
    """CONFLICT.ORDER_V02, CONFLICT.ORDER_V05 (domains last in v3.0–v3.1), CONFLICT.ORDER_V32."""
    match profile.check_order:
        case CheckOrder.ANY_COMMIT:
            return (check_any_commit,)
        case CheckOrder.LEGACY_WRITE:
            return (check_protocol, check_metadata, check_legacy_write, check_app_txns)
        case CheckOrder.FILES_FIRST:
            files_first: tuple[Check, ...] = (
                check_protocol,
                check_metadata,
                check_added_files,
                check_deleted_vs_read,
                check_deleted_vs_deleted,
                check_app_txns,
            )
            if not profile.has("domain_metadata"):
                return files_first
            return (*files_first, check_domains, reassign_row_tracking)
        case CheckOrder.CHEAP_FIRST:
            return (
                check_protocol,
                check_metadata,
                check_domains,
                check_app_txns,
                reassign_row_tracking,
                check_added_files,
                check_deleted_vs_read,
                check_deleted_vs_deleted,
            )
    raise AssertionError(profile.check_order)


@rule("CONFLICT.PER_WINNER")
def check_winner(current: PreparedCommit, winner: WinningCommit, profile: Profile) -> Verdict:
    """CONFLICT.PER_WINNER: run the profile's checks in order against one winning commit."""
    for check in check_order(profile):
        verdict = check(current, winner, profile)
        if isinstance(verdict, Conflict | ErrorKind):
            return verdict
        current = verdict
    return current
