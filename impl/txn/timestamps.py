"""In-commit timestamps on the commit path (spec/timestamps.md: ICT.ENABLEMENT, ICT.ASSIGN,
ICT.RETRY): the first attempt's timestamp, its rebase over winners, and the commitInfo and
metadata an attempt writes (deltaspec.impl.txn.prepared_commit encodes them per attempt)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from deltaspec.rules import rule

from ..actions import Action, CommitInfo, Metadata
from ..snapshot.delta_log import DeltaLog
from ..snapshot.state import Snapshot
from ..table.properties import TableProperties
from ..table.releases import Profile

ENABLEMENT_VERSION = "delta.inCommitTimestampEnablementVersion"
ENABLEMENT_TIMESTAMP = "delta.inCommitTimestampEnablementTimestamp"


def in_commit_timestamps_enabled(metadata: Metadata | None, profile: Profile) -> bool:
    """ICT.ENABLEMENT: ``delta.enableInCommitTimestamps`` is true in ``metadata``."""
    if metadata is None or not profile.has("in_commit_timestamps"):
        return False
    return TableProperties(metadata.configuration).in_commit_timestamps


def enables_in_commit_timestamps(
    metadata: Metadata | None, read: Snapshot | None, profile: Profile
) -> bool:
    """ICT.ENABLEMENT: the committed metadata has the feature on and the read snapshot (if any)
    has it off."""
    before = read is not None and in_commit_timestamps_enabled(read.metadata, profile)
    return in_commit_timestamps_enabled(metadata, profile) and not before


@rule("ICT.ASSIGN")
def first_in_commit_timestamp(
    metadata: Metadata | None, read: Snapshot | None, now: int, profile: Profile
) -> int | None:
    """ICT.ASSIGN: max(now, the read version's timestamp + 1) when the committed metadata has the
    feature on (a new table: now); None without it."""
    if not in_commit_timestamps_enabled(metadata, profile):
        return None
    return now if read is None else max(now, read.timestamp + 1)


@rule("ICT.RETRY")
def rebased_in_commit_timestamp(
    own: int, log: DeltaLog, winner_version: int, winner: Sequence[Action], enables: bool
) -> int:
    """ICT.RETRY: max(own, the winner's timestamp + 1); the winner's in-commit timestamp, or its
    file's modification time when this transaction enables the feature (or it has none)."""
    info = next((a for a in winner if isinstance(a, CommitInfo)), None)
    moment = info.get("inCommitTimestamp") if info is not None and not enables else None
    if not isinstance(moment, int) or isinstance(moment, bool):
        listing = log.list_log(None)
        found = listing.commits.get(winner_version)
        moment = found.modification_time if found is not None else own
    return max(own, moment + 1)


@rule("ICT.ENABLEMENT")
def with_enablement_info(metadata: Metadata, version: int, timestamp: int) -> Metadata:
    """ICT.ENABLEMENT: the metadata of a commit that turns the feature on at ``version`` > 0
    records the enablement version and timestamp."""
    if version == 0:
        return metadata
    configuration = {
        **metadata.configuration,
        ENABLEMENT_VERSION: str(version),
        ENABLEMENT_TIMESTAMP: str(timestamp),
    }
    return dataclasses.replace(metadata, configuration=configuration)


def stamped(info: CommitInfo, timestamp: int | None) -> CommitInfo:
    """The commitInfo with ``inCommitTimestamp`` (first, as delta-spark writes it) set."""
    if timestamp is None:
        return info
    rest = {k: v for k, v in info.fields.items() if k != "inCommitTimestamp"}
    return CommitInfo({"inCommitTimestamp": timestamp, **rest})
