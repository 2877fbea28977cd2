"""Release profiles: which rule set a delta-spark release runs (spec/README.md).

A profile is derived from a release number; which release has which behaviour is read from
spec/data/releases.json (``Profile.has``), the one source the impl reads too.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from deltaspec.releases_table import behaviours, latest_release, parse_release

Release = tuple[int, int, int]
LATEST: Release = latest_release()


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


@dataclass(frozen=True)
class Profile:
    """The behaviour of one delta-spark release, plus the session confs the spec models."""

    release: Release = LATEST
    max_commit_attempts: int = 10_000_000
    skip_recording_empty_commits: bool = True

    def since(self, major: int, minor: int, patch: int = 0) -> bool:
        return self.release >= (major, minor, patch)

    def has(self, behaviour: str) -> bool:
        """Whether this release has ``behaviour`` (a name in spec/data/releases.json)."""
        return behaviours()[behaviour].holds_in(self.release)

    @property
    def check_order(self) -> CheckOrder:
        if not self.has("retries"):
            return CheckOrder.ANY_COMMIT
        if not self.has("fine_grained_conflicts"):
            return CheckOrder.LEGACY_WRITE
        return CheckOrder.CHEAP_FIRST if self.has("cheap_checks_first") else CheckOrder.FILES_FIRST

    @property
    def isolation_rule(self) -> IsolationRule:
        if not self.has("fine_grained_conflicts"):
            return IsolationRule.NONE
        return IsolationRule.V12 if self.has("downgrade_v12") else IsolationRule.V05

    @property
    def bounded_retries(self) -> bool:
        """RETRY.MAX_ATTEMPTS (v0.8.0+) vs RETRY.UNBOUNDED."""
        return self.has("bounded_retries")


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
