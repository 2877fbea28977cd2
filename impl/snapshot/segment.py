"""A log segment: the files one snapshot is replayed from, as one listing shows them.

A listing of ``_delta_log`` (:mod:`deltaspec.impl.log.listing`) resolves, for the version a load
targets (SNAPSHOT.TIME_TRAVEL, :mod:`deltaspec.impl.snapshot.time_travel`), to a start and the
commits after it: the start is the newest complete checkpoint at or below the target that can
be read (CHECKPOINT.READ), else commit 0, and every commit after the start up to the target must
be listed (LOG.CONTIGUITY). A segment is a value: a listed file never changes
(LOG.PUT_IF_ABSENT), so two loads that list the same segment build the same snapshot, which is
what lets a log reuse the snapshot it kept (:mod:`deltaspec.impl.snapshot.cache`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import MissingVersionsError, TableNotFoundError
from ..log.listing import CheckpointFiles, LogListing
from ..log.names import commit_name
from ..log.store import FileInfo
from ..replay.checkpoint_reader import UnusableCheckpoint

__all__ = [
    "LogSegment",
    "checkpoint_starts",
    "commit_zero_segment",
    "listed_commits",
    "newest_start",
]


@dataclass(frozen=True)
class LogSegment:
    """The files a snapshot of ``version`` is replayed from, as a listing shows them: the
    checkpoint it starts at (None: it starts before commit 0) and the commit file of each
    version after the start up to ``version`` (None where the listing shows no file for a
    version, e.g. one a compaction file replayed)."""

    version: int
    start: CheckpointFiles | None
    commits: dict[int, FileInfo | None]

    @property
    def first(self) -> int:
        """The version the segment's commits follow: its checkpoint's, or -1."""
        return -1 if self.start is None else self.start.version

    @classmethod
    def listed(cls, listing: LogListing, start: CheckpointFiles | None, version: int) -> LogSegment:
        """The segment of ``version`` from ``start`` as ``listing`` shows it."""
        first = -1 if start is None else start.version
        return cls(version, start, listed_commits(listing, first, version))


def listed_commits(listing: LogListing, first: int, target: int) -> dict[int, FileInfo | None]:
    """The commit files of versions ``first + 1 .. target`` as ``listing`` shows them."""
    return {v: listing.commits.get(v) for v in range(first + 1, target + 1)}


def checkpoint_starts(
    listing: LogListing, target: int, failed: dict[str, BaseException]
) -> list[CheckpointFiles]:
    """The complete checkpoints at or below ``target`` a load may start from, newest first,
    without those whose first file is in ``failed`` (CHECKPOINT.READ)."""
    return [
        cp
        for v in sorted((v for v in listing.checkpoints if v <= target), reverse=True)
        for cp in listing.checkpoints[v]
        if cp.files[0].name not in failed
    ]


def newest_start(listing: LogListing, target: int) -> CheckpointFiles | None:
    """Where a cold load of ``target`` starts when it can read it: the newest complete
    checkpoint ``listing`` shows at or below ``target`` (None: there is none)."""
    return next(
        (cps[0] for v, cps in sorted(listing.checkpoints.items(), reverse=True) if v <= target),
        None,
    )


def commit_zero_segment(
    listing: LogListing, target: int, failed: dict[str, BaseException], table: str
) -> LogSegment:
    """The segment of ``target`` from commit 0, when no checkpoint at or below it could be read
    (``failed``: why each listed one could not). Older checkpoints and commit 0 are only in a
    full listing: from a partial one, UnusableCheckpoint (the log is listed again, whole). A log
    without commit 0 raises the first checkpoint's error, or MissingVersionsError when there was
    none; a gap after commit 0 is MissingVersionsError too (LOG.CONTIGUITY)."""
    errors = list(failed.values())
    if not listing.full:
        # older checkpoints and commit 0 are only in a full listing
        raise UnusableCheckpoint(errors[0] if errors else TableNotFoundError("no start"))
    if 0 not in listing.commits:
        if errors:
            raise errors[0]
        raise MissingVersionsError(
            "the log is truncated: no checkpoint and no commit 0 to start from "
            f"(earliest commit {min(listing.commits, default=None)})",
            table=table,
            version=target,
            file=commit_name(0),
        )
    listing.require_commits(-1, target, table)
    return LogSegment.listed(listing, None, target)
