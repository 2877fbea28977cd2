"""What reading commit timestamps and time travel need of a table's log (``LogReader``):
its commits, its listing and its snapshots. :class:`~deltaspec.impl.snapshot.delta_log.DeltaLog`
is one; the readers take this protocol so that they sit below the log that calls them."""

from __future__ import annotations

from typing import Protocol

from ..actions import Action
from ..log.listing import LogListing
from .state import Snapshot

__all__ = ["LogReader"]


class LogReader(Protocol):
    """A table's log as the timestamp and time-travel readers use it."""

    @property
    def table_path(self) -> str: ...

    def read_commit(self, version: int) -> list[Action]:
        """The actions of commit ``version`` in file order."""
        ...

    def list_log(self, hint: int | None = None) -> LogListing:
        """``_delta_log`` listed once, from the hinted checkpoint version on if given."""
        ...

    def snapshot(self, version: int | None = None) -> Snapshot:
        """The snapshot at ``version`` (default: latest)."""
        ...
