"""The adapter interface: one small surface that every implementation under test offers.

Everything crossing it is a typed value of the scenario vectors (spec/scenarios.md), parsed
once when a vector is loaded: a table setup, a writer's reads (harness/reads.py) and staged
actions (harness/actions.py), outcomes (harness/outcomes.py) and snapshots
(harness/snapshots.py). That keeps the model, the production impl, delta-rs, the Spark path or a
program in another language interchangeable (harness/wire.py writes the values as the bridge's
JSON and reads them back), and it makes any sequence of calls a scenario vector that can be
written down and replayed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Protocol

from .actions import Action
from .outcomes import Outcome
from .reads import Read
from .snapshots import TableSnapshot

Json = dict[str, Any]


class Unsupported(Exception):
    """The adapter cannot take this step (see its ``capabilities``)."""


class Capability(Enum):
    """What an adapter can be driven with."""

    ACTIONS = "actions"
    """Action level: arbitrary reads and staged actions, committed through the commit loop."""
    COMMIT_STEPS = "commit_steps"
    """``try_write`` / ``resolve``: the commit loop one pass at a time."""
    CHECKPOINT = "checkpoint"
    TIME_TRAVEL = "time_travel"
    """``begin`` at an older version, and ``snapshot`` of any version."""
    WRITE_APPEND = "write_append"
    WRITE_OVERWRITE = "write_overwrite"
    WRITE_REPLACE_WHERE = "write_replace_where"
    DELETE = "delete"
    UPDATE = "update"
    MERGE = "merge"
    COMPACTION = "compaction"
    PROPERTY_CHANGE = "property_change"
    READ_TABLE = "read_table"
    """``read_table``: the snapshot of a table on disk (the fixtures suite and the log vectors)."""
    READ_ROWS = "read_rows"
    """``read_rows``: the rows of a table on disk (the fixtures suite's row checks)."""
    READ_TABLE_TIMESTAMP = "read_table_timestamp"
    """``read_table`` with a ``timestamp`` instead of a ``version`` (log-vectors.md)."""
    LOG_CLEANUP_BY_RETENTION = "log_cleanup_by_retention"
    """``clean_up_expired_logs``: the engine's own log cleanup by retention on a table on disk
    (the log vectors with ``clean_up_expired_logs``, log-vectors.md)."""
    LOG_CLEANUP = "log_cleanup"
    """The ``clean_up_log`` step: the log's files below a checkpointed version deleted."""
    CHECKSUMS = "checksums"
    """``checksum``: the ``<v>.crc`` a writer left (``expect_checksums``, CHECKSUM.WRITE)."""


ACTION_LEVEL = frozenset(
    {Capability.ACTIONS, Capability.CHECKPOINT, Capability.TIME_TRAVEL, Capability.COMMIT_STEPS}
)


@dataclass(frozen=True)
class TableSetup:
    """A scenario's world before its first step: release profile, session config, version 0
    (``table``, the vector's object) and unchecked setup ``commits``."""

    profile: str | None = None
    config: Json = field(default_factory=dict)
    table: Json | None = None
    commits: tuple[tuple[Action, ...], ...] = ()

    @property
    def session_settings(self) -> dict[str, Any]:
        """``config`` as the keyword arguments of a release profile."""
        names = {
            "maxCommitAttempts": "max_commit_attempts",
            "skipRecordingEmptyCommits": "skip_recording_empty_commits",
        }
        return {names[key]: value for key, value in self.config.items() if key in names}


@dataclass(frozen=True)
class WriterSpec:
    """How a writer commits: operation name, changesData override, commitIfNeeded."""

    operation: str = "WRITE"
    changes_data: bool | None = None
    commit_if_needed: bool = True

    @classmethod
    def of(cls, writer: Mapping[str, Any]) -> WriterSpec:
        return cls(
            writer.get("operation", "WRITE"),
            writer.get("changes_data"),
            writer.get("commit_if_needed", True),
        )


class Adapter(Protocol):
    """An implementation under test. Writer names are unique within one table's life.

    An outcome is ``Committed``, ``Conflict``, ``Error``, ``Skipped`` or ``Pending``; a snapshot
    is a ``TableSnapshot`` (``NO_SNAPSHOT`` for a version that cannot be read).
    """

    name: str
    capabilities: frozenset[Capability]

    def create(self, setup: TableSetup) -> None:
        """Start from ``setup``; called once, before anything else."""

    def begin(self, writer: str, spec: WriterSpec, version: int | None, now: int) -> Outcome | None:
        """Open ``writer``'s transaction on ``version`` (latest if None, no table if -1).
        Returns None, or the failed outcome when that snapshot cannot be read."""

    def read(self, writer: str, read: Read) -> None:
        """Record one element of a writer's ``reads``."""

    def stage(self, writer: str, actions: Sequence[Action], now: int) -> None:
        """Stage actions, their defaults resolved against the writer's read snapshot."""

    def commit(self, writer: str, now: int) -> Outcome:
        """Run the whole commit loop; returns the outcome."""

    def try_write(self, writer: str, now: int) -> Outcome:
        """One pass of the commit loop (``Capability.COMMIT_STEPS``)."""

    def resolve(self, writer: str) -> Outcome:
        """Check a pending collision's winners (``Capability.COMMIT_STEPS``)."""

    def checkpoint(self, version: int, now: int) -> None:
        """Write a checkpoint of ``version``."""

    def snapshot(self, version: int | None = None) -> TableSnapshot:
        """The state at ``version`` (latest if None)."""

    def checkpoints(self) -> tuple[int, ...]:
        """Versions that have a checkpoint, explicit or written after a commit."""

    def verify(self) -> list[str]:
        """Problems in what the adapter stored (non-contiguous versions, a path live twice,
        a dangling ``_last_checkpoint``…); empty when well formed."""

    def close(self) -> None:
        """Release files and other resources."""


class LogCleaner(Adapter, Protocol):
    """An adapter declaring ``Capability.LOG_CLEANUP`` (scenarios.md, the ``clean_up_log`` step)."""

    def clean_up_log(self, version: int, now: int) -> None:
        """Delete every commit, checkpoint and checksum of a version below ``version``, a
        checkpointed version: what RETENTION.LOG leaves once all older files have expired."""


class ChecksumSource(Adapter, Protocol):
    """An adapter declaring ``Capability.CHECKSUMS`` (scenarios.md, ``expect_checksums``)."""

    def checksum(self, version: int) -> Json | None:
        """The parsed ``<version>.crc`` the writer left, or None when there is none."""
