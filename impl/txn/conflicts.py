"""Conflict detection against winning commits (CONFLICT.*), for the production path.

``check_winner`` runs the configured release's checks, in its order, on
one winning commit and returns the transaction rebased onto it, or raises the
typed ``DeltaConcurrentModificationException``. Path checks are set lookups;
partition matching evaluates the read predicates over all candidate files at once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from deltaspec.rules import rule

from .. import errors, predicates
from ..actions import AddFile, Metadata, RemoveFile
from ..table import features as protocol
from ..table.releases import Profile
from .current_transaction import CurrentTransactionInfo
from .read_set import PartitionRow
from .rowtracking import reassign_row_tracking
from .winning_commit import WinningCommit

RESOLVABLE_KEYS_41 = frozenset(
    {
        "delta.enableRowTracking",
        "delta.rowTracking.materializedRowIdColumnName",
        "delta.rowTracking.materializedRowCommitVersionColumnName",
        "delta.columnMapping.mode",
        "delta.columnMapping.maxColumnId",
        "delta.enableDeletionVectors",
    }
)
RESOLVABLE_KEYS_43 = RESOLVABLE_KEYS_41 | {
    "delta.checkpointPolicy",
    "delta.enableInCommitTimestamps",
    "delta.inCommitTimestampEnablementVersion",
    "delta.inCommitTimestampEnablementTimestamp",
}


Check = Callable[[CurrentTransactionInfo, WinningCommit, Profile], CurrentTransactionInfo]


def _raise(
    kind: type[errors.DeltaConcurrentModificationException],
    message: str,
    current: CurrentTransactionInfo,
    winner: WinningCommit,
    hint: str | None = None,
) -> CurrentTransactionInfo:
    raise kind(
        f"A concurrent {winner.operation} committed at version {winner.version}: {message}",
        table=current.table,
        version=winner.version,
        winning_version=winner.version,
        partition_hint=hint,
        conflicting_commit=winner.commit_info,
    )


def _hint(values: dict[str, str | None] | None, metadata: Metadata | None) -> str | None:
    if not values or metadata is None or not metadata.partition_columns:
        return None
    schema = predicates.PartitionSchema.of(metadata)
    return "[" + ", ".join(f"{name}={values.get(key)}" for name, _, key in schema.columns) + "]"


@rule("CONFLICT.PROTOCOL")
def check_protocol(
    cur: CurrentTransactionInfo, win: WinningCommit, profile: Profile
) -> CurrentTransactionInfo:
    """CONFLICT.PROTOCOL: a winner's protocol this writer cannot write ends the transaction
    (v0.3.0+, an error, not a conflict); else it is adopted, unless the transaction commits a
    protocol too or (v3.0.0+) the winner removes features."""
    if win.protocol is None:
        return cur
    if profile.has("winner_protocol_write_check"):
        protocol.require_writable(win.protocol, profile, table=cur.table, version=win.version)
    if cur.commits_protocol:
        return _raise(errors.ProtocolChangedException, "the protocol changed", cur, win)
    if profile.has("feature_protocols") and protocol.removes_features(
        win.protocol, cur.read_protocol
    ):
        return _raise(errors.ProtocolChangedException, "table features were removed", cur, win)
    return replace(cur, protocol=win.protocol)


def _metadata_change_resolvable(
    cur: CurrentTransactionInfo, new: Metadata, profile: Profile
) -> bool:
    """CONFLICT.METADATA_RESOLUTION: only allow-listed configuration keys are added or changed,
    none removed, and the schema changes only by column-mapping field metadata."""
    old = cur.metadata
    if old is None:
        return False
    if (old.id, old.name, old.description, old.format, old.partition_columns, old.created_time) != (
        new.id, new.name, new.description, new.format, new.partition_columns, new.created_time,
    ):  # fmt: skip
        return False
    if set(old.configuration) - set(new.configuration):
        return False
    changed = {k: v for k, v in new.configuration.items() if old.configuration.get(k) != v}
    allowed = RESOLVABLE_KEYS_43 if profile.has("more_resolvable_keys") else RESOLVABLE_KEYS_41
    if not set(changed) <= allowed:
        return False
    supported = protocol.features(cur.protocol)
    enabling_name_mapping = old.configuration.get(
        "delta.columnMapping.mode", "none"
    ) == "none" and (new.configuration.get("delta.columnMapping.mode") == "name")
    for key, value in changed.items():
        ok = {
            "delta.enableRowTracking": "rowTracking" in supported and value == "true",
            "delta.rowTracking.materializedRowIdColumnName": (
                new.configuration.get("delta.enableRowTracking") == "true"
            ),
            "delta.rowTracking.materializedRowCommitVersionColumnName": (
                new.configuration.get("delta.enableRowTracking") == "true"
            ),
            "delta.columnMapping.mode": enabling_name_mapping and "columnMapping" in supported,
            "delta.enableDeletionVectors": "deletionVectors" in supported and value == "true",
            "delta.checkpointPolicy": "v2Checkpoint" in supported and value == "v2",
            "delta.enableInCommitTimestamps": "inCommitTimestamp" in supported and value == "true",
            "delta.inCommitTimestampEnablementVersion": key not in old.configuration,
            "delta.inCommitTimestampEnablementTimestamp": key not in old.configuration,
        }.get(key, True)
        if not ok:
            return False
    if old.schema_string == new.schema_string:
        return True
    if not enabling_name_mapping:
        return False
    old_fields = json.loads(old.schema_string or "{}").get("fields", [])
    new_fields = json.loads(new.schema_string or "{}").get("fields", [])
    if len(old_fields) != len(new_fields):
        return False
    for a, b in zip(old_fields, new_fields, strict=True):
        if (a["name"], a["type"], a.get("nullable")) != (b["name"], b["type"], b.get("nullable")):
            return False
        ma, mb = a.get("metadata", {}), b.get("metadata", {})
        if any(not k.startswith("delta.columnMapping.") for k in ma.keys() ^ mb.keys()) or any(
            ma[k] != mb[k] and not k.startswith("delta.columnMapping.")
            for k in ma.keys() & mb.keys()
        ):
            return False
    return True


@rule("CONFLICT.METADATA", "CONFLICT.METADATA_RESOLUTION")
def check_metadata(
    cur: CurrentTransactionInfo, win: WinningCommit, profile: Profile
) -> CurrentTransactionInfo:
    """CONFLICT.METADATA / CONFLICT.METADATA_RESOLUTION."""
    if win.metadata is None:
        return cur
    if (
        profile.has("metadata_resolution")
        and not cur.metadata_changed
        and _metadata_change_resolvable(cur, win.metadata, profile)
    ):
        return replace(cur, metadata=win.metadata)
    return _raise(errors.MetadataChangedException, "the metadata changed", cur, win)


@rule("CONFLICT.DOMAIN")
def check_domains(
    cur: CurrentTransactionInfo, win: WinningCommit, profile: Profile
) -> CurrentTransactionInfo:
    """CONFLICT.DOMAIN."""
    if "domainMetadata" not in protocol.features(cur.protocol):
        return cur
    clash = sorted(cur.domains & win.domains)
    if clash:
        msg = f"a conflicting metadata domain {clash[0]} is added"
        return _raise(errors.ConcurrentTransactionException, msg, cur, win)
    return cur


@rule("CONFLICT.APP_TXN")
def check_app_txns(
    cur: CurrentTransactionInfo, win: WinningCommit, profile: Profile
) -> CurrentTransactionInfo:
    """CONFLICT.APP_TXN."""
    clash = sorted(cur.reads.app_ids & win.app_ids)
    if clash:
        msg = f"application transaction {clash[0]} was updated"
        return _raise(errors.ConcurrentTransactionException, msg, cur, win)
    return cur


@rule("CONFLICT.APPEND_CANDIDATES")
def candidate_adds(
    cur: CurrentTransactionInfo, win: WinningCommit, profile: Profile
) -> list[AddFile]:
    """CONFLICT.APPEND_CANDIDATES."""
    level = cur.isolation_level
    if level in (None, "SnapshotIsolation"):
        return []
    if level == "WriteSerializable" and win.is_blind_append:
        sees_blind = profile.has("downgrade_v12") and cur.metadata_changed
        return win.added if sees_blind else []
    return win.added


@rule("CONFLICT.APPEND_MATCH", "CONFLICT.APPEND_SHORTCUTS")
def check_added_files(
    cur: CurrentTransactionInfo, win: WinningCommit, profile: Profile
) -> CurrentTransactionInfo:
    """CONFLICT.APPEND_MATCH with CONFLICT.APPEND_SHORTCUTS (v3.1.0+)."""
    candidates = candidate_adds(cur, win, profile)
    if not candidates:
        return cur
    schema_metadata = (
        cur.read_metadata if profile.has("read_time_partition_schema") else cur.metadata
    )

    def hint_of(add: AddFile) -> str | None:
        return _hint(add.partition_values, schema_metadata)

    if profile.has("append_shortcuts"):
        if cur.is_blind_append:
            return cur
        unpartitioned = schema_metadata is None or not schema_metadata.partition_columns
        if cur.reads.whole_table or unpartitioned:
            msg = "it added files that this transaction should have read"
            return _raise(errors.ConcurrentAppendException, msg, cur, win, hint_of(candidates[0]))
    if schema_metadata is None:
        return cur
    schema = predicates.PartitionSchema.of(schema_metadata)
    # the hint names the add that evaluating predicate by predicate, add by add, stops at
    keys = [key for _, _, key in schema.columns]
    rows: list[PartitionRow] = (
        list(zip(*([add.partition_values.get(k) for add in candidates] for k in keys), strict=True))
        if keys
        else [()] * len(candidates)
    )
    hit = cur.reads.partition_matches(schema).first_hit(rows)
    if hit is not None:
        msg = "it added files in a partition this transaction read"
        return _raise(errors.ConcurrentAppendException, msg, cur, win, hint_of(candidates[hit]))
    return cur


@rule("CONFLICT.DELETE_READ", "CONFLICT.DELETE_READ_WHOLE_TABLE")
def check_deleted_vs_read(
    cur: CurrentTransactionInfo, win: WinningCommit, profile: Profile
) -> CurrentTransactionInfo:
    """CONFLICT.DELETE_READ, CONFLICT.DELETE_READ_WHOLE_TABLE (v0.8.0+)."""
    for removed in win.removed:
        read = cur.reads.files.get(removed.path)
        if read is not None:
            msg = f"it deleted {removed.path}, which this transaction read"
            hint = _hint(read.partition_values, cur.read_metadata)
            return _raise(errors.ConcurrentDeleteReadException, msg, cur, win, hint)
    if win.removed and cur.reads.whole_table and profile.has("whole_table_delete_read"):
        msg = f"it deleted {win.removed[0].path} from a table this transaction read whole"
        return _raise(errors.ConcurrentDeleteReadException, msg, cur, win)
    return cur


@rule("CONFLICT.DELETE_DELETE")
def check_deleted_vs_deleted(
    cur: CurrentTransactionInfo, win: WinningCommit, profile: Profile
) -> CurrentTransactionInfo:
    """CONFLICT.DELETE_DELETE."""
    for removed in win.removed:
        ours = cur.removed.get(removed.path)
        if ours is not None:
            msg = f"it deleted {removed.path}, which this transaction deletes too"
            hint = _hint(ours.partition_values, cur.read_metadata)
            return _raise(errors.ConcurrentDeleteDeleteException, msg, cur, win, hint)
    return cur


@rule("CONFLICT.LEGACY_WRITE")
def check_legacy_write(
    cur: CurrentTransactionInfo, win: WinningCommit, profile: Profile
) -> CurrentTransactionInfo:
    """CONFLICT.LEGACY_WRITE (v0.2.0–v0.4.x)."""
    if cur.reads.depends_on_files and any(isinstance(a, AddFile | RemoveFile) for a in win.actions):
        msg = "it wrote files after this transaction read the table"
        return _raise(errors.ConcurrentWriteException, msg, cur, win)
    return cur


@rule("CONFLICT.ORDER_V02", "CONFLICT.ORDER_V05", "CONFLICT.ORDER_V32")
def check_order(profile: Profile) -> tuple[Check, ...]:
    """CONFLICT.ORDER_V02 / CONFLICT.ORDER_V05 / CONFLICT.ORDER_V32."""
    if not profile.has("fine_grained_conflicts"):
        return (check_protocol, check_metadata, check_legacy_write, check_app_txns)
    file_checks = (check_added_files, check_deleted_vs_read, check_deleted_vs_deleted)
    if profile.has("cheap_checks_first"):
        cheap = (check_protocol, check_metadata, check_domains, check_app_txns)
        return (*cheap, reassign_row_tracking, *file_checks)
    files_first = (check_protocol, check_metadata, *file_checks, check_app_txns)
    if not profile.has("domain_metadata"):
        return files_first
    return (*files_first, check_domains, reassign_row_tracking)


@rule("CONFLICT.PER_WINNER")
def check_winner(
    current: CurrentTransactionInfo, winner: WinningCommit, profile: Profile
) -> CurrentTransactionInfo:
    """CONFLICT.PER_WINNER: run every check; the rebased transaction carries to the next winner."""
    for check in check_order(profile):
        current = check(current, winner, profile)
    return current
