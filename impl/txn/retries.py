"""The commit loop of one transaction: its attempts, lost races and retries (RETRY.*,
TXN.READ_VERSION_RETAINED).

The first attempt writes the commit at the read version + 1 with put-if-absent; after a lost
race every winning commit is checked in order (deltaspec.impl.txn.conflicts) and the next
attempt aims past the latest, up to ``maxCommitAttempts`` more times. The in-commit timestamp
the transaction assigned moves past each winner's (ICT.RETRY) and is written into each attempt's
bytes (deltaspec.impl.txn.prepared_commit). A write whose outcome the store could not report is
resolved by reading the log back: the commit is this transaction's if it carries its txnId or
its exact bytes (:func:`commit_is_own`).
"""

from __future__ import annotations

from dataclasses import dataclass

from deltaspec.rules import rule

from .. import codec, errors
from ..actions import CommitInfo
from ..log.names import classic_checkpoint_name, commit_name
from ..snapshot.delta_log import DeltaLog
from ..table.releases import Profile
from . import timestamps as ict
from .conflicts import check_winner
from .current_transaction import CurrentTransactionInfo
from .prepared_commit import PreparedCommit
from .winning_commit import WinningCommit

__all__ = ["MAX_FAILED_WRITES", "CommitAttempts", "commit_is_own", "read_version_retained"]

MAX_FAILED_WRITES = 10
"""Writes of one version that fail, and that reading the log back does not find, before the
commit gives up (delta-spark's maxNonConflictCommitAttempts): CommitOutcomeUnknownError when one
of them went unanswered and may still land, CommitFailedError when none can
(RETRY.OUTCOME_UNKNOWN)."""


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


def commit_is_own(log: DeltaLog, version: int, txn_id: str, payload: bytes) -> bool | None:
    """Whether commit ``version`` of ``log`` is the one a transaction tried to write: None if the
    file does not exist, else True when its bytes are ``payload`` or its commitInfo carries
    ``txn_id`` (TXN.COMMIT_INFO). Resolves a write whose outcome the store could not report.
    OSError if the file cannot be read."""
    name = commit_name(version)
    try:
        data = log.store.read(name)
    except FileNotFoundError:
        return None
    if data == payload:
        return True
    try:
        actions = codec.decode_commit(data, table=log.table_path, version=version, file=name)
    except errors.CorruptLogError:
        return False
    return any(isinstance(a, CommitInfo) and a.get("txnId") == txn_id for a in actions)


@dataclass
class CommitAttempts:
    """The attempts of one commit on ``log``, by the transaction ``txn_id`` that read
    ``read_version``, under the rules of ``profile``; ``in_commit_timestamp`` is the commit's
    (None without the feature), moved past each winner's, and ``enables_in_commit_timestamps``
    whether the commit turns the feature on (ICT.ENABLEMENT)."""

    log: DeltaLog
    profile: Profile
    txn_id: str
    read_version: int
    in_commit_timestamp: int | None = None
    enables_in_commit_timestamps: bool = False

    @rule("RETRY.ATTEMPT_VERSION")
    def write_with_retries(self, prepared: PreparedCommit) -> int:
        """The commit loop: the first attempt at the read version + 1, after a lost race the
        winners resolved (RETRY.NEXT_VERSION) within the retry bound (RETRY.MAX_ATTEMPTS).

        Each attempt writes ``prepared``'s bytes for its version (the lines it changes encoded
        again, nothing else). A write that fails with an OSError has an unknown outcome
        (LogStore.write_new): the version is read back, and the commit is ours if it carries
        this transaction's txnId (or its exact bytes); absent, the same version is tried again
        (at most MAX_FAILED_WRITES times, then RETRY.OUTCOME_UNKNOWN decides what to report);
        another writer's, it is a lost race. After such a failure a winner carrying our txnId is
        recognised too, so a commit is never written twice. (delta-spark surfaces the
        IOException instead; v4.4's opt-in idempotency check compares txnIds the same way.)
        """
        attempt_version = self.read_version + 1
        must_check = False
        uncertain = False  # an earlier write failed: a winner may be our own commit
        in_flight = False  # a failed write may still land (the store could not tell)
        failed_writes = 0
        attempt = 0
        payload = prepared.payload
        while True:
            if must_check:
                attempt_version, rebased = self._resolve(
                    attempt_version, payload, prepared.current, uncertain
                )
                if rebased is None:  # the winner is our own commit
                    return attempt_version
                prepared = prepared.rebased(rebased, attempt_version)
                must_check = False
            payload = prepared.attempt_bytes(
                attempt_version, self.in_commit_timestamp, self.enables_in_commit_timestamps
            )
            try:
                self._put(attempt_version, payload)
                return attempt_version
            except errors.VersionExistsError:
                pass
            except OSError as failure:
                uncertain = True
                in_flight = in_flight or isinstance(failure, errors.StorageOutcomeUnknownError)
                own = self._is_own(attempt_version, payload, failure)
                if own:
                    return attempt_version
                if own is None:  # not in the log now: try the same version again
                    failed_writes += 1
                    if failed_writes >= MAX_FAILED_WRITES:
                        raise self._gave_up(
                            attempt_version, failed_writes, failure, in_flight
                        ) from failure
                    continue
            # the version exists and is another writer's: a lost race
            attempt += 1
            self._after_collision(attempt, attempt_version)
            must_check = True

    @rule("RETRY.OUTCOME_UNKNOWN")
    def _gave_up(
        self, version: int, failed_writes: int, failure: OSError, in_flight: bool
    ) -> errors.DeltaError:
        """The error that ends the loop after ``failed_writes`` writes of ``version`` that the
        log does not show (RETRY.OUTCOME_UNKNOWN). Only when every one of them failed before it
        left the writer (a local store's refusal: the read-back proves it absent) is the commit
        known to have failed; a write the store could not answer may still land after the
        read-back (a delayed PUT), so then the outcome is unknown, naming the version and the
        txnId to look for."""
        if in_flight:
            return errors.CommitOutcomeUnknownError(
                f"{failed_writes} writes of the commit went unanswered ({failure}) and it is not "
                f"in the log yet; any of them may still land: look for txnId {self.txn_id} at "
                f"version {version} before writing again",
                table=self.log.table_path,
                version=version,
                file=commit_name(version),
            )
        return errors.CommitFailedError(
            f"writing the commit failed {failed_writes} times ({failure}); it is not in the log",
            table=self.log.table_path,
            version=version,
            file=commit_name(version),
        )

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

    def _rebase_timestamp(self, winner: WinningCommit) -> None:
        """ICT.RETRY: move the in-commit timestamp past ``winner``'s."""
        if self.in_commit_timestamp is not None:
            self.in_commit_timestamp = ict.rebased_in_commit_timestamp(
                self.in_commit_timestamp,
                self.log,
                winner.version,
                winner.actions,
                self.enables_in_commit_timestamps,
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
                return commit_is_own(self.log, version, self.txn_id, payload)
            except OSError as exc:
                failure = exc
        raise errors.CommitOutcomeUnknownError(
            f"the commit may or may not be in the log (txnId {self.txn_id}): {failure}",
            table=self.log.table_path,
            version=version,
            file=commit_name(version),
        ) from failure
