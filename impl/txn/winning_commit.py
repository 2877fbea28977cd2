"""A commit that landed after the transaction's read version, as the conflict checks read it
(CONFLICT.PER_WINNER): its actions sorted once into adds, removes and the others."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..actions import (
    Action,
    AddFile,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)


@dataclass(frozen=True)
class WinningCommit:
    version: int
    actions: tuple[Action, ...]

    @cached_property
    def _sorted(self) -> tuple[list[AddFile], list[RemoveFile], list[Action]]:
        """The adds, the removes and the other actions, in file order: one pass over a commit
        that may hold many thousands of file actions."""
        added: list[AddFile] = []
        removed: list[RemoveFile] = []
        others: list[Action] = []
        for action in self.actions:
            if isinstance(action, AddFile):
                added.append(action)
            elif isinstance(action, RemoveFile):
                removed.append(action)
            else:
                others.append(action)
        return added, removed, others

    @cached_property
    def commit_info(self) -> dict[str, Any] | None:
        info = next((a for a in self._sorted[2] if isinstance(a, CommitInfo)), None)
        return None if info is None else {**info.fields, "version": self.version}

    @cached_property
    def added(self) -> list[AddFile]:
        return self._sorted[0]

    @cached_property
    def removed(self) -> list[RemoveFile]:
        return self._sorted[1]

    @cached_property
    def metadata(self) -> Metadata | None:
        return next((a for a in self._sorted[2] if isinstance(a, Metadata)), None)

    @cached_property
    def protocol(self) -> Protocol | None:
        return next((a for a in self._sorted[2] if isinstance(a, Protocol)), None)

    @cached_property
    def app_ids(self) -> frozenset[str]:
        return frozenset(a.app_id for a in self._sorted[2] if isinstance(a, SetTransaction))

    @cached_property
    def domains(self) -> frozenset[str]:
        return frozenset(a.domain for a in self._sorted[2] if isinstance(a, DomainMetadata))

    @property
    def is_blind_append(self) -> bool:
        return bool(self.commit_info and self.commit_info.get("isBlindAppend") is True)

    @property
    def operation(self) -> str:
        return str((self.commit_info or {}).get("operation", "TRANSACTION"))
