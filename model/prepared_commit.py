"""A transaction prepared for its first attempt, as the conflict checks, the row-tracking rebase
and in-commit timestamps rebase it (CONFLICT.PER_WINNER)."""

from __future__ import annotations

from dataclasses import dataclass

from .actions import Action, CommitInfo, Metadata, Protocol, RemoveFile
from .isolation import IsolationLevel
from .profiles import Profile
from .transaction_state import Transaction


@dataclass(frozen=True)
class PreparedCommit:
    """A transaction ready for its first attempt; conflict checks rebase it (CONFLICT.PER_WINNER).

    ``actions`` excludes the commitInfo, which is fixed here (TXN.COMMIT_INFO_FIXED).
    """

    txn: Transaction
    actions: tuple[Action, ...]
    commit_info: CommitInfo
    isolation_level: IsolationLevel | None
    is_blind_append: bool
    protocol: Protocol | None
    metadata: Metadata | None
    row_id_high_water_mark: int = -1
    """The row-id high-water mark the row ids were assigned from (ROWTRACKING.REBASE)."""

    @property
    def metadata_changed(self) -> bool:
        return any(isinstance(a, Metadata) for a in self.actions)

    @property
    def has_protocol(self) -> bool:
        return any(isinstance(a, Protocol) for a in self.actions)

    @property
    def removed_files(self) -> tuple[RemoveFile, ...]:
        return tuple(a for a in self.actions if isinstance(a, RemoveFile))

    def file_actions(self, profile: Profile) -> tuple[Action, ...]:
        """File order: commitInfo first, or last in v1.1.0–v2.1.x (TXN.COMMIT_INFO)."""
        if profile.has("commit_info_last"):
            return (*self.actions, self.commit_info)
        return (self.commit_info, *self.actions)
