"""In-commit timestamps and version checksums (spec/timestamps.md: ICT.*, CHECKSUM.*)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from deltaspec.rules import rule

from .actions import Action, Commit, CommitInfo, Metadata
from .prepared_commit import PreparedCommit
from .profiles import Profile
from .snapshot import Snapshot

ENABLE = "delta.enableInCommitTimestamps"
ENABLEMENT_VERSION = "delta.inCommitTimestampEnablementVersion"
ENABLEMENT_TIMESTAMP = "delta.inCommitTimestampEnablementTimestamp"


def _config(metadata: Metadata | None) -> dict[str, str]:
    return dict(metadata.configuration) if metadata is not None else {}


def in_commit_timestamps_enabled(metadata: Metadata | None, profile: Profile) -> bool:
    """ICT.ENABLEMENT: the metadata turns in-commit timestamps on."""
    return (
        profile.has("in_commit_timestamps")
        and _config(metadata).get(ENABLE, "false").strip().lower() == "true"
    )


@rule("ICT.ENABLEMENT")
def with_enablement_info(
    metadata: Metadata, read_snapshot: Snapshot, version: int, timestamp: int, profile: Profile
) -> Metadata:
    """ICT.ENABLEMENT: a transaction that turns the feature on at ``version`` > 0 records the
    enablement version and timestamp in the metadata it writes."""
    enables = in_commit_timestamps_enabled(metadata, profile) and not (
        read_snapshot.version >= 0 and in_commit_timestamps_enabled(read_snapshot.metadata, profile)
    )
    if not enables or version == 0:
        return metadata
    extra = {ENABLEMENT_VERSION: str(version), ENABLEMENT_TIMESTAMP: str(timestamp)}
    kept = tuple((k, v) for k, v in metadata.configuration if k not in extra)
    return replace(metadata, configuration=(*kept, *extra.items()))


@rule("ICT.ASSIGN")
def first_in_commit_timestamp(
    metadata: Metadata | None, read_snapshot: Snapshot, now: int, profile: Profile
) -> int | None:
    """ICT.ASSIGN: max(now, the read version's timestamp + 1) when the committed metadata has the
    feature on; a new table takes ``now``; None without the feature."""
    if not in_commit_timestamps_enabled(metadata, profile):
        return None
    if read_snapshot.version < 0:
        return now
    return max(now, version_timestamp(read_snapshot, profile) + 1)


@rule("ICT.RETRY")
def rebased_in_commit_timestamp(
    own: int, winner: Commit, read_snapshot: Snapshot, profile: Profile
) -> int:
    """ICT.RETRY: after passing ``winner`` the timestamp is max(own, the winner's + 1); the
    winner's is its file time when this transaction enables the feature."""
    enabled_before = read_snapshot.version >= 0 and in_commit_timestamps_enabled(
        read_snapshot.metadata, profile
    )
    info = winner.commit_info
    if enabled_before and info is not None and info.in_commit_timestamp is not None:
        return max(own, info.in_commit_timestamp + 1)
    return max(own, winner.timestamp + 1)


def stamped(info: CommitInfo, timestamp: int | None) -> CommitInfo:
    """The commitInfo carrying ``timestamp`` as its in-commit timestamp (None: unchanged)."""
    return info if timestamp is None else replace(info, in_commit_timestamp=timestamp)


def version_timestamp(snapshot: Snapshot, profile: Profile) -> int:
    """The timestamp of ``snapshot``'s version (ICT.ASSIGN's ``t``): its in-commit timestamp
    when the feature is on there, else its commit file's time."""
    enabled = in_commit_timestamps_enabled(snapshot.metadata, profile)
    if enabled and snapshot.in_commit_timestamp is not None:
        return snapshot.in_commit_timestamp
    return snapshot.timestamp


@rule("ICT.TIME_TRAVEL")
def commit_timestamps(
    commits: Iterable[Commit], latest: Metadata | None, profile: Profile
) -> dict[int, int]:
    """ICT.TIME_TRAVEL: version -> timestamp. From the enablement version on (every version when
    the feature is on without enablement properties) the in-commit timestamp; before, the file
    time, raised to the previous timestamp + 1 when not later."""
    config = _config(latest)
    enabled = in_commit_timestamps_enabled(latest, profile)
    since = int(config.get(ENABLEMENT_VERSION, "0")) if enabled else None
    times: dict[int, int] = {}
    previous: int | None = None
    for commit in sorted(commits, key=lambda c: c.version):
        info = commit.commit_info
        if since is not None and commit.version >= since and info is not None:
            moment = info.in_commit_timestamp if info.in_commit_timestamp is not None else 0
        else:
            moment = commit.timestamp
            if previous is not None and moment <= previous:
                moment = previous + 1
        times[commit.version] = previous = moment
    return times


def version_at(times: Mapping[int, int], timestamp: int) -> int | None:
    """The last version whose timestamp is at or before ``timestamp`` (None: none is)."""
    earlier = [v for v, t in times.items() if t <= timestamp]
    return max(earlier) if earlier else None


def rebased_past(prepared: PreparedCommit, winner: Commit, profile: Profile) -> PreparedCommit:
    """``prepared`` with the commitInfo it has after passing ``winner`` (ICT.RETRY)."""
    info = prepared.commit_info
    if info.in_commit_timestamp is None:
        return prepared
    read = prepared.txn.read_snapshot
    moved = rebased_in_commit_timestamp(info.in_commit_timestamp, winner, read, profile)
    return replace(prepared, commit_info=stamped(info, moved))


def with_enablement(
    actions: tuple[Action, ...], read_snapshot: Snapshot, version: int, profile: Profile
) -> tuple[Action, ...]:
    """The actions to write at ``version``, the metadata carrying the enablement properties
    when this commit turns the feature on (ICT.ENABLEMENT)."""
    info = next((a for a in actions if isinstance(a, CommitInfo)), None)
    if info is None or info.in_commit_timestamp is None:
        return actions
    ict = info.in_commit_timestamp
    return tuple(
        with_enablement_info(a, read_snapshot, version, ict, profile)
        if isinstance(a, Metadata)
        else a
        for a in actions
    )
