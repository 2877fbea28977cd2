"""What the prepare rules (TXN.*) and the row-id assignment (ROWTRACKING.*) see of a
transaction before its first attempt."""

from __future__ import annotations

from dataclasses import dataclass

from .. import errors
from ..actions import Metadata, Protocol
from ..snapshot.state import Snapshot


@dataclass(frozen=True)
class Preparing:
    """What the prepare rules see of a transaction: its table, the version its first attempt
    writes, the snapshot it read (None: the table does not exist yet) and its operation."""

    table: str
    version: int
    snapshot: Snapshot | None
    operation_name: str

    @property
    def read_protocol(self) -> Protocol | None:
        return None if self.snapshot is None else self.snapshot.protocol

    @property
    def read_metadata(self) -> Metadata | None:
        return None if self.snapshot is None else self.snapshot.metadata

    def invalid(self, kind: type[errors.CommitValidationError], message: str) -> errors.DeltaError:
        return kind(message, table=self.table, version=self.version)
