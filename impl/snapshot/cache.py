"""What a DeltaLog keeps between loads, and when a load may use it.

What a log read from files that never change once listed (LOG.PUT_IF_ABSENT) is kept: the
state of the last :data:`CHECKPOINT_CACHE_SIZE` checkpoints and up to
:data:`COMMIT_CACHE_ACTIONS` decoded (and checked) commit actions, each keyed on the file's
name, size and modification time as the listing shows them, so a file that differs from what
was kept is read again. States read with v2 sidecars are never kept, since no listing shows the
sidecars; the state of a checkpoint the log wrote itself is kept as written, so a load from it
reads nothing. The log also keeps the last snapshot it built with the segment it was built from
(:class:`Kept`): a load that lists the very same segment gets it again (:func:`reused`), and a
load of a later version from the same start may apply only the commits after it
(:func:`refresh_from`). A log is given its cache (:class:`SnapshotCache`): a :class:`LogCache`,
or :data:`NO_CACHE`, which keeps nothing, so the log reads everything each time on one path.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Protocol

from ..log.listing import CheckpointFiles, LogListing
from ..log.store import FileInfo
from ..replay.commits import ReplayActions
from ..replay.state import ReplayState
from .segment import LogSegment, listed_commits, newest_start
from .state import Snapshot

__all__ = [
    "CHECKPOINT_CACHE_SIZE",
    "COMMIT_CACHE_ACTIONS",
    "NO_CACHE",
    "Kept",
    "LogCache",
    "NoCache",
    "SnapshotCache",
    "as_of",
    "refresh_from",
    "reused",
]

CHECKPOINT_CACHE_SIZE = 2
"""Checkpoints whose state a :class:`LogCache` keeps, least recently used out."""

COMMIT_CACHE_ACTIONS = 100_000
"""Decoded actions (of all commits together) a :class:`LogCache` keeps, least recently used
out."""


@dataclass(frozen=True)
class Kept:
    """The last snapshot a log built, with the segment it was replayed from and the commit file
    of its own version as listed (``anchor``, None if not listed)."""

    snapshot: Snapshot
    segment: LogSegment
    anchor: FileInfo | None


Listed = Callable[[], Iterable[CheckpointFiles]]
"""The checkpoints of one version as a fresh listing shows them (called only when needed)."""


class SnapshotCache(Protocol):
    """What a log keeps between loads: checkpoint states, decoded commits and the last snapshot
    built. Each getter answers None for what is not kept."""

    def checkpoint(self, cp: CheckpointFiles) -> ReplayState | None: ...

    def keep_checkpoint(self, cp: CheckpointFiles, state: ReplayState) -> None: ...

    def keep_written_checkpoint(
        self, first_file: str, state: ReplayState, listed: Listed
    ) -> None: ...

    def commit(self, info: FileInfo | None) -> ReplayActions | None: ...

    def keep_commit(self, info: FileInfo | None, actions: ReplayActions) -> None: ...

    @property
    def last_snapshot(self) -> Kept | None: ...

    def keep_snapshot(
        self, snapshot: Snapshot, segment: LogSegment, anchor: FileInfo | None
    ) -> None: ...


class NoCache:
    """A cache that keeps nothing: every load reads every file it needs (``cache=False``)."""

    def checkpoint(self, cp: CheckpointFiles) -> ReplayState | None:
        return None

    def keep_checkpoint(self, cp: CheckpointFiles, state: ReplayState) -> None:
        pass

    def keep_written_checkpoint(self, first_file: str, state: ReplayState, listed: Listed) -> None:
        pass  # nothing kept, so the log is not listed to find the checkpoint

    def commit(self, info: FileInfo | None) -> ReplayActions | None:
        return None

    def keep_commit(self, info: FileInfo | None, actions: ReplayActions) -> None:
        pass

    @property
    def last_snapshot(self) -> Kept | None:
        return None

    def keep_snapshot(
        self, snapshot: Snapshot, segment: LogSegment, anchor: FileInfo | None
    ) -> None:
        pass


NO_CACHE: SnapshotCache = NoCache()
"""The cache of a log that keeps nothing (it holds no state, so logs share it)."""


class LogCache:
    """The caches of one log, safe to share between threads: checkpoint states and commit
    actions (least recently used out), the kept snapshot."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._checkpoints: OrderedDict[CheckpointFiles, ReplayState] = OrderedDict()
        self._commits: OrderedDict[FileInfo, ReplayActions] = OrderedDict()
        self._kept_actions = 0
        self._last_snapshot: Kept | None = None

    def checkpoint(self, cp: CheckpointFiles) -> ReplayState | None:
        """A copy of the kept state of checkpoint ``cp``, None if not kept."""
        with self._lock:
            kept = self._checkpoints.get(cp)
            if kept is None:
                return None
            self._checkpoints.move_to_end(cp)
            return kept.copy()

    def keep_checkpoint(self, cp: CheckpointFiles, state: ReplayState) -> None:
        """Keep a copy of ``state``, what checkpoint ``cp`` holds (read whole, or written by
        this log)."""
        with self._lock:
            self._checkpoints[cp] = state.copy()
            while len(self._checkpoints) > CHECKPOINT_CACHE_SIZE:
                self._checkpoints.popitem(last=False)

    def keep_written_checkpoint(self, first_file: str, state: ReplayState, listed: Listed) -> None:
        """Keep ``state`` as the state of the checkpoint the log has just written, the one of
        the ``listed`` checkpoints (of its version) whose first file is ``first_file``."""
        for cp in listed():
            if cp.files[0].name == first_file:
                self.keep_checkpoint(cp, state)

    def commit(self, info: FileInfo | None) -> ReplayActions | None:
        """The kept actions of the commit file ``info``, None if not kept (or not listed)."""
        if info is None:
            return None
        with self._lock:
            kept = self._commits.get(info)
            if kept is not None:
                self._commits.move_to_end(info)
            return kept

    def keep_commit(self, info: FileInfo | None, actions: ReplayActions) -> None:
        """Keep the decoded, checked ``actions`` of the commit file ``info`` (unless it is not
        listed, or they alone are more than :data:`COMMIT_CACHE_ACTIONS`)."""
        if info is None or len(actions) > COMMIT_CACHE_ACTIONS:
            return
        with self._lock:
            if info not in self._commits:
                self._commits[info] = actions
                self._kept_actions += len(actions)
            while self._kept_actions > COMMIT_CACHE_ACTIONS:
                _, dropped = self._commits.popitem(last=False)
                self._kept_actions -= len(dropped)

    @property
    def last_snapshot(self) -> Kept | None:
        """The last snapshot kept, with what it was built from."""
        with self._lock:
            return self._last_snapshot

    def keep_snapshot(
        self, snapshot: Snapshot, segment: LogSegment, anchor: FileInfo | None
    ) -> None:
        """Keep ``snapshot`` (a copy, as of its own clock), built from ``segment``, whose own
        commit file is listed as ``anchor``."""
        kept = Kept(as_of(snapshot, snapshot.now_ms), segment, anchor)
        with self._lock:
            self._last_snapshot = kept


def as_of(snapshot: Snapshot, now: int) -> Snapshot:
    """``snapshot`` with its own mutable dicts, as of ``now``."""
    return replace(
        snapshot,
        domains=dict(snapshot.domains),
        all_app_transactions=dict(snapshot.all_app_transactions),
        now_ms=now,
    )


def reused(kept: Kept | None, segment: LogSegment, now: int) -> Snapshot | None:
    """The kept snapshot, if it was replayed from the very files ``segment`` holds
    (LOG.PUT_IF_ABSENT: listed files never change), as of ``now``; else None. A post-commit
    step and the next transaction of a writer load the version it just committed once, not
    once each."""
    if kept is None or kept.segment != segment:
        return None
    return as_of(kept.snapshot, now)


def refresh_from(
    kept: Kept, listing: LogListing, target: int
) -> tuple[LogSegment, ReplayState] | None:
    """How to build the snapshot at ``target`` from the kept one at a version ``k <= target``,
    as a long-lived reader refreshes: the segment to keep it as and the kept state to apply the
    commits ``k + 1 .. target`` to (SNAPSHOT.REPLAY); None when that is not possible.

    It is possible when the listing shows commit ``k`` as the very file the kept snapshot was
    built from, no other commit file it was built from differs (LOG.PUT_IF_ABSENT: a listed file
    never changes, so the state at ``k`` is still the log's), and the commits after ``k`` up to
    ``target`` are all listed (LOG.CONTIGUITY) from where a cold load would start: the newest
    complete checkpoint the listing shows at or below ``target`` (or commit 0 in a full listing
    without one), which must be the kept snapshot's own start. A newer checkpoint is never
    refreshed across: it holds what its writer's clock left of the state (RETENTION.TOMBSTONES,
    RETENTION.SET_TRANSACTION), so a snapshot read from it starts from its content, as a cold
    load does (CHECKPOINT.READ), and a load's answer never depends on what the log kept."""
    base = kept.snapshot
    if base.version > target:
        return None
    if kept.anchor is None or listing.commits.get(base.version) != kept.anchor:
        return None
    for version, info in kept.segment.commits.items():
        shown = listing.commits.get(version)
        if shown is not None and shown != info:
            return None
    cp = newest_start(listing, target)
    if cp != kept.segment.start:
        return None  # a cold load starts from another checkpoint's content
    if cp is None and not (listing.full and 0 in listing.commits):
        return None  # a cold load would find no start: neither does a refresh
    needed = listed_commits(listing, kept.segment.first, target)  # all a cold load needs
    if any(info is None for info in needed.values()):
        return None
    state = ReplayState(
        base.protocol,
        base.metadata,
        dict(base.all_app_transactions),
        dict(base.domains),
        base.live_files,
        base.all_tombstones,
    )
    return LogSegment.listed(listing, cp, target), state
