"""The committing transaction as the conflict checks and the row-tracking rebase see it
(CONFLICT.PER_WINNER, ROWTRACKING.REBASE)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..actions import Action, DomainMetadata, Metadata, Protocol, RemoveFile
from .read_set import ReadSet

ROW_TRACKING_DOMAIN = "delta.rowTracking"


@dataclass(frozen=True)
class CurrentTransactionInfo:
    """The committing transaction as the checks see it (protocol and metadata get rebased)."""

    table: str
    read_protocol: Protocol | None
    read_metadata: Metadata | None
    reads: ReadSet
    actions: tuple[Action, ...]
    isolation_level: str | None
    is_blind_append: bool
    protocol: Protocol | None
    metadata: Metadata | None
    row_id_high_water_mark: int = -1
    """The row-id high-water mark the row ids were assigned from (ROWTRACKING.REBASE)."""

    @cached_property
    def metadata_changed(self) -> bool:
        return any(isinstance(a, Metadata) for a in self.actions)

    @cached_property
    def commits_protocol(self) -> bool:
        return any(isinstance(a, Protocol) for a in self.actions)

    @cached_property
    def removed(self) -> dict[str, RemoveFile]:
        return {a.path: a for a in self.actions if isinstance(a, RemoveFile)}

    @cached_property
    def domains(self) -> frozenset[str]:
        return frozenset(
            a.domain
            for a in self.actions
            if isinstance(a, DomainMetadata) and a.domain != ROW_TRACKING_DOMAIN
        )
