"""Commit timestamps and time travel by timestamp (SNAPSHOT.TIME_TRAVEL).

A commit's timestamp is its in-commit timestamp when the table has them, else its file's
modification time; file times are made strictly increasing in version order (delta-spark's
DeltaHistoryManager adjusts a time that is not later than its predecessor's to that plus one ms).
"""

from __future__ import annotations

from deltaspec.impl.actions import CommitInfo
from deltaspec.impl.errors import DeltaError
from deltaspec.impl.snapshot import DeltaLog


class TimestampEarlierThanCommitRetentionError(DeltaError):
    error_class = "DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"
    kind = "TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"


class TimestampGreaterThanCommitError(DeltaError):
    error_class = "DELTA_TIMESTAMP_GREATER_THAN_COMMIT"
    kind = "TIMESTAMP_GREATER_THAN_COMMIT"


def commit_timestamps(log: DeltaLog) -> dict[int, int]:
    """Version -> commit timestamp (ms) of every commit file in the log."""
    listing = log.list_log(None)
    in_commit = log.snapshot().properties.in_commit_timestamps
    times: dict[int, int] = {}
    previous: int | None = None
    for version in sorted(listing.commits):
        moment = listing.commits[version].modification_time
        if in_commit:
            info = next((a for a in log.read_commit(version) if isinstance(a, CommitInfo)), None)
            ict = info.get("inCommitTimestamp") if info else None
            if isinstance(ict, int) and not isinstance(ict, bool):
                moment = ict
        elif previous is not None and moment <= previous:
            moment = previous + 1
        times[version] = previous = moment
    return times


def version_at(log: DeltaLog, timestamp_ms: int) -> int:
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
