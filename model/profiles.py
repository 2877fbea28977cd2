"""Release profiles: which rule set a delta-spark release runs (spec/README.md).

A profile is derived from a release number; each flag names the release that
introduced the behaviour, so the table reads like the spec's release column.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

Release = tuple[int, int, int]
LATEST: Release = (4, 4, 0)


class CheckOrder(Enum):
    """Which winner checks run, and in which order."""

    ANY_COMMIT = "v0.1"  # CONFLICT.ANY_COMMIT_V01
    LEGACY_WRITE = "v0.2"  # CONFLICT.ORDER_V02
    FILES_FIRST = "v0.5"  # CONFLICT.ORDER_V05
    CHEAP_FIRST = "v3.2"  # CONFLICT.ORDER_V32


class IsolationRule(Enum):
    NONE = "none"  # ISOLATION.NONE
    V05 = "v0.5"  # ISOLATION.DOWNGRADE_V05
    V12 = "v1.2"  # ISOLATION.DOWNGRADE


def parse_release(text: str) -> Release:
    major, minor, patch = (int(part) for part in text.split("."))
    return (major, minor, patch)


@dataclass(frozen=True)
class Profile:
    """The behaviour of one delta-spark release, plus the session confs the spec models."""

    release: Release = LATEST
    max_commit_attempts: int = 10_000_000
    skip_recording_empty_commits: bool = True

    def since(self, major: int, minor: int, patch: int = 0) -> bool:
        return self.release >= (major, minor, patch)

    @property
    def check_order(self) -> CheckOrder:
        if not self.since(0, 2):
            return CheckOrder.ANY_COMMIT
        if not self.since(0, 5):
            return CheckOrder.LEGACY_WRITE
        return CheckOrder.CHEAP_FIRST if self.since(3, 2) else CheckOrder.FILES_FIRST

    @property
    def isolation_rule(self) -> IsolationRule:
        if not self.since(0, 5):
            return IsolationRule.NONE
        return IsolationRule.V12 if self.since(1, 2) else IsolationRule.V05

    @property
    def retries(self) -> bool:
        """RETRY.NONE_V01."""
        return self.since(0, 2)

    @property
    def bounded_retries(self) -> bool:
        """RETRY.MAX_ATTEMPTS (v0.8.0+) vs RETRY.UNBOUNDED."""
        return self.since(0, 8)

    @property
    def whole_table_delete_read(self) -> bool:
        """CONFLICT.DELETE_READ_WHOLE_TABLE."""
        return self.since(0, 8)

    @property
    def append_shortcuts(self) -> bool:
        """CONFLICT.APPEND_SHORTCUTS."""
        return self.since(3, 1)

    @property
    def read_time_partition_schema(self) -> bool:
        """PREDICATE.TYPING: read-time partition schema (v2.1.0+)."""
        return self.since(2, 1)

    @property
    def domain_metadata(self) -> bool:
        """CONFLICT.DOMAIN, TXN.DOMAIN_METADATA."""
        return self.since(3, 0)

    @property
    def feature_removal_conflicts(self) -> bool:
        """CONFLICT.PROTOCOL: a winner that removes features."""
        return self.since(3, 0)

    @property
    def metadata_resolution(self) -> bool:
        """CONFLICT.METADATA_RESOLUTION."""
        return self.since(4, 1)

    @property
    def empty_commit_skip(self) -> bool:
        """TXN.EMPTY_COMMIT: commitIfNeeded exists."""
        return self.since(2, 3)

    @property
    def commit_info_last(self) -> bool:
        """TXN.COMMIT_INFO: commitInfo written last in v1.1.0–v2.1.x."""
        return self.since(1, 1) and not self.since(2, 2)

    @property
    def records_isolation_level(self) -> bool:
        """ISOLATION.RECORDED."""
        return self.since(1, 1)

    @property
    def table_isolation_property(self) -> bool:
        """ISOLATION.TABLE_DEFAULT: delta.isolationLevel is read (v2.1.0+)."""
        return self.since(2, 1)

    @property
    def commit_validation(self) -> bool:
        """TXN.FIRST_COMMIT (metadata required) and TXN.PARTITION_COLUMNS, v0.7.0+."""
        return self.since(0, 7)

    @property
    def protocol_downgrade_check(self) -> bool:
        """TXN.PROTOCOL_DOWNGRADE: checked when committing since v0.8.0."""
        return self.since(0, 8)

    @property
    def set_transaction_dedup(self) -> bool:
        """TXN.SET_TRANSACTION_DEDUP."""
        return self.since(2, 1)

    @property
    def single_protocol_check(self) -> bool:
        """TXN.SINGLE_PROTOCOL."""
        return self.since(2, 3)

    @property
    def duplicate_action_check(self) -> bool:
        """TXN.DUPLICATE_ACTIONS."""
        return self.since(4, 3)


def profile(release: str | None = None, **confs: int | bool) -> Profile:
    base = Profile() if release is None else Profile(release=parse_release(release))
    if not confs:
        return base
    return Profile(
        release=base.release,
        max_commit_attempts=int(confs.get("max_commit_attempts", base.max_commit_attempts)),
        skip_recording_empty_commits=bool(
            confs.get("skip_recording_empty_commits", base.skip_recording_empty_commits)
        ),
    )
