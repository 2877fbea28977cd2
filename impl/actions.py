"""Delta log actions as the production implementation holds them.

The codec (deltaspec.impl.codec) writes each action's fields in delta-spark's
serialization order, which is not always declaration order here. ``commitInfo``
is kept as an ordered mapping, exactly as read: every engine writes different
fields and they must survive a round trip.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from deltaspec.rules import rule

PartitionValues = dict[str, str | None]


@rule("ACTION.PROTOCOL")
@dataclass(frozen=True, slots=True)
class Protocol:
    min_reader_version: int
    min_writer_version: int
    reader_features: tuple[str, ...] | None = None
    writer_features: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Format:
    provider: str = "parquet"
    options: dict[str, str] = field(default_factory=dict)


@rule("ACTION.METADATA")
@dataclass(frozen=True, slots=True)
class Metadata:
    id: str
    schema_string: str
    partition_columns: tuple[str, ...] = ()
    configuration: dict[str, str] = field(default_factory=dict)
    format: Format = field(default_factory=Format)
    name: str | None = None
    description: str | None = None
    created_time: int | None = None


@dataclass(frozen=True, slots=True)
class DeletionVector:
    storage_type: str
    path_or_inline_dv: str
    size_in_bytes: int
    cardinality: int
    offset: int | None = None
    max_row_index: int | None = None

    @property
    def unique_id(self) -> str:
        """storageType + pathOrInlineDv (+ "@" + offset): the DV part of the file key."""
        base = f"{self.storage_type}{self.path_or_inline_dv}"
        return base if self.offset is None else f"{base}@{self.offset}"


FileKey = tuple[str, str | None]
"""A logical file: its path and its deletion vector's unique id (SNAPSHOT.FILE_KEY)."""


@rule("SNAPSHOT.FILE_KEY")
def file_key(path: str, deletion_vector: DeletionVector | None) -> FileKey:
    """The logical file key ``(path, dvId)`` of an add or remove (SNAPSHOT.FILE_KEY)."""
    return (path, None if deletion_vector is None else deletion_vector.unique_id)


@rule("ACTION.ADD")
@dataclass(frozen=True, slots=True)
class AddFile:
    path: str
    partition_values: PartitionValues
    size: int
    modification_time: int
    data_change: bool
    stats: str | None = None
    tags: dict[str, str] | None = None
    deletion_vector: DeletionVector | None = None
    base_row_id: int | None = None
    default_row_commit_version: int | None = None
    clustering_provider: str | None = None

    @property
    def key(self) -> tuple[str, str | None]:
        return file_key(self.path, self.deletion_vector)


@rule("ACTION.REMOVE")
@dataclass(frozen=True, slots=True)
class RemoveFile:
    path: str
    deletion_timestamp: int | None = None
    data_change: bool = True
    extended_file_metadata: bool | None = None
    partition_values: PartitionValues | None = None
    size: int | None = None
    stats: str | None = None
    tags: dict[str, str] | None = None
    deletion_vector: DeletionVector | None = None
    base_row_id: int | None = None
    default_row_commit_version: int | None = None

    @property
    def key(self) -> tuple[str, str | None]:
        return file_key(self.path, self.deletion_vector)


@rule("ACTION.TXN")
@dataclass(frozen=True, slots=True)
class SetTransaction:
    app_id: str
    version: int
    last_updated: int | None = None


@rule("ACTION.DOMAIN_METADATA")
@dataclass(frozen=True, slots=True)
class DomainMetadata:
    domain: str
    configuration: str
    removed: bool = False


@rule("ACTION.CDC")
@dataclass(frozen=True, slots=True)
class AddCDCFile:
    path: str
    partition_values: PartitionValues
    size: int
    data_change: bool = False
    tags: dict[str, str] | None = None


@rule("ACTION.COMMIT_INFO")
@dataclass(frozen=True, slots=True)
class CommitInfo:
    """The commitInfo object, fields in file order, kept as read."""

    fields: dict[str, Any]

    def get(self, key: str, default: Any = None) -> Any:
        return self.fields.get(key, default)


@dataclass(frozen=True, slots=True)
class CheckpointMetadata:
    """V2 checkpoint top-level marker."""

    version: int
    tags: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Sidecar:
    """V2 checkpoint: a Parquet file under _delta_log/_sidecars holding file actions."""

    path: str
    size_in_bytes: int
    modification_time: int
    tags: dict[str, str] | None = None


Action = (
    Protocol
    | Metadata
    | AddFile
    | RemoveFile
    | SetTransaction
    | DomainMetadata
    | AddCDCFile
    | CommitInfo
    | CheckpointMetadata
    | Sidecar
)
