"""Case 7: writing a checkpoint, deltaspec vs delta-rs's ``create_checkpoint``, time and size.

One table (``benchmarks.tables``: 50k files added over 50 commits, then 200 commits of 5 adds
with a DELETE of one file every fourth, so the checkpoint also carries tombstones) is copied
twice, one copy per side, so the two never see each other's checkpoint. Both sides hold the
latest snapshot already (loaded untimed): ours times ``write_checkpoint(log, snapshot)`` (build
the Arrow table in delta-spark's schema, encode Parquet, put-if-absent, ``_last_checkpoint``),
delta-rs times ``DeltaTable.create_checkpoint()``. Before each round the previous checkpoint and
``_last_checkpoint`` are deleted (untimed). The size ratio compares the bytes of the checkpoint
files written.

    .venv/bin/python -m benchmarks run --cases checkpoint
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from benchmarks.harness import Metric, alternate, seconds
from benchmarks.tables import EPOCH_MS, build
from deltaspec.impl.checkpoint import write_checkpoint
from deltaspec.impl.log.names import LAST_CHECKPOINT, LOG_DIR, is_checkpoint_name
from deltaspec.impl.snapshot import DeltaLog

PEER = "delta-rs"


def _checkpoint_files(root: Path) -> list[Path]:
    return [p for p in (root / LOG_DIR).iterdir() if is_checkpoint_name(p.name)]


def _clear(root: Path) -> None:
    for path in [*_checkpoint_files(root), root / LOG_DIR / LAST_CHECKPOINT]:
        path.unlink(missing_ok=True)


def run(quick: bool = False) -> list[Metric]:
    from deltalake import DeltaTable

    files, commits = (2_000, 20) if quick else (50_000, 200)
    rounds = 3 if quick else 7
    with tempfile.TemporaryDirectory(prefix="deltaspec-bench-checkpoint-") as work:
        base = Path(work)
        source = base / "source"
        writer = build(source, commits=commits, initial_files=files, initial_commits=50)
        ours_root, peer_root = base / "ours", base / "peer"
        shutil.copytree(source, ours_root)
        shutil.copytree(source, peer_root)
        now = EPOCH_MS + 1000 * writer.version
        log = DeltaLog(ours_root, clock=lambda: now)
        snapshot = log.snapshot()
        table = DeltaTable(str(peer_root))
        if table.version() != snapshot.version:
            raise AssertionError("the two copies disagree on the latest version")
        sizes: dict[str, int] = {}

        def ours() -> float:
            _clear(ours_root)
            start = time.perf_counter()
            write_checkpoint(log, snapshot, now_ms=now)
            elapsed = time.perf_counter() - start
            sizes["ours"] = sum(p.stat().st_size for p in _checkpoint_files(ours_root))
            return elapsed

        def peer() -> float:
            _clear(peer_root)
            start = time.perf_counter()
            table.create_checkpoint()
            elapsed = time.perf_counter() - start
            sizes["peer"] = sum(p.stat().st_size for p in _checkpoint_files(peer_root))
            return elapsed

        a, b = alternate(ours, peer, rounds)
        # both checkpoints must hold the same live files
        check = DeltaLog(peer_root).snapshot()
        if check.checkpoint_version != snapshot.version or check.num_files != snapshot.num_files:
            raise AssertionError("delta-rs's checkpoint does not read back as the same table")
        live, tombstones = snapshot.num_files, snapshot.tombstones_table(now).num_rows
    title = f"write a checkpoint: {live:,} live files, {tombstones:,} tombstones"
    metrics = [
        seconds(
            "checkpoint.write_time",
            7,
            title + " (time)",
            (a, b),
            PEER,
            extra={"live_files": live, "tombstones": tombstones, "version": snapshot.version},
        ),
        Metric(
            "checkpoint.size",
            7,
            title + " (bytes on disk)",
            "bytes",
            False,
            [float(sizes["ours"])],
            [float(sizes["peer"])],
            PEER,
        ),
    ]
    return metrics
