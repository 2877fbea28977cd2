"""A commit that landed after the transaction's read version, as the conflict checks and the
row-tracking rebase read it (CONFLICT.PER_WINNER)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .actions import (
    Action,
    AddFile,
    Commit,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
    is_file_action,
)


@dataclass(frozen=True)
class WinningCommit:
    """A commit that landed after the transaction's read version."""

    version: int
    actions: tuple[Action, ...]

    @classmethod
    def of(cls, commit: Commit) -> WinningCommit:
        return cls(commit.version, commit.actions)

    def _all(self, kind: type[Any]) -> tuple[Any, ...]:
        return tuple(a for a in self.actions if isinstance(a, kind))

    @property
    def protocol(self) -> Protocol | None:
        return next(iter(self._all(Protocol)), None)

    @property
    def metadata_updates(self) -> tuple[Metadata, ...]:
        return self._all(Metadata)

    @property
    def app_txns(self) -> tuple[SetTransaction, ...]:
        return self._all(SetTransaction)

    @property
    def domains(self) -> tuple[DomainMetadata, ...]:
        return self._all(DomainMetadata)

    @property
    def added_files(self) -> tuple[AddFile, ...]:
        return self._all(AddFile)

    @property
    def removed_files(self) -> tuple[RemoveFile, ...]:
        return self._all(RemoveFile)

    @property
    def is_blind_append(self) -> bool:
        """Only a commitInfo saying ``isBlindAppend: true`` makes a blind append."""
        info: CommitInfo | None = next(iter(self._all(CommitInfo)), None)
        return info is not None and info.is_blind_append is True

    @property
    def has_file_actions(self) -> bool:
        return any(is_file_action(a) for a in self.actions)
