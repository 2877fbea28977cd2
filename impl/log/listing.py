"""One listing of ``_delta_log``: its commits and its complete checkpoints by version
(LOG.LISTING, CHECKPOINT.READ, LOG.CONTIGUITY).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from deltaspec.rules import rule

from ..errors import MissingVersionsError
from .last_checkpoint import read_last_checkpoint
from .names import (
    CheckpointKind,
    commit_name,
    parse_checkpoint_name,
    parse_commit_name,
    parse_compaction_name,
)
from .store import FileInfo, LogStore

__all__ = [
    "CheckpointFiles",
    "LogListing",
    "compacted_deltas_for_segment",
    "list_log",
    "listing_for",
]

_KIND_ORDER = {"classic": 0, "v2": 1, "multi-part": 2}


@dataclass(frozen=True, slots=True)
class CheckpointFiles:
    """One complete checkpoint found by listing (CHECKPOINT.READ)."""

    version: int
    kind: CheckpointKind
    files: tuple[FileInfo, ...]

    @property
    def size_in_bytes(self) -> int:
        return sum(f.size for f in self.files)


def _complete_checkpoints(files: Sequence[FileInfo]) -> dict[int, tuple[CheckpointFiles, ...]]:
    """The complete checkpoints among ``files`` by version, classic first, then v2, then
    multi-part (CHECKPOINT.READ): zero-length files are ignored, and so is a multi-part
    checkpoint with a part missing."""
    found: dict[int, list[CheckpointFiles]] = {}
    parts: dict[tuple[int, int], dict[int, FileInfo]] = {}
    for info in files:
        name = parse_checkpoint_name(info.name)
        if name is None or info.size <= 0:
            continue
        if name.kind != "multi-part":
            found.setdefault(name.version, []).append(
                CheckpointFiles(name.version, name.kind, (info,))
            )
        elif 1 <= name.part <= name.parts:
            parts.setdefault((name.version, name.parts), {})[name.part] = info
    for (version, total), present in parts.items():
        if len(present) == total:
            ordered = tuple(present[i] for i in range(1, total + 1))
            found.setdefault(version, []).append(CheckpointFiles(version, "multi-part", ordered))
    return {
        v: tuple(sorted(cps, key=lambda c: (_KIND_ORDER[c.kind], c.files[0].name)))
        for v, cps in found.items()
    }


@dataclass(frozen=True)
class LogListing:
    """What one listing of ``_delta_log`` shows: commits and complete checkpoints by version.

    ``full`` tells whether the listing started at the beginning of the log or at the hinted
    checkpoint (then earlier files are simply not known).
    """

    files: tuple[FileInfo, ...]
    commits: dict[int, FileInfo]
    checkpoints: dict[int, tuple[CheckpointFiles, ...]]
    full: bool
    compactions: dict[tuple[int, int], FileInfo] = field(default_factory=dict)
    """Non-empty log compaction files by the commit range they cover (LOG.COMPACTION)."""

    @classmethod
    def of(cls, files: Sequence[FileInfo], *, full: bool) -> LogListing:
        commits: dict[int, FileInfo] = {}
        compactions: dict[tuple[int, int], FileInfo] = {}
        for info in files:
            version = parse_commit_name(info.name)
            if version is not None:
                commits[version] = info
            elif (covered := parse_compaction_name(info.name)) is not None and info.size > 0:
                compactions[covered] = info
        return cls(tuple(files), commits, _complete_checkpoints(files), full, compactions)

    def replay_units(self, start: int, target: int) -> list[tuple[int, int]]:
        """The commit ranges to replay after ``start`` up to ``target`` (LOG.COMPACTION): a
        log compaction file's ``(x, y)`` where delta-spark would use one, ``(v, v)`` for a
        commit. Call after :meth:`require_commits`."""
        return compacted_deltas_for_segment(
            start, target, list(self.commits), list(self.compactions)
        )

    @property
    def latest_version(self) -> int:
        """The newest version the listing shows (commit or checkpoint), -1 if none."""
        return max([*self.commits, *self.checkpoints], default=-1)

    @property
    def earliest_version(self) -> int | None:
        """The oldest version that can be reconstructed from this listing (SNAPSHOT.TIME_TRAVEL).

        Version 0 if its commit exists, else the oldest complete checkpoint; None if neither.
        """
        starts = [*self.checkpoints, *([0] if 0 in self.commits else [])]
        return min(starts, default=None)

    @rule("LOG.CONTIGUITY")
    def require_commits(self, start: int, target: int, table: str) -> None:
        """LOG.CONTIGUITY: every commit in ``start + 1 .. target`` is listed; the work is
        proportional to the listed commits, not to the version numbers (a stray
        ``99999999999999999999.json`` costs one comparison, not a list of every missing
        version)."""
        expected = start + 1
        for version in sorted(v for v in self.commits if start < v <= target):
            if version != expected:
                break
            expected += 1
        else:
            if expected > target:
                return
        where = "version 0" if start < 0 else f"checkpoint {start}"
        raise MissingVersionsError(
            f"versions not contiguous: commit {expected} is missing between {where} "
            f"and version {target}",
            table=table,
            version=expected,
            file=commit_name(expected),
        )


@rule("LOG.COMPACTION")
def compacted_deltas_for_segment(
    start: int, target: int, commits: Sequence[int], compactions: Sequence[tuple[int, int]]
) -> list[tuple[int, int]]:
    """What replays versions ``start + 1 .. target`` (LOG.COMPACTION): ranges ``(x, y)`` in
    order, a compaction file where one is used and ``(v, v)`` for a single commit.

    In name order (compaction ``x.y`` before commit ``x``, shorter before longer), keep each
    unit that starts above the highest version kept so far and ends at or before ``target``;
    use the kept units only if they cover ``start + 1 .. target`` exactly, else the commits
    alone. The commits must all exist (LOG.CONTIGUITY): a compaction file never stands in for
    a missing commit.
    """
    singles = [(v, v) for v in range(start + 1, target + 1)]
    if not compactions:
        return singles
    ordered = sorted(
        [*compactions, *((v, v) for v in commits)], key=lambda r: (r[0], r[0] == r[1], r[1])
    )
    kept: list[tuple[int, int]] = []
    highest = start
    for first, last in ordered:
        if highest < first and last <= target:
            kept.append((first, last))
            highest = last
    covered = [v for first, last in kept for v in range(first, last + 1)]
    return kept if covered == list(range(start + 1, target + 1)) else singles


def list_log(store: LogStore, hint: int | None = None) -> LogListing:
    """List ``_delta_log`` once, from the hinted checkpoint version on if given."""
    if hint is None:
        return LogListing.of(store.list_from(""), full=True)
    return LogListing.of(store.list_from(f"{hint:020d}"), full=False)


def listing_for(store: LogStore, target: int | None) -> LogListing:
    """A listing that holds a usable start for ``target`` (CHECKPOINT.READ steps 1-3): from the
    ``_last_checkpoint`` hint on when it names a listed checkpoint at or below ``target``, else
    the whole log."""
    hint_file = read_last_checkpoint(store)
    hint = None if hint_file is None else int(hint_file["version"])
    if hint is not None and (target is None or hint <= target):
        listing = list_log(store, hint)
        limit = listing.latest_version if target is None else target
        if any(v <= limit for v in listing.checkpoints):
            return listing
        # dangling or corrupt hint: look at the whole log
    return list_log(store, None)
