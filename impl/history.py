"""Commit timestamps and time travel by timestamp (SNAPSHOT.TIME_TRAVEL).

A commit's timestamp is its in-commit timestamp when the table has them, else its file's
modification time; file times are made strictly increasing in version order (delta-spark's
DeltaHistoryManager adjusts a time that is not later than its predecessor's to that plus one ms).
"""

from __future__ import annotations

from deltaspec.impl.actions import CommitInfo
from deltaspec.impl.errors import DeltaError
from deltaspec.impl.snapshot import DeltaLog
from deltaspec.rules import rule

ENABLEMENT_VERSION = "delta.inCommitTimestampEnablementVersion"


class TimestampEarlierThanCommitRetentionError(DeltaError):
    error_class = "DELTA_TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"
    kind = "TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"


class TimestampGreaterThanCommitError(DeltaError):
    error_class = "DELTA_TIMESTAMP_GREATER_THAN_COMMIT"
    kind = "TIMESTAMP_GREATER_THAN_COMMIT"


@rule("ICT.TIME_TRAVEL")
def commit_timestamps(log: DeltaLog) -> dict[int, int]:
    """Version -> commit timestamp (ms) of every commit file in the log (ICT.TIME_TRAVEL): the
    in-commit timestamp from the enablement version on (every version when the feature is on
    without enablement properties), before it the file time made strictly increasing."""
    listing = log.list_log(None)
    properties = log.snapshot().properties
    since: int | None = None
    if properties.in_commit_timestamps:
        enabled_at = properties.configuration.get(ENABLEMENT_VERSION, "0")
        since = int(enabled_at) if enabled_at.strip().isdigit() else 0
    times: dict[int, int] = {}
    previous: int | None = None
    for version in sorted(listing.commits):
        moment = listing.commits[version].modification_time
        ict = _in_commit_timestamp(log, version) if since is not None and version >= since else None
        if ict is not None:
            moment = ict
        elif previous is not None and moment <= previous:
            moment = previous + 1
        times[version] = previous = moment
    return times


def _in_commit_timestamp(log: DeltaLog, version: int) -> int | None:
    info = next((a for a in log.read_commit(version) if isinstance(a, CommitInfo)), None)
    ict = info.get("inCommitTimestamp") if info else None
    return ict if isinstance(ict, int) and not isinstance(ict, bool) else None


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
