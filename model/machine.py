"""The machine: a log and many writers, advanced one explicit step at a time (RETRY.*).

Every step is a pure function from a ``Machine`` to a new ``Machine``. A
writer's commit loop is split the way delta-spark's is: ``try_write`` is one
put-if-absent at the attempt version; after a collision ``resolve`` checks
each winning commit in version order and moves the attempt version past them.
``commit`` runs the loop to its end with no other writer in between.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from deltaspec.rules import rule

from .conflicts import check_winner
from .log import Log, read_version_retained
from .outcomes import (
    Committed,
    Conflict,
    ConflictKind,
    ErrorKind,
    Outcome,
    Pending,
    Rejected,
    Skipped,
)
from .prepared_commit import PreparedCommit
from .profiles import Profile
from .timestamps import rebased_past, with_enablement
from .transaction import prepare
from .transaction_state import Operation, Transaction
from .winning_commit import WinningCommit


@dataclass(frozen=True)
class Writer:
    txn: Transaction
    prepared: PreparedCommit | None = None
    attempt_version: int = 0
    collisions: int = 0
    must_resolve: bool = False
    outcome: Outcome = Pending()

    @property
    def done(self) -> bool:
        return not isinstance(self.outcome, Pending)


@dataclass(frozen=True)
class Machine:
    profile: Profile = Profile()
    log: Log = Log()
    writers: Mapping[str, Writer] = field(default_factory=lambda: MappingProxyType({}))

    def writer(self, name: str) -> Writer:
        return self.writers[name]

    def _with(self, name: str, writer: Writer, log: Log | None = None) -> Machine:
        writers = MappingProxyType({**self.writers, name: writer})
        return replace(self, writers=writers, log=self.log if log is None else log)


DEFAULT_OPERATION = Operation()


class StepError(ValueError):
    """A step that the machine's state does not allow (unknown writer, finished writer…)."""


def begin(
    machine: Machine,
    name: str,
    operation: Operation = DEFAULT_OPERATION,
    version: int | None = None,
    commit_if_needed: bool = True,
) -> Machine | Rejected:
    """Open a transaction for ``name`` on the snapshot at ``version`` (default latest)."""
    if name in machine.writers:
        raise StepError(f"writer {name!r} already began")
    snapshot = machine.log.snapshot(version)
    if snapshot is None:
        missing_table = machine.log.latest_version == -1
        return Rejected(ErrorKind.TABLE_NOT_FOUND if missing_table else ErrorKind.VERSION_NOT_FOUND)
    txn = Transaction(name, snapshot, operation, commit_if_needed=commit_if_needed)
    return machine._with(name, Writer(txn))


def update(machine: Machine, name: str, change: Callable[[Transaction], Transaction]) -> Machine:
    """Record reads or stage actions on an open transaction."""
    writer = _open_writer(machine, name)
    if writer.prepared is not None:
        raise StepError(f"writer {name!r} already started committing")
    return machine._with(name, replace(writer, txn=change(writer.txn)))


def _open_writer(machine: Machine, name: str) -> Writer:
    if name not in machine.writers:
        raise StepError(f"no writer {name!r}")
    writer = machine.writers[name]
    if writer.done:
        raise StepError(f"writer {name!r} already finished: {writer.outcome}")
    return writer


def _finish(machine: Machine, name: str, writer: Writer, outcome: Outcome) -> Machine:
    return machine._with(name, replace(writer, outcome=outcome))


@rule("RETRY.NEXT_VERSION")
def resolve(machine: Machine, name: str) -> Machine:
    """RETRY.NEXT_VERSION / CONFLICT.PER_WINNER: check every commit from the attempt version to
    the latest, in order, carrying the rebased transaction; then aim past the latest."""
    writer = _open_writer(machine, name)
    if not writer.must_resolve or writer.prepared is None:
        return machine
    current = writer.prepared
    for version in range(writer.attempt_version, machine.log.latest_version + 1):
        verdict = check_winner(
            current, WinningCommit.of(machine.log.commits[version]), machine.profile
        )
        if isinstance(verdict, Conflict):
            return _finish(machine, name, writer, verdict)
        if isinstance(verdict, ErrorKind):
            return _finish(machine, name, writer, Rejected(verdict))
        current = rebased_past(verdict, machine.log.commits[version], machine.profile)
    resolved = replace(
        writer,
        prepared=current,
        attempt_version=machine.log.latest_version + 1,
        must_resolve=False,
    )
    return machine._with(name, resolved)


@rule("RETRY.ATTEMPT_VERSION")
def try_write(machine: Machine, name: str, now: int) -> Machine:
    """One pass of the commit loop: resolve if a collision is pending, then put-if-absent.

    The first pass prepares the commit (TXN.*), fixing its commitInfo, and aims
    at the read version + 1 (RETRY.ATTEMPT_VERSION). A collision ends v0.1.0
    writers (RETRY.NONE_V01); later ones retry, up to ``maxCommitAttempts``
    passes after the first since v0.8.0 (RETRY.MAX_ATTEMPTS, RETRY.UNBOUNDED).
    """
    writer = _open_writer(machine, name)
    if writer.prepared is None:
        prepared = prepare(writer.txn, machine.profile, now)
        if prepared is None:
            return _finish(machine, name, writer, Skipped())
        if isinstance(prepared, ErrorKind):
            return _finish(machine, name, writer, Rejected(prepared))
        writer = replace(writer, prepared=prepared, attempt_version=writer.txn.read_version + 1)
        machine = machine._with(name, writer)
    if writer.must_resolve:
        machine = resolve(machine, name)
        writer = machine.writer(name)
        if writer.done:
            return machine
    assert writer.prepared is not None
    if not read_version_retained(writer.attempt_version, machine.log.log_start):
        return _finish(machine, name, writer, Rejected(ErrorKind.VERSION_NOT_FOUND))
    actions = with_enablement(
        writer.prepared.file_actions(machine.profile),
        writer.txn.read_snapshot,
        writer.attempt_version,
        machine.profile,
    )
    log = machine.log.write_new(writer.attempt_version, actions, now)
    if log is not None:
        return _finish(
            machine._with(name, writer, log), name, writer, Committed(writer.attempt_version)
        )
    return _after_collision(machine, name, writer)


@rule("RETRY.NONE_V01", "RETRY.MAX_ATTEMPTS", "RETRY.UNBOUNDED")
def _after_collision(machine: Machine, name: str, writer: Writer) -> Machine:
    """A lost race: v0.1.0 fails; later releases resolve and retry, at most maxCommitAttempts
    times since v0.8.0, without a bound before."""
    profile = machine.profile
    if not profile.has("retries"):
        conflict = Conflict(ConflictKind.CONCURRENT_MODIFICATION, writer.attempt_version)
        return _finish(machine, name, writer, conflict)
    collided = replace(writer, collisions=writer.collisions + 1, must_resolve=True)
    if profile.has("bounded_retries") and collided.collisions > profile.max_commit_attempts:
        return _finish(machine, name, collided, Rejected(ErrorKind.MAX_COMMIT_RETRIES_EXCEEDED))
    return machine._with(name, collided)


def commit(machine: Machine, name: str, now: int) -> Machine:
    """Run ``name``'s commit loop to its end (no other writer moves meanwhile)."""
    while not machine.writer(name).done:
        machine = try_write(machine, name, now)
    return machine


def retire(machine: Machine, name: str) -> Machine:
    """Forget a finished writer, so that its name can begin again."""
    if not machine.writer(name).done:
        raise StepError(f"writer {name!r} has not finished")
    writers = MappingProxyType({k: w for k, w in machine.writers.items() if k != name})
    return replace(machine, writers=writers)


def outcome(machine: Machine, name: str) -> Outcome:
    return machine.writer(name).outcome
