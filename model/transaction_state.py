"""An open transaction's values: its operation, what it read and what it staged (TXN.*)."""

from __future__ import annotations

from dataclasses import dataclass

from .actions import Action, AddFile
from .predicates import Predicate
from .snapshot import Snapshot

CHANGES_DATA = frozenset(
    {
        "WRITE", "STREAMING UPDATE", "DELETE", "TRUNCATE", "CONVERT", "MERGE", "UPDATE",
        "REPLACE TABLE", "REPLACE TABLE AS SELECT", "CREATE OR REPLACE TABLE AS SELECT",
        "RESTORE", "CLONE", "CREATE TABLE AS SELECT",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Operation:
    """A delta-spark operation name and whether it changes data (ISOLATION.DOWNGRADE)."""

    name: str = "WRITE"
    changes_data: bool | None = None

    @property
    def changes_data_flag(self) -> bool:
        return self.name in CHANGES_DATA if self.changes_data is None else self.changes_data


@dataclass(frozen=True)
class ReadSet:
    """What a transaction read (TXN.READ_PREDICATES, TXN.READ_FILES, TXN.READ_WHOLE_TABLE,
    TXN.READ_APP_IDS, TXN.DEPENDS_ON_FILES)."""

    predicates: tuple[Predicate, ...] = ()
    files: tuple[AddFile, ...] = ()
    whole_table: bool = False
    app_ids: frozenset[str] = frozenset()
    depends_on_files: bool = False

    @property
    def file_paths(self) -> frozenset[str]:
        return frozenset(f.path for f in self.files)


@dataclass(frozen=True)
class Transaction:
    """An open transaction on a read snapshot: its reads and its staged actions."""

    txn_id: str
    read_snapshot: Snapshot
    operation: Operation = Operation()
    reads: ReadSet = ReadSet()
    actions: tuple[Action, ...] = ()
    commit_if_needed: bool = True

    @property
    def read_version(self) -> int:
        return self.read_snapshot.version
