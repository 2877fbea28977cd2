"""The log: contiguous commits with put-if-absent (LOG.*)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from deltaspec.rules import rule

from .actions import (
    Action,
    AddFile,
    Commit,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from .checkpoint import checkpointed
from .snapshot import Snapshot, apply_commit, canonical_path, replay


@rule("LOG.COMMIT_FILE_NAME")
def commit_name(version: int) -> str:
    """LOG.COMMIT_FILE_NAME: ``_delta_log/`` + the version as 20 digits + ``.json``."""
    if version < 0:
        raise ValueError(f"negative version {version}")
    return f"{version:020d}.json"


@dataclass(frozen=True)
class Log:
    """Commits 0..latest (LOG.CONTIGUITY), with the state after each one (the fold of the
    commits) kept alongside. ``log_start`` is the oldest commit log cleanup left listed
    (RETENTION.LOG); the model keeps the older ones, to know what a reader of them saw."""

    commits: tuple[Commit, ...] = ()
    snapshots: tuple[Snapshot, ...] = ()
    checkpoints: tuple[int, ...] = ()
    log_start: int = 0
    checkpoint_states: Mapping[int, Snapshot] = field(default_factory=lambda: MappingProxyType({}))
    """What a read that starts at a checkpoint starts from, for the checkpoints that hold less
    than the fold of their version (they left out what had expired when they were written,
    RETENTION.TOMBSTONES); any other checkpoint holds its version's whole state."""

    @property
    @rule("LOG.LISTING", "LOG.NEW_TABLE")
    def latest_version(self) -> int:
        """LOG.LISTING / LOG.NEW_TABLE: the highest version, -1 while no table exists."""
        return len(self.commits) - 1

    @rule("SNAPSHOT.TIME_TRAVEL")
    def target_version(self, requested: int | None) -> int | None:
        """SNAPSHOT.TIME_TRAVEL: the version a read of ``requested`` loads (default latest, -1:
        no table yet); None if the log has no such version."""
        if requested is None:
            return self.latest_version
        return requested if -1 <= requested <= self.latest_version else None

    def snapshot(self, version: int | None = None) -> Snapshot | None:
        """The state at ``version`` (default latest, :meth:`target_version`); None if absent."""
        target = self.target_version(version)
        if target is None:
            return None
        if target == -1:
            return Snapshot()
        return self._load(target)

    @rule("CHECKPOINT.READ")
    def _load(self, version: int) -> Snapshot:
        """CHECKPOINT.READ: what a reader of ``version`` loads: the content of the checkpoint it
        starts from (the newest at or below it) plus the commits after it, the fold when that
        checkpoint holds it."""
        start = self._start(version)
        if start is None:
            return self.snapshots[version]
        return replay(self.commits[start + 1 : version + 1], start=self.checkpoint_states[start])

    def _start(self, version: int) -> int | None:
        """The checkpoint a read of ``version`` starts from (the newest at or below it), when
        it holds less than the fold of its version; else None."""
        if not self.checkpoint_states:
            return None
        newest = max((c for c in self.checkpoints if c <= version), default=None)
        return newest if newest in self.checkpoint_states else None

    @rule("LOG.PUT_IF_ABSENT", "LOG.ATOMIC_VISIBILITY", "LOG.CONTIGUITY")
    def write_new(self, version: int, actions: tuple[Action, ...], timestamp: int) -> Log | None:
        """LOG.PUT_IF_ABSENT / LOG.ATOMIC_VISIBILITY: write ``version`` only if it is new (as
        the impl's ``LogStore.write_new``): the whole commit lands, or None when ``version``
        exists already; a version past the next one is a gap (LOG.CONTIGUITY), refused."""
        if version <= self.latest_version:
            return None
        if version != self.latest_version + 1:
            raise ValueError(f"version {version} would leave a gap after {self.latest_version}")
        commit = Commit(version, actions, timestamp)
        previous = self.snapshots[-1] if self.snapshots else Snapshot()
        return replace(
            self,
            commits=(*self.commits, commit),
            snapshots=(*self.snapshots, apply_commit(previous, commit)),
        )

    @rule("CHECKPOINT.COMMITTED_VERSION")
    def checkpoint_version(self, version: int, now: int | None = None) -> Log:
        """CHECKPOINT.COMMITTED_VERSION: the log with a checkpoint of ``version``, whatever
        versions came after it. Written at ``now``, it is the one reads of ``version`` and later
        start from, holding what a reader of ``version`` loads less what had expired at ``now``
        (CHECKPOINT.CONTENTS); None: one that exists keeps its content, a new one holds what a
        reader of ``version`` loads."""
        if not 0 <= version <= self.latest_version:
            raise ValueError(f"no version {version} to checkpoint")
        read = self._load(version)
        states = dict(self.checkpoint_states)
        if now is not None or version not in self.checkpoints:
            content = read if now is None else checkpointed(read, now)
            states[version] = content
            if content is self.snapshots[version]:
                del states[version]
        return replace(
            self,
            checkpoints=tuple(sorted({*self.checkpoints, version})),
            checkpoint_states=MappingProxyType(states),
        )

    def cleaned_up_to(self, start: int) -> Log:
        """The log after cleanup deleted every commit below ``start`` (RETENTION.LOG)."""
        return replace(self, log_start=max(self.log_start, start))


@rule("TXN.READ_VERSION_RETAINED")
def read_version_retained(attempt_version: int, log_start: int) -> bool:
    """TXN.READ_VERSION_RETAINED: a commit attempt at ``attempt_version`` may be written only
    while the commit before it is still listed; once log cleanup removed it, the attempt
    version itself may be gone, and a commit written there is seen by no reader."""
    return attempt_version == 0 or attempt_version - 1 >= log_start


@rule("LOG.COMPACTION")
def compacted_deltas_for_segment(
    start: int,
    target: int,
    commits: Sequence[int],
    compactions: Sequence[tuple[int, int]],
) -> tuple[tuple[int, int], ...]:
    """LOG.COMPACTION: what replays versions ``start + 1 .. target``, as ranges — ``(x, y)``
    for a log compaction file used in place of commits ``x..y``, ``(v, v)`` for a commit.

    Files are taken in name order: ``<x>.<y>.compacted.json`` sorts before ``<x>.json`` and
    before a longer compaction from the same ``x``. A file is kept when it starts above the
    highest version kept so far (first ``start``) and ends at or before ``target``; the kept
    files are used only if they cover ``start + 1 .. target`` exactly once, else the commits
    alone. Commits must exist whether or not a compaction covers them (LOG.CONTIGUITY).
    """
    wanted = tuple(range(start + 1, target + 1))
    singles = tuple((v, v) for v in wanted)

    def name(r: tuple[int, int]) -> str:
        return f"{r[0]:020d}.json" if r[0] == r[1] else f"{r[0]:020d}.{r[1]:020d}.compacted.json"

    kept: list[tuple[int, int]] = []
    for unit in sorted({*compactions, *((v, v) for v in commits)}, key=name):
        if (kept[-1][1] if kept else start) < unit[0] and unit[1] <= target:
            kept.append(unit)
    covered = tuple(v for first, last in kept for v in range(first, last + 1))
    return tuple(kept) if compactions and covered == wanted else singles


def _compaction_key(action: Action) -> tuple[object, ...] | None:
    """What one action of a run is reconciled by: the protocol, the metadata, an app id, a
    domain, a file key (SNAPSHOT.FILE_KEY); None for what a compaction file leaves out."""
    if isinstance(action, Protocol | Metadata):
        return (type(action).__name__,)
    if isinstance(action, SetTransaction):
        return ("txn", action.app_id)
    if isinstance(action, DomainMetadata):
        return ("domain", action.domain)
    if isinstance(action, AddFile | RemoveFile):
        return ("file", canonical_path(action.path), action.dv_id)
    return None


def compacted_actions(commits: Sequence[Commit]) -> tuple[Action, ...]:
    """LOG.COMPACTION: what a log compaction file of ``commits`` (``x..y``, in order) holds, the
    reconciled actions of the run: the last protocol and metadata, the last ``txn`` per app id,
    the last ``domainMetadata`` per domain (a removal too: it removes a domain set before ``x``),
    and per file key its last ``add`` or ``remove`` (a file added and removed in the run stays a
    tombstone); no ``commitInfo`` and no ``cdc``. Replayed after version ``x - 1`` it gives the
    state of version ``y`` (SNAPSHOT.RECONCILE)."""
    kept: dict[tuple[object, ...], Action] = {}
    for commit in commits:
        for action in commit.actions:
            key = _compaction_key(action)
            if key is not None:
                kept.pop(key, None)
                kept[key] = action
    return tuple(kept.values())


class TimestampOutOfRange(ValueError):
    """A timestamp before the first listed commit, or after the latest; ``kind`` names which."""

    def __init__(self, kind: str, timestamp: int) -> None:
        super().__init__(f"{kind}: {timestamp}")
        self.kind = kind


def version_at_timestamp(commit_times: Mapping[int, int], timestamp: int) -> int:
    """Time travel by timestamp: the last listed version committed at or before ``timestamp``.

    ``commit_times`` maps each listed commit to its file's time; in version order a time not
    later than the previous one counts as the previous + 1 ms (commit times then increase
    strictly). A timestamp before the first commit or after the latest raises
    ``TimestampOutOfRange`` (``TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION``,
    ``TIMESTAMP_GREATER_THAN_COMMIT``)."""
    adjusted: dict[int, int] = {}
    previous: int | None = None
    for version in sorted(commit_times):
        moment = commit_times[version]
        if previous is not None and moment <= previous:
            moment = previous + 1
        adjusted[version] = previous = moment
    earlier = [v for v, t in adjusted.items() if t <= timestamp]
    if not earlier:
        raise TimestampOutOfRange("TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION", timestamp)
    if timestamp > adjusted[max(adjusted)]:
        raise TimestampOutOfRange("TIMESTAMP_GREATER_THAN_COMMIT", timestamp)
    return max(earlier)
