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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from deltaspec import __version__
from deltaspec.impl import checkpoint, checksum, codec, errors, predicates
from deltaspec.impl.actions import (
    Action,
    AddCDCFile,
    AddFile,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
)
from deltaspec.impl.log import crashpoints
from deltaspec.impl.log.names import classic_checkpoint_name, commit_name
from deltaspec.impl.snapshot import DeltaLog, Snapshot, wall_clock_ms
from deltaspec.impl.table import properties
from deltaspec.impl.table.releases import Profile
from deltaspec.impl.txn import timestamps as ict
from deltaspec.impl.txn import write_boundary
from deltaspec.impl.txn.conflicts import (
    ROW_TRACKING_DOMAIN,
    CurrentTransactionInfo,
    ReadSet,
    WinningCommit,
    check_winner,
)
from deltaspec.impl.txn.prepare import (
    Preparing,
    file_actions,
    is_blind_append,
    prepare,
    skips_empty_commit,
)
from deltaspec.impl.txn.rowtracking import high_water_mark
from deltaspec.rules import rule

LOG = logging.getLogger(__name__)
ENGINE_INFO = f"deltaspec/{__version__}"
MAX_FAILED_WRITES = 10
"""Writes of one version that fail, and that reading the log back proves did not land, before
the commit gives up with CommitFailedError (delta-spark's maxNonConflictCommitAttempts)."""
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


@rule("TXN.READ_VERSION_RETAINED")
def read_version_retained(log: DeltaLog, attempt_version: int) -> bool:
    """TXN.READ_VERSION_RETAINED: commit ``attempt_version - 1`` is still in the log (its JSON
    or a classic checkpoint of it), so a commit at ``attempt_version`` extends what readers
    see. One existence check per attempt; cleanup deletes in version order, so the commit
    before a cleaned-up attempt version is gone too."""
    if attempt_version == 0:
        return True
    before = attempt_version - 1
    store = log.store
    return store.exists(commit_name(before)) or store.exists(classic_checkpoint_name(before))


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


class OptimisticTransaction:
    """One transaction on ``log`` reading ``snapshot``: the latest by default (none if the table
    does not exist yet); ``None`` writes as if no table existed (read version -1)."""

    def __init__(
        self,
        log: DeltaLog,
        snapshot: Snapshot | Literal["latest"] | None = "latest",
        *,
        profile: Profile | None = None,
        clock: Callable[[], int] = wall_clock_ms,
    ) -> None:
        self.log = log
        self.profile = profile or Profile()
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

    @rule("TXN.READ_PREDICATES", "TXN.READ_FILES")
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
        """TXN.READ_PREDICATES: a predicate read without files (dynamic partition overwrite);
        before v0.5 a read of the table all the same (TXN.DEPENDS_ON_FILES)."""
        self._predicates.append(predicate)
        self._depends_on_files = True

    def track_files_read(self, paths: Iterable[str]) -> None:
        """TXN.READ_FILES: files read without a predicate; before v0.5 a read of the table all
        the same (TXN.DEPENDS_ON_FILES)."""
        by_path = {f.path: f for f in self._live_files()}
        self._files.update((p, by_path[p]) for p in paths if p in by_path)
        self._depends_on_files = True

    @rule("TXN.READ_WHOLE_TABLE")
    def read_whole_table(self) -> None:
        """TXN.READ_WHOLE_TABLE."""
        self._predicates.append(predicates.TRUE)
        self._whole_table = True
        self._depends_on_files = True

    @rule("TXN.READ_APP_IDS")
    def txn_version(self, app_id: str) -> int:
        """TXN.READ_APP_IDS: the app's committed version (-1 if none); the commit depends on it."""
        self._app_ids.add(app_id)
        if self.snapshot is None or app_id not in self.snapshot.app_transactions:
            return -1
        return self.snapshot.app_transactions[app_id].version

    def stage(self, actions: Iterable[Action]) -> None:
        self._staged.extend(actions)

    # --- preparing ----------------------------------------------------------------------------

    def _preparing(self, operation: Operation) -> Preparing:
        return Preparing(self.log.table_path, self.read_version + 1, self.snapshot, operation.name)

    def _error(self, kind: type[errors.CommitValidationError], message: str) -> errors.DeltaError:
        return kind(message, table=self.log.table_path, version=self.read_version + 1)

    @rule("ISOLATION.NONE", "ISOLATION.DOWNGRADE_V05", "ISOLATION.DOWNGRADE")
    def _isolation_level(self, actions: list[Action], operation: Operation) -> str | None:
        """The level the commit's conflict checks run under; None before v0.5.0."""
        profile = self.profile
        if not profile.has("fine_grained_conflicts"):
            return None
        files = file_actions(actions)
        changes = any(getattr(f, "data_change", False) for f in files)
        if not profile.has("downgrade_v12"):
            return "Serializable" if changes else "SnapshotIsolation"
        metadata = self.metadata
        declared = "Serializable"
        if profile.has("table_isolation_property") and metadata is not None:
            declared = self._table_level(metadata)
        only_files = all(
            isinstance(a, AddFile | RemoveFile | AddCDCFile)
            or (
                isinstance(a, DomainMetadata)
                and a.domain == ROW_TRACKING_DOMAIN
                and profile.has("domain_metadata")
            )
            for a in actions
        )
        may_downgrade = declared == "Serializable" or not operation.changes_data_flag
        if only_files and not changes and may_downgrade:
            return "SnapshotIsolation"
        return declared

    @rule("ISOLATION.TABLE_DEFAULT")
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

    @rule("TXN.COMMIT_INFO", "ISOLATION.RECORDED")
    def _commit_info(self, operation: Operation, level: str | None, blind: bool) -> CommitInfo:
        """TXN.COMMIT_INFO in delta-spark's field order; fixed for every attempt."""
        profile = self.profile
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
        if level is not None and profile.has("records_isolation_level"):
            fields["isolationLevel"] = level
        if profile.has("blind_append_flag"):
            fields["isBlindAppend"] = blind
        if operation.metrics:
            fields["operationMetrics"] = operation.metrics
        if operation.user_metadata is not None:
            fields["userMetadata"] = operation.user_metadata
        fields["engineInfo"] = ENGINE_INFO
        if profile.has("txn_id"):
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
        actions = prepare(self._preparing(operation), staged, self.profile)
        level = self._isolation_level(actions, operation)
        reads = ReadSet(
            tuple(self._predicates),
            dict(self._files),
            self._whole_table,
            frozenset(self._app_ids),
            self._depends_on_files,
        )
        blind = is_blind_append(actions, reads, self.profile)
        if skips_empty_commit(actions, if_needed, level, self.profile):
            return None
        commit_info = self._stamp_first_attempt(self._commit_info(operation, level, blind), actions)
        if self.profile.has("commit_info_last"):
            ordered = [*actions, commit_info]
        else:
            ordered = [commit_info, *actions]
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
            reads=reads,
            actions=tuple(actions),
            isolation_level=level,
            is_blind_append=blind,
            protocol=next((a for a in actions if isinstance(a, Protocol)), None)
            or (None if self.snapshot is None else self.snapshot.protocol),
            metadata=metadata,
            row_id_high_water_mark=high_water_mark(self.snapshot),
        )
        version = self._write_with_retries(payload, current)
        crashpoints.reached("commit.after_put")
        self.committed_version = version
        self._post_commit(version)
        return version

    @rule("RETRY.ATTEMPT_VERSION")
    def _write_with_retries(self, payload: bytes, current: CurrentTransactionInfo) -> int:
        """The commit loop: the first attempt at the read version + 1, after a lost race the
        winners resolved (RETRY.NEXT_VERSION) within the retry bound (RETRY.MAX_ATTEMPTS).

        A write that fails with an OSError has an unknown outcome (LogStore.write_new): the
        version is read back, and the commit is ours if it carries this transaction's txnId (or
        its exact bytes); absent, the same version is tried again (at most MAX_FAILED_WRITES
        times); another writer's, it is a lost race. After such a failure a winner carrying our
        txnId is recognised too, so a commit is never written twice. (delta-spark surfaces the
        IOException instead; v4.4's opt-in idempotency check compares txnIds the same way.)
        """
        attempt_version = self.read_version + 1
        must_check = False
        uncertain = False  # an earlier write failed: a winner may be our own commit
        failed_writes = 0
        attempt = 0
        while True:
            if must_check:
                attempt_version, rebased = self._resolve(
                    attempt_version, payload, current, uncertain
                )
                if rebased is None:  # the winner is our own commit
                    return attempt_version
                payload = self._rebased_payload(payload, current, rebased, attempt_version)
                current = rebased
                must_check = False
            payload = self._restamp(payload, attempt_version)
            try:
                self._put(attempt_version, payload)
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
            attempt += 1
            self._after_collision(attempt, attempt_version)
            must_check = True

    def _put(self, attempt_version: int, payload: bytes) -> None:
        """One put-if-absent of the commit at ``attempt_version`` (TXN.READ_VERSION_RETAINED
        first). A commit file that exists before the attempt is a lost race, never this
        transaction's commit even if its bytes equal ours (two commitInfos without txnId can)."""
        name = commit_name(attempt_version)
        if not read_version_retained(self.log, attempt_version):
            raise errors.VersionNotFoundError(
                f"commit {attempt_version - 1}, which this transaction read or checked last, "
                "is no longer in the log (log cleanup removed it): a commit at "
                f"{attempt_version} would be seen by no reader",
                table=self.log.table_path,
                version=attempt_version,
                file=commit_name(attempt_version - 1),
            )
        if self.log.store.exists(name):
            raise errors.VersionExistsError(name)
        self.log.store.write_new(name, payload)

    def _rebased_payload(
        self,
        payload: bytes,
        before: CurrentTransactionInfo,
        after: CurrentTransactionInfo,
        version: int,
    ) -> bytes:
        """The commit's bytes after a rebase that changed its actions (ROWTRACKING.REBASE): the
        same commitInfo, in the same place, with the rebased actions."""
        if after.actions == before.actions:
            return payload
        table = self.log.table_path
        written = codec.decode_commit(
            payload, table=table, version=version, file=commit_name(version)
        )
        info = [a for a in written if isinstance(a, CommitInfo)]
        ordered = (
            [*after.actions, *info]
            if self.profile.has("commit_info_last")
            else [
                *info,
                *after.actions,
            ]
        )
        rebased = write_boundary.encode(ordered, table=table, version=version)
        write_boundary.check_commit(rebased, table=table, version=version)
        return rebased

    @rule("RETRY.NEXT_VERSION")
    def _resolve(
        self, attempt_version: int, payload: bytes, current: CurrentTransactionInfo, uncertain: bool
    ) -> tuple[int, CurrentTransactionInfo | None]:
        """Check every winner from the attempt version to the latest, in order
        (CONFLICT.PER_WINNER), and aim past the latest: (the next attempt version, the rebased
        transaction). After a failed write (``uncertain``) a winner that is this transaction's
        commit ends the loop: (its version, None)."""
        latest = self._latest_at_least(attempt_version)
        for winner_version in range(attempt_version, latest + 1):
            if uncertain and self._is_own(winner_version, payload):
                return winner_version, None
            winner = WinningCommit(winner_version, tuple(self.log.read_commit(winner_version)))
            current = check_winner(current, winner, self.profile)
            self._rebase_timestamp(winner)
        return latest + 1, current

    def _write_checksum(self, version: int) -> None:
        """CHECKSUM.WRITE after the commit; a failure is logged, never raised."""
        try:
            checksum.write_checksum(self.log, version)
        except errors.DeltaError as why:  # the table's state has no checksum (e.g. no metadata yet)
            LOG.warning("no checksum for %s at %s: %s", self.log.table_path, version, why)
        except Exception:  # a checksum is an optimisation; the commit already landed
            LOG.exception("writing the checksum of %s at %s failed", self.log.table_path, version)

    # --- in-commit timestamps (ICT.*, deltaspec.impl.txn.timestamps) ----------------------------

    _in_commit_timestamp: int | None = None
    _enables_in_commit_timestamps: bool = False

    def _stamp_first_attempt(self, info: CommitInfo, actions: Sequence[Action]) -> CommitInfo:
        """ICT.ASSIGN: the commitInfo with the first attempt's in-commit timestamp, if any."""
        metadata = next((a for a in actions if isinstance(a, Metadata)), self.metadata)
        now = info.get("timestamp")
        assert isinstance(now, int)
        self._in_commit_timestamp = ict.first_in_commit_timestamp(
            metadata, self.snapshot, now, self.profile
        )
        self._enables_in_commit_timestamps = ict.enables_in_commit_timestamps(
            metadata, self.snapshot, self.profile
        )
        return ict.stamped(info, self._in_commit_timestamp)

    def _rebase_timestamp(self, winner: WinningCommit) -> None:
        """ICT.RETRY: move the in-commit timestamp past ``winner``'s."""
        if self._in_commit_timestamp is not None:
            self._in_commit_timestamp = ict.rebased_in_commit_timestamp(
                self._in_commit_timestamp,
                self.log,
                winner.version,
                winner.actions,
                self._enables_in_commit_timestamps,
            )

    def _restamp(self, payload: bytes, version: int) -> bytes:
        """The bytes of an attempt at ``version`` (ICT.ENABLEMENT follows the version)."""
        if self._in_commit_timestamp is None:
            return payload
        return ict.restamped(
            payload,
            self._in_commit_timestamp,
            version,
            self._enables_in_commit_timestamps,
            table=self.log.table_path,
        )

    @rule("RETRY.NONE_V01", "RETRY.MAX_ATTEMPTS", "RETRY.UNBOUNDED")
    def _after_collision(self, attempt: int, attempt_version: int) -> None:
        """The ``attempt``-th lost race, at ``attempt_version``: no retry before v0.2.0; since
        v0.8.0 at most maxCommitAttempts retries, unbounded before."""
        profile = self.profile
        if not profile.has("retries"):
            raise errors.ConcurrentModificationException(
                "a concurrent commit won the race (no retries before v0.2.0)",
                table=self.log.table_path,
                version=attempt_version,
                winning_version=attempt_version,
            ) from None
        if profile.has("bounded_retries") and attempt > profile.max_commit_attempts:
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

    @rule("TXN.COMMITTED_IS_FINAL")
    def _post_commit(self, version: int) -> None:
        """CHECKPOINT.INTERVAL: checkpoint the committed version. Nothing here ever raises
        (TXN.COMMITTED_IS_FINAL): the commit is in the log, and a caller told otherwise would
        retry it and write its rows twice."""
        self._write_checksum(version)
        try:
            metadata = self.metadata
            if metadata is None or not checkpoint.needs_checkpoint(version, metadata):
                return
            checkpoint.checkpoint_version(self.log, version, now_ms=self.clock())
        except Exception:  # a checkpoint is an optimisation; the commit already landed
            LOG.exception(
                "post-commit work of %s at version %s failed", self.log.table_path, version
            )
