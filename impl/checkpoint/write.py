"""Writing checkpoints (CHECKPOINT.*): classic, multi-part and v2, then ``_last_checkpoint``.

A checkpoint's rows are :func:`deltaspec.impl.checkpoint.contents.checkpoint_table`; a table with
the ``v2Checkpoint`` feature and ``delta.checkpointPolicy = v2`` gets a v2 checkpoint
(CHECKPOINT.V2_WRITE, :mod:`deltaspec.impl.checkpoint.v2`), any other a classic file or, when
asked, a multi-part checkpoint split by a hash of the file paths (:func:`part_of_rows`).

Every checkpoint file is created with put-if-absent (a file that already exists was written by
another writer of the same checkpoint, whose content is the same), and ``_last_checkpoint`` is
overwritten only after every part exists, so a failure half-way never leaves the hint pointing
at an incomplete checkpoint (CHECKPOINT.LAST_CHECKPOINT).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..actions import Protocol
from ..errors import CorruptLogError, NotRegularFileError, UnsafePathError, VersionExistsError
from ..log import crashpoints
from ..log.last_checkpoint import encode_last_checkpoint, write_last_checkpoint
from ..log.listing import list_log
from ..log.names import SIDECARS_DIR, classic_checkpoint_name, part_checkpoint_name
from ..log.store import LogStore
from ..snapshot.delta_log import DeltaLog, log_of
from ..snapshot.state import Snapshot
from .contents import checkpoint_table, parquet_bytes
from .v2 import uses_v2_checkpoint, write_v2_checkpoint

__all__ = ["CheckpointResult", "part_of_rows", "write_checkpoint"]


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
    reused: bool = field(default=False, compare=False)
    """Whether a file of it existed already (another writer's, read back whole and kept); two
    results of the same checkpoint are equal whoever wrote its files."""

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
    checkpoint (CHECKPOINT.V2_WRITE, :mod:`deltaspec.impl.checkpoint.v2`); with the feature and
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
    used only once read back whole, and replaced atomically when it does not
    (RETENTION.VERIFIED_CHECKPOINT)."""
    version = snapshot.version
    store = _store_of(log_or_store)
    pieces, written_parts = _pieces(table, version, snapshot.protocol, parts)
    total, reused = _put_pieces(store, pieces)
    if reused:
        # a file that exists should hold the same checkpoint, from another writer
        # (CHECKPOINT.INTERVAL); it is pointed at only once read back whole (a torn one would
        # make _last_checkpoint and log cleanup trust a checkpoint nobody can read)
        log, names = log_of(log_or_store), [name for name, _ in pieces]
        try:
            _verify_written(log, version, names)
        except (NotRegularFileError, UnsafePathError):
            raise  # a directory or a link at the name is no torn checkpoint: never replaced
        except CorruptLogError:
            # torn by a writer that died on a store without atomic writes: replaced, atomically,
            # by this writer's whole copy of the same checkpoint, then read back again
            for name, data in reused.items():
                store.write_overwrite(name, data)
            _verify_written(log, version, names)
    return CheckpointResult(
        version=version,
        size=table.num_rows,
        parts=written_parts,
        size_in_bytes=total,
        num_of_add_files=snapshot.num_files,
        files=tuple(name for name, _ in pieces),
        reused=bool(reused),
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


def _put_pieces(
    store: LogStore, pieces: list[tuple[str, pa.Table]]
) -> tuple[int, dict[str, bytes]]:
    """Create every file put-if-absent (LOG.PUT_IF_ABSENT); the bytes written, and the names
    that already existed with the bytes this writer had for them."""
    total = 0
    reused: dict[str, bytes] = {}
    for index, (name, piece) in enumerate(pieces):
        if index == 1:
            crashpoints.reached("checkpoint.between_parts")
        data = parquet_bytes(piece)
        try:
            store.write_new(name, data)
        except VersionExistsError:
            reused[name] = data
        total += len(data)
    return total, reused
