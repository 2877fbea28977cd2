"""Writing checkpoints and cleaning up the log (CHECKPOINT.*, RETENTION.*).

A checkpoint stores the snapshot at one version as Parquet, one row per action and one nullable
struct column per action type, in delta-spark's layout (CHECKPOINT.CONTENTS): top-level columns
``txn``, ``add``, ``remove``, ``metaData``, ``protocol``, ``domainMetadata``, with the field
names, order and types delta-spark 3.x writes (``add.partitionValues`` a ``map<string,string>``,
``add.stats`` a JSON string, ``deletionVector`` a struct, ``remove`` without ``stats`` and
``tags``). Live files and tombstones are stored with ``dataChange = false``; expired tombstones
and application transactions are left out (RETENTION.TOMBSTONES, RETENTION.SET_TRANSACTION).
``add.stats`` and ``stats_parsed`` / ``partitionValues_parsed`` follow the table's properties
(CHECKPOINT.STATS_AS_STRUCT, :mod:`deltaspec.impl.checkpoint_stats`); a table with the
``v2Checkpoint`` feature and ``delta.checkpointPolicy = v2`` gets a v2 checkpoint
(CHECKPOINT.V2_WRITE, :mod:`deltaspec.impl.checkpoint_v2`).

Every checkpoint file is created with put-if-absent (a file that already exists was written by
another writer of the same checkpoint, whose content is the same), and ``_last_checkpoint`` is
overwritten only after every part exists, so a failure half-way never leaves the hint pointing
at an incomplete checkpoint (CHECKPOINT.LAST_CHECKPOINT). After a checkpoint, the log is cleaned
up a checkpoint at a time (RETENTION.LOG).

This module never imports ``deltaspec.model``.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deltaspec.impl.actions import DomainMetadata, Metadata, Protocol, SetTransaction
from deltaspec.impl.checkpoint_stats import add_parsed_columns
from deltaspec.impl.checkpoint_v2 import uses_v2_checkpoint, write_v2_checkpoint
from deltaspec.impl.errors import CorruptLogError, DeltaError, VersionExistsError
from deltaspec.impl.log import crashpoints
from deltaspec.impl.log.last_checkpoint import encode_last_checkpoint, write_last_checkpoint
from deltaspec.impl.log.listing import CheckpointFiles, LogListing, list_log
from deltaspec.impl.log.names import (
    SIDECARS_DIR,
    classic_checkpoint_name,
    hadoop_crc_of,
    is_checkpoint_name,
    log_file_version,
    part_checkpoint_name,
)
from deltaspec.impl.log.store import TEMP_FILE_SAFETY_MS, FileInfo, LogStore
from deltaspec.impl.replay.layouts import ADD_COLUMNS, REMOVE_COLUMNS, ColumnSpec
from deltaspec.impl.snapshot import DeltaLog, Snapshot
from deltaspec.impl.table.properties import (
    DAY_MS,
    TableProperties,
)
from deltaspec.rules import rule

__all__ = [
    "CHECKPOINT_SCHEMA",
    "CheckpointResult",
    "checkpoint_interval",
    "checkpoint_table",
    "checkpoint_version",
    "cleanup_expired_logs",
    "log_cleanup_enabled",
    "needs_checkpoint",
    "part_of_rows",
    "sweep_temp_files",
    "write_checkpoint",
]

# --- the checkpoint schema (delta-spark's) -------------------------------------------------------

_STRING_MAP = pa.map_(pa.string(), pa.string())
_STRING_LIST = pa.list_(pa.string())


def _delta_type(cols: Sequence[ColumnSpec]) -> pa.StructType:
    return pa.struct(
        [pa.field(c.delta, _delta_type(c.children) if c.children else c.type) for c in cols]
    )


TXN_TYPE = pa.struct([("appId", pa.string()), ("version", pa.int64()), ("lastUpdated", pa.int64())])
ADD_TYPE = _delta_type(ADD_COLUMNS)
REMOVE_TYPE = _delta_type(REMOVE_COLUMNS)
METADATA_TYPE = pa.struct(
    [
        ("id", pa.string()),
        ("name", pa.string()),
        ("description", pa.string()),
        ("format", pa.struct([("provider", pa.string()), ("options", _STRING_MAP)])),
        ("schemaString", pa.string()),
        ("partitionColumns", _STRING_LIST),
        ("configuration", _STRING_MAP),
        ("createdTime", pa.int64()),
    ]
)
PROTOCOL_TYPE = pa.struct(
    [
        ("minReaderVersion", pa.int32()),
        ("minWriterVersion", pa.int32()),
        ("readerFeatures", _STRING_LIST),
        ("writerFeatures", _STRING_LIST),
    ]
)
DOMAIN_METADATA_TYPE = pa.struct(
    [("domain", pa.string()), ("configuration", pa.string()), ("removed", pa.bool_())]
)

CHECKPOINT_SCHEMA: pa.Schema = pa.schema(
    [
        ("txn", TXN_TYPE),
        ("add", ADD_TYPE),
        ("remove", REMOVE_TYPE),
        ("metaData", METADATA_TYPE),
        ("protocol", PROTOCOL_TYPE),
        ("domainMetadata", DOMAIN_METADATA_TYPE),
    ]
)
"""The classic checkpoint's Parquet schema, as delta-spark 3.x writes it (CHECKPOINT.CONTENTS)."""


# --- table properties ----------------------------------------------------------------------------


def checkpoint_interval(metadata: Metadata) -> int:
    """``delta.checkpointInterval``: a positive integer, default 10 (CHECKPOINT.INTERVAL);
    ValueError for anything else (properties.checkpoint_interval)."""
    return TableProperties(metadata.configuration).checkpoint_interval


@rule("CHECKPOINT.INTERVAL")
def needs_checkpoint(version: int, metadata: Metadata) -> bool:
    """Whether committing ``version`` triggers a checkpoint (CHECKPOINT.INTERVAL).

    True when ``version != 0`` and ``version`` is a multiple of ``delta.checkpointInterval``.
    """
    return version != 0 and version % checkpoint_interval(metadata) == 0


def log_cleanup_enabled(metadata: Metadata) -> bool:
    """``delta.enableExpiredLogCleanup`` (default true) (RETENTION.LOG)."""
    return TableProperties(metadata.configuration).expired_log_cleanup


# --- building the checkpoint ---------------------------------------------------------------------


def _to_delta_struct(table: pa.Table, cols: Sequence[ColumnSpec]) -> pa.StructArray:
    """A FILES/TOMBSTONES table as the checkpoint's ``add``/``remove`` struct array."""
    children: list[pa.Array] = []
    for col in cols:
        column = table.column(col.name).combine_chunks()
        if col.children:
            inner = column.flatten()
            column = pa.StructArray.from_arrays(
                inner,
                fields=list(_delta_type(col.children)),
                mask=column.is_null() if column.null_count else None,
            )
        children.append(column)
    return pa.StructArray.from_arrays(children, fields=list(_delta_type(cols)))


def _protocol_row(protocol: Protocol) -> dict[str, Any]:
    return {
        "minReaderVersion": protocol.min_reader_version,
        "minWriterVersion": protocol.min_writer_version,
        "readerFeatures": None
        if protocol.reader_features is None
        else list(protocol.reader_features),
        "writerFeatures": None
        if protocol.writer_features is None
        else list(protocol.writer_features),
    }


def _metadata_row(metadata: Metadata) -> dict[str, Any]:
    return {
        "id": metadata.id,
        "name": metadata.name,
        "description": metadata.description,
        "format": {
            "provider": metadata.format.provider,
            "options": list(metadata.format.options.items()),
        },
        "schemaString": metadata.schema_string,
        "partitionColumns": list(metadata.partition_columns),
        "configuration": list(metadata.configuration.items()),
        "createdTime": metadata.created_time,
    }


def _txn_row(txn: SetTransaction) -> dict[str, Any]:
    return {"appId": txn.app_id, "version": txn.version, "lastUpdated": txn.last_updated}


def _domain_row(domain: DomainMetadata) -> dict[str, Any]:
    return {"domain": domain.domain, "configuration": domain.configuration, "removed": False}


@rule("CHECKPOINT.CONTENTS")
def checkpoint_table(snapshot: Snapshot, *, now_ms: int) -> pa.Table:
    """The checkpoint of ``snapshot`` as one Arrow table (CHECKPOINT.CONTENTS).

    Rows: the protocol, the metadata, one ``txn`` per unexpired app id, one ``domainMetadata``
    per live domain, one ``add`` per live file, one ``remove`` per unexpired tombstone. The
    ``add`` struct carries ``stats`` and/or ``stats_parsed`` / ``partitionValues_parsed`` as
    the table's properties ask (CHECKPOINT.STATS_AS_STRUCT).
    """
    txns = sorted(snapshot.app_transactions_at(now_ms).values(), key=lambda t: t.app_id)
    domains = sorted(snapshot.domains.values(), key=lambda d: d.domain)
    files = snapshot.files_table()
    tombstones = snapshot.tombstones_table(now_ms)
    small: list[tuple[str, dict[str, Any]]] = [
        ("protocol", _protocol_row(snapshot.protocol)),
        ("metaData", _metadata_row(snapshot.metadata)),
        *(("txn", _txn_row(t)) for t in txns),
        *(("domainMetadata", _domain_row(d)) for d in domains),
    ]
    n_small, n_adds, n_removes = len(small), files.num_rows, tombstones.num_rows
    columns: list[pa.Array] = []
    for schema_field in CHECKPOINT_SCHEMA:
        name, kind = schema_field.name, schema_field.type
        if name == "add":
            pieces = [
                pa.nulls(n_small, kind),
                _to_delta_struct(files, ADD_COLUMNS),
                pa.nulls(n_removes, kind),
            ]
        elif name == "remove":
            pieces = [
                pa.nulls(n_small + n_adds, kind),
                _to_delta_struct(tombstones, REMOVE_COLUMNS),
            ]
        else:
            head = pa.array([row if column == name else None for column, row in small], type=kind)
            pieces = [head, pa.nulls(n_adds + n_removes, kind)]
        columns.append(pa.concat_arrays([p.cast(kind) for p in pieces]))
    table = pa.Table.from_arrays(columns, schema=CHECKPOINT_SCHEMA)
    adds = add_parsed_columns(
        table.column("add").combine_chunks(), snapshot.metadata, files=snapshot.live_files
    )
    return table.set_column(table.schema.get_field_index("add"), "add", adds)


def part_of_rows(table: pa.Table, parts: int) -> list[int]:
    """The part (0-based) each row of a :func:`checkpoint_table` goes to in a ``parts``-way
    multi-part checkpoint: a stable hash (CRC-32) of the ``add`` or ``remove`` path modulo
    ``parts``; the non-file rows (protocol, metadata, txn, domains) go to the first part.

    Like delta-spark (``repartition(parts, coalesce(add.path, remove.path))``), the split depends
    only on the paths, not on row positions. Two writers of the same multi-part checkpoint
    can then fill in each other's missing parts (each part is put-if-absent) even when their
    clocks expired different tombstones: every live file is in exactly one part either way.
    Contiguous slices would shift when one writer has a row fewer, and a mix of both writers'
    parts would lose or double files.
    """
    adds = table.column("add").combine_chunks()
    removes = table.column("remove").combine_chunks()
    add_paths = adds.field("path").to_pylist()
    remove_paths = removes.field("path").to_pylist()
    add_valid = adds.is_valid().to_pylist()
    remove_valid = removes.is_valid().to_pylist()
    out: list[int] = []
    for i in range(table.num_rows):
        path = add_paths[i] if add_valid[i] else remove_paths[i] if remove_valid[i] else None
        out.append(0 if path is None else zlib.crc32(path.encode("utf-8")) % parts)
    return out


def _parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="snappy")
    return bytes(sink.getvalue().to_pybytes())


@dataclass(frozen=True, slots=True)
class CheckpointResult:
    """What :func:`write_checkpoint` wrote: the ``_last_checkpoint`` content and the files."""

    version: int
    size: int
    parts: int | None
    size_in_bytes: int
    num_of_add_files: int
    files: tuple[str, ...]
    v2_checkpoint: dict[str, Any] | None = None

    def last_checkpoint_json(self) -> str:
        """``_last_checkpoint``: version, size, parts (multi-part only), sizeInBytes,
        numOfAddFiles and, for a v2 checkpoint, v2Checkpoint, in that order
        (CHECKPOINT.LAST_CHECKPOINT)."""
        return encode_last_checkpoint(
            self.version,
            self.size,
            self.parts,
            self.size_in_bytes,
            self.num_of_add_files,
            v2_checkpoint=self.v2_checkpoint,
        )


def _store_of(log_or_store: DeltaLog | LogStore) -> LogStore:
    return log_or_store.store if isinstance(log_or_store, DeltaLog) else log_or_store


def _log_of(log_or_store: DeltaLog | LogStore) -> DeltaLog:
    if isinstance(log_or_store, DeltaLog):
        return log_or_store
    return DeltaLog(log_or_store.table_path, store=log_or_store, cache=False)


def _verify_written(log: DeltaLog, version: int, names: Sequence[str]) -> None:
    """The checkpoint of ``version`` made of ``names`` reads back whole, else its typed error
    (RETENTION.VERIFIED_CHECKPOINT)."""
    listing = list_log(log.store, version)
    for cp in listing.checkpoints.get(version, ()):
        if [info.name for info in cp.files] == list(names):
            log.verify_checkpoint(cp)
            return
    raise CorruptLogError(
        "a file of the checkpoint just written is not listed (empty or gone)",
        table=log.table_path,
        version=version,
        file=names[0],
    )


def write_checkpoint(
    log_or_store: DeltaLog | LogStore,
    snapshot: Snapshot,
    *,
    parts: int | None = None,
    now_ms: int,
) -> CheckpointResult:
    """Write the checkpoint of ``snapshot`` and then ``_last_checkpoint`` (CHECKPOINT.*).

    ``parts`` > 1 writes a multi-part checkpoint ``<v>.checkpoint.<i>.<parts>.parquet``: the rows
    of :func:`checkpoint_table` split by :func:`part_of_rows` (non-file actions in part 1, files
    by a hash of their path), a part possibly empty; otherwise a classic single file. A
    table with the ``v2Checkpoint`` feature and ``delta.checkpointPolicy = v2`` gets a v2
    checkpoint (CHECKPOINT.V2_WRITE, :mod:`deltaspec.impl.checkpoint_v2`); with the feature and
    the classic policy a classic file even if ``parts`` is given, since multi-part checkpoints
    are forbidden there. Each file is created with
    put-if-absent; one that already exists came from another writer of the same checkpoint and
    is kept. ``_last_checkpoint`` is written last, only after every part exists; if writing a
    part fails the exception propagates and the hint is untouched.
    """
    store = _store_of(log_or_store)
    table = checkpoint_table(snapshot, now_ms=now_ms)
    if uses_v2_checkpoint(snapshot.protocol, snapshot.metadata):
        result = _write_v2(store, snapshot, table, now_ms)
    else:
        result = _write_v1(log_or_store, snapshot, table, parts)
    crashpoints.reached("checkpoint.before_last_checkpoint")
    write_last_checkpoint(store, result.last_checkpoint_json())
    crashpoints.reached("checkpoint.after_last_checkpoint")
    return result


def _write_v1(
    log_or_store: DeltaLog | LogStore, snapshot: Snapshot, table: pa.Table, parts: int | None
) -> CheckpointResult:
    """A classic or multi-part checkpoint: every file put-if-absent; one that exists already is
    used only once read back whole."""
    version = snapshot.version
    store = _store_of(log_or_store)
    pieces, written_parts = _pieces(table, version, snapshot.protocol, parts)
    total, reused = _put_pieces(store, pieces)
    if reused:
        # a file that exists should hold the same checkpoint, from another writer
        # (CHECKPOINT.INTERVAL); it is pointed at only once read back whole (a torn one would
        # make _last_checkpoint and log cleanup trust a checkpoint nobody can read)
        _verify_written(_log_of(log_or_store), version, [name for name, _ in pieces])
    return CheckpointResult(
        version=version,
        size=table.num_rows,
        parts=written_parts,
        size_in_bytes=total,
        num_of_add_files=snapshot.num_files,
        files=tuple(name for name, _ in pieces),
    )


def _write_v2(
    store: LogStore, snapshot: Snapshot, table: pa.Table, now_ms: int
) -> CheckpointResult:
    """A v2 checkpoint: a sidecar with the file actions, then the UUID-named top-level file
    (CHECKPOINT.V2_WRITE)."""
    txns = tuple(sorted(snapshot.app_transactions_at(now_ms).values(), key=lambda t: t.app_id))
    domains = tuple(sorted(snapshot.domains.values(), key=lambda d: d.domain))
    written = write_v2_checkpoint(
        store,
        table,
        snapshot.version,
        (snapshot.protocol, snapshot.metadata, txns, domains),
        snapshot.num_files,
    )
    return CheckpointResult(
        version=snapshot.version,
        size=written.num_actions,
        parts=None,
        size_in_bytes=written.size_in_bytes,
        num_of_add_files=snapshot.num_files,
        files=(written.top_level.name, f"{SIDECARS_DIR}/{written.sidecar.path}"),
        v2_checkpoint=written.last_checkpoint_field(),
    )


def _pieces(
    table: pa.Table, version: int, protocol: Protocol, parts: int | None
) -> tuple[list[tuple[str, pa.Table]], int | None]:
    """The files of the checkpoint by name, and the number of parts (None: one classic file).
    A table with the ``v2Checkpoint`` feature always gets a classic file."""
    features = set(protocol.writer_features or ())
    if parts is None or parts <= 1 or "v2Checkpoint" in features:
        return [(classic_checkpoint_name(version), table)], None
    assignment = pa.array(part_of_rows(table, parts), type=pa.int32())
    pieces = [
        (part_checkpoint_name(version, i + 1, parts), table.filter(pc.equal(assignment, i)))
        for i in range(parts)
    ]
    return pieces, parts


def _put_pieces(store: LogStore, pieces: list[tuple[str, pa.Table]]) -> tuple[int, list[str]]:
    """Create every file put-if-absent (LOG.PUT_IF_ABSENT); the bytes written and the names
    that already existed."""
    total = 0
    reused: list[str] = []
    for index, (name, piece) in enumerate(pieces):
        if index == 1:
            crashpoints.reached("checkpoint.between_parts")
        data = _parquet_bytes(piece)
        try:
            store.write_new(name, data)
        except VersionExistsError:
            reused.append(name)
        total += len(data)
    return total, reused


@rule("CHECKPOINT.COMMITTED_VERSION")
def checkpoint_version(
    log: DeltaLog, version: int, *, now_ms: int, parts: int | None = None
) -> CheckpointResult:
    """Checkpoint the snapshot at ``version``, then clean up the log (CHECKPOINT.COMMITTED_VERSION,
    RETENTION.LOG).

    This is the post-commit step after committing ``version`` (CHECKPOINT.INTERVAL): the
    checkpoint is of that version even if later ones exist. Log cleanup runs when
    ``delta.enableExpiredLogCleanup`` is true (default), and sweeps the temporary files that
    killed writers left behind (:func:`sweep_temp_files`).
    """
    snapshot = log.snapshot(version)
    result = write_checkpoint(log, snapshot, parts=parts, now_ms=now_ms)
    log.wrote_checkpoint(result.files)
    if log_cleanup_enabled(snapshot.metadata):
        cleanup_expired_logs(log, version, now_ms, snapshot.metadata)
        sweep_temp_files(log.store, now_ms)
    return result


def sweep_temp_files(
    store: LogStore, now_ms: int, safety_ms: int = TEMP_FILE_SAFETY_MS
) -> list[str]:
    """Delete the log's temporary files older than ``safety_ms`` (default one hour) at
    ``now_ms``: what writers killed between writing and removing them left behind. They are
    never listed or read, so this only reclaims space. Returns the deleted names."""
    return store.sweep_temp_files(now_ms - safety_ms)


# --- log cleanup ---------------------------------------------------------------------------------


def _readable(log: DeltaLog, checkpoints: Sequence[CheckpointFiles]) -> bool:
    """Whether one of the checkpoints of a version reads back whole
    (RETENTION.VERIFIED_CHECKPOINT)."""
    for cp in checkpoints:
        try:
            log.verify_checkpoint(cp)
        except DeltaError:
            continue
        return True
    return False


@rule("RETENTION.LOG")
def cleanup_expired_logs(
    log_or_store: DeltaLog | LogStore, checkpoint_version: int, now_ms: int, metadata: Metadata
) -> list[str]:
    """Delete the log files that expired before a complete checkpoint (RETENTION.LOG).

    1. ``cutoff = now − delta.logRetentionDuration`` (default 30 days), truncated to midnight UTC.
    2. Commit, checkpoint and checksum files are taken in name order with their modification
       times made strictly increasing (a time not after the previous one counts as previous + 1).
    3. Among complete checkpoints ``c <= checkpoint_version``, the newest one whose immediately
       preceding file is at or before the cutoff is kept together with everything after it;
       every listed file before it (commits, checkpoints, checksums of versions ``< c``) is
       deleted, with the hidden Hadoop ``.<name>.crc`` files that belong to them.

    The checkpoint kept as the new start must read back whole first
    (RETENTION.VERIFIED_CHECKPOINT): a torn, incomplete or malformed one is passed over for an
    older one, so commits are never deleted unless a readable checkpoint covers them.

    Nothing happens when ``delta.enableExpiredLogCleanup`` is false or no checkpoint qualifies.
    Returns the deleted names.
    """
    store = _store_of(log_or_store)
    properties = TableProperties(metadata.configuration)
    if not properties.expired_log_cleanup:
        return []
    cutoff = now_ms - properties.log_retention_ms
    cutoff -= cutoff % DAY_MS
    names = store.list_names()
    entries, infos = _timed_entries(store, names, checkpoint_version, cutoff)
    listing = LogListing.of(infos, full=True)
    keep_from = _new_start(_log_of(log_or_store), listing, entries, checkpoint_version, cutoff)
    if keep_from is None:
        return []
    return _delete_before(store, names, [name for name, _, _ in entries[:keep_from]])


def _timed_entries(
    store: LogStore, names: list[str], last_version: int, cutoff: int
) -> tuple[list[tuple[str, int, int]], list[FileInfo]]:
    """Commit, checkpoint and checksum files up to ``last_version`` in name order, as
    ``(name, version, time)`` with the times made strictly increasing, and their listings.

    Only the prefix that may expire is looked at (one ``stat`` each): the made-increasing times
    never decrease, so once one is past ``cutoff`` no later file's predecessor can expire, and
    the entries stop after the files of that version (the rest of a checkpoint whose first file
    it is). Cleanup costs what it may delete, not the length of the log."""
    entries: list[tuple[str, int, int]] = []
    infos: list[FileInfo] = []
    previous: int | None = None
    last: int | None = None  # the version of the first file past the cutoff
    for name in names:
        version = log_file_version(name)
        if version is None or version > last_version:
            continue
        if last is not None and version != last:
            break
        info = store.stat(name)
        if info is None:
            continue  # deleted since the listing (another cleanup)
        time = info.modification_time
        if previous is not None and time <= previous:
            time = previous + 1
        previous = time
        entries.append((name, version, time))
        infos.append(info)
        if last is None and time > cutoff:
            last = version
    return entries, infos


def _new_start(
    log: DeltaLog,
    listing: LogListing,
    entries: list[tuple[str, int, int]],
    checkpoint_version: int,
    cutoff: int,
) -> int | None:
    """The index in ``entries`` of the first file of the newest readable checkpoint whose
    preceding file expired, or None (RETENTION.LOG, RETENTION.VERIFIED_CHECKPOINT)."""
    first_index: dict[int, int] = {}
    for index, (name, version, _) in enumerate(entries):
        if version not in first_index and is_checkpoint_name(name):
            first_index[version] = index
    for version in sorted(listing.checkpoints, reverse=True):
        if version > checkpoint_version or version not in first_index:
            continue
        index = first_index[version]
        if (
            index > 0
            and entries[index - 1][1] < checkpoint_version
            and entries[index - 1][2] <= cutoff
            and _readable(log, listing.checkpoints[version])
        ):
            return index
    return None


def _delete_before(store: LogStore, names: list[str], doomed: list[str]) -> list[str]:
    """Delete ``doomed`` oldest first, then the hidden Hadoop checksums that belong to them."""
    doomed_set = set(doomed)
    hidden = {
        name for name in names if (owner := hadoop_crc_of(name)) is not None and owner in doomed_set
    }
    deleted: list[str] = []
    for name in doomed:  # oldest first: a crash half-way leaves only a prefix gone
        store.delete(name)
        deleted.append(name)
        crashpoints.reached("cleanup.mid_delete")
    for name in sorted(hidden):
        store.delete(name)
        deleted.append(name)
    return deleted
