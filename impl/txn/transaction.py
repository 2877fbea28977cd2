"""Optimistic transactions on the production log (TXN.*, ISOLATION.*, RETRY.*).

A transaction reads one snapshot, records what it read, stages actions, and
commits with put-if-absent at ``read_version + 1``; on a collision it checks
every winning commit in order (deltaspec.impl.txn.conflicts) and retries after the
latest, up to ``maxCommitAttempts`` more times.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from deltaspec import __version__
from deltaspec.impl import checkpoint, errors, predicates
from deltaspec.impl.actions import (
    Action,
    AddCDCFile,
    AddFile,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.impl.log import crashpoints
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.snapshot import DeltaLog, Snapshot, wall_clock_ms
from deltaspec.impl.table import features as protocol
from deltaspec.impl.table import properties
from deltaspec.impl.table.releases import Release
from deltaspec.impl.txn import write_boundary
from deltaspec.impl.txn.conflicts import (
    ROW_TRACKING_DOMAIN,
    CurrentTransactionInfo,
    ReadSet,
    WinningCommit,
    check_winning_commit,
)

LOG = logging.getLogger(__name__)
ENGINE_INFO = f"deltaspec/{__version__}"
MAX_FAILED_WRITES = 10
"""Writes of one version that fail, and that reading the log back proves did not land, before
the commit gives up with CommitFailedError (delta-spark's maxNonConflictCommitAttempts)."""
DEFAULT_PROTOCOL = Protocol(1, 2)
CHANGES_DATA = frozenset(
    {
        "WRITE",
        "STREAMING UPDATE",
        "DELETE",
        "TRUNCATE",
        "CONVERT",
        "MERGE",
        "UPDATE",
        "REPLACE TABLE",
        "REPLACE TABLE AS SELECT",
        "CREATE OR REPLACE TABLE AS SELECT",
        "RESTORE",
        "CLONE",
        "CREATE TABLE AS SELECT",
    }
)


@dataclass(frozen=True)
class Operation:
    """What the commit records as its operation (commitInfo.operation / operationParameters).

    Parameter values are written as delta-spark writes them: strings, booleans, integers and null
    as they are (OPTIMIZE's ``"auto":false``, CREATE TABLE's ``"description":null``, RESTORE's
    ``"version":1``), lists and other
    values as a JSON string (``"partitionBy":"[\"p\"]"``)."""

    name: str = "WRITE"
    parameters: dict[str, Any] = field(default_factory=dict)
    changes_data: bool | None = None
    metrics: dict[str, str] | None = None
    user_metadata: str | None = None

    @property
    def changes_data_flag(self) -> bool:
        return self.name in CHANGES_DATA if self.changes_data is None else self.changes_data


def _file_actions(actions: Iterable[Action]) -> list[AddFile | RemoveFile | AddCDCFile]:
    return [a for a in actions if isinstance(a, AddFile | RemoveFile | AddCDCFile)]


class OptimisticTransaction:
    """One transaction on ``log`` reading ``snapshot``: the latest by default (none if the table
    does not exist yet); ``None`` writes as if no table existed (read version -1)."""

    def __init__(
        self,
        log: DeltaLog,
        snapshot: Snapshot | Literal["latest"] | None = "latest",
        *,
        release: Release | None = None,
        clock: Callable[[], int] = wall_clock_ms,
    ) -> None:
        self.log = log
        self.release = release or Release()
        self.clock = clock
        if snapshot == "latest":
            try:
                snapshot = log.snapshot()
            except errors.TableNotFoundError:
                snapshot = None
        self.snapshot: Snapshot | None = snapshot
        self.txn_id = str(uuid.uuid4())
        self._predicates: list[predicates.Expr] = []
        self._files: dict[str, AddFile] = {}
        self._whole_table = False
        self._app_ids: set[str] = set()
        self._depends_on_files = False
        self._staged: list[Action] = []
        self.committed_version: int | None = None

    # --- what the transaction read ------------------------------------------------------------

    @property
    def read_version(self) -> int:
        return -1 if self.snapshot is None else self.snapshot.version

    @property
    def metadata(self) -> Metadata | None:
        staged = [a for a in self._staged if isinstance(a, Metadata)]
        if staged:
            return staged[-1]
        return None if self.snapshot is None else self.snapshot.metadata

    def _live_files(self) -> list[AddFile]:
        return [] if self.snapshot is None else list(self.snapshot.files.values())

    def filter_files(
        self, filters: Sequence[predicates.Expr] = (), data_skipped: Iterable[str] | None = None
    ) -> list[AddFile]:
        """TXN.READ_PREDICATES / TXN.READ_FILES: scan with ``filters``; the partition-only filters
        become the read predicate, the pruned files (or ``data_skipped`` paths) the read files."""
        metadata = self.metadata
        columns = metadata.partition_columns if metadata else ()
        predicate = predicates.partition_predicate(filters, columns)
        live = self._live_files()
        if data_skipped is not None:
            wanted = set(data_skipped)
            scanned = [f for f in live if f.path in wanted]
        elif predicate == predicates.TRUE or metadata is None:
            scanned = live
        else:
            schema = predicates.PartitionSchema.of(metadata)
            hits = predicates.matching(predicate, [f.partition_values for f in live], schema)
            scanned = [f for f, hit in zip(live, hits, strict=True) if hit]
        self._predicates.append(predicate)
        self._files.update((f.path, f) for f in scanned)
        self._depends_on_files = True
        return scanned

    def track_read_predicate(self, predicate: predicates.Expr) -> None:
        """TXN.READ_PREDICATES: a predicate read without files (dynamic partition overwrite)."""
        self._predicates.append(predicate)

    def track_files_read(self, paths: Iterable[str]) -> None:
        """TXN.READ_FILES: files read without a predicate."""
        by_path = {f.path: f for f in self._live_files()}
        self._files.update((p, by_path[p]) for p in paths if p in by_path)

    def read_whole_table(self) -> None:
        """TXN.READ_WHOLE_TABLE."""
        self._predicates.append(predicates.TRUE)
        self._whole_table = True
        self._depends_on_files = True

    def txn_version(self, app_id: str) -> int:
        """TXN.READ_APP_IDS: the app's committed version (-1 if none); the commit depends on it."""
        self._app_ids.add(app_id)
        if self.snapshot is None or app_id not in self.snapshot.app_transactions:
            return -1
        return self.snapshot.app_transactions[app_id].version

    def stage(self, actions: Iterable[Action]) -> None:
        self._staged.extend(actions)

    # --- preparing ----------------------------------------------------------------------------

    def _error(self, kind: type[errors.CommitValidationError], message: str) -> errors.DeltaError:
        return kind(message, table=self.log.table_path, version=self.read_version + 1)

    def _prepare(self, actions: list[Action], operation: Operation) -> list[Action]:
        """prepareCommit: TXN.SET_TRANSACTION_DEDUP … TXN.DUPLICATE_ACTIONS."""
        rel = self.release
        if rel.has("set_transaction_dedup"):
            versions: dict[str, int] = {}
            deduplicated: list[Action] = []
            for action in actions:
                if isinstance(action, SetTransaction):
                    if action.app_id in versions:
                        if versions[action.app_id] != action.version:
                            raise self._error(
                                errors.DuplicateSetTransactionError,
                                f"two versions for app id {action.app_id}",
                            )
                        continue
                    versions[action.app_id] = action.version
                deduplicated.append(action)
            actions = deduplicated
        metadatas = [a for a in actions if isinstance(a, Metadata)]
        protocols = [a for a in actions if isinstance(a, Protocol)]
        if len(metadatas) > 1:
            raise self._error(errors.MetadataChangedTwiceError, "metadata changed more than once")
        if len(protocols) > 1 and rel.has("single_protocol"):
            raise self._error(errors.ProtocolChangedTwiceError, "protocol changed more than once")
        read_protocol = None if self.snapshot is None else self.snapshot.protocol
        read_metadata = None if self.snapshot is None else self.snapshot.metadata
        if self.snapshot is None:
            if not metadatas and rel.has("metadata_validation"):
                raise self._error(errors.MetadataAbsentError, "the first commit needs metadata")
            if not protocols:
                actions = [DEFAULT_PROTOCOL, *actions]
                protocols = [DEFAULT_PROTOCOL]
        if rel.has("downgrade_check") and operation.name != "DROP FEATURE":
            feature_based = rel.has("feature_protocols")
            if any(protocol.is_downgrade(p, read_protocol, feature_based) for p in protocols):
                raise self._error(errors.ProtocolDowngradeError, "protocol downgrade")
        metadata = metadatas[0] if metadatas else read_metadata
        if metadata is not None and rel.has("metadata_validation"):
            keys = {key for _, _, key in predicates.PartitionSchema.of(metadata).columns}
            for add in (a for a in actions if isinstance(a, AddFile)):
                if set(add.partition_values) != keys:
                    raise self._error(
                        errors.InvalidPartitioningSchemaError,
                        f"{add.path} has partition values for "
                        f"{sorted(add.partition_values)}, the table {sorted(keys)}",
                    )
        append_only = read_metadata is not None and (
            read_metadata.configuration.get("delta.appendOnly", "false").lower() == "true"
        )
        if append_only and any(isinstance(a, RemoveFile) and a.data_change for a in actions):
            raise self._error(errors.AppendOnlyViolationError, "the table only allows appends")
        domains = [a.domain for a in actions if isinstance(a, DomainMetadata)]
        if domains and rel.has("domain_metadata"):
            new_protocol = protocols[0] if protocols else read_protocol
            if "domainMetadata" not in protocol.features(new_protocol):
                raise self._error(
                    errors.DomainMetadataUnsupportedError,
                    "the protocol does not support domain metadata",
                )
            if len(set(domains)) != len(domains):
                raise self._error(errors.DuplicateDomainMetadataError, "a domain appears twice")
        if rel.has("duplicate_action_check"):
            keys_seen = Counter(a.key for a in actions if isinstance(a, AddFile | RemoveFile))
            duplicates = sorted(str(k[0]) for k, n in keys_seen.items() if n > 1)
            if duplicates:
                raise self._error(errors.DuplicateActionsError, f"{duplicates[0]} appears twice")
        return actions

    def _isolation_level(self, actions: list[Action], operation: Operation) -> str | None:
        """ISOLATION.DOWNGRADE_V05 / ISOLATION.DOWNGRADE, with ISOLATION.TABLE_DEFAULT."""
        rel = self.release
        if not rel.has("fine_grained_conflicts"):
            return None
        files = _file_actions(actions)
        changes = any(getattr(f, "data_change", False) for f in files)
        if not rel.has("downgrade_v12"):
            return "Serializable" if changes else "SnapshotIsolation"
        metadata = self.metadata
        declared = "Serializable"
        if rel.has("isolation_property") and metadata is not None:
            declared = self._table_level(metadata)
        only_files = all(
            isinstance(a, AddFile | RemoveFile | AddCDCFile)
            or (
                isinstance(a, DomainMetadata)
                and a.domain == ROW_TRACKING_DOMAIN
                and rel.has("domain_metadata")
            )
            for a in actions
        )
        may_downgrade = declared == "Serializable" or not operation.changes_data_flag
        if only_files and not changes and may_downgrade:
            return "SnapshotIsolation"
        return declared

    def _table_level(self, metadata: Metadata) -> str:
        """ISOLATION.TABLE_DEFAULT: ``delta.isolationLevel``, case-insensitively
        (TXN.TABLE_PROPERTIES); an unknown name is InvalidIsolationLevelError."""
        value = metadata.configuration.get("delta.isolationLevel")
        if value is None:
            return "Serializable"
        try:
            return properties.isolation_level(value)
        except ValueError as exc:
            raise self._error(errors.InvalidIsolationLevelError, str(exc)) from None

    def _commit_info(self, operation: Operation, level: str | None, blind: bool) -> CommitInfo:
        """TXN.COMMIT_INFO in delta-spark's field order; fixed for every attempt."""
        rel = self.release
        fields: dict[str, Any] = {
            "timestamp": self.clock(),
            "operation": operation.name,
            "operationParameters": {
                k: v if isinstance(v, str | int) or v is None else json.dumps(v)
                for k, v in operation.parameters.items()
            },
        }
        if self.read_version >= 0:
            fields["readVersion"] = self.read_version
        if level is not None and rel.has("isolation_level_recorded"):
            fields["isolationLevel"] = level
        if rel.has("blind_append_flag"):
            fields["isBlindAppend"] = blind
        if operation.metrics:
            fields["operationMetrics"] = operation.metrics
        if operation.user_metadata is not None:
            fields["userMetadata"] = operation.user_metadata
        fields["engineInfo"] = ENGINE_INFO
        if rel.has("txn_id"):
            fields["txnId"] = self.txn_id
        return CommitInfo(fields)

    # --- committing ---------------------------------------------------------------------------

    def commit(self, actions: Iterable[Action] = (), operation: Operation | None = None) -> int:
        """Commit the staged actions plus ``actions``; returns the committed version."""
        version = self._commit(actions, operation or Operation(), if_needed=False)
        assert version is not None
        return version

    def commit_if_needed(
        self, actions: Iterable[Action] = (), operation: Operation | None = None
    ) -> int | None:
        """Like ``commit``, but an empty commit may be skipped (TXN.EMPTY_COMMIT): returns None."""
        return self._commit(actions, operation or Operation(), if_needed=True)

    def _commit(self, extra: Iterable[Action], operation: Operation, if_needed: bool) -> int | None:
        if self.committed_version is not None:
            raise RuntimeError("transaction already committed")
        crashpoints.reached("commit.begin")
        staged: list[Action] = [a for a in (*self._staged, *extra) if not isinstance(a, CommitInfo)]
        actions = self._prepare(staged, operation)
        level = self._isolation_level(actions, operation)
        only_adds = all(isinstance(a, AddFile) for a in _file_actions(actions))
        if self.release.has("fine_grained_conflicts"):
            blind = only_adds and not self._predicates and not self._files
        else:
            blind = only_adds and not self._depends_on_files
        rel = self.release
        skippable = level in {"SnapshotIsolation", "Serializable"}
        if (
            not actions
            and if_needed
            and rel.has("skip_empty_commits")
            and rel.skip_recording_empty_commits
            and skippable
        ):
            return None
        commit_info = self._commit_info(operation, level, blind)
        ordered = (
            [*actions, commit_info] if rel.commit_info_written_last else [commit_info, *actions]
        )
        table, version = self.log.table_path, self.read_version + 1
        if self.snapshot is not None:  # ACTION.PROTOCOL: only tables this writer can keep
            write_boundary.check_writer_protocol(
                self.snapshot.protocol, table=table, version=version
            )
        payload = write_boundary.encode(ordered, table=table, version=version)
        write_boundary.check_commit(payload, table=table, version=version)  # TXN.WRITE_BOUNDARY
        metadata = next((a for a in actions if isinstance(a, Metadata)), self.metadata)
        current = CurrentTransactionInfo(
            table=self.log.table_path,
            read_protocol=None if self.snapshot is None else self.snapshot.protocol,
            read_metadata=None if self.snapshot is None else self.snapshot.metadata,
            reads=ReadSet(
                tuple(self._predicates),
                dict(self._files),
                self._whole_table,
                frozenset(self._app_ids),
                self._depends_on_files,
            ),
            actions=tuple(actions),
            isolation_level=level,
            is_blind_append=blind,
            protocol=next((a for a in actions if isinstance(a, Protocol)), None)
            or (None if self.snapshot is None else self.snapshot.protocol),
            metadata=metadata,
        )
        version = self._write_with_retries(payload, current)
        crashpoints.reached("commit.after_put")
        self.committed_version = version
        self._post_commit(version)
        return version

    def _write_with_retries(self, payload: bytes, current: CurrentTransactionInfo) -> int:
        """RETRY.ATTEMPT_VERSION, RETRY.NEXT_VERSION, RETRY.MAX_ATTEMPTS / RETRY.UNBOUNDED.

        A write that fails with an OSError has an unknown outcome (LogStore.write_new): the
        version is read back, and the commit is ours if it carries this transaction's txnId (or
        its exact bytes); absent, the same version is tried again (at most MAX_FAILED_WRITES
        times); another writer's, it is a lost race. After such a failure a winner carrying our
        txnId is recognised too, so a commit is never written twice. (delta-spark surfaces the
        IOException instead; v4.4's opt-in idempotency check compares txnIds the same way.)
        """
        rel = self.release
        attempt_version = self.read_version + 1
        must_check = False
        uncertain = False  # an earlier write failed: a winner may be our own commit
        failed_writes = 0
        attempt = 0
        while True:
            if must_check:
                latest = self._latest_at_least(attempt_version)
                for winner_version in range(attempt_version, latest + 1):
                    if uncertain and self._is_own(winner_version, payload):
                        return winner_version
                    winner = WinningCommit(
                        winner_version, tuple(self.log.read_commit(winner_version))
                    )
                    current = check_winning_commit(current, winner, rel)
                attempt_version = latest + 1
                must_check = False
            try:
                self.log.store.write_new(commit_name(attempt_version), payload)
                return attempt_version
            except errors.VersionExistsError:
                pass
            except OSError as failure:
                uncertain = True
                own = self._is_own(attempt_version, payload, failure)
                if own:
                    return attempt_version
                if own is None:  # not written: try the same version again
                    failed_writes += 1
                    if failed_writes >= MAX_FAILED_WRITES:
                        raise errors.CommitFailedError(
                            f"writing the commit failed {failed_writes} times ({failure}); "
                            "it is not in the log",
                            table=self.log.table_path,
                            version=attempt_version,
                            file=commit_name(attempt_version),
                        ) from failure
                    continue
            # the version exists and is another writer's: a lost race
            if not rel.has("retries"):
                raise errors.ConcurrentModificationException(
                    "a concurrent commit won the race (no retries before v0.2.0)",
                    table=self.log.table_path,
                    version=attempt_version,
                    winning_version=attempt_version,
                ) from None
            must_check = True
            attempt += 1
            if rel.has("bounded_retries") and attempt > rel.max_commit_attempts:
                raise errors.MaxCommitRetriesExceededError(
                    f"tried {attempt} times; started at version {self.read_version + 1}, "
                    f"failed at version {attempt_version}",
                    table=self.log.table_path,
                    version=attempt_version,
                ) from None

    def _latest_at_least(self, exists: int) -> int:
        """The latest version, knowing that ``exists`` does: a stale listing is read past."""
        latest = max(self.log.latest_version(), exists)
        while self.log.store.exists(commit_name(latest + 1)):
            latest += 1
        return latest

    def _is_own(self, version: int, payload: bytes, failure: OSError | None = None) -> bool | None:
        """Whether commit ``version`` is this transaction's (None: absent); the log is read
        back up to three times, then CommitOutcomeUnknownError."""
        for _ in range(3):
            try:
                return self.log.commit_is_own(version, self.txn_id, payload)
            except OSError as exc:
                failure = exc
        raise errors.CommitOutcomeUnknownError(
            f"the commit may or may not be in the log (txnId {self.txn_id}): {failure}",
            table=self.log.table_path,
            version=version,
            file=commit_name(version),
        ) from failure

    def _post_commit(self, version: int) -> None:
        """CHECKPOINT.INTERVAL: checkpoint the committed version. Nothing here ever raises
        (TXN.COMMITTED_IS_FINAL): the commit is in the log, and a caller told otherwise would
        retry it and write its rows twice."""
        try:
            metadata = self.metadata
            if metadata is None or not checkpoint.needs_checkpoint(version, metadata):
                return
            checkpoint.checkpoint_version(self.log, version, now_ms=self.clock())
        except Exception:  # a checkpoint is an optimisation; the commit already landed
            LOG.exception(
                "post-commit work of %s at version %s failed", self.log.table_path, version
            )
