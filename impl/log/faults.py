"""A :class:`LogStore` that injects storage failures, to test that nothing above it goes wrong.

:class:`FaultyLogStore` wraps any store and, per call, may inject one of the :class:`Fault` kinds
— at random with the probabilities of a :class:`FaultPlan` (seeded, so a run can be replayed), or
on demand with :meth:`FaultyLogStore.force`:

- ``WRITE_FAILS`` — ``write_new`` raises OSError and writes nothing (a refused request, a link
  that fails);
- ``WRITE_LOST_ACK`` — ``write_new`` writes the file, then raises OSError (the response was
  lost: the caller cannot tell whether the commit landed);
- ``OVERWRITE_FAILS`` — ``write_overwrite`` (the rename of ``_last_checkpoint``) raises and keeps
  the old content;
- ``STALE_LISTING`` — ``list_from`` leaves out the newest commit file (a listing one version
  behind, as eventually consistent object stores give);
- ``SLOW_LISTING`` — ``list_from`` sleeps first (widens every race window);
- ``READ_FAILS`` — ``read`` raises OSError (a transient I/O error);
- ``DELETE_FAILS`` — ``delete`` raises OSError and deletes nothing.

Faults of ``write_new`` apply only to the names ``plan.writes_to`` accepts (default: every name).
:attr:`FaultyLogStore.injected` counts what was injected. Every fault is one that
:class:`LogStore` allows: reads stay read-after-write consistent, and put-if-absent stays
exclusive, so whatever goes wrong above this store is a bug there.
"""

from __future__ import annotations

import errno
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from .names import parse_commit_name
from .store import FileInfo, LogStore

__all__ = ["Fault", "FaultPlan", "FaultyLogStore", "InjectedFault"]


class Fault(Enum):
    WRITE_FAILS = "write fails"
    WRITE_LOST_ACK = "write succeeds, reports failure"
    OVERWRITE_FAILS = "rename of _last_checkpoint fails"
    STALE_LISTING = "listing stale by one version"
    SLOW_LISTING = "slow listing"
    READ_FAILS = "read fails"
    DELETE_FAILS = "delete fails"


class InjectedFault(OSError):
    """The OSError a :class:`FaultyLogStore` raises (errno EIO)."""

    def __init__(self, fault: Fault, name: str) -> None:
        super().__init__(errno.EIO, f"injected fault: {fault.value}", name)
        self.fault = fault


def _every_name(name: str) -> bool:
    return True


@dataclass(frozen=True)
class FaultPlan:
    """Per-call probabilities of each fault, a seed, and which names write faults apply to."""

    probabilities: dict[Fault, float] = field(default_factory=dict)
    seed: int = 0
    listing_delay_s: float = 0.01
    writes_to: Callable[[str], bool] = _every_name


class FaultyLogStore(LogStore):
    """``inner`` with the faults of ``plan`` injected (see the module); thread-safe."""

    def __init__(self, inner: LogStore, plan: FaultPlan | None = None) -> None:
        self.inner = inner
        self.plan = plan or FaultPlan()
        self.injected: Counter[Fault] = Counter()
        self._random = random.Random(self.plan.seed)
        self._forced: Counter[Fault] = Counter()
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"FaultyLogStore({self.inner!r})"

    def force(self, fault: Fault, times: int = 1) -> None:
        """Inject ``fault`` at the next ``times`` calls it applies to, whatever the plan says."""
        with self._lock:
            self._forced[fault] += times

    def _fires(self, fault: Fault) -> bool:
        with self._lock:
            if self._forced[fault] > 0:
                self._forced[fault] -= 1
                fire = True
            else:
                chance = self.plan.probabilities.get(fault, 0.0)
                fire = chance > 0 and self._random.random() < chance
            if fire:
                self.injected[fault] += 1
            return fire

    # --- LogStore ------------------------------------------------------------------------------

    @property
    def table_path(self) -> str:
        return self.inner.table_path

    def read(self, name: str) -> bytes:
        if self._fires(Fault.READ_FAILS):
            raise InjectedFault(Fault.READ_FAILS, name)
        return self.inner.read(name)

    def write_new(self, name: str, data: bytes) -> None:
        if self.plan.writes_to(name):
            if self._fires(Fault.WRITE_FAILS):
                raise InjectedFault(Fault.WRITE_FAILS, name)
            if self._fires(Fault.WRITE_LOST_ACK):
                self.inner.write_new(name, data)
                raise InjectedFault(Fault.WRITE_LOST_ACK, name)
        self.inner.write_new(name, data)

    def write_overwrite(self, name: str, data: bytes) -> None:
        if self._fires(Fault.OVERWRITE_FAILS):
            raise InjectedFault(Fault.OVERWRITE_FAILS, name)
        self.inner.write_overwrite(name, data)

    def list_from(self, start: str = "") -> list[FileInfo]:
        if self._fires(Fault.SLOW_LISTING):
            time.sleep(self.plan.listing_delay_s)
        listed = self.inner.list_from(start)
        if self._fires(Fault.STALE_LISTING):
            commits = [info.name for info in listed if parse_commit_name(info.name) is not None]
            if commits:
                listed = [info for info in listed if info.name != commits[-1]]
        return listed

    def list_names(self) -> list[str]:
        if self._fires(Fault.SLOW_LISTING):
            time.sleep(self.plan.listing_delay_s)
        return self.inner.list_names()

    def stat(self, name: str) -> FileInfo | None:
        return self.inner.stat(name)

    def list_dir(self, subdir: str) -> list[FileInfo]:
        return self.inner.list_dir(subdir)

    def delete(self, name: str) -> None:
        if self._fires(Fault.DELETE_FAILS):
            raise InjectedFault(Fault.DELETE_FAILS, name)
        self.inner.delete(name)

    def exists(self, name: str) -> bool:
        return self.inner.exists(name)

    def local_path(self, name: str) -> str | None:
        return self.inner.local_path(name)

    def sweep_temp_files(self, older_than_ms: int) -> list[str]:
        return self.inner.sweep_temp_files(older_than_ms)
