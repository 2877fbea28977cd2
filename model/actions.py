"""Log actions as frozen values (ACTION.*).

Maps are kept as sorted tuples of pairs so that every action is hashable and
compares by value; ``as_dict`` turns one back into a dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from deltaspec.rules import rule

Pairs = tuple[tuple[str, str | None], ...]
StrPairs = tuple[tuple[str, str], ...]
FileKey = tuple[str, str | None]


@rule("SNAPSHOT.FILE_KEY")
def file_key(path: str, dv_id: str | None) -> FileKey:
    """SNAPSHOT.FILE_KEY: a logical file is its path and its deletion vector's unique id."""
    return (path, dv_id)


"""(path, deletion-vector unique id): the reconciliation key (SNAPSHOT.FILE_KEY)."""


def pairs(mapping: Mapping[str, str | None] | None) -> Pairs:
    return tuple(sorted((mapping or {}).items()))


def str_pairs(mapping: Mapping[str, str] | None) -> StrPairs:
    return tuple(sorted((mapping or {}).items()))


def as_dict(items: Pairs | StrPairs) -> dict[str, str | None]:
    return dict(items)


@rule("ACTION.PROTOCOL")
@dataclass(frozen=True)
class Protocol:
    """ACTION.PROTOCOL. Features are None for legacy (pre table-features) versions."""

    min_reader_version: int
    min_writer_version: int
    reader_features: frozenset[str] | None = None
    writer_features: frozenset[str] | None = None


@rule("ACTION.METADATA")
@dataclass(frozen=True)
class Metadata:
    """ACTION.METADATA."""

    id: str
    schema_string: str
    partition_columns: tuple[str, ...] = ()
    configuration: StrPairs = ()
    name: str | None = None
    description: str | None = None
    format_provider: str = "parquet"
    created_time: int | None = None

    def property(self, key: str, default: str | None = None) -> str | None:
        return dict(self.configuration).get(key, default)


@rule("ACTION.ADD")
@dataclass(frozen=True)
class AddFile:
    """ACTION.ADD."""

    path: str
    partition_values: Pairs = ()
    size: int = 1
    modification_time: int = 0
    data_change: bool = True
    stats: str | None = None
    dv_id: str | None = None
    base_row_id: int | None = None
    default_row_commit_version: int | None = None

    @property
    def key(self) -> FileKey:
        return file_key(self.path, self.dv_id)


@rule("ACTION.REMOVE")
@dataclass(frozen=True)
class RemoveFile:
    """ACTION.REMOVE."""

    path: str
    deletion_timestamp: int | None = None
    data_change: bool = True
    partition_values: Pairs | None = None
    size: int | None = None
    dv_id: str | None = None

    @property
    def key(self) -> FileKey:
        return file_key(self.path, self.dv_id)


@rule("ACTION.TXN")
@dataclass(frozen=True)
class SetTransaction:
    """ACTION.TXN."""

    app_id: str
    version: int
    last_updated: int | None = None


@rule("ACTION.DOMAIN_METADATA")
@dataclass(frozen=True)
class DomainMetadata:
    """ACTION.DOMAIN_METADATA."""

    domain: str
    configuration: str = ""
    removed: bool = False


@rule("ACTION.CDC")
@dataclass(frozen=True)
class AddCDCFile:
    """ACTION.CDC: change-data files; never part of a snapshot's file set."""

    path: str
    partition_values: Pairs = ()
    size: int = 1
    data_change: bool = False


@rule("ACTION.COMMIT_INFO")
@dataclass(frozen=True)
class CommitInfo:
    """ACTION.COMMIT_INFO: the fields that matter to concurrency (TXN.COMMIT_INFO)."""

    timestamp: int
    operation: str
    read_version: int | None = None
    isolation_level: str | None = None
    is_blind_append: bool | None = None
    txn_id: str | None = None
    operation_parameters: StrPairs = ()
    in_commit_timestamp: int | None = None
    """ICT.ASSIGN: only on tables with in-commit timestamps."""


FileAction = AddFile | RemoveFile | AddCDCFile
Action = (
    Protocol
    | Metadata
    | AddFile
    | RemoveFile
    | SetTransaction
    | DomainMetadata
    | AddCDCFile
    | CommitInfo
)
"""Every action the model knows. Unknown actions are dropped on read (ACTION.UNKNOWN)."""


def is_file_action(action: Action) -> bool:
    return isinstance(action, AddFile | RemoveFile | AddCDCFile)


def data_change(action: Action) -> bool:
    return is_file_action(action) and bool(getattr(action, "data_change", False))


@dataclass(frozen=True)
class Commit:
    """One committed version (LOG.COMMIT_FILE_NAME): its number, actions in file order, and time."""

    version: int
    actions: tuple[Action, ...]
    timestamp: int = 0

    @property
    def commit_info(self) -> CommitInfo | None:
        return next((a for a in self.actions if isinstance(a, CommitInfo)), None)
