"""Transactions: read-set recording, staging, and the first-attempt preparation (TXN.*)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace

from deltaspec.model import features, properties
from deltaspec.model.actions import (
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
from deltaspec.model.isolation import IsolationLevel, level_to_use
from deltaspec.model.outcomes import ErrorKind
from deltaspec.model.predicates import TRUE, Predicate, evaluate, partition_only
from deltaspec.model.profiles import Profile
from deltaspec.model.snapshot import Snapshot
from deltaspec.model.values import partition_keys, partition_row, partition_schema

DEFAULT_PROTOCOL = Protocol(1, 2)
CHANGES_DATA = frozenset(
    {
        "WRITE", "STREAMING UPDATE", "DELETE", "TRUNCATE", "CONVERT", "MERGE", "UPDATE",
        "REPLACE TABLE", "REPLACE TABLE AS SELECT", "CREATE OR REPLACE TABLE AS SELECT",
        "RESTORE", "CLONE", "CREATE TABLE AS SELECT",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Operation:
    """A delta-spark operation name and whether it changes data (ISOLATION.DOWNGRADE)."""

    name: str = "WRITE"
    changes_data: bool | None = None

    @property
    def changes_data_flag(self) -> bool:
        return self.name in CHANGES_DATA if self.changes_data is None else self.changes_data


@dataclass(frozen=True)
class ReadSet:
    """What a transaction read (TXN.READ_PREDICATES, TXN.READ_FILES, TXN.READ_WHOLE_TABLE,
    TXN.READ_APP_IDS, TXN.DEPENDS_ON_FILES)."""

    predicates: tuple[Predicate, ...] = ()
    files: tuple[AddFile, ...] = ()
    whole_table: bool = False
    app_ids: frozenset[str] = frozenset()
    depends_on_files: bool = False

    @property
    def file_paths(self) -> frozenset[str]:
        return frozenset(f.path for f in self.files)


@dataclass(frozen=True)
class Transaction:
    """An open transaction on a read snapshot: its reads and its staged actions."""

    txn_id: str
    read_snapshot: Snapshot
    operation: Operation = Operation()
    reads: ReadSet = ReadSet()
    actions: tuple[Action, ...] = ()
    commit_if_needed: bool = True

    @property
    def read_version(self) -> int:
        return self.read_snapshot.version


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


def track_predicate(txn: Transaction, predicate: Predicate) -> Transaction:
    """TXN.READ_PREDICATES: a partition predicate recorded without files (e.g. dynamic partition
    overwrite)."""
    reads = replace(txn.reads, predicates=(*txn.reads.predicates, predicate))
    return replace(txn, reads=reads)


def track_files(txn: Transaction, paths: Iterable[str]) -> Transaction:
    """TXN.READ_FILES: files recorded without a predicate."""
    read = tuple(f for p in paths if (f := txn.read_snapshot.file_by_path(p)) is not None)
    return replace(txn, reads=replace(txn.reads, files=(*txn.reads.files, *read)))


def read_whole_table(txn: Transaction) -> Transaction:
    """TXN.READ_WHOLE_TABLE: a TRUE predicate plus the whole-table flag."""
    reads = replace(
        txn.reads,
        predicates=(*txn.reads.predicates, TRUE),
        whole_table=True,
        depends_on_files=True,
    )
    return replace(txn, reads=reads)


def txn_version(txn: Transaction, app_id: str) -> tuple[Transaction, int]:
    """TXN.READ_APP_IDS: reading an app id's version makes the transaction depend on it."""
    reads = replace(txn.reads, app_ids=txn.reads.app_ids | {app_id})
    return replace(txn, reads=reads), txn.read_snapshot.app_txn_version(app_id)


def stage(txn: Transaction, actions: Iterable[Action]) -> Transaction:
    return replace(txn, actions=(*txn.actions, *actions))


@dataclass(frozen=True)
class PreparedCommit:
    """A transaction ready for its first attempt; conflict checks rebase it (CONFLICT.PER_WINNER).

    ``actions`` excludes the commitInfo, which is fixed here (TXN.COMMIT_INFO_FIXED).
    """

    txn: Transaction
    actions: tuple[Action, ...]
    commit_info: CommitInfo
    isolation_level: IsolationLevel | None
    is_blind_append: bool
    protocol: Protocol | None
    metadata: Metadata | None

    @property
    def metadata_changed(self) -> bool:
        return any(isinstance(a, Metadata) for a in self.actions)

    @property
    def has_protocol(self) -> bool:
        return any(isinstance(a, Protocol) for a in self.actions)

    @property
    def removed_files(self) -> tuple[RemoveFile, ...]:
        return tuple(a for a in self.actions if isinstance(a, RemoveFile))

    def file_actions(self, profile: Profile) -> tuple[Action, ...]:
        """File order: commitInfo first, or last in v1.1.0–v2.1.x (TXN.COMMIT_INFO)."""
        if profile.commit_info_last:
            return (*self.actions, self.commit_info)
        return (self.commit_info, *self.actions)


def _dedup_set_transactions(actions: tuple[Action, ...]) -> tuple[Action, ...] | ErrorKind:
    """TXN.SET_TRANSACTION_DEDUP."""
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


def _has_duplicate_files(actions: tuple[Action, ...]) -> bool:
    """TXN.DUPLICATE_ACTIONS: a (path, dv) key added twice, removed twice, or both."""
    keys: Counter[FileKey] = Counter(a.key for a in actions if isinstance(a, AddFile | RemoveFile))
    return any(count > 1 for count in keys.values())


def _validate(
    txn: Transaction, actions: tuple[Action, ...], profile: Profile
) -> tuple[Action, ...] | ErrorKind:
    """prepareCommit: TXN.SINGLE_METADATA … TXN.DUPLICATE_ACTIONS, in delta-spark's order, with
    TXN.TABLE_PROPERTIES checked once the metadata is known to be single."""
    snapshot = txn.read_snapshot
    metadatas = [a for a in actions if isinstance(a, Metadata)]
    protocols = [a for a in actions if isinstance(a, Protocol)]
    if len(metadatas) > 1:
        return ErrorKind.METADATA_CHANGED_TWICE
    if len(protocols) > 1 and profile.single_protocol_check:
        return ErrorKind.PROTOCOL_CHANGED_TWICE
    if metadatas and (invalid := properties.invalid_property(metadatas[0])) is not None:
        return invalid  # TXN.TABLE_PROPERTIES
    if snapshot.version == -1:
        if not metadatas and profile.commit_validation:
            return ErrorKind.METADATA_ABSENT
        if not protocols:
            actions = (DEFAULT_PROTOCOL, *actions)
            protocols = [DEFAULT_PROTOCOL]
    if profile.protocol_downgrade_check and txn.operation.name != "DROP FEATURE":
        by_features = profile.feature_removal_conflicts
        if any(features.is_downgrade(p, snapshot.protocol, by_features) for p in protocols):
            return ErrorKind.PROTOCOL_DOWNGRADE
    metadata = metadatas[0] if metadatas else snapshot.metadata
    partition_columns = set(partition_keys(metadata).values()) if metadata else set()
    if profile.commit_validation and any(
        isinstance(a, AddFile) and set(as_dict(a.partition_values)) != partition_columns
        for a in actions
    ):
        return ErrorKind.INVALID_PARTITIONING_SCHEMA
    appends_only = snapshot.metadata is not None and (
        (snapshot.metadata.property("delta.appendOnly") or "false").lower() == "true"
    )
    if appends_only and any(isinstance(a, RemoveFile) and a.data_change for a in actions):
        return ErrorKind.APPEND_ONLY_VIOLATION
    domains = [a.domain for a in actions if isinstance(a, DomainMetadata)]
    if domains and profile.domain_metadata:
        protocol = protocols[0] if protocols else snapshot.protocol
        if not features.supports(protocol, "domainMetadata"):
            return ErrorKind.DOMAIN_METADATA_UNSUPPORTED
        if len(set(domains)) != len(domains):
            return ErrorKind.DUPLICATE_DOMAIN_METADATA
    if profile.duplicate_action_check and _has_duplicate_files(actions):
        return ErrorKind.DUPLICATE_ACTIONS
    return actions


def is_blind_append(actions: Iterable[Action], reads: ReadSet, profile: Profile) -> bool:
    """TXN.BLIND_APPEND: only adds among the file actions, and nothing read from the table
    (before v0.5.0 the single ``dependsOnFiles`` flag, TXN.DEPENDS_ON_FILES)."""
    only_adds = all(isinstance(a, AddFile) for a in actions if is_file_action(a))
    if not profile.since(0, 5):
        return only_adds and not reads.depends_on_files
    return only_adds and not reads.predicates and not reads.files


def prepare(txn: Transaction, profile: Profile, now: int) -> PreparedCommit | ErrorKind | None:
    """The first attempt's preparation: validation, isolation level, blind append, commitInfo.

    Returns None when the commit is empty and may be skipped (TXN.EMPTY_COMMIT).
    """
    staged = tuple(a for a in txn.actions if not isinstance(a, CommitInfo))
    deduplicated = _dedup_set_transactions(staged) if profile.set_transaction_dedup else staged
    if isinstance(deduplicated, ErrorKind):
        return deduplicated
    actions = _validate(txn, deduplicated, profile)
    if isinstance(actions, ErrorKind):
        return actions
    new_metadata = next((a for a in actions if isinstance(a, Metadata)), None)
    metadata = new_metadata or txn.read_snapshot.metadata
    level = level_to_use(actions, txn.operation.changes_data_flag, metadata, profile)
    blind = is_blind_append(actions, txn.reads, profile)
    skippable_level = level in {IsolationLevel.SNAPSHOT_ISOLATION, IsolationLevel.SERIALIZABLE}
    if (
        not actions
        and txn.commit_if_needed
        and profile.empty_commit_skip
        and profile.skip_recording_empty_commits
        and skippable_level
    ):
        return None
    commit_info = CommitInfo(
        timestamp=now,
        operation=txn.operation.name,
        read_version=txn.read_version if txn.read_version >= 0 else None,
        isolation_level=level.value if level and profile.records_isolation_level else None,
        is_blind_append=blind if profile.since(0, 2) else None,
        txn_id=txn.txn_id if profile.since(1, 2) else None,
    )
    new_protocol = next((a for a in actions if isinstance(a, Protocol)), None)
    return PreparedCommit(
        txn=txn,
        actions=actions,
        commit_info=commit_info,
        isolation_level=level,
        is_blind_append=blind,
        protocol=new_protocol or txn.read_snapshot.protocol,
        metadata=metadata,
    )
