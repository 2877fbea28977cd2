"""Case 7: writing a checkpoint, deltaspec vs delta-rs's ``create_checkpoint``, time and size.

One table (``benchmarks.tables``: 50k files added over 50 commits, then 200 commits of 5 adds
with a DELETE of one file every fourth, so the checkpoint also carries tombstones; no checkpoint
yet) is copied twice, one copy per side, so the two never see each other's checkpoint. Before
each round the previous checkpoint and ``_last_checkpoint`` are deleted (untimed).

- cold (equal work): load the table and write its checkpoint. Ours: ``DeltaLog(path)``,
  ``snapshot()``, ``write_checkpoint(log, snapshot)``; delta-rs: ``DeltaTable(path)`` then
  ``create_checkpoint()``. Both replay the 250 commits, then encode and write.
- loaded: each side already holds the table (loaded untimed): ours writes from its snapshot,
  delta-rs's ``create_checkpoint()`` re-reads the log first. Not equal work; kept to compare
  with earlier runs.

The table sets ``delta.checkpoint.writeStatsAsStruct`` (``SAME_COLUMNS``), so both
checkpoints carry the same columns.

Sizes: ours writes snappy-compressed Parquet; delta-rs 1.6.6 writes uncompressed Parquet. The
bytes as written are reported, and like with like: both checkpoints' rows re-encoded by pyarrow
with snappy (same encoder, same codec).

    .venv/bin/python -m benchmarks run --cases checkpoint
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from benchmarks.harness import Metric, alternate, seconds
from benchmarks.tables import EPOCH_MS, build
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.log.names import LAST_CHECKPOINT, LOG_DIR, is_checkpoint_name
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.snapshot.state import Snapshot

PEER = "delta-rs"
SAME_COLUMNS = {
    "delta.checkpoint.writeStatsAsJson": "true",
    "delta.checkpoint.writeStatsAsStruct": "true",
}
"""Both sides write ``stats`` and ``stats_parsed`` (and ``partitionValues_parsed``): delta-rs
1.6.6 writes the parsed columns only when the table says so, ours by default (as delta-spark
since 3.0.0), so the table says so and the two checkpoints carry the same columns."""


def _checkpoint_files(root: Path) -> list[Path]:
    return [p for p in (root / LOG_DIR).iterdir() if is_checkpoint_name(p.name)]


def _clear(root: Path) -> None:
    for path in [*_checkpoint_files(root), root / LOG_DIR / LAST_CHECKPOINT]:
        path.unlink(missing_ok=True)


def _snappy_bytes(files: list[Path]) -> int:
    """The bytes of ``files``' rows re-encoded by pyarrow with snappy compression."""
    total = 0
    for path in files:
        sink = pa.BufferOutputStream()
        pq.write_table(pq.read_table(path), sink, compression="snappy")
        total += sink.getvalue().size
    return total


def _add_columns(files: list[Path]) -> set[str]:
    add = pq.read_schema(files[0]).field("add").type
    return {add.field(i).name for i in range(add.num_fields)}


def _compression(files: list[Path]) -> str:
    return str(pq.ParquetFile(files[0]).metadata.row_group(0).column(0).compression)


def run(quick: bool = False) -> list[Metric]:
    from deltalake import DeltaTable

    files, commits = (2_000, 20) if quick else (50_000, 200)
    rounds = 3 if quick else 7
    with tempfile.TemporaryDirectory(prefix="deltaspec-bench-checkpoint-") as work:
        base = Path(work)
        source = base / "source"
        writer = build(source, commits=commits, initial_files=files, initial_commits=50,
                       configuration=SAME_COLUMNS)  # fmt: skip
        ours_root, peer_root = base / "ours", base / "peer"
        shutil.copytree(source, ours_root)
        shutil.copytree(source, peer_root)
        now = EPOCH_MS + 1000 * writer.version
        log = DeltaLog(ours_root, clock=lambda: now)
        snapshot = log.snapshot()
        table = DeltaTable(str(peer_root))
        if table.version() != snapshot.version:
            raise AssertionError("the two copies disagree on the latest version")

        def ours_cold() -> float:
            _clear(ours_root)
            start = time.perf_counter()
            cold = DeltaLog(ours_root, clock=lambda: now)
            write_checkpoint(cold, cold.snapshot(), now_ms=now)
            return time.perf_counter() - start

        def peer_cold() -> float:
            _clear(peer_root)
            start = time.perf_counter()
            DeltaTable(str(peer_root)).create_checkpoint()
            return time.perf_counter() - start

        def ours_loaded() -> float:
            _clear(ours_root)
            start = time.perf_counter()
            write_checkpoint(log, snapshot, now_ms=now)
            return time.perf_counter() - start

        def peer_loaded() -> float:
            _clear(peer_root)
            start = time.perf_counter()
            table.create_checkpoint()
            return time.perf_counter() - start

        cold_pair = alternate(ours_cold, peer_cold, rounds)
        loaded_pair = alternate(ours_loaded, peer_loaded, rounds)
        # both checkpoints must hold the same live files
        check = DeltaLog(peer_root).snapshot()
        if check.checkpoint_version != snapshot.version or check.num_files != snapshot.num_files:
            raise AssertionError("delta-rs's checkpoint does not read back as the same table")
        written = {"ours": _checkpoint_files(ours_root), "peer": _checkpoint_files(peer_root)}
        if _add_columns(written["ours"]) != _add_columns(written["peer"]):
            raise AssertionError("the two checkpoints carry different add columns: not equal work")
        return _metrics(snapshot, now, cold_pair, loaded_pair, written)


def _metrics(
    snapshot: Snapshot,
    now: int,
    cold_pair: tuple[list[float], list[float]],
    loaded_pair: tuple[list[float], list[float]],
    written: dict[str, list[Path]],
) -> list[Metric]:
    sizes = {side: sum(p.stat().st_size for p in found) for side, found in written.items()}
    snappy = {side: _snappy_bytes(found) for side, found in written.items()}
    codecs = {side: _compression(found) for side, found in written.items()}
    live, tombstones = snapshot.num_files, snapshot.tombstones_table(now).num_rows
    title = f"checkpoint: {live:,} live files, {tombstones:,} tombstones"
    extra = {"live_files": live, "tombstones": tombstones, "version": snapshot.version}
    as_written = f"as written: ours {codecs['ours']}, delta-rs {codecs['peer']}"
    return [
        seconds(
            "checkpoint.write_time", 7, title + ", cold load + write (time)", cold_pair, PEER,
            notes=f"both sides load the table ({snapshot.version + 1} commits, no checkpoint) "
            "and write it",
            extra=extra,
        ),
        seconds(
            "checkpoint.write_time_loaded", 7, title + ", from a loaded handle (time)",
            loaded_pair, PEER,
            notes="not equal work: ours writes from its snapshot, delta-rs re-reads the log",
            extra=extra,
        ),
        Metric(
            "checkpoint.size", 7, title + f" (bytes on disk, {as_written})", "bytes", False,
            [float(sizes["ours"])], [float(sizes["peer"])], PEER, notes=as_written,
        ),
        Metric(
            "checkpoint.size_snappy", 7, title + " (bytes, both re-encoded by pyarrow, snappy)",
            "bytes", False, [float(snappy["ours"])], [float(snappy["peer"])], PEER,
            notes="like with like: each side's rows, one encoder, snappy",
        ),
    ]  # fmt: skip
