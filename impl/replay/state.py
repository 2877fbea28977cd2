"""The state of a replay in progress (SNAPSHOT.REPLAY)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from deltaspec.rules import rule

from ..actions import Action, DomainMetadata, Metadata, Protocol, SetTransaction
from .layouts import FILES_SCHEMA, TOMBSTONES_SCHEMA

__all__ = ["ReplayState"]


@dataclass
class ReplayState:
    """The mutable state of a replay in progress (SNAPSHOT.REPLAY)."""

    protocol: Protocol | None = None
    metadata: Metadata | None = None
    txns: dict[str, SetTransaction] = field(default_factory=dict)
    domains: dict[str, DomainMetadata] = field(default_factory=dict)
    files: pa.Table = field(default_factory=FILES_SCHEMA.empty_table)
    tombstones: pa.Table = field(default_factory=TOMBSTONES_SCHEMA.empty_table)
    protocol_origin: tuple[int | None, str | None] = (None, None)
    """The version and file the current protocol was read from (for errors)."""
    cacheable: bool = True
    """False when the state came from files a listing does not show (v2 checkpoint sidecars):
    :class:`DeltaLog` then never reuses it, so their disappearance is always noticed."""

    def copy(self) -> ReplayState:
        """A copy that a replay may mutate (the Arrow tables are immutable and shared)."""
        return ReplayState(
            self.protocol,
            self.metadata,
            dict(self.txns),
            dict(self.domains),
            self.files,
            self.tombstones,
            self.protocol_origin,
            self.cacheable,
        )

    def apply_non_file(self, action: Action) -> None:
        """The latest protocol and metadata win (SNAPSHOT.PROTOCOL_METADATA), as do the latest
        ``txn`` per app id (:meth:`apply_app_txn`) and the latest domain metadata per domain
        (:meth:`apply_domain_metadata`)."""
        if isinstance(action, Protocol):
            self.protocol = action
        elif isinstance(action, Metadata):
            self.metadata = action
        elif isinstance(action, SetTransaction):
            self.apply_app_txn(action)
        elif isinstance(action, DomainMetadata):
            self.apply_domain_metadata(action)

    @rule("SNAPSHOT.APP_TXN")
    def apply_app_txn(self, action: SetTransaction) -> None:
        """The latest ``txn`` per app id wins, whatever its version (SNAPSHOT.APP_TXN)."""
        self.txns[action.app_id] = action

    @rule("SNAPSHOT.DOMAIN_METADATA")
    def apply_domain_metadata(self, action: DomainMetadata) -> None:
        """The latest domain metadata per domain wins; a removed domain goes
        (SNAPSHOT.DOMAIN_METADATA)."""
        if action.removed:
            self.domains.pop(action.domain, None)
        else:
            self.domains[action.domain] = action
