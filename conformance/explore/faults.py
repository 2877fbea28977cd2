"""Faults the explorer can run the model with, to show that it finds what it should.

- :class:`OverwritingLog`: a log store without put-if-absent (LOG.PUT_IF_ABSENT broken): a
  write to an existing version replaces that commit and reports success, so two writers
  can both be told they committed the same version; the first one's commit is lost.
- :data:`FAULTS`: a model rule swapped for a broken one for the duration of a run
  (:func:`faulted`); the model's code is not changed. (These are faults of the model; the
  oracle's *mutants*, ``conformance/oracle/mutants.py``, are seeded bugs of the impl.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ...model import conflicts
from ...model.actions import Action
from ...model.isolation import IsolationLevel
from ...model.log import Log
from ...model.profiles import Profile
from ...model.transaction import PreparedCommit
from ..workload.alphabet import ExploreError


def _append(log: Log, version: int, actions: tuple[Action, ...], timestamp: int) -> Log:
    written = Log.write_new(log, version, actions, timestamp)
    assert written is not None
    return written


@dataclass(frozen=True)
class OverwritingLog(Log):
    """A log store without mutual exclusion (LOG.PUT_IF_ABSENT broken): writing a version that
    exists replaces that commit, and the writer is told it succeeded. Later commits stay."""

    @classmethod
    def of(cls, log: Log) -> OverwritingLog:
        return cls(log.commits, log.snapshots, log.checkpoints)

    def write_new(self, version: int, actions: tuple[Action, ...], timestamp: int) -> Log | None:
        if version > self.latest_version:
            written = Log.write_new(self, version, actions, timestamp)
            return None if written is None else OverwritingLog.of(written)
        log = Log(self.commits[:version], self.snapshots[:version])
        log = _append(log, version, actions, timestamp)
        for later in self.commits[version + 1 :]:
            log = _append(log, later.version, later.actions, later.timestamp)
        return OverwritingLog.of(log)


def _no_append_check_under_serializable(
    original: conflicts.Check,
) -> conflicts.Check:
    def check(
        current: PreparedCommit, winner: conflicts.WinningCommit, profile: Profile
    ) -> conflicts.Verdict:
        if current.isolation_level is IsolationLevel.SERIALIZABLE:
            return current
        return original(current, winner, profile)

    return check


FAULTS: dict[str, tuple[str, str, Callable[[conflicts.Check], conflicts.Check]]] = {
    "no-append-check-under-serializable": (
        "check_added_files",
        "CONFLICT.APPEND_MATCH is skipped for Serializable transactions",
        _no_append_check_under_serializable,
    ),
}
"""Model faults: id -> (function of ``deltaspec.model.conflicts`` replaced, what it breaks,
the wrapper that breaks it)."""


@contextmanager
def faulted(fault: str | None) -> Iterator[None]:
    """Run the block with ``fault``'s broken rule swapped into the model, then restore it.

    ``check_order`` looks its checks up in the conflicts module on every call, so rebinding
    the module attribute changes the rule for everything the block runs, and nothing after.
    """
    if fault is None:
        yield
        return
    if fault not in FAULTS:
        raise ExploreError(f"unknown fault {fault!r}; known: {', '.join(FAULTS)}")
    name, _, wrap = FAULTS[fault]
    original = getattr(conflicts, name)
    setattr(conflicts, name, wrap(original))
    try:
        yield
    finally:
        setattr(conflicts, name, original)
