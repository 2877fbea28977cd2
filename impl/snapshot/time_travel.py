"""Time travel: which version a load reads (SNAPSHOT.TIME_TRAVEL, LOG.NEW_TABLE).

By version, :func:`target_version` checks a requested version against what one listing can
reconstruct (the latest when none is requested). By timestamp, :func:`version_at` picks the
last version committed at or before it from the commit timestamps
(:func:`deltaspec.impl.snapshot.timestamps.commit_timestamps`, ICT.TIME_TRAVEL).
"""

from __future__ import annotations

import os

from deltaspec.rules import rule

from ..errors import DeltaError, TableNotFoundError, VersionNotFoundError
from ..log.listing import LogListing
from ..replay.checkpoint_reader import UnusableCheckpoint
from .log_reader import LogReader
from .timestamps import commit_timestamps

__all__ = [
    "TimestampEarlierThanCommitRetentionError",
    "TimestampGreaterThanCommitError",
    "version_at",
]


class TimestampEarlierThanCommitRetentionError(DeltaError):
    error_class = "DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"
    kind = "TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"


class TimestampGreaterThanCommitError(DeltaError):
    error_class = "DELTA_TIMESTAMP_GREATER_THAN_COMMIT"
    kind = "TIMESTAMP_GREATER_THAN_COMMIT"


@rule("SNAPSHOT.TIME_TRAVEL")
def target_version(listing: LogListing, requested: int | None, table: str) -> int:
    """The version to load: ``requested`` if the listing can reconstruct it, else the latest
    (SNAPSHOT.TIME_TRAVEL, LOG.NEW_TABLE)."""
    latest = listing.latest_version
    if latest < 0:
        if not listing.full:
            raise UnusableCheckpoint(TableNotFoundError("no table", table=table))
        where = (
            "the table root is not a directory"
            if _not_a_directory(table)
            else ("_delta_log has no commit and no checkpoint")
        )
        raise TableNotFoundError(f"no Delta table: {where}", table=table)
    target = latest if requested is None else requested
    earliest = listing.earliest_version
    if requested is not None and (target > latest or earliest is None or target < earliest):
        available = "none" if earliest is None else f"{earliest} to {latest}"
        raise VersionNotFoundError(
            f"cannot time travel to version {target}; available versions: {available}",
            table=table,
            version=target,
        )
    return target


def version_at(log: LogReader, timestamp_ms: int) -> int:
    """The last version committed at or before ``timestamp_ms`` (before the first commit or after
    the last is an error, as in delta-spark)."""
    times = commit_timestamps(log)
    earlier = [v for v, t in times.items() if t <= timestamp_ms]
    if not earlier:
        first = min(times, default=None)
        raise TimestampEarlierThanCommitRetentionError(
            f"the timestamp {timestamp_ms} is before the earliest available commit "
            f"({None if first is None else times[first]})",
            table=log.table_path,
            version=first,
        )
    latest = max(times)
    if timestamp_ms > times[latest]:
        raise TimestampGreaterThanCommitError(
            f"the timestamp {timestamp_ms} is after the latest commit ({times[latest]})",
            table=log.table_path,
            version=latest,
        )
    return max(earlier)


def _not_a_directory(path: str) -> bool:
    """``path`` exists and is something else than a directory (a regular file, a FIFO...)."""
    return os.path.lexists(path) and not os.path.isdir(path)
