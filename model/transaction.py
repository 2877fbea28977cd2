"""Transactions: read-set recording, staging, and the first-attempt preparation (TXN.*).

The values these rules take (``Transaction``, ``Operation``, ``ReadSet``: transaction_state;
``PreparedCommit``: prepared_commit) sit below them, so that the rules of row tracking,
in-commit timestamps and deletion vectors can take them too; they are re-exported here."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import replace

from deltaspec.rules import rule

from . import features, properties
from .actions import (
    Action,
    AddFile,
    CommitInfo,
    DomainMetadata,
    FileKey,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
    as_dict,
    is_file_action,
)
from .deletion_vectors import check_deletion_vector_adds
from .isolation import IsolationLevel, isolation_level
from .outcomes import ErrorKind
from .paths import names_table_file
from .predicates import TRUE, Predicate, evaluate, partition_only
from .prepared_commit import PreparedCommit as PreparedCommit
from .profiles import Profile
from .rowtracking import (
    assign_default_row_commit_versions,
    assign_fresh_row_ids,
    high_water_mark,
)
from .snapshot import Snapshot
from .timestamps import first_in_commit_timestamp, stamped
from .transaction_state import CHANGES_DATA as CHANGES_DATA
from .transaction_state import Operation as Operation
from .transaction_state import ReadSet as ReadSet
from .transaction_state import Transaction as Transaction
from .values import partition_keys, partition_row, partition_schema

DEFAULT_PROTOCOL = Protocol(1, 2)


def matching_files(snapshot: Snapshot, predicate: Predicate) -> tuple[AddFile, ...]:
    """Live files whose partition values satisfy ``predicate`` (partition pruning only)."""
    if snapshot.metadata is None:
        return ()
    metadata = snapshot.metadata
    schema = partition_schema(metadata)
    return tuple(
        f
        for f in snapshot.files.values()
        if evaluate(predicate, partition_row(as_dict(f.partition_values), metadata), schema) is True
    )


@rule("TXN.READ_PREDICATES", "TXN.READ_FILES")
def filter_files(
    txn: Transaction, filters: Iterable[Predicate], files: Iterable[str] | None = None
) -> Transaction:
    """TXN.READ_PREDICATES / TXN.READ_FILES: ``filterFiles(filters)``.

    The partition-only conjuncts become the read predicate (PREDICATE.PARTITION_ONLY);
    the files read are the pruned files, or ``files`` to stand for data skipping.
    """
    predicate = partition_only(filters, txn.read_snapshot.partition_columns)
    if files is None:
        read = matching_files(txn.read_snapshot, predicate)
    else:
        read = tuple(f for p in files if (f := txn.read_snapshot.file_by_path(p)) is not None)
    reads = replace(
        txn.reads,
        predicates=(*txn.reads.predicates, predicate),
        files=(*txn.reads.files, *read),
        depends_on_files=True,
    )
    return replace(txn, reads=reads)


def track_read_predicate(txn: Transaction, predicate: Predicate) -> Transaction:
    """TXN.READ_PREDICATES: a partition predicate recorded without files (e.g. dynamic partition
    overwrite); before v0.5 a read of the table all the same (TXN.DEPENDS_ON_FILES)."""
    predicates = (*txn.reads.predicates, predicate)
    return replace(txn, reads=replace(txn.reads, predicates=predicates, depends_on_files=True))


def track_files_read(txn: Transaction, paths: Iterable[str]) -> Transaction:
    """TXN.READ_FILES: files recorded without a predicate; before v0.5 a read of the table all
    the same (TXN.DEPENDS_ON_FILES)."""
    read = tuple(f for p in paths if (f := txn.read_snapshot.file_by_path(p)) is not None)
    files = (*txn.reads.files, *read)
    return replace(txn, reads=replace(txn.reads, files=files, depends_on_files=True))


@rule("TXN.READ_WHOLE_TABLE")
def read_whole_table(txn: Transaction) -> Transaction:
    """TXN.READ_WHOLE_TABLE: a TRUE predicate plus the whole-table flag."""
    reads = replace(
        txn.reads,
        predicates=(*txn.reads.predicates, TRUE),
        whole_table=True,
        depends_on_files=True,
    )
    return replace(txn, reads=reads)


@rule("TXN.READ_APP_IDS")
def txn_version(txn: Transaction, app_id: str) -> tuple[Transaction, int]:
    """TXN.READ_APP_IDS: reading an app id's version makes the transaction depend on it."""
    reads = replace(txn.reads, app_ids=txn.reads.app_ids | {app_id})
    return replace(txn, reads=reads), txn.read_snapshot.app_txn_version(app_id)


def stage(txn: Transaction, actions: Iterable[Action]) -> Transaction:
    return replace(txn, actions=(*txn.actions, *actions))


Actions = tuple[Action, ...]
PrepareRule = Callable[[Transaction, Actions, Profile], Actions | ErrorKind]
"""One prepareCommit rule: the actions to commit (the same, or with what the rule adds), or the
error that rejects the commit."""


def _metadatas(actions: Actions) -> list[Metadata]:
    return [a for a in actions if isinstance(a, Metadata)]


def _protocols(actions: Actions) -> list[Protocol]:
    return [a for a in actions if isinstance(a, Protocol)]


@rule("TXN.SET_TRANSACTION_DEDUP")
def dedup_set_transactions(
    txn: Transaction, actions: Actions, profile: Profile
) -> Actions | ErrorKind:
    """One SetTransaction per app id (v2.1.0+): repeats are dropped, two versions are an error."""
    if not profile.has("set_transaction_dedup"):
        return actions
    seen: dict[str, int] = {}
    kept: list[Action] = []
    for action in actions:
        if isinstance(action, SetTransaction):
            if action.app_id in seen:
                if seen[action.app_id] != action.version:
                    return ErrorKind.DUPLICATE_SET_TRANSACTION
                continue
            seen[action.app_id] = action.version
        kept.append(action)
    return tuple(kept)


@rule("TXN.SINGLE_METADATA")
def check_single_metadata(
    txn: Transaction, actions: Actions, profile: Profile
) -> Actions | ErrorKind:
    return ErrorKind.METADATA_CHANGED_TWICE if len(_metadatas(actions)) > 1 else actions


@rule("TXN.SINGLE_PROTOCOL")
def check_single_protocol(
    txn: Transaction, actions: Actions, profile: Profile
) -> Actions | ErrorKind:
    """At most one protocol per commit (v2.3.0+)."""
    if len(_protocols(actions)) > 1 and profile.has("single_protocol_check"):
        return ErrorKind.PROTOCOL_CHANGED_TWICE
    return actions


@rule("TXN.TABLE_PROPERTIES")
def check_table_properties(
    txn: Transaction, actions: Actions, profile: Profile
) -> Actions | ErrorKind:
    """The committed metadata's interpreted properties, once it is known to be single."""
    metadatas = _metadatas(actions)
    if metadatas and (invalid := properties.invalid_property(metadatas[0])) is not None:
        return invalid
    return actions


@rule("TXN.FIRST_COMMIT")
def check_first_commit(txn: Transaction, actions: Actions, profile: Profile) -> Actions | ErrorKind:
    """Creating the table: metadata required (v0.7.0+), the default protocol added if none."""
    if txn.read_snapshot.version != -1:
        return actions
    if not _metadatas(actions) and profile.has("commit_validation"):
        return ErrorKind.METADATA_ABSENT
    return actions if _protocols(actions) else (DEFAULT_PROTOCOL, *actions)


@rule("TXN.PROTOCOL_DOWNGRADE")
def check_protocol_downgrade(
    txn: Transaction, actions: Actions, profile: Profile
) -> Actions | ErrorKind:
    """No protocol below the read one (v0.8.0+; by features since v3.0.0), DROP FEATURE aside."""
    if not profile.has("protocol_downgrade_check") or txn.operation.name == "DROP FEATURE":
        return actions
    by_features = profile.has("feature_protocols")
    read_protocol = txn.read_snapshot.protocol
    if any(features.is_downgrade(p, read_protocol, by_features) for p in _protocols(actions)):
        return ErrorKind.PROTOCOL_DOWNGRADE
    return actions


@rule("TXN.PARTITION_COLUMNS")
def check_partition_columns(
    txn: Transaction, actions: Actions, profile: Profile
) -> Actions | ErrorKind:
    """Every add carries exactly the table's partition columns (v0.7.0+)."""
    metadatas = _metadatas(actions)
    metadata = metadatas[0] if metadatas else txn.read_snapshot.metadata
    partition_columns = set(partition_keys(metadata).values()) if metadata else set()
    if profile.has("commit_validation") and any(
        isinstance(a, AddFile) and set(as_dict(a.partition_values)) != partition_columns
        for a in actions
    ):
        return ErrorKind.INVALID_PARTITIONING_SCHEMA
    return actions


@rule("TXN.WRITER_PROTOCOL")
def check_writer_protocol(
    txn: Transaction, actions: Actions, profile: Profile
) -> Actions | ErrorKind:
    """Only a table the release can write: a protocol the commit sets (v3.1.0+; before, it is
    committed, and the table then refuses this writer), the read snapshot's protocol, and
    metadata (set or read) that names no commit coordinator."""
    read = txn.read_snapshot
    protocols = [p for p in _protocols(actions) if profile.has("new_protocol_write_check")]
    metadatas = [*_metadatas(actions), *([read.metadata] if read.metadata else [])]
    if not all(features.writes_to(p, profile) for p in [*protocols, read.protocol]) or any(
        features.names_commit_coordinator(m) for m in metadatas
    ):
        return ErrorKind.UNSUPPORTED_WRITE_PROTOCOL
    return actions


@rule("TXN.APPEND_ONLY")
def check_append_only(txn: Transaction, actions: Actions, profile: Profile) -> Actions | ErrorKind:
    """An append-only table (``delta.appendOnly``) takes no data-changing remove."""
    read_metadata = txn.read_snapshot.metadata
    appends_only = read_metadata is not None and (
        (read_metadata.property("delta.appendOnly") or "false").lower() == "true"
    )
    if appends_only and any(isinstance(a, RemoveFile) and a.data_change for a in actions):
        return ErrorKind.APPEND_ONLY_VIOLATION
    return actions


@rule("TXN.DOMAIN_METADATA")
def check_domain_metadata(
    txn: Transaction, actions: Actions, profile: Profile
) -> Actions | ErrorKind:
    """Domain metadata (v3.0.0+) needs the domainMetadata feature and names a domain once."""
    domains = [a.domain for a in actions if isinstance(a, DomainMetadata)]
    if not domains or not profile.has("domain_metadata"):
        return actions
    protocols = _protocols(actions)
    protocol = protocols[0] if protocols else txn.read_snapshot.protocol
    if not features.supports(protocol, "domainMetadata"):
        return ErrorKind.DOMAIN_METADATA_UNSUPPORTED
    if len(set(domains)) != len(domains):
        return ErrorKind.DUPLICATE_DOMAIN_METADATA
    return actions


@rule("TXN.DUPLICATE_ACTIONS")
def check_duplicate_actions(
    txn: Transaction, actions: Actions, profile: Profile
) -> Actions | ErrorKind:
    """A (path, dv) key added twice, removed twice, or both (v4.3.0+)."""
    if not profile.has("duplicate_action_check"):
        return actions
    keys: Counter[FileKey] = Counter(a.key for a in actions if isinstance(a, AddFile | RemoveFile))
    if any(count > 1 for count in keys.values()):
        return ErrorKind.DUPLICATE_ACTIONS
    return actions


MAX_LONG = 2**63 - 1


@rule("TXN.WRITE_BOUNDARY")
def check_commit(txn: Transaction, actions: Actions, profile: Profile) -> Actions | ErrorKind:
    """A commit its own reader would refuse is never written: every ``add``/``remove`` path
    names a file of the table (PATH.DATA_FILE) and sizes lie in ``0 … 2^63−1``. (The protocol
    half of the rule is the writer's feature check, which the model's features leave to
    ACTION.PROTOCOL.)"""
    for action in actions:
        if not isinstance(action, AddFile | RemoveFile):
            continue
        if not names_table_file(action.path):
            return ErrorKind.INVALID_COMMIT_ACTION
        if action.size is not None and not 0 <= action.size <= MAX_LONG:
            return ErrorKind.INVALID_COMMIT_ACTION
    return actions


def prepare_rules() -> tuple[PrepareRule, ...]:
    """prepareCommit's rules in the order they run: the first that fails decides the error."""
    return (
        dedup_set_transactions,
        check_single_metadata,
        check_single_protocol,
        check_table_properties,
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
        check_commit,
    )


@rule("TXN.BLIND_APPEND")
def is_blind_append(actions: Iterable[Action], reads: ReadSet, profile: Profile) -> bool:
    """Only adds among the file actions, and nothing read from the table (before v0.5.0 the
    single ``dependsOnFiles`` flag, TXN.DEPENDS_ON_FILES)."""
    only_adds = all(isinstance(a, AddFile) for a in actions if is_file_action(a))
    if not profile.has("fine_grained_conflicts"):
        return only_adds and not reads.depends_on_files
    return only_adds and not reads.predicates and not reads.files


@rule("TXN.EMPTY_COMMIT")
def skips_empty_commit(
    actions: Actions, commit_if_needed: bool, level: IsolationLevel | None, profile: Profile
) -> bool:
    """commitIfNeeded with nothing to commit records no version (v2.3.0+, unless the session
    records empty commits), at SnapshotIsolation or Serializable only."""
    skippable_level = level in {IsolationLevel.SNAPSHOT_ISOLATION, IsolationLevel.SERIALIZABLE}
    return (
        not actions
        and commit_if_needed
        and profile.has("empty_commit_skip")
        and profile.skip_recording_empty_commits
        and skippable_level
    )


@rule("TXN.COMMIT_INFO", "ISOLATION.RECORDED")
def commit_info(
    txn: Transaction, level: IsolationLevel | None, blind: bool, profile: Profile, now: int
) -> CommitInfo:
    """The commitInfo the release writes; fixed for every attempt (TXN.COMMIT_INFO_FIXED)."""
    return CommitInfo(
        timestamp=now,
        operation=txn.operation.name,
        read_version=txn.read_version if txn.read_version >= 0 else None,
        isolation_level=level.value if level and profile.has("records_isolation_level") else None,
        is_blind_append=blind if profile.has("blind_append_flag") else None,
        txn_id=txn.txn_id if profile.has("txn_id") else None,
    )


@rule("TXN.COMMIT_INFO_FIXED")
def prepare(txn: Transaction, profile: Profile, now: int) -> PreparedCommit | ErrorKind | None:
    """The first attempt's preparation: the prepare rules, isolation level, blind append,
    commitInfo.

    Returns None when the commit is empty and may be skipped (TXN.EMPTY_COMMIT).
    """
    actions: Actions = tuple(a for a in txn.actions if not isinstance(a, CommitInfo))
    for prepare_rule in prepare_rules():
        checked = prepare_rule(txn, actions, profile)
        if isinstance(checked, ErrorKind):
            return checked
        actions = checked
    new_metadata = next((a for a in actions if isinstance(a, Metadata)), None)
    metadata = new_metadata or txn.read_snapshot.metadata
    level = isolation_level(actions, txn.operation.changes_data_flag, metadata, profile)
    blind = is_blind_append(actions, txn.reads, profile)
    if skips_empty_commit(actions, txn.commit_if_needed, level, profile):
        return None
    new_protocol = next((a for a in actions if isinstance(a, Protocol)), None)
    return PreparedCommit(
        txn=txn,
        actions=actions,
        commit_info=stamped(
            commit_info(txn, level, blind, profile, now),
            first_in_commit_timestamp(metadata, txn.read_snapshot, now, profile),
        ),
        isolation_level=level,
        is_blind_append=blind,
        protocol=new_protocol or txn.read_snapshot.protocol,
        metadata=metadata,
        row_id_high_water_mark=high_water_mark(txn.read_snapshot),
    )
