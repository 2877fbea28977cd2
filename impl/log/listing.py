"""One listing of ``_delta_log``: its commits and its complete checkpoints by version
(LOG.LISTING, CHECKPOINT.READ, LOG.CONTIGUITY).

This module never imports ``deltaspec.model``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from deltaspec.impl.errors import MissingVersionsError
from deltaspec.impl.log.last_checkpoint import read_last_checkpoint
from deltaspec.impl.log.names import (
    CheckpointKind,
    commit_name,
    parse_checkpoint_name,
    parse_commit_name,
)
from deltaspec.impl.log.store import FileInfo, LogStore
from deltaspec.rules import rule

__all__ = ["CheckpointFiles", "LogListing", "list_log", "listing_for"]

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

    @classmethod
    def of(cls, files: Sequence[FileInfo], *, full: bool) -> LogListing:
        commits: dict[int, FileInfo] = {}
        for info in files:
            version = parse_commit_name(info.name)
            if version is not None:
                commits[version] = info
        return cls(tuple(files), commits, _complete_checkpoints(files), full)

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
