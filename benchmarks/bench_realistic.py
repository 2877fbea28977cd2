"""Case 9: snapshot load on realistic tables, the same work on both sides, CPU and wall time.

Tables (``benchmarks.realistic``): 20 or 5 stats-bearing columns of every type (nested struct,
32-character strings; about 1.3 KB / 0.35 KB of ``stats`` per file), written in bulk commits of
1k adds or streaming commits of 5, with a classic checkpoint every 100 or 10 commits as real
writers do, or none (a log of large commits); checkpoints of 10k, 100k and 1M files (the last
built from 1k bulk commits, skipped by ``--quick``). Each table is loaded cold, three ways:

- ``files``: the live files' paths. Ours: ``DeltaLog(path).snapshot()`` + absolute paths;
  delta-rs: ``DeltaTable(path).file_uris()`` (delta-rs parses the statistics at load anyway).
- ``stats``: the statistics materialised as typed Arrow columns. Ours: the snapshot's
  ``stats_table`` (min/max in each column's type, null counts) next to path, size and time,
  flattened; delta-rs: ``get_add_actions(flatten=True)`` as a pyarrow table (it also types
  the partition values, which ours leaves as strings).
- ``adds``: every add as Arrow with typed statistics. Ours: ``files_table()`` plus the typed
  statistics column; delta-rs: ``get_add_actions(flatten=False)`` as a pyarrow table.

Every figure is measured both as CPU time of the process (all threads: delta-rs decodes on
several) and wall time, over 7 alternated pairs. The floor is what no reader can avoid: pyarrow
reading the checkpoint's ``add`` columns that the work needs plus the raw bytes of the commits
after it (a ``floor`` metric: ours against it).

    .venv/bin/python -m benchmarks run --cases realistic
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import DeltaTable

from benchmarks.bench_snapshot import file_paths
from benchmarks.harness import Metric, Target
from benchmarks.realistic import build_realistic
from deltaspec.impl.log.names import LOG_DIR
from deltaspec.impl.snapshot.delta_log import DeltaLog

PEER = "delta-rs"
TARGET = Target("ratio", "<=", 1.0, "≤ 1.0× delta-rs's time")
Sample = tuple[float, float]
"""CPU seconds and wall seconds of one call."""


def measure(function: Callable[[], object]) -> Sample:
    cpu, wall = time.process_time(), time.perf_counter()
    function()
    return time.process_time() - cpu, time.perf_counter() - wall


def alternate_both(
    ours: Callable[[], object], peer: Callable[[], object], rounds: int
) -> tuple[list[Sample], list[Sample]]:
    """``rounds`` alternated pairs (A B, B A, ...) after one warm-up pair."""
    a: list[Sample] = []
    b: list[Sample] = []
    for i in range(rounds + 1):
        first, second = (ours, peer) if i % 2 == 0 else (peer, ours)
        x = measure(first)
        y = measure(second)
        if i % 2:
            x, y = y, x
        if i:
            a.append(x)
            b.append(y)
    return a, b


# --- the three kinds of work -------------------------------------------------------------------


def files_ours(root: str) -> object:
    return file_paths(DeltaLog(root).snapshot(), root)


def files_peer(root: str) -> object:
    return DeltaTable(root).file_uris()


def stats_ours(root: str) -> pa.Table:
    snapshot = DeltaLog(root).snapshot()
    files = snapshot.files_table()
    return pa.table(
        {
            "path": files.column("path"),
            "size": files.column("size"),
            "modification_time": files.column("modification_time"),
            "stats": snapshot.stats_table,
        }
    ).flatten()


def stats_peer(root: str) -> pa.Table:
    return pa.table(DeltaTable(root).get_add_actions(flatten=True))


def adds_ours(root: str) -> pa.Table:
    snapshot = DeltaLog(root).snapshot()
    return snapshot.files_table().append_column("stats_parsed", snapshot.stats_table)


def adds_peer(root: str) -> pa.Table:
    return pa.table(DeltaTable(root).get_add_actions(flatten=False))


WORK: dict[str, tuple[str, Callable[[str], object], Callable[[str], object], list[str]]] = {
    "files": ("file list", files_ours, files_peer, ["path"]),
    "stats": (
        "statistics typed",
        stats_ours,
        stats_peer,
        ["path", "size", "modificationTime", "stats"],
    ),
    "adds": (
        "add actions as Arrow",
        adds_ours,
        adds_peer,
        ["path", "partitionValues", "size", "modificationTime", "dataChange", "tags", "stats"],
    ),
}


def floor(root: str, columns: list[str]) -> None:
    """pyarrow reading the newest checkpoint's needed ``add`` columns, plus the raw bytes of
    every commit after it (or of all commits without a checkpoint)."""
    log = Path(root) / LOG_DIR
    checkpoints = sorted(log.glob("*.checkpoint.parquet"))
    after = -1
    if checkpoints:
        newest = checkpoints[-1]
        after = int(newest.name.split(".")[0])
        pq.read_table(newest, columns=[f"add.{c}" for c in columns])
    for commit in sorted(log.glob("*.json")):
        if int(commit.name.split(".")[0]) > after:
            commit.read_bytes()


def _check_same(root: str) -> int:
    """Both sides list the same files and the same typed minimums (untimed); how many files."""
    ours = stats_ours(root).sort_by("path")
    theirs = stats_peer(root).sort_by("path")
    if ours.column("path").to_pylist() != theirs.column("path").to_pylist():
        raise AssertionError(f"{root}: deltaspec and delta-rs list different files")
    for name in ours.column_names:
        if name.startswith("stats.minValues."):
            peer_name = "min." + name.removeprefix("stats.minValues.")
            if not ours.column(name).equals(theirs.column(peer_name).cast(ours.column(name).type)):
                raise AssertionError(f"{root}: {name} differs from delta-rs's {peer_name}")
    return int(ours.num_rows)


def _metrics(id: str, title: str, root: str, rounds: int) -> list[Metric]:
    files = _check_same(root)
    out: list[Metric] = []
    for kind, (what, ours, peer, columns) in WORK.items():
        a, b = alternate_both(partial(ours, root), partial(peer, root), rounds)
        for index, clock in enumerate(("cpu", "wall")):
            out.append(
                Metric(
                    f"realistic.{id}.{kind}.{clock}",
                    9,
                    f"{title}: {what}, {clock} time",
                    "seconds",
                    False,
                    [s[index] for s in a],
                    [s[index] for s in b],
                    PEER,
                    target=TARGET if kind != "files" else None,
                    extra={"live_files": files, "clock": clock, "work": kind},
                )
            )
        mine, least = alternate_both(partial(ours, root), partial(floor, root, columns), rounds)
        out.append(
            Metric(
                f"realistic.{id}.{kind}.floor",
                9,
                f"{title}: {what}, ours against the floor (CPU time)",
                "seconds",
                False,
                [s[0] for s in mine],
                [s[0] for s in least],
                "floor: pyarrow reads the checkpoint columns + raw commit bytes",
                extra={"live_files": files, "clock": "cpu", "work": kind},
            )
        )
    return out


TABLES = (
    # id, title, width, bulk commits of 1k adds, then small commits of 5, checkpoint every
    ("100k_files_20_cols", "100k files, 20 columns, checkpoint + 50 commits", 20, 100, 50, 100),
    ("10k_files_5_cols", "10k files, 5 columns, checkpoint every 10 + 5", 5, 10, 1_005, 10),
    ("large_commits", "50 commits x 1k adds, 20 columns, no checkpoint", 20, 50, 0, None),
    ("streaming", "1k commits x 5 adds, 5 columns, checkpoint every 10 + 5", 5, 0, 1_005, 10),
    ("1m_files_5_cols", "1M files, 5 columns, checkpoint + 5 commits", 5, 1_000, 5, 1_000),
)
"""The tables of case 9. Checkpoints are deltaspec's, written as delta-spark 4.4.0 writes them
(``stats`` and ``stats_parsed``, CHECKPOINT.STATS_AS_STRUCT); both sides read the same files."""


def run(
    quick: bool = False, only: Sequence[str] | None = None, rounds: int | None = None
) -> list[Metric]:
    """Case 9 over :data:`TABLES` (``only``: those ids), ``rounds`` alternated pairs."""
    rounds = rounds or (3 if quick else 7)
    scale = 20 if quick else 1
    tables = [t for t in TABLES if only is None or t[0] in only]
    if quick:  # a smoke run skips the 1M-file table (its 1k bulk commits take minutes to build)
        tables = [t for t in tables if t[3] < 1_000]
    metrics: list[Metric] = []
    with tempfile.TemporaryDirectory(prefix="deltaspec-bench-realistic-") as work:
        for id, title, width, bulk, small, every in tables:
            root = Path(work) / id
            build_realistic(
                root,
                width=width,
                initial_files=bulk * 1_000 // scale,
                initial_commits=bulk,
                commits=small // (scale if small > 100 else 1),
                adds_per_commit=5,
                checkpoint_every=every,
            )
            metrics.extend(_metrics(id, title, str(root), rounds))
    return metrics
