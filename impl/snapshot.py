"""Snapshots of the production log: loading, checkpoint reading, time travel.

A snapshot is the state of a table at one version (SNAPSHOT.REPLAY): protocol, metadata, live
files, tombstones, the latest application transaction per app id and the live metadata domains.
:class:`DeltaLog` builds it the way delta-spark does (CHECKPOINT.READ):

1. read the ``_last_checkpoint`` hint (a missing, corrupt, stale or dangling hint only costs a
   longer listing, CHECKPOINT.LAST_CHECKPOINT);
2. list ``_delta_log`` once and pick the newest *complete* checkpoint at or below the target
   version — classic ``<v>.checkpoint.parquet``, multi-part ``<v>.checkpoint.<o>.<p>.parquet``
   (all ``p`` parts present) or v2 ``<v>.checkpoint.<uuid>.json|parquet`` with its sidecars;
3. read it with pyarrow (only the columns that matter), then replay the JSON commits after it
   up to the target, which must be contiguous (LOG.CONTIGUITY);
4. reconcile file actions by logical file key ``(path, dvId)`` (SNAPSHOT.FILE_KEY,
   SNAPSHOT.RECONCILE): the checkpoint's rows stay Arrow; only the keys the later commits touch
   are looked at one by one.

Live files and tombstones are held as Arrow tables (:data:`FILES_SCHEMA`,
:data:`TOMBSTONES_SCHEMA`) and materialised as ``dict[(path, dvId), AddFile | RemoveFile]`` only
on demand. Like delta-spark's state, both store ``dataChange = false`` and tombstones carry no
``stats`` or ``tags`` (CHECKPOINT.CONTENTS), so a snapshot read from a checkpoint equals the one
replayed from JSON. Tombstones and application transactions past their retention are left out
with the clock of the :class:`DeltaLog` that built the snapshot (RETENTION.TOMBSTONES,
RETENTION.SET_TRANSACTION).

This module never imports ``deltaspec.model``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, cast
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deltaspec.impl import codec
from deltaspec.impl.actions import (
    Action,
    AddFile,
    CheckpointMetadata,
    CommitInfo,
    DeletionVector,
    DomainMetadata,
    Format,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
    Sidecar,
)
from deltaspec.impl.errors import (
    CorruptLogError,
    DeltaError,
    MissingProtocolOrMetadataError,
    MissingVersionsError,
    TableNotFoundError,
    UnsafePathError,
    UnsupportedProtocolError,
    VersionNotFoundError,
)
from deltaspec.impl.log.store import (
    LAST_CHECKPOINT,
    SIDECARS_DIR,
    FileInfo,
    LocalLogStore,
    LogStore,
    commit_name,
    parse_commit_name,
)
from deltaspec.impl.table import paths
from deltaspec.impl.table.paths import resolve_data_path
from deltaspec.impl.table.properties import parse_interval_ms

__all__ = [
    "ADD_COLUMNS",
    "CHECKPOINT_CACHE_SIZE",
    "COMMIT_CACHE_ACTIONS",
    "DAY_MS",
    "DEFAULT_DELETED_FILE_RETENTION",
    "DV_COLUMNS",
    "FILES_SCHEMA",
    "RELIST_ATTEMPTS",
    "REMOVE_COLUMNS",
    "SUPPORTED_READER_FEATURES",
    "TOMBSTONES_SCHEMA",
    "CheckpointFiles",
    "ColumnSpec",
    "DeltaLog",
    "LogListing",
    "Snapshot",
    "check_reader_protocol",
    "is_checkpoint_name",
    "log_file_version",
    "parse_interval_ms",
    "resolve_data_path",
    "table_duration_ms",
    "wall_clock_ms",
]

# --- table properties ----------------------------------------------------------------------------

DEFAULT_DELETED_FILE_RETENTION = "interval 1 week"
"""Default of ``delta.deletedFileRetentionDuration`` (RETENTION.TOMBSTONES)."""

DAY_MS = 24 * 60 * 60 * 1000


def table_duration_ms(metadata: Metadata, key: str, default: str | None) -> int | None:
    """The duration table property ``key`` in milliseconds, or ``default``'s (None if unset)."""
    text = metadata.configuration.get(key, default)
    return None if text is None else parse_interval_ms(text)


def _property_true(metadata: Metadata, key: str, default: bool) -> bool:
    value = metadata.configuration.get(key)
    return default if value is None else value.strip().lower() == "true"


# --- protocol ------------------------------------------------------------------------------------

SUPPORTED_READER_FEATURES = frozenset(
    {
        # the log: file keys with deletion vectors, v2 checkpoints with sidecars
        "deletionVectors",
        "v2Checkpoint",
        # only VACUUM must care; reading is unaffected
        "vacuumProtocolCheck",
        # scans: physical column names / field ids, TIMESTAMP_NTZ, widened column types
        "columnMapping",
        "timestampNtz",
        "typeWidening",
        "typeWidening-preview",
    }
)
"""Reader features this implementation reads correctly.

The log-level ones (``deletionVectors``, ``v2Checkpoint``) change how the log is replayed and are
implemented here; the others only change how data files are interpreted, which the snapshot
exposes (schema, partition values, deletion vector descriptors) for the scan to apply. Variant,
catalog-managed and coordinated-commit tables are refused.
"""

MAX_READER_VERSION = 3


def check_reader_protocol(
    protocol: Protocol,
    *,
    table: str | None = None,
    version: int | None = None,
    file: str | None = None,
) -> None:
    """Refuse a protocol this reader does not support (SNAPSHOT.PROTOCOL_METADATA).

    ``minReaderVersion`` above 3, or (at reader version 3) a ``readerFeatures`` entry outside
    :data:`SUPPORTED_READER_FEATURES`, raises :class:`UnsupportedProtocolError`.
    """
    if protocol.min_reader_version > MAX_READER_VERSION or protocol.min_reader_version < 1:
        raise UnsupportedProtocolError(
            f"minReaderVersion {protocol.min_reader_version} is not supported "
            f"(this reader supports 1 to {MAX_READER_VERSION})",
            table=table,
            version=version,
            file=file,
        )
    if protocol.min_reader_version == MAX_READER_VERSION:
        unsupported = sorted(set(protocol.reader_features or ()) - SUPPORTED_READER_FEATURES)
        if unsupported:
            raise UnsupportedProtocolError(
                f"unsupported reader features {unsupported}",
                table=table,
                version=version,
                file=file,
            )


# --- path safety ---------------------------------------------------------------------------------

# The one path rule (PATH.DATA_FILE) lives in deltaspec.impl.table.paths; replay applies it to every
# add and remove, the checkpoint reader vectorised below.


# Typed scalars: comparing with a bare Python ``0`` or ``False`` makes pyarrow try (and fail) to
# import dateutil on every call, about 50 us each.
_ZERO = pa.scalar(0, pa.int64())
_FALSE = pa.scalar(False, pa.bool_())


def _check_file_table(
    rows: pa.Table, kind: str, table: str, version: int | None, file: str
) -> pa.Table:
    """:func:`paths.check_file_action` for a checkpoint's FILES/TOMBSTONES table, vectorised:
    only the suspicious-looking paths are resolved one by one; returns ``rows`` with their
    paths canonical (SNAPSHOT.CANONICAL_PATH)."""
    if rows.num_rows == 0:
        return rows
    column = rows.column("path")
    if column.null_count:
        raise CorruptLogError(
            f"a {kind} row without a path", table=table, version=version, file=file
        )
    suspect = pc.match_substring_regex(column, paths.SUSPICIOUS_PATH)
    if pc.any(suspect).as_py():
        canonical: list[str] = []
        for path in column.to_pylist():
            if paths.is_suspicious(path):
                try:
                    paths.resolve_data_path(table, path)
                except ValueError as exc:
                    raise UnsafePathError(
                        f"{kind}.path {path[:200]!r}: {exc}",
                        table=table,
                        version=version,
                        file=file,
                    ) from None
                path = paths.canonical_path(path)
            canonical.append(path)
        rows = rows.set_column(
            rows.schema.get_field_index("path"), "path", pa.array(canonical, pa.string())
        )
    dvs = rows.column("deletion_vector")
    if dvs.null_count < rows.num_rows:
        # only a ``p`` path or a ``u`` id with a prefix can leave the table: the bare 20-char
        # ``u`` ids deletion-vector writers produce are skipped without leaving Arrow
        dvs = dvs.filter(pc.is_valid(dvs))
        kind_column = pc.struct_field(dvs, "storage_type")
        prefixed = pc.not_equal(pc.utf8_length(pc.struct_field(dvs, "path_or_inline_dv")), 20)
        dvs = dvs.filter(
            pc.or_(pc.equal(kind_column, "p"), pc.and_(pc.equal(kind_column, "u"), prefixed))
        )
        for row in dvs.to_pylist():
            vector = _dv_from_row(row)
            if vector is not None and vector.storage_type in ("u", "p"):
                paths.check_deletion_vector(vector, table, version, file)
    sizes = rows.column("size")
    bad = pc.less(sizes, _ZERO)
    if kind == "add":
        bad = pc.or_kleene(bad, pc.is_null(sizes))
    if pc.any(bad).as_py():
        path = rows.column("path").filter(bad).to_pylist()[0]
        raise CorruptLogError(
            f"{kind}.size is negative or null for {path[:200]!r}",
            table=table,
            version=version,
            file=file,
        )
    return rows


# --- Arrow layouts -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ColumnSpec:
    """One field: its name in Delta's JSON and checkpoints, its name here, its type here."""

    delta: str
    name: str
    type: pa.DataType
    children: tuple[ColumnSpec, ...] = ()


_STRING_MAP = pa.map_(pa.string(), pa.string())

DV_COLUMNS = (
    ColumnSpec("storageType", "storage_type", pa.string()),
    ColumnSpec("pathOrInlineDv", "path_or_inline_dv", pa.string()),
    ColumnSpec("offset", "offset", pa.int32()),
    ColumnSpec("sizeInBytes", "size_in_bytes", pa.int32()),
    ColumnSpec("cardinality", "cardinality", pa.int64()),
    ColumnSpec("maxRowIndex", "max_row_index", pa.int64()),
)
_DV_TYPE = pa.struct([pa.field(c.name, c.type) for c in DV_COLUMNS])

ADD_COLUMNS = (
    ColumnSpec("path", "path", pa.string()),
    ColumnSpec("partitionValues", "partition_values", _STRING_MAP),
    ColumnSpec("size", "size", pa.int64()),
    ColumnSpec("modificationTime", "modification_time", pa.int64()),
    ColumnSpec("dataChange", "data_change", pa.bool_()),
    ColumnSpec("tags", "tags", _STRING_MAP),
    ColumnSpec("deletionVector", "deletion_vector", _DV_TYPE, DV_COLUMNS),
    ColumnSpec("baseRowId", "base_row_id", pa.int64()),
    ColumnSpec("defaultRowCommitVersion", "default_row_commit_version", pa.int64()),
    ColumnSpec("clusteringProvider", "clustering_provider", pa.string()),
    ColumnSpec("stats", "stats", pa.string()),
)
REMOVE_COLUMNS = (
    ColumnSpec("path", "path", pa.string()),
    ColumnSpec("deletionTimestamp", "deletion_timestamp", pa.int64()),
    ColumnSpec("dataChange", "data_change", pa.bool_()),
    ColumnSpec("extendedFileMetadata", "extended_file_metadata", pa.bool_()),
    ColumnSpec("partitionValues", "partition_values", _STRING_MAP),
    ColumnSpec("size", "size", pa.int64()),
    ColumnSpec("deletionVector", "deletion_vector", _DV_TYPE, DV_COLUMNS),
    ColumnSpec("baseRowId", "base_row_id", pa.int64()),
    ColumnSpec("defaultRowCommitVersion", "default_row_commit_version", pa.int64()),
)

FILES_SCHEMA: pa.Schema = pa.schema([pa.field(c.name, c.type) for c in ADD_COLUMNS])
"""Columns of :meth:`Snapshot.files_table`: one row per live file (an ``add``), snake_case."""

TOMBSTONES_SCHEMA: pa.Schema = pa.schema([pa.field(c.name, c.type) for c in REMOVE_COLUMNS])
"""Columns of :meth:`Snapshot.tombstones_table`: one row per tombstone (a ``remove``)."""

_FILE_COLUMNS = {"add": ADD_COLUMNS, "remove": REMOVE_COLUMNS}
_SCHEMAS = {"add": FILES_SCHEMA, "remove": TOMBSTONES_SCHEMA}
_NON_FILE_COLUMNS = (
    "txn",
    "metaData",
    "protocol",
    "domainMetadata",
    "checkpointMetadata",
    "sidecar",
)


def _conform(array: pa.Array, cols: Sequence[ColumnSpec]) -> list[pa.Array]:
    """The children of a checkpoint struct chunk laid out as ``cols`` (renamed, cast, padded).

    Checkpoints written by different releases have different field sets (old ones lack
    ``deletionVector``, ``tags``, ``stats``...; PROTOCOL: a missing column is null).
    """
    struct_type = array.type
    index = {struct_type.field(i).name: i for i in range(struct_type.num_fields)}
    flat = array.flatten()
    out: list[pa.Array] = []
    for col in cols:
        position = index.get(col.delta)
        if position is None:
            out.append(pa.nulls(len(array), col.type))
            continue
        child = flat[position]
        if col.children:
            if not pa.types.is_struct(child.type):
                raise TypeError(f"{col.delta} is not a struct")
            inner = _conform(child, col.children)
            out.append(
                pa.StructArray.from_arrays(
                    inner,
                    fields=list(col.type),
                    mask=pc.is_null(child) if child.null_count else None,
                )
            )
        elif child.type != col.type:
            out.append(child.cast(col.type))
        else:
            out.append(child)
    return out


def _struct_column_to_table(column: pa.ChunkedArray, kind: str) -> pa.Table:
    """Valid rows of a checkpoint's ``add``/``remove`` column as a FILES/TOMBSTONES table."""
    cols = _FILE_COLUMNS[kind]
    schema = _SCHEMAS[kind]
    chunks: list[list[pa.Array]] = []
    for chunk in column.chunks:
        valid = chunk.filter(pc.is_valid(chunk)) if chunk.null_count else chunk
        if len(valid):
            chunks.append(_conform(valid, cols))
    if not chunks:
        return schema.empty_table()
    arrays = [pa.chunked_array([c[i] for c in chunks], type=f.type) for i, f in enumerate(schema)]
    table = pa.Table.from_arrays(arrays, schema=schema)
    # delta-spark's state holds adds and tombstones with dataChange = false (SNAPSHOT.RECONCILE)
    return table.set_column(
        schema.get_field_index("data_change"),
        "data_change",
        pa.repeat(_FALSE, table.num_rows),
    )


def _dv_row(dv: DeletionVector | None) -> dict[str, Any] | None:
    if dv is None:
        return None
    return {
        "storage_type": dv.storage_type,
        "path_or_inline_dv": dv.path_or_inline_dv,
        "offset": dv.offset,
        "size_in_bytes": dv.size_in_bytes,
        "cardinality": dv.cardinality,
        "max_row_index": dv.max_row_index,
    }


def _adds_to_table(adds: Sequence[AddFile]) -> pa.Table:
    """Live files from ``add`` actions (dataChange stored as false)."""
    if not adds:
        return FILES_SCHEMA.empty_table()
    return pa.Table.from_pydict(
        {
            "path": [a.path for a in adds],
            "partition_values": [a.partition_values for a in adds],
            "size": [a.size for a in adds],
            "modification_time": [a.modification_time for a in adds],
            "data_change": [False] * len(adds),
            "tags": [a.tags for a in adds],
            "deletion_vector": [_dv_row(a.deletion_vector) for a in adds],
            "base_row_id": [a.base_row_id for a in adds],
            "default_row_commit_version": [a.default_row_commit_version for a in adds],
            "clustering_provider": [a.clustering_provider for a in adds],
            "stats": [a.stats for a in adds],
        },
        schema=FILES_SCHEMA,
    )


def _removes_to_table(removes: Sequence[RemoveFile]) -> pa.Table:
    """Tombstones from ``remove`` actions (no stats or tags; dataChange stored as false)."""
    if not removes:
        return TOMBSTONES_SCHEMA.empty_table()
    return pa.Table.from_pydict(
        {
            "path": [r.path for r in removes],
            "deletion_timestamp": [r.deletion_timestamp for r in removes],
            "data_change": [False] * len(removes),
            "extended_file_metadata": [r.extended_file_metadata for r in removes],
            "partition_values": [r.partition_values for r in removes],
            "size": [r.size for r in removes],
            "deletion_vector": [_dv_row(r.deletion_vector) for r in removes],
            "base_row_id": [r.base_row_id for r in removes],
            "default_row_commit_version": [r.default_row_commit_version for r in removes],
        },
        schema=TOMBSTONES_SCHEMA,
    )


def _dv_from_row(row: dict[str, Any] | None) -> DeletionVector | None:
    if row is None:
        return None
    return DeletionVector(
        storage_type=row["storage_type"],
        path_or_inline_dv=row["path_or_inline_dv"],
        size_in_bytes=row["size_in_bytes"],
        cardinality=row["cardinality"],
        offset=row["offset"],
        max_row_index=row["max_row_index"],
    )


def _map(value: list[tuple[str, str | None]] | None) -> dict[str, str | None] | None:
    return None if value is None else dict(value)


def _tags(value: list[tuple[str, str | None]] | None) -> dict[str, str] | None:
    return None if value is None else {k: v for k, v in value if v is not None}


def _dv_key(row: dict[str, Any] | None) -> str | None:
    """The deletion vector's unique id from an Arrow row (SNAPSHOT.FILE_KEY)."""
    if row is None:
        return None
    base = f"{row['storage_type']}{row['path_or_inline_dv']}"
    return base if row["offset"] is None else f"{base}@{row['offset']}"


def _table_keys(table: pa.Table) -> list[tuple[str, str | None]]:
    paths = table.column("path").to_pylist()
    dvs = table.column("deletion_vector").to_pylist()
    return [(p, _dv_key(d)) for p, d in zip(paths, dvs, strict=True)]


def _drop_keys(table: pa.Table, keys: set[tuple[str, str | None]]) -> pa.Table:
    """``table`` without the rows whose file key is in ``keys`` (vectorised on the path)."""
    if not keys or table.num_rows == 0:
        return table
    paths = pa.array(sorted({path for path, _ in keys}), type=pa.string())
    hit = pc.is_in(table.column("path"), value_set=paths)
    if not pc.any(hit).as_py():
        return table
    untouched = table.filter(pc.invert(hit))
    candidates = table.filter(hit)
    if candidates.column("deletion_vector").null_count == candidates.num_rows:
        keep = [(path, None) not in keys for path in candidates.column("path").to_pylist()]
    else:
        keep = [key not in keys for key in _table_keys(candidates)]
    if not any(keep):
        return untouched
    return pa.concat_tables([untouched, candidates.filter(pa.array(keep, type=pa.bool_()))])


# --- listing -------------------------------------------------------------------------------------

_CLASSIC = re.compile(r"([0-9]{20})\.checkpoint\.parquet")
_MULTI = re.compile(r"([0-9]{20})\.checkpoint\.([0-9]{10})\.([0-9]{10})\.parquet")
_UUID = re.compile(r"([0-9]{20})\.checkpoint\.([^./]+)\.(json|parquet)")
_CRC = re.compile(r"([0-9]{20})\.crc")

CheckpointKind = Literal["classic", "multi-part", "v2"]


@dataclass(frozen=True, slots=True)
class CheckpointFiles:
    """One complete checkpoint found by listing (CHECKPOINT.READ)."""

    version: int
    kind: CheckpointKind
    files: tuple[FileInfo, ...]

    @property
    def size_in_bytes(self) -> int:
        return sum(f.size for f in self.files)


def log_file_version(name: str) -> int | None:
    """The version of a commit, checkpoint (any kind) or checksum file name, else None."""
    for pattern in (_CLASSIC, _MULTI, _UUID, _CRC):
        match = pattern.fullmatch(name)
        if match:
            return int(match[1])
    return parse_commit_name(name)


def is_checkpoint_name(name: str) -> bool:
    """Whether ``name`` is a checkpoint file of any kind (classic, part, v2 top-level file)."""
    return any(p.fullmatch(name) for p in (_CLASSIC, _MULTI, _UUID))


@dataclass(frozen=True)
class LogListing:
    """What one listing of ``_delta_log`` shows: commits and complete checkpoints by version.

    ``full`` tells whether the listing started at the beginning of the log or at the hinted
    checkpoint (then earlier files are simply not known).
    """

    files: tuple[FileInfo, ...]
    commits: dict[int, FileInfo]
    checkpoints: dict[int, tuple[CheckpointFiles, ...]]
    full: bool

    @classmethod
    def of(cls, files: Sequence[FileInfo], *, full: bool) -> LogListing:
        commits: dict[int, FileInfo] = {}
        found: dict[int, list[CheckpointFiles]] = {}
        parts: dict[tuple[int, int], dict[int, FileInfo]] = {}
        for info in files:
            name = info.name
            version = parse_commit_name(name)
            if version is not None:
                commits[version] = info
                continue
            if info.size <= 0:
                continue  # zero-length checkpoint files are ignored (CHECKPOINT.READ)
            if match := _CLASSIC.fullmatch(name):
                version = int(match[1])
                found.setdefault(version, []).append(CheckpointFiles(version, "classic", (info,)))
            elif match := _MULTI.fullmatch(name):
                part, total = int(match[2]), int(match[3])
                if 1 <= part <= total:
                    parts.setdefault((int(match[1]), total), {})[part] = info
            elif match := _UUID.fullmatch(name):
                version = int(match[1])
                found.setdefault(version, []).append(CheckpointFiles(version, "v2", (info,)))
        for (version, total), present in parts.items():
            if len(present) == total:  # all parts present, else ignored
                ordered = tuple(present[i] for i in range(1, total + 1))
                found.setdefault(version, []).append(
                    CheckpointFiles(version, "multi-part", ordered)
                )
        order = {"classic": 0, "v2": 1, "multi-part": 2}
        checkpoints = {
            v: tuple(sorted(cps, key=lambda c: (order[c.kind], c.files[0].name)))
            for v, cps in found.items()
        }
        return cls(tuple(files), commits, checkpoints, full)

    @property
    def latest_version(self) -> int:
        """The newest version the listing shows (commit or checkpoint), -1 if none."""
        return max([*self.commits, *self.checkpoints], default=-1)

    @property
    def earliest_version(self) -> int | None:
        """The oldest version that can be reconstructed from this listing (SNAPSHOT.TIME_TRAVEL).

        Version 0 if its commit exists, else the oldest complete checkpoint; None if neither.
        """
        starts = [*self.checkpoints, *([0] if 0 in self.commits else [])]
        return min(starts, default=None)


# --- the snapshot --------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Snapshot:
    """The state of a table at one version (SNAPSHOT.*).

    Fields are the reconciled state; ``live_files`` and ``all_tombstones`` are Arrow tables
    (:data:`FILES_SCHEMA`, :data:`TOMBSTONES_SCHEMA`). ``all_tombstones`` and
    ``all_app_transactions`` include entries past their retention; :attr:`tombstones`,
    :meth:`tombstones_table` and :attr:`app_transactions` leave them out as of ``now_ms``
    (RETENTION.TOMBSTONES, RETENTION.SET_TRANSACTION). ``timestamp`` is the modification time of
    the commit file of ``version`` (its in-commit timestamp when the table enables them).
    """

    table_path: str
    version: int
    protocol: Protocol
    metadata: Metadata
    checkpoint_version: int | None
    timestamp: int
    domains: dict[str, DomainMetadata]
    all_app_transactions: dict[str, SetTransaction]
    live_files: pa.Table = field(repr=False)
    all_tombstones: pa.Table = field(repr=False)
    now_ms: int = 0

    # --- files ---------------------------------------------------------------------------------

    def files_table(self) -> pa.Table:
        """The live files as Arrow (:data:`FILES_SCHEMA`), one row per logical file."""
        return self.live_files

    @cached_property
    def files(self) -> dict[tuple[str, str | None], AddFile]:
        """The live files by logical file key ``(path, dvId)`` (SNAPSHOT.FILE_KEY)."""
        table = self.live_files
        out: dict[tuple[str, str | None], AddFile] = {}
        rows = zip(*(table.column(name).to_pylist() for name in FILES_SCHEMA.names), strict=True)
        for path, values, size, mtime, _, tags, dv, base, default, clustering, stats in rows:
            vector = None if dv is None else _dv_from_row(dv)
            add = AddFile(
                path,
                dict(values) if values else {},
                size,
                mtime,
                False,
                stats,
                None if tags is None else dict(tags),
                vector,
                base,
                default,
                clustering,
            )
            out[(path, None if vector is None else vector.unique_id)] = add
        return out

    @property
    def num_files(self) -> int:
        return int(self.live_files.num_rows)

    @property
    def total_size(self) -> int:
        total = pc.sum(self.live_files.column("size")).as_py()
        return int(total or 0)

    @property
    def partition_columns(self) -> tuple[str, ...]:
        return self.metadata.partition_columns

    # --- tombstones ----------------------------------------------------------------------------

    @property
    def deleted_file_retention_ms(self) -> int:
        """``delta.deletedFileRetentionDuration`` (default one week) in ms."""
        value = table_duration_ms(
            self.metadata, "delta.deletedFileRetentionDuration", DEFAULT_DELETED_FILE_RETENTION
        )
        assert value is not None
        return value

    def tombstones_table(self, now_ms: int | None = None) -> pa.Table:
        """Tombstones not expired at ``now_ms`` (default: when the snapshot was built).

        A tombstone expires when its ``deletionTimestamp`` (0 if absent) is at or before
        ``now − delta.deletedFileRetentionDuration`` (RETENTION.TOMBSTONES).
        """
        now = self.now_ms if now_ms is None else now_ms
        cutoff = now - self.deleted_file_retention_ms
        table = self.all_tombstones
        if table.num_rows == 0:
            return table
        stamps = pc.fill_null(table.column("deletion_timestamp"), _ZERO)
        return table.filter(pc.greater(stamps, pa.scalar(cutoff, pa.int64())))

    @cached_property
    def tombstones(self) -> dict[tuple[str, str | None], RemoveFile]:
        """Unexpired tombstones by logical file key (SNAPSHOT.TOMBSTONES)."""
        table = self.tombstones_table()
        columns = {name: table.column(name).to_pylist() for name in TOMBSTONES_SCHEMA.names}
        out: dict[tuple[str, str | None], RemoveFile] = {}
        for i in range(table.num_rows):
            remove = RemoveFile(
                path=columns["path"][i],
                deletion_timestamp=columns["deletion_timestamp"][i],
                data_change=bool(columns["data_change"][i]),
                extended_file_metadata=columns["extended_file_metadata"][i],
                partition_values=_map(columns["partition_values"][i]),
                size=columns["size"][i],
                deletion_vector=_dv_from_row(columns["deletion_vector"][i]),
                base_row_id=columns["base_row_id"][i],
                default_row_commit_version=columns["default_row_commit_version"][i],
            )
            out[remove.key] = remove
        return out

    # --- application transactions --------------------------------------------------------------

    def app_transactions_at(self, now_ms: int) -> dict[str, SetTransaction]:
        """Application transactions not expired at ``now_ms`` (RETENTION.SET_TRANSACTION).

        Without ``delta.setTransactionRetentionDuration`` nothing expires; with it, an entry
        expires when it has no ``lastUpdated`` or ``lastUpdated <= now − retention``.
        """
        retention = table_duration_ms(self.metadata, "delta.setTransactionRetentionDuration", None)
        if retention is None:
            return dict(self.all_app_transactions)
        cutoff = now_ms - retention
        return {
            app: txn
            for app, txn in self.all_app_transactions.items()
            if txn.last_updated is not None and txn.last_updated > cutoff
        }

    @cached_property
    def app_transactions(self) -> dict[str, SetTransaction]:
        """The latest ``txn`` per app id, minus expired ones (SNAPSHOT.APP_TXN)."""
        return self.app_transactions_at(self.now_ms)

    def txn_version(self, app_id: str) -> int:
        """The app id's latest transaction version, -1 if none (SNAPSHOT.APP_TXN)."""
        txn = self.app_transactions.get(app_id)
        return -1 if txn is None else txn.version


# --- loading -------------------------------------------------------------------------------------


@dataclass
class _State:
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

    def copy(self) -> _State:
        """A copy that a replay may mutate (the Arrow tables are immutable and shared)."""
        return _State(
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
        if isinstance(action, Protocol):
            self.protocol = action
        elif isinstance(action, Metadata):
            self.metadata = action
        elif isinstance(action, SetTransaction):
            self.txns[action.app_id] = action
        elif isinstance(action, DomainMetadata):
            if action.removed:
                self.domains.pop(action.domain, None)
            else:
                self.domains[action.domain] = action


CHECKPOINT_CACHE_SIZE = 2
"""Checkpoints whose state a :class:`DeltaLog` keeps, least recently used out."""

COMMIT_CACHE_ACTIONS = 100_000
"""Decoded actions (of all commits together) a :class:`DeltaLog` keeps, least recently used out."""


RELIST_ATTEMPTS = 3
"""Loads of one snapshot, each from a fresh listing, while files the previous one listed
disappear under it (SNAPSHOT.RELIST)."""


class _UnusableCheckpoint(Exception):
    """A listed checkpoint that cannot be read (missing part or sidecar, corrupt file)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def wall_clock_ms() -> int:
    """Milliseconds since the epoch from the system clock."""
    return time.time_ns() // 1_000_000


class DeltaLog:
    """The log of one table: listing, commits, snapshots (CHECKPOINT.READ, SNAPSHOT.*).

    ``store`` defaults to a :class:`LocalLogStore` on ``table_root``; ``clock`` (milliseconds)
    decides which tombstones and application transactions have expired in the snapshots it
    builds.

    Every :meth:`snapshot` lists the log afresh and replays from the newest usable checkpoint, so
    it sees every commit that landed before it started, from any writer, and builds the same
    snapshot whether or not anything was read before. With ``cache`` (the default) the log keeps
    what it read from files that never change once listed (LOG.PUT_IF_ABSENT): the state of the
    last :data:`CHECKPOINT_CACHE_SIZE` checkpoints and up to :data:`COMMIT_CACHE_ACTIONS` decoded
    (and checked) commit actions, each keyed on the file's name, size and modification time as
    the listing shows them, so a file that differs from what was kept is read again. States
    read with v2 sidecars are never kept, since no listing shows the sidecars.
    """

    def __init__(
        self,
        table_root: str | os.PathLike[str],
        store: LogStore | None = None,
        clock: Callable[[], int] | None = None,
        *,
        cache: bool = True,
    ) -> None:
        self.store: LogStore = store if store is not None else LocalLogStore(table_root)
        self.clock: Callable[[], int] = clock if clock is not None else wall_clock_ms
        self.cache = cache
        self._lock = threading.Lock()
        self._checkpoints: OrderedDict[CheckpointFiles, _State] = OrderedDict()
        self._commits: OrderedDict[FileInfo, list[Action]] = OrderedDict()
        self._kept_actions = 0

    def __repr__(self) -> str:
        return f"DeltaLog({self.table_path!r})"

    @property
    def table_path(self) -> str:
        return self.store.table_path

    # --- reading single files ------------------------------------------------------------------

    def read_last_checkpoint(self) -> dict[str, Any] | None:
        """The parsed ``_last_checkpoint`` hint, or None if missing or unusable.

        delta-spark retries an unreadable hint three times a second apart before ignoring it; a
        local store gives the same answer every time, so it is ignored at once
        (CHECKPOINT.LAST_CHECKPOINT).
        """
        try:
            data = self.store.read(LAST_CHECKPOINT)
            parsed = json.loads(data.decode("utf-8"))
        except (OSError, ValueError, UnicodeDecodeError, RecursionError, DeltaError):
            # an unsafe (symlinked), non-regular, oversized or unreadable hint is not used:
            # listing is the fallback (PATH.REGULAR_FILES)
            return None
        if not isinstance(parsed, dict):
            return None
        version = parsed.get("version")
        if isinstance(version, bool) or not isinstance(version, int) or version < 0:
            return None
        return parsed

    def read_commit(self, version: int) -> list[Action]:
        """The actions of commit ``version`` in file order (VersionNotFoundError if absent)."""
        name = commit_name(version)
        try:
            data = self.store.read(name)
        except FileNotFoundError:
            raise VersionNotFoundError(
                f"commit {version} does not exist", table=self.table_path, version=version
            ) from None
        return codec.decode_commit(data, table=self.table_path, version=version, file=name)

    def commit_is_own(self, version: int, txn_id: str, payload: bytes) -> bool | None:
        """Whether commit ``version`` is the one a transaction tried to write: None if the file
        does not exist, else True when its bytes are ``payload`` or its commitInfo carries
        ``txn_id`` (TXN.COMMIT_INFO). Resolves a write whose outcome the store could not report.
        OSError if the file cannot be read."""
        name = commit_name(version)
        try:
            data = self.store.read(name)
        except FileNotFoundError:
            return None
        if data == payload:
            return True
        try:
            actions = codec.decode_commit(data, table=self.table_path, version=version, file=name)
        except CorruptLogError:
            return False
        return any(isinstance(a, CommitInfo) and a.get("txnId") == txn_id for a in actions)

    def list_commit_versions(self, after: int) -> list[int]:
        """Versions of the commit files after ``after``, ascending (LOG.LISTING)."""
        start = commit_name(after + 1) if after >= -1 else ""
        versions = (parse_commit_name(info.name) for info in self.store.list_from(start))
        return [v for v in versions if v is not None and v > after]

    # --- listing -------------------------------------------------------------------------------

    def list_log(self, hint: int | None = None) -> LogListing:
        """List ``_delta_log`` once, from the hinted checkpoint version on if given."""
        if hint is None:
            return LogListing.of(self.store.list_from(""), full=True)
        return LogListing.of(self.store.list_from(f"{hint:020d}"), full=False)

    def _listing_for(self, target: int | None) -> LogListing:
        """A listing that holds a usable start for ``target`` (CHECKPOINT.READ steps 1-3)."""
        hint_file = self.read_last_checkpoint()
        hint = None if hint_file is None else int(hint_file["version"])
        if hint is not None and (target is None or hint <= target):
            listing = self.list_log(hint)
            limit = listing.latest_version if target is None else target
            if any(v <= limit for v in listing.checkpoints):
                return listing
            # dangling or corrupt hint: look at the whole log
        return self.list_log(None)

    def latest_version(self) -> int:
        """The newest committed version, -1 when there is no table (LOG.NEW_TABLE)."""
        listing = self._listing_for(None)
        if listing.latest_version < 0 and not listing.full:
            listing = self.list_log(None)
        return listing.latest_version

    # --- snapshots -----------------------------------------------------------------------------

    def snapshot(self, version: int | None = None) -> Snapshot:
        """The snapshot at ``version`` (default: latest) (SNAPSHOT.REPLAY, SNAPSHOT.TIME_TRAVEL).

        Raises TableNotFoundError (no commit and no checkpoint), VersionNotFoundError (a version
        outside the reconstructable range), MissingVersionsError (a gap in the commits needed,
        LOG.CONTIGUITY), CorruptLogError, MissingProtocolOrMetadataError and
        UnsupportedProtocolError.
        """
        if version is not None and version < 0:
            raise VersionNotFoundError(
                f"cannot time travel to version {version}", table=self.table_path, version=version
            )
        for attempt in range(RELIST_ATTEMPTS):
            listing = self._listing_for(version)
            try:
                return self._load_listed(listing, version)
            except DeltaError:
                if attempt + 1 == RELIST_ATTEMPTS or not self._listing_changed(listing):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _listing_changed(self, listing: LogListing) -> bool:
        """Whether a file the failed load relied on is gone or different now: a checkpoint and
        log cleanup raced the load (SNAPSHOT.RELIST), so the log is listed again."""
        fresh = set(self.store.list_from(listing.files[0].name if listing.files else ""))
        return not set(listing.files) <= fresh

    def _load_listed(self, listing: LogListing, version: int | None) -> Snapshot:
        failed: dict[str, BaseException] = {}
        while True:
            try:
                return self._load(listing, version, failed)
            except _UnusableCheckpoint as unusable:
                if listing.full:
                    raise unusable.error from None
                listing = self.list_log(None)  # older checkpoints are not in a partial listing

    def _load(
        self, listing: LogListing, requested: int | None, failed: dict[str, BaseException]
    ) -> Snapshot:
        """Load ``requested`` from ``listing``, skipping the checkpoints in ``failed``."""
        table = self.table_path
        now = self.clock()
        latest = listing.latest_version
        if latest < 0:
            if not listing.full:
                raise _UnusableCheckpoint(TableNotFoundError("no table", table=table))
            raise TableNotFoundError(
                "no Delta table: _delta_log has no commit and no checkpoint", table=table
            )
        target = latest if requested is None else requested
        earliest = listing.earliest_version
        if requested is not None and (target > latest or earliest is None or target < earliest):
            available = "none" if earliest is None else f"{earliest} to {latest}"
            raise VersionNotFoundError(
                f"cannot time travel to version {target}; available versions: {available}",
                table=table,
                version=target,
            )

        candidates = [
            cp
            for v in sorted((v for v in listing.checkpoints if v <= target), reverse=True)
            for cp in listing.checkpoints[v]
            if cp.files[0].name not in failed
        ]
        for cp in candidates:
            # commits after the newest start must all exist; older starts need them too
            self._require_commits(listing, cp.version, target)
            try:
                state = self._read_checkpoint(cp)
            except _UnusableCheckpoint as unusable:
                failed[cp.files[0].name] = unusable.error
                continue
            return self._replay(listing, state, cp, target, now)
        errors = list(failed.values())
        if not listing.full:
            # older checkpoints and commit 0 are only in a full listing
            raise _UnusableCheckpoint(errors[0] if errors else TableNotFoundError("no start"))
        if 0 not in listing.commits:
            if errors:
                raise errors[0]
            raise MissingVersionsError(
                "the log is truncated: no checkpoint and no commit 0 to start from "
                f"(earliest commit {min(listing.commits, default=None)})",
                table=table,
                version=target,
                file=commit_name(0),
            )
        self._require_commits(listing, -1, target)
        return self._replay(listing, _State(), None, target, now)

    # --- the cache -----------------------------------------------------------------------------

    def _commit_actions(self, listing: LogListing, version: int) -> tuple[str, list[Action]]:
        """The name and the decoded, checked actions of commit ``version`` (the kept ones if the
        listing shows the same file)."""
        name = commit_name(version)
        info = listing.commits.get(version)
        if self.cache and info is not None:
            with self._lock:
                kept = self._commits.get(info)
                if kept is not None:
                    self._commits.move_to_end(info)
                    return name, kept
        try:
            data = self.store.read(name)
        except FileNotFoundError:
            raise MissingVersionsError(
                f"commit {version} disappeared while reading the log",
                table=self.table_path,
                version=version,
            ) from None
        actions = codec.decode_commit(data, table=self.table_path, version=version, file=name)
        for index, action in enumerate(actions):
            if isinstance(action, AddFile | RemoveFile):
                canonical = paths.check_file_action(action, self.table_path, version, name)
                if canonical != action.path:
                    actions[index] = dataclasses.replace(action, path=canonical)
        if self.cache and info is not None and len(actions) <= COMMIT_CACHE_ACTIONS:
            with self._lock:
                if info not in self._commits:
                    self._commits[info] = actions
                    self._kept_actions += len(actions)
                while self._kept_actions > COMMIT_CACHE_ACTIONS:
                    _, dropped = self._commits.popitem(last=False)
                    self._kept_actions -= len(dropped)
        return name, actions

    def _require_commits(self, listing: LogListing, start: int, target: int) -> None:
        """LOG.CONTIGUITY: every commit in ``start + 1 .. target`` is listed; the work is
        proportional to the listed commits, not to the version numbers (a stray
        ``99999999999999999999.json`` costs one comparison, not a list of every missing
        version)."""
        expected = start + 1
        for version in sorted(v for v in listing.commits if start < v <= target):
            if version != expected:
                break
            expected += 1
        else:
            if expected > target:
                return
        where = "version 0" if start < 0 else f"checkpoint {start}"
        raise MissingVersionsError(
            f"versions not contiguous: commit {expected} is missing between {where} "
            f"and version {target}",
            table=self.table_path,
            version=expected,
            file=commit_name(expected),
        )

    # --- checkpoints ---------------------------------------------------------------------------

    def _missing(self, name: str, version: int) -> CorruptLogError:
        """A checkpoint file or sidecar that the listing or the checkpoint promised is gone
        (delta-spark: DELTA_MISSING_PART_FILES)."""
        return CorruptLogError(
            "a file of the checkpoint is missing", table=self.table_path, version=version, file=name
        )

    def _read_parquet(self, name: str, version: int, *, files_only: bool = False) -> pa.Table:
        """The action columns of a checkpoint (or sidecar) Parquet file that matter here."""
        try:
            # pyarrow gets a file the store opened under PATH.REGULAR_FILES, never a path
            parquet = pq.ParquetFile(self.store.open_file(name))
            columns: list[str] = []
            for top in parquet.schema_arrow:
                if top.name in (*_FILE_COLUMNS, *_NON_FILE_COLUMNS) and not pa.types.is_struct(
                    top.type
                ):
                    # a wrong schema: skipping the column would silently drop its actions
                    raise ValueError(f"column {top.name!r} is {top.type}, not a struct")
                if top.name in _FILE_COLUMNS:
                    wanted = {c.delta for c in _FILE_COLUMNS[top.name]}
                    columns.extend(
                        f"{top.name}.{child.name}" for child in top.type if child.name in wanted
                    )
                elif top.name in _NON_FILE_COLUMNS and not files_only:
                    columns.append(top.name)
            return parquet.read(columns=columns)
        except FileNotFoundError:
            raise _UnusableCheckpoint(self._missing(name, version)) from None
        except UnsafePathError:
            raise
        except DeltaError as refused:  # not a regular file, not readable
            raise _UnusableCheckpoint(refused) from None
        except (pa.ArrowException, OSError, ValueError) as exc:
            raise _UnusableCheckpoint(
                CorruptLogError(
                    f"cannot read checkpoint file: {exc}",
                    table=self.table_path,
                    version=version,
                    file=name,
                )
            ) from None

    def verify_checkpoint(self, cp: CheckpointFiles) -> None:
        """Read checkpoint ``cp`` whole, as a snapshot load would, and raise the typed error
        that makes it unusable (a torn or missing file, a malformed row, no protocol or
        metadata): what log cleanup requires before deleting the commits it covers
        (RETENTION.VERIFIED_CHECKPOINT)."""
        try:
            state = self._read_checkpoint(cp)
        except _UnusableCheckpoint as unusable:
            raise unusable.error from None
        if state.protocol is None or state.metadata is None:
            raise MissingProtocolOrMetadataError(
                "the checkpoint holds no protocol or no metadata",
                table=self.table_path,
                version=cp.version,
                file=cp.files[0].name,
            )

    def _read_checkpoint(self, cp: CheckpointFiles) -> _State:
        """Read a complete checkpoint into a state (CHECKPOINT.READ, CHECKPOINT.CONTENTS).

        Any file that is missing or cannot be read makes the whole checkpoint unusable
        (:class:`_UnusableCheckpoint`), so that the caller can fall back to an older start.
        """
        if self.cache:
            with self._lock:
                kept = self._checkpoints.get(cp)
                if kept is not None:
                    self._checkpoints.move_to_end(cp)
                    return kept.copy()
        try:
            state = self._read_checkpoint_files(cp)
        except (_UnusableCheckpoint, UnsafePathError):
            raise  # a hostile checkpoint is refused, never skipped
        except CorruptLogError as corrupt:  # malformed rows: unusable, commits may still serve
            raise _UnusableCheckpoint(corrupt) from None
        except (pa.ArrowException, TypeError, ValueError, KeyError, AttributeError) as exc:
            raise _UnusableCheckpoint(
                CorruptLogError(
                    f"malformed checkpoint: {exc!r}",
                    table=self.table_path,
                    version=cp.version,
                    file=cp.files[0].name,
                )
            ) from None
        if self.cache and state.cacheable:
            with self._lock:
                self._checkpoints[cp] = state.copy()
                while len(self._checkpoints) > CHECKPOINT_CACHE_SIZE:
                    self._checkpoints.popitem(last=False)
        return state

    def _read_checkpoint_files(self, cp: CheckpointFiles) -> _State:
        state = _State()
        file_tables: dict[str, list[pa.Table]] = {"add": [], "remove": []}
        sidecars: list[Sidecar] = []
        json_adds: list[AddFile] = []
        json_removes: list[RemoveFile] = []
        for info in cp.files:
            if info.name.endswith(".json"):
                try:
                    data = self.store.read(info.name)
                    actions = codec.decode_commit(
                        data, table=self.table_path, version=cp.version, file=info.name
                    )
                except FileNotFoundError:
                    raise _UnusableCheckpoint(self._missing(info.name, cp.version)) from None
                except CorruptLogError as corrupt:
                    raise _UnusableCheckpoint(corrupt) from None
                for action in actions:
                    if isinstance(action, AddFile):
                        json_adds.append(action)
                    elif isinstance(action, RemoveFile):
                        json_removes.append(action)
                    elif isinstance(action, Sidecar):
                        sidecars.append(action)
                    else:
                        state.apply_non_file(action)
                continue
            table = self._read_parquet(info.name, cp.version)
            for action in _non_file_actions(table):
                if isinstance(action, Sidecar):
                    sidecars.append(action)
                else:
                    state.apply_non_file(action)
            for kind, tables in file_tables.items():
                if kind in table.column_names:
                    tables.append(_struct_column_to_table(table.column(kind), kind))
        state.cacheable = not sidecars
        for sidecar in sidecars:
            name = _sidecar_name(sidecar.path)
            table = self._read_parquet(name, cp.version, files_only=True)
            for kind, tables in file_tables.items():
                if kind in table.column_names:
                    tables.append(_struct_column_to_table(table.column(kind), kind))
        if json_adds:
            file_tables["add"].append(_adds_to_table(json_adds))
        if json_removes:
            file_tables["remove"].append(_removes_to_table(json_removes))
        first = cp.files[0].name
        for kind, tables in file_tables.items():
            tables[:] = [
                _check_file_table(rows, kind, self.table_path, cp.version, first) for rows in tables
            ]
        if file_tables["add"]:
            _refuse_duplicate_keys(pa.concat_tables(file_tables["add"]), self.table_path, cp, first)
        if file_tables["add"]:
            state.files = pa.concat_tables(file_tables["add"])
        if file_tables["remove"]:
            state.tombstones = pa.concat_tables(file_tables["remove"])
        if state.protocol is not None:
            state.protocol_origin = (cp.version, first)
        return state

    # --- replay --------------------------------------------------------------------------------

    def _replay(
        self,
        listing: LogListing,
        state: _State,
        cp: CheckpointFiles | None,
        target: int,
        now: int,
    ) -> Snapshot:
        """Apply commits after the start up to ``target`` and finish the snapshot.

        SNAPSHOT.RECONCILE: the last action per file key wins; an add clears the key's
        tombstone, a remove drops the live entry and becomes the tombstone. The checkpoint's
        rows are filtered by the touched keys only.
        """
        first = -1 if cp is None else cp.version
        adds: dict[tuple[str, str | None], AddFile] = {}
        removes: dict[tuple[str, str | None], RemoveFile] = {}
        last_actions: list[Action] | None = None
        for version in range(first + 1, target + 1):
            name, actions = self._commit_actions(listing, version)
            for action in actions:
                if isinstance(action, AddFile):
                    key = action.key
                    removes.pop(key, None)
                    adds.pop(key, None)
                    adds[key] = action
                elif isinstance(action, RemoveFile):
                    key = action.key
                    adds.pop(key, None)
                    removes.pop(key, None)
                    removes[key] = action
                else:
                    if isinstance(action, Protocol):
                        state.protocol_origin = (version, name)
                    state.apply_non_file(action)
            if version == target:
                last_actions = actions
        touched = set(adds) | set(removes)
        files = _drop_keys(state.files, touched)
        tombstones = _drop_keys(state.tombstones, touched)
        if adds:
            files = pa.concat_tables([files, _adds_to_table(list(adds.values()))])
        if removes:
            tombstones = pa.concat_tables([tombstones, _removes_to_table(list(removes.values()))])

        if state.protocol is None or state.metadata is None:
            missing = "protocol" if state.protocol is None else "metadata"
            raise MissingProtocolOrMetadataError(
                f"cannot recover the table state: no {missing} action"
                + ("" if cp is None else f" (replay started at checkpoint {cp.version})"),
                table=self.table_path,
                version=target,
                file=commit_name(0) if cp is None else cp.files[0].name,
            )
        origin_version, origin_file = state.protocol_origin
        check_reader_protocol(
            state.protocol,
            table=self.table_path,
            version=target if origin_version is None else origin_version,
            file=origin_file,
        )
        return Snapshot(
            table_path=self.table_path,
            version=target,
            protocol=state.protocol,
            metadata=state.metadata,
            checkpoint_version=None if cp is None else cp.version,
            timestamp=self._timestamp(listing, target, state.metadata, last_actions, cp),
            domains=dict(state.domains),
            all_app_transactions=dict(state.txns),
            live_files=files.combine_chunks() if files.num_columns else files,
            all_tombstones=tombstones,
            now_ms=now,
        )

    def _timestamp(
        self,
        listing: LogListing,
        version: int,
        metadata: Metadata,
        actions: list[Action] | None,
        cp: CheckpointFiles | None,
    ) -> int:
        """The commit file's modification time, or its in-commit timestamp (SNAPSHOT.REPLAY)."""
        if _property_true(metadata, "delta.enableInCommitTimestamps", False):
            if actions is None and version in listing.commits:
                try:
                    actions = self.read_commit(version)
                except DeltaError:
                    actions = None
            for action in actions or ():
                if isinstance(action, CommitInfo):
                    ict = action.get("inCommitTimestamp")
                    if isinstance(ict, int) and not isinstance(ict, bool):
                        return ict
        info = listing.commits.get(version)
        if info is not None:
            return info.modification_time
        return cp.files[0].modification_time if cp is not None else 0


def _refuse_duplicate_keys(adds: pa.Table, table: str, cp: CheckpointFiles, file: str) -> None:
    """A checkpoint holds each live file once (CHECKPOINT.CONTENTS): two rows with one file key
    mean a corrupt checkpoint, not a file to keep twice."""
    if pc.count_distinct(adds.column("path")).as_py() == adds.num_rows:
        return
    keys = _table_keys(adds)
    seen: set[tuple[str, str | None]] = set()
    for key in keys:
        if key in seen:
            raise CorruptLogError(
                f"the checkpoint holds live file {key[0][:200]!r} twice",
                table=table,
                version=cp.version,
                file=file,
            )
        seen.add(key)


def _sidecar_name(path: str) -> str:
    """The log-relative name of a sidecar from its (URI-encoded) ``path`` field."""
    decoded = unquote(path)
    return f"{SIDECARS_DIR}/{decoded.rsplit('/', 1)[-1]}"


def _rows(table: pa.Table, column: str) -> list[dict[str, Any]]:
    if column not in table.column_names:
        return []
    values = table.column(column)
    if values.null_count == len(values):
        return []
    return cast(list[dict[str, Any]], values.filter(pc.is_valid(values)).to_pylist())


def _non_file_actions(table: pa.Table) -> Iterable[Action]:
    """The non-file actions of a checkpoint Parquet table, in column order (CHECKPOINT.CONTENTS).
    ValueError for a checkpoint with more than one protocol or metaData row (not a state)."""
    for column in ("protocol", "metaData"):
        if len(_rows(table, column)) > 1:
            raise ValueError(f"the checkpoint holds {column} more than once")
    for row in _rows(table, "protocol"):
        readers = row.get("readerFeatures")
        writers = row.get("writerFeatures")
        yield Protocol(
            min_reader_version=int(row["minReaderVersion"]),
            min_writer_version=int(row["minWriterVersion"]),
            reader_features=None if readers is None else tuple(readers),
            writer_features=None if writers is None else tuple(writers),
        )
    for row in _rows(table, "metaData"):
        if not isinstance(row.get("id"), str):
            raise ValueError("a metaData row without id")
        fmt = row.get("format") or {}
        yield Metadata(
            id=row["id"],
            schema_string=row["schemaString"],
            partition_columns=tuple(row.get("partitionColumns") or ()),
            configuration={k: v for k, v in (row.get("configuration") or ())},
            format=Format(
                provider=fmt.get("provider") or "parquet",
                options={k: v for k, v in (fmt.get("options") or ())},
            ),
            name=row.get("name"),
            description=row.get("description"),
            created_time=row.get("createdTime"),
        )
    for row in _rows(table, "txn"):
        yield SetTransaction(
            app_id=row["appId"], version=int(row["version"]), last_updated=row.get("lastUpdated")
        )
    for row in _rows(table, "domainMetadata"):
        yield DomainMetadata(
            domain=row["domain"],
            configuration=row.get("configuration") or "",
            removed=bool(row.get("removed")),
        )
    for row in _rows(table, "checkpointMetadata"):
        tags = row.get("tags")
        yield CheckpointMetadata(version=int(row["version"]), tags=_tags(tags))
    for row in _rows(table, "sidecar"):
        tags = row.get("tags")
        yield Sidecar(
            path=row["path"],
            size_in_bytes=int(row.get("sizeInBytes") or 0),
            modification_time=int(row.get("modificationTime") or 0),
            tags=_tags(tags),
        )
