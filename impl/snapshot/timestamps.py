"""Commit timestamps on the read side (SNAPSHOT.REPLAY, ICT.TIME_TRAVEL).

A commit's timestamp is its in-commit timestamp when the table has them, else its file's
modification time. A snapshot carries the timestamp of its own version
(:func:`version_timestamp`); time travel by timestamp asks for every version's
(:func:`commit_timestamps`), with file times made strictly increasing in version order
(delta-spark's DeltaHistoryManager adjusts a time that is not later than its predecessor's to
that plus one ms). The commit path's in-commit timestamps are deltaspec.impl.txn.timestamps.
"""

from __future__ import annotations

from deltaspec.rules import rule

from ..actions import Action, CommitInfo, Metadata
from ..errors import DeltaError
from ..log.listing import CheckpointFiles, LogListing
from ..table.properties import TableProperties
from .log_reader import LogReader

__all__ = ["ENABLEMENT_VERSION", "commit_timestamps", "version_timestamp"]

ENABLEMENT_VERSION = "delta.inCommitTimestampEnablementVersion"


def version_timestamp(
    log: LogReader,
    listing: LogListing,
    version: int,
    metadata: Metadata,
    actions: list[Action] | None,
    cp: CheckpointFiles | None,
) -> int:
    """The timestamp of a snapshot of ``version`` (SNAPSHOT.REPLAY): the in-commit timestamp of
    its commit (from ``actions``, the commit's actions if the replay read them, else read from
    ``log``) when ``metadata`` enables them, else the commit file's modification time as
    ``listing`` shows it (the checkpoint's, ``cp``, when the commit is not listed; 0 without
    either)."""
    if TableProperties(metadata.configuration).in_commit_timestamps:
        if actions is None and version in listing.commits:
            try:
                actions = log.read_commit(version)
            except DeltaError:
                actions = None
        for action in actions or ():
            if isinstance(action, CommitInfo):
                ict = action.get("inCommitTimestamp")
                if isinstance(ict, int) and not isinstance(ict, bool):
                    return ict
    info = listing.commits.get(version)
    if info is not None:
        return info.modification_time
    return cp.files[0].modification_time if cp is not None else 0


@rule("ICT.TIME_TRAVEL")
def commit_timestamps(log: LogReader) -> dict[int, int]:
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


def _in_commit_timestamp(log: LogReader, version: int) -> int | None:
    info = next((a for a in log.read_commit(version) if isinstance(a, CommitInfo)), None)
    ict = info.get("inCommitTimestamp") if info else None
    return ict if isinstance(ict, int) and not isinstance(ict, bool) else None
