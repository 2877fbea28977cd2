"""prepareCommit on the production path: the rules a commit must pass before its first write
(TXN.*), as an ordered tuple of functions, plus the blind-append and empty-commit decisions.

Each rule takes the actions to commit and returns them (the first commit's rule adds the default
protocol) or raises the ``CommitValidationError`` that rejects the commit; the first failing rule
decides the error.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence

from deltaspec.rules import rule

from .. import errors, predicates
from ..actions import (
    Action,
    AddCDCFile,
    AddFile,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from ..deletion_vectors import enabled_in
from ..table import features as protocol
from ..table.releases import Profile
from .preparing import Preparing
from .read_set import ReadSet
from .rowtracking import assign_default_row_commit_versions, assign_fresh_row_ids

DEFAULT_PROTOCOL = Protocol(1, 2)


PrepareRule = Callable[[Preparing, list[Action], Profile], list[Action]]


def _metadatas(actions: Sequence[Action]) -> list[Metadata]:
    return [a for a in actions if isinstance(a, Metadata)]


def _protocols(actions: Sequence[Action]) -> list[Protocol]:
    return [a for a in actions if isinstance(a, Protocol)]


@rule("TXN.SET_TRANSACTION_DEDUP")
def dedup_set_transactions(txn: Preparing, actions: list[Action], profile: Profile) -> list[Action]:
    """One SetTransaction per app id (v2.1.0+): repeats are dropped, two versions are an error."""
    if not profile.has("set_transaction_dedup"):
        return actions
    versions: dict[str, int] = {}
    deduplicated: list[Action] = []
    for action in actions:
        if isinstance(action, SetTransaction):
            if action.app_id in versions:
                if versions[action.app_id] != action.version:
                    raise txn.invalid(
                        errors.DuplicateSetTransactionError,
                        f"two versions for app id {action.app_id}",
                    )
                continue
            versions[action.app_id] = action.version
        deduplicated.append(action)
    return deduplicated


@rule("TXN.SINGLE_METADATA")
def check_single_metadata(txn: Preparing, actions: list[Action], profile: Profile) -> list[Action]:
    if len(_metadatas(actions)) > 1:
        raise txn.invalid(errors.MetadataChangedTwiceError, "metadata changed more than once")
    return actions


@rule("TXN.SINGLE_PROTOCOL")
def check_single_protocol(txn: Preparing, actions: list[Action], profile: Profile) -> list[Action]:
    """At most one protocol per commit (v2.3.0+)."""
    if len(_protocols(actions)) > 1 and profile.has("single_protocol_check"):
        raise txn.invalid(errors.ProtocolChangedTwiceError, "protocol changed more than once")
    return actions


@rule("TXN.FIRST_COMMIT")
def check_first_commit(txn: Preparing, actions: list[Action], profile: Profile) -> list[Action]:
    """Creating the table: metadata required (v0.7.0+), the default protocol added if none."""
    if txn.snapshot is not None:
        return actions
    if not _metadatas(actions) and profile.has("commit_validation"):
        raise txn.invalid(errors.MetadataAbsentError, "the first commit needs metadata")
    return actions if _protocols(actions) else [DEFAULT_PROTOCOL, *actions]


@rule("TXN.PROTOCOL_DOWNGRADE")
def check_protocol_downgrade(
    txn: Preparing, actions: list[Action], profile: Profile
) -> list[Action]:
    """No protocol below the read one (v0.8.0+; by features since v3.0.0), DROP FEATURE aside."""
    if not profile.has("protocol_downgrade_check") or txn.operation_name == "DROP FEATURE":
        return actions
    feature_based = profile.has("feature_protocols")
    if any(protocol.is_downgrade(p, txn.read_protocol, feature_based) for p in _protocols(actions)):
        raise txn.invalid(errors.ProtocolDowngradeError, "protocol downgrade")
    return actions


@rule("TXN.PARTITION_COLUMNS")
def check_partition_columns(
    txn: Preparing, actions: list[Action], profile: Profile
) -> list[Action]:
    """Every add carries exactly the table's partition columns (v0.7.0+)."""
    metadatas = _metadatas(actions)
    metadata = metadatas[0] if metadatas else txn.read_metadata
    if metadata is None or not profile.has("commit_validation"):
        return actions
    keys = {key for _, _, key in predicates.PartitionSchema.of(metadata).columns}
    for add in (a for a in actions if isinstance(a, AddFile)):
        if set(add.partition_values) != keys:
            raise txn.invalid(
                errors.InvalidPartitioningSchemaError,
                f"{add.path} has partition values for "
                f"{sorted(add.partition_values)}, the table {sorted(keys)}",
            )
    return actions


@rule("TXN.WRITER_PROTOCOL")
def check_writer_protocol(txn: Preparing, actions: list[Action], profile: Profile) -> list[Action]:
    """Only a table the release (and this writer) can write: a protocol the commit sets
    (v3.1.0+), the read snapshot's protocol, and metadata (set or read) that names no commit
    coordinator; else UnsupportedWriterProtocolError."""
    table, version = txn.table, txn.version
    if profile.has("new_protocol_write_check"):
        for new in _protocols(actions):
            protocol.require_writable(new, profile, table=table, version=version)
    if txn.read_protocol is not None:
        protocol.require_writable(txn.read_protocol, profile, table=table, version=version)
    for metadata in [*_metadatas(actions), txn.read_metadata]:
        protocol.require_no_commit_coordinator(metadata, table=table, version=version)
    return actions


@rule("TXN.APPEND_ONLY")
def check_append_only(txn: Preparing, actions: list[Action], profile: Profile) -> list[Action]:
    """An append-only table (``delta.appendOnly``) takes no data-changing remove."""
    read_metadata = txn.read_metadata
    append_only = read_metadata is not None and (
        read_metadata.configuration.get("delta.appendOnly", "false").lower() == "true"
    )
    if append_only and any(isinstance(a, RemoveFile) and a.data_change for a in actions):
        raise txn.invalid(errors.AppendOnlyViolationError, "the table only allows appends")
    return actions


@rule("TXN.DOMAIN_METADATA")
def check_domain_metadata(txn: Preparing, actions: list[Action], profile: Profile) -> list[Action]:
    """Domain metadata (v3.0.0+) needs the domainMetadata feature and names a domain once."""
    domains = [a.domain for a in actions if isinstance(a, DomainMetadata)]
    if not domains or not profile.has("domain_metadata"):
        return actions
    protocols = _protocols(actions)
    new_protocol = protocols[0] if protocols else txn.read_protocol
    if "domainMetadata" not in protocol.features(new_protocol):
        raise txn.invalid(
            errors.DomainMetadataUnsupportedError,
            "the protocol does not support domain metadata",
        )
    if len(set(domains)) != len(domains):
        raise txn.invalid(errors.DuplicateDomainMetadataError, "a domain appears twice")
    return actions


@rule("TXN.DUPLICATE_ACTIONS")
def check_duplicate_actions(
    txn: Preparing, actions: list[Action], profile: Profile
) -> list[Action]:
    """A (path, dv) key added twice, removed twice, or both (v4.3.0+)."""
    if not profile.has("duplicate_action_check"):
        return actions
    keys_seen = Counter(a.key for a in actions if isinstance(a, AddFile | RemoveFile))
    duplicates = sorted(str(k[0]) for k, n in keys_seen.items() if n > 1)
    if duplicates:
        raise txn.invalid(errors.DuplicateActionsError, f"{duplicates[0]} appears twice")
    return actions


TIGHT_BOUNDS_FORBIDDEN = frozenset({"DELETE", "UPDATE", "MERGE"})
"""Operations whose deletion-vector adds must say ``tightBounds: false`` (DV.ADD_CHECKS)."""


def _refused(
    kind: type[errors.CommitValidationError], txn: Preparing, add: AddFile, why: str
) -> errors.CommitValidationError:
    return kind(
        f"{add.path} carries a deletion vector but {why}",
        table=txn.table,
        version=txn.version,
        file=add.path,
    )


@rule("DV.ADD_CHECKS")
def check_deletion_vector_adds(
    txn: Preparing, actions: list[Action], profile: Profile
) -> list[Action]:
    """Every add with a deletion vector: the table enables deletion vectors, its stats give
    ``numRecords``, and for DELETE, UPDATE and MERGE they say ``tightBounds: false``; else a
    typed error naming the table, the version and the file."""
    with_dv = [a for a in actions if isinstance(a, AddFile) and a.deletion_vector is not None]
    if not with_dv or not profile.has("deletion_vector_add_checks"):
        return actions
    metadata = next((a for a in actions if isinstance(a, Metadata)), txn.read_metadata)
    if metadata is None or not enabled_in(metadata.configuration):
        raise _refused(
            errors.DeletionVectorsDisallowedError,
            txn,
            with_dv[0],
            "the table does not set delta.enableDeletionVectors=true",
        )
    for add in with_dv:
        stats = json.loads(add.stats) if add.stats else {}
        if not isinstance(stats, dict) or stats.get("numRecords") is None:
            raise _refused(
                errors.DeletionVectorMissingNumRecordsError, txn, add, "its stats lack numRecords"
            )
        if stats.get("tightBounds") is True and txn.operation_name in TIGHT_BOUNDS_FORBIDDEN:
            raise _refused(
                errors.DeletionVectorTightBoundsError, txn, add, "its stats claim tight bounds"
            )
    return actions


def prepare_rules() -> tuple[PrepareRule, ...]:
    """prepareCommit's rules in the order they run (built at call time, so that a rebound rule
    function is the one that runs)."""
    return (
        dedup_set_transactions,
        check_single_metadata,
        check_single_protocol,
        check_first_commit,
        check_protocol_downgrade,
        check_partition_columns,
        check_writer_protocol,
        check_append_only,
        check_domain_metadata,
        check_duplicate_actions,
        check_deletion_vector_adds,
        assign_fresh_row_ids,
        assign_default_row_commit_versions,
    )


def prepare(txn: Preparing, actions: list[Action], profile: Profile) -> list[Action]:
    """Run every prepare rule in order; the first that fails raises."""
    for prepare_rule in prepare_rules():
        actions = prepare_rule(txn, actions, profile)
    return actions


def file_actions(actions: Sequence[Action]) -> list[AddFile | RemoveFile | AddCDCFile]:
    return [a for a in actions if isinstance(a, AddFile | RemoveFile | AddCDCFile)]


@rule("TXN.BLIND_APPEND")
def is_blind_append(actions: Sequence[Action], reads: ReadSet, profile: Profile) -> bool:
    """Only adds among the file actions, and nothing read from the table (before v0.5.0 the
    single ``dependsOnFiles`` flag, TXN.DEPENDS_ON_FILES)."""
    only_adds = all(isinstance(a, AddFile) for a in file_actions(actions))
    if not profile.has("fine_grained_conflicts"):
        return only_adds and not reads.depends_on_files
    return only_adds and not reads.predicates and not reads.files


@rule("TXN.EMPTY_COMMIT")
def skips_empty_commit(
    actions: Sequence[Action], commit_if_needed: bool, level: str | None, profile: Profile
) -> bool:
    """commitIfNeeded with nothing to commit records no version (v2.3.0+, unless the session
    records empty commits), at SnapshotIsolation or Serializable only."""
    skippable_level = level in {"SnapshotIsolation", "Serializable"}
    return (
        not actions
        and commit_if_needed
        and profile.has("empty_commit_skip")
        and profile.skip_recording_empty_commits
        and skippable_level
    )
