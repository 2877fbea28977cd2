"""Reading a complete checkpoint into a replay state (CHECKPOINT.READ, CHECKPOINT.CONTENTS).

Classic, multi-part and v2 checkpoints (with their sidecars) are read with pyarrow, only the
columns that matter; file actions stay Arrow. Any file that is missing or cannot be read makes
the whole checkpoint unusable (:class:`UnusableCheckpoint`), so that a load can fall back to an
older start; a hostile path is refused (UnsafePathError), never skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, cast

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import arrow_input, codec
from ..actions import (
    Action,
    AddFile,
    CheckpointMetadata,
    DomainMetadata,
    Format,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
    Sidecar,
)
from ..errors import (
    CorruptLogError,
    DeltaError,
    MissingProtocolOrMetadataError,
    UnsafePathError,
)
from ..log.listing import CheckpointFiles
from ..log.names import sidecar_name
from ..log.store import FileInfo, LogStore
from .checkpoint_checks import (
    NonFileActions,
    check_action_kinds,
    check_one_action_per_row,
    check_required,
)
from .file_checks import check_file_table
from .keys import refuse_duplicate_keys, refuse_live_tombstones
from .layouts import (
    FILE_COLUMNS,
    NON_FILE_COLUMNS,
    STATS_PARSED,
    adds_to_table,
    removes_to_table,
    struct_column_to_table,
    tags_map,
)
from .state import ReplayState
from .stats import conform_struct

__all__ = [
    "UnusableCheckpoint",
    "non_file_actions",
    "read_checkpoint",
    "verify_checkpoint",
]


class UnusableCheckpoint(Exception):
    """A listed checkpoint that cannot be read (missing part or sidecar, corrupt file)."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(str(error))
        self.error = error


def _missing(store: LogStore, name: str, version: int) -> UnusableCheckpoint:
    """A checkpoint file or sidecar that the listing or the checkpoint promised is gone
    (delta-spark: DELTA_MISSING_PART_FILES)."""
    return UnusableCheckpoint(
        CorruptLogError(
            "a file of the checkpoint is missing",
            table=store.table_path,
            version=version,
            file=name,
        )
    )


def _wanted_columns(parquet: pq.ParquetFile, files_only: bool) -> list[str]:
    """The action columns of a checkpoint Parquet file that matter here; ValueError for an
    action field of another kind than the protocol's (skipping or casting it would silently
    drop or change its actions)."""
    check_action_kinds(parquet.schema_arrow)
    columns: list[str] = []
    for top in parquet.schema_arrow:
        if top.name in FILE_COLUMNS:
            wanted = {c.delta for c in FILE_COLUMNS[top.name]}
            if top.name == "add":
                wanted.add(STATS_PARSED)
            columns.extend(f"{top.name}.{child.name}" for child in top.type if child.name in wanted)
        elif top.name in NON_FILE_COLUMNS and not files_only:
            columns.append(top.name)
    return columns


def _read_parquet(
    store: LogStore, name: str, version: int, *, files_only: bool = False
) -> pa.Table:
    """The action columns of a checkpoint (or sidecar) Parquet file that matter here."""
    try:
        # pyarrow gets a file the store opened under PATH.REGULAR_FILES, never a path, read
        # into Arrow's memory here: never a Python file its threads call back into (issue 33)
        parquet = pq.ParquetFile(arrow_input.reader(store.open_file(name)))
        table = parquet.read(columns=_wanted_columns(parquet, files_only))
        check_one_action_per_row(table)
        return table
    except FileNotFoundError:
        raise _missing(store, name, version) from None
    except UnsafePathError:
        raise
    except DeltaError as refused:  # not a regular file, not readable
        raise UnusableCheckpoint(refused.located(version)) from None
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise UnusableCheckpoint(
            CorruptLogError(
                f"cannot read checkpoint file: {exc}",
                table=store.table_path,
                version=version,
                file=name,
            )
        ) from None


@dataclass
class _Parts:
    """What the files of one checkpoint hold, gathered before the state is built."""

    file_tables: dict[str, list[pa.Table]] = field(
        default_factory=lambda: {"add": [], "remove": []}
    )
    sidecars: list[Sidecar] = field(default_factory=list)
    json_adds: list[AddFile] = field(default_factory=list)
    json_removes: list[RemoveFile] = field(default_factory=list)
    non_file: NonFileActions = field(default_factory=NonFileActions)

    def add_file_tables(self, table: pa.Table) -> None:
        for kind, tables in self.file_tables.items():
            if kind in table.column_names:
                check_required(table.column(kind), kind)
                tables.append(struct_column_to_table(table.column(kind), kind))

    def take(self, action: Action, state: ReplayState) -> None:
        """A non-file action of the checkpoint (CHECKPOINT.CONTENTS: each once)."""
        self.non_file.take(action)
        if isinstance(action, Sidecar):
            self.sidecars.append(action)
        else:
            state.apply_non_file(action)


def _read_json_part(
    store: LogStore, info: FileInfo, version: int, state: ReplayState, parts: _Parts
) -> None:
    """A v2 checkpoint's top-level JSON file: its actions, one per line."""
    try:
        data = store.read(info.name)
        actions = codec.decode_commit(data, table=store.table_path, version=version, file=info.name)
    except FileNotFoundError:
        raise _missing(store, info.name, version) from None
    except CorruptLogError as corrupt:
        raise UnusableCheckpoint(corrupt) from None
    for action in actions:
        if isinstance(action, AddFile):
            parts.json_adds.append(action)
        elif isinstance(action, RemoveFile):
            parts.json_removes.append(action)
        else:
            parts.take(action, state)


def _read_parquet_part(
    store: LogStore, info: FileInfo, version: int, state: ReplayState, parts: _Parts
) -> None:
    """A classic checkpoint, a part of a multi-part one, or a v2 checkpoint's Parquet file."""
    table = _read_parquet(store, info.name, version)
    for action in non_file_actions(table):
        parts.take(action, state)
    parts.add_file_tables(table)


def _file_tables(store: LogStore, cp: CheckpointFiles, parts: _Parts) -> dict[str, pa.Table]:
    """The checkpoint's live files and tombstones, sidecars included, checked
    (PATH.DATA_FILE, CHECKPOINT.CONTENTS)."""
    for sidecar in parts.sidecars:
        name = sidecar_name(sidecar.path)
        parts.add_file_tables(_read_parquet(store, name, cp.version, files_only=True))
    if parts.json_adds:
        parts.file_tables["add"].append(adds_to_table(parts.json_adds))
    if parts.json_removes:
        parts.file_tables["remove"].append(removes_to_table(parts.json_removes))
    first = cp.files[0].name
    out: dict[str, pa.Table] = {}
    for kind, tables in parts.file_tables.items():
        checked = [
            check_file_table(rows, kind, store.table_path, cp.version, first) for rows in tables
        ]
        if checked:
            out[kind] = pa.concat_tables(_same_stats_parsed(checked), promote_options="default")
    if "add" in out:
        refuse_duplicate_keys(out["add"], store.table_path, cp.version, first)
        if "remove" in out:
            refuse_live_tombstones(out["add"], out["remove"], store.table_path, cp.version, first)
    return out


def _same_stats_parsed(tables: list[pa.Table]) -> list[pa.Table]:
    """The parts' ``stats_parsed`` columns laid out alike (the first part's), so that the parts
    concatenate; a part without them gets nulls when they are concatenated."""
    kinds = [t.schema.field(STATS_PARSED).type for t in tables if STATS_PARSED in t.column_names]
    if len(set(kinds)) <= 1:
        return tables
    out = []
    for table in tables:
        if STATS_PARSED in table.column_names:
            index = table.schema.get_field_index(STATS_PARSED)
            column = conform_struct(table.column(index).combine_chunks(), kinds[0])
            table = table.set_column(index, STATS_PARSED, column)
        out.append(table)
    return out


def _read_checkpoint_files(store: LogStore, cp: CheckpointFiles) -> ReplayState:
    state = ReplayState()
    parts = _Parts()
    for info in cp.files:
        if info.name.endswith(".json"):
            _read_json_part(store, info, cp.version, state, parts)
        else:
            _read_parquet_part(store, info, cp.version, state, parts)
    parts.non_file.check_version(cp.version)
    state.cacheable = not parts.sidecars
    tables = _file_tables(store, cp, parts)
    if "add" in tables:
        state.files = tables["add"]
    if "remove" in tables:
        state.tombstones = tables["remove"]
    if state.protocol is not None:
        state.protocol_origin = (cp.version, cp.files[0].name)
    return state


def read_checkpoint(store: LogStore, cp: CheckpointFiles) -> ReplayState:
    """Read a complete checkpoint into a state (CHECKPOINT.READ, CHECKPOINT.CONTENTS).

    Any file that is missing or cannot be read makes the whole checkpoint unusable
    (:class:`UnusableCheckpoint`), so that the caller can fall back to an older start.
    """
    try:
        return _read_checkpoint_files(store, cp)
    except (UnusableCheckpoint, UnsafePathError):
        raise  # a hostile checkpoint is refused, never skipped
    except CorruptLogError as corrupt:  # malformed rows: unusable, commits may still serve
        raise UnusableCheckpoint(corrupt) from None
    except (pa.ArrowException, TypeError, ValueError, KeyError, AttributeError) as exc:
        raise UnusableCheckpoint(
            CorruptLogError(
                f"malformed checkpoint: {exc!r}",
                table=store.table_path,
                version=cp.version,
                file=cp.files[0].name,
            )
        ) from None


def verify_checkpoint(state: ReplayState, table: str, cp: CheckpointFiles) -> None:
    """A checkpoint read whole must hold a protocol and a metadata
    (RETENTION.VERIFIED_CHECKPOINT)."""
    if state.protocol is None or state.metadata is None:
        raise MissingProtocolOrMetadataError(
            "the checkpoint holds no protocol or no metadata",
            table=table,
            version=cp.version,
            file=cp.files[0].name,
        )


def _rows(table: pa.Table, column: str) -> list[dict[str, Any]]:
    if column not in table.column_names:
        return []
    values = table.column(column)
    if values.null_count == len(values):
        return []
    return cast(list[dict[str, Any]], values.filter(pc.is_valid(values)).to_pylist())


def _required(row: dict[str, Any], action: str, *names: str) -> None:
    """ValueError for a row of ``action`` that leaves a field the protocol requires null."""
    missing = [name for name in names if row.get(name) is None]
    if missing:
        raise ValueError(f"{action} without {', '.join(missing)}")


def _protocol(row: dict[str, Any]) -> Protocol:
    _required(row, "protocol", "minReaderVersion", "minWriterVersion")
    readers = row.get("readerFeatures")
    writers = row.get("writerFeatures")
    protocol = Protocol(
        min_reader_version=int(row["minReaderVersion"]),
        min_writer_version=int(row["minWriterVersion"]),
        reader_features=None if readers is None else tuple(readers),
        writer_features=None if writers is None else tuple(writers),
    )
    misplaced = codec.misplaced_feature_lists(protocol)
    if misplaced:  # ACTION.PROTOCOL_FEATURE_LISTS
        raise ValueError(f"protocol: {' and '.join(misplaced)}")
    return protocol


def _metadata(row: dict[str, Any]) -> Metadata:
    _required(row, "metaData", "id", "format", "partitionColumns")
    fmt = row["format"]
    _required(fmt, "metaData.format", "provider")
    return Metadata(
        id=row["id"],
        schema_string=row.get("schemaString") or "",
        partition_columns=tuple(row["partitionColumns"]),
        configuration={k: v for k, v in (row.get("configuration") or ())},
        format=Format(
            provider=fmt["provider"],
            options={k: v for k, v in (fmt.get("options") or ())},
        ),
        name=row.get("name"),
        description=row.get("description"),
        created_time=row.get("createdTime"),
    )


def _txn(row: dict[str, Any]) -> SetTransaction:
    _required(row, "txn", "appId", "version")
    return SetTransaction(
        app_id=row["appId"], version=int(row["version"]), last_updated=row.get("lastUpdated")
    )


def _domain(row: dict[str, Any]) -> DomainMetadata:
    _required(row, "domainMetadata", "domain", "configuration")
    return DomainMetadata(
        domain=row["domain"],
        configuration=row["configuration"],
        removed=bool(row.get("removed")),
    )


def _checkpoint_metadata(row: dict[str, Any]) -> CheckpointMetadata:
    _required(row, "checkpointMetadata", "version")
    return CheckpointMetadata(version=int(row["version"]), tags=tags_map(row.get("tags")))


def _sidecar(row: dict[str, Any]) -> Sidecar:
    _required(row, "sidecar", "path", "sizeInBytes", "modificationTime")
    return Sidecar(
        path=row["path"],
        size_in_bytes=int(row["sizeInBytes"]),
        modification_time=int(row["modificationTime"]),
        tags=tags_map(row.get("tags")),
    )


_DECODERS: tuple[tuple[str, Callable[[dict[str, Any]], Action]], ...] = (
    ("protocol", _protocol),
    ("metaData", _metadata),
    ("txn", _txn),
    ("domainMetadata", _domain),
    ("checkpointMetadata", _checkpoint_metadata),
    ("sidecar", _sidecar),
)
"""The non-file action columns of a checkpoint, in the order they are read."""


def non_file_actions(table: pa.Table) -> Iterable[Action]:
    """The non-file actions of a checkpoint Parquet table, in column order (CHECKPOINT.CONTENTS);
    ValueError for a row without a field the protocol requires."""
    for column, decode in _DECODERS:
        for row in _rows(table, column):
            yield decode(row)
