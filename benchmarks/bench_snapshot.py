"""Cases 1 and 2: snapshot loads and time travel, deltaspec vs delta-rs (``deltalake``).

Case 1 loads the latest snapshot and lists its files, from a cold start on both sides: ours is
``DeltaLog(path).snapshot()`` plus the absolute paths of the live files, delta-rs's is
``DeltaTable(path)`` plus ``file_uris()``. Tables (``benchmarks.tables``): 200 small commits
without a checkpoint; the same with a checkpoint at 200 and 5 commits after it; 100k files with
1k commits since the checkpoint; and a replay-scaling curve of tables with up to 10k commits and
no checkpoint. One more row refreshes a warm handle after one new commit on the 100k-file table
(ours: ``log.snapshot()`` on the same ``DeltaLog``; delta-rs: ``update_incremental()``).

Case 2 travels back to version 250 of a 1k-commit table checkpointed every 100 commits: on a
handle that has loaded the latest version (ours: a ``DeltaLog`` that loaded it; delta-rs:
``load_as_version(250)`` on a loaded ``DeltaTable``), and from a cold start
(``DeltaLog(path).snapshot(250)`` vs ``DeltaTable(path, version=250)``).

    .venv/bin/python -m benchmarks run --cases snapshot
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable

from benchmarks.harness import Metric, Target, alternate, seconds, timed
from benchmarks.tables import TableWriter, build
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.snapshot.state import Snapshot

PEER = "delta-rs"
LOAD_TARGET = Target("ratio", "<=", 1.0, "≤ 1.0× delta-rs's time")


def file_paths(snapshot: Snapshot, root: str) -> list[str]:
    """The live files' absolute paths (the benchmark tables' names need no URI decoding)."""
    paths = snapshot.files_table().column("path")
    prefix = pa.scalar(root.rstrip("/") + "/", pa.string())
    return list(pc.binary_join_element_wise(prefix, paths, "").to_pylist())


def load_ours(root: str) -> list[str]:
    return file_paths(DeltaLog(root).snapshot(), root)


def load_peer(root: str) -> list[str]:
    return list(DeltaTable(root).file_uris())


def _same_files(root: str, version: int | None = None) -> int:
    """Both sides list the same files (checked once per table, untimed); returns how many."""
    ours = file_paths(DeltaLog(root).snapshot(version), root)
    theirs = list(DeltaTable(root, version=version).file_uris())
    if sorted(ours) != sorted(theirs):
        raise AssertionError(f"{root}: deltaspec lists {len(ours)} files, delta-rs {len(theirs)}")
    return len(ours)


def _latest_metric(
    id: str,
    title: str,
    root: Path,
    rounds: int,
    *,
    curve: str | None = None,
    x: float | None = None,
) -> Metric:
    files = _same_files(str(root))
    pair = alternate(
        lambda: timed(lambda: load_ours(str(root))),
        lambda: timed(lambda: load_peer(str(root))),
        rounds,
    )
    extra = {"live_files": files}
    return seconds(id, 1, title, pair, PEER, target=LOAD_TARGET, curve=curve, x=x, extra=extra)


def _refresh_metric(writer: TableWriter, rounds: int) -> Metric:
    """A warm handle brought up to date after one new commit (written untimed before each)."""
    root = str(writer.root)
    log = DeltaLog(root)
    log.snapshot()
    table = DeltaTable(root)

    def ours() -> float:
        writer.append(1)
        return timed(lambda: file_paths(log.snapshot(), root))

    def peer() -> float:
        writer.append(1)

        def refresh() -> None:
            table.update_incremental()
            table.file_uris()

        return timed(refresh)

    return seconds(
        "snapshot.refresh.100k_files",
        1,
        "refresh a loaded table after 1 new commit (100k files, 1k commits since checkpoint)",
        alternate(ours, peer, rounds),
        PEER,
        notes="ours: the same DeltaLog lists the log and replays from its kept checkpoint and "
        "commits; delta-rs: update_incremental() applies the new commit to its state",
    )


def _time_travel(root: Path, version: int, rounds: int) -> list[Metric]:
    path = str(root)
    files = _same_files(path, version)

    def ours_warm() -> float:
        log = DeltaLog(path)
        log.snapshot()  # the handle has the latest version, as the delta-rs table below
        return timed(lambda: file_paths(log.snapshot(version), path))

    def peer_warm() -> float:
        table = DeltaTable(path)

        def travel() -> None:
            table.load_as_version(version)
            table.file_uris()

        return timed(travel)

    warm = alternate(ours_warm, peer_warm, rounds)
    cold = alternate(
        lambda: timed(lambda: file_paths(DeltaLog(path).snapshot(version), path)),
        lambda: timed(lambda: DeltaTable(path, version=version).file_uris()),
        rounds,
    )
    extra = {"live_files": files, "version": version}
    return [
        seconds(
            "time_travel.loaded_handle",
            2,
            f"time travel to v{version} of a 1k-commit table (checkpoint every 100), "
            "from a handle on the latest version (load_as_version)",
            warm,
            PEER,
            target=LOAD_TARGET,
            extra=dict(extra),
        ),
        seconds(
            "time_travel.cold",
            2,
            f"time travel to v{version}, cold start (DeltaTable(path, version=…))",
            cold,
            PEER,
            target=LOAD_TARGET,
            extra=dict(extra),
        ),
    ]


def run(quick: bool = False) -> list[Metric]:
    rounds = 3 if quick else 9
    many = 3 if quick else 25  # the loads that take milliseconds: more pairs, same time
    small = 50 if quick else 200
    big_files, big_commits = (5_000, 50) if quick else (100_000, 1_000)
    curve_sizes = (100, 300, 1_000) if quick else (1_000, 2_500, 5_000, 10_000)
    travel_commits, travel_every, travel_to = (200, 20, 50) if quick else (1_000, 100, 250)
    metrics: list[Metric] = []
    with tempfile.TemporaryDirectory(prefix="deltaspec-bench-snapshot-") as work:
        base = Path(work)

        def small_commits() -> list[Metric]:
            root = base / "small"
            build(root, commits=small)
            title = f"latest snapshot + file list: {small} small commits (5 adds), no checkpoint"
            return [_latest_metric(f"snapshot.latest.{small}_commits", title, root, many)]

        def checkpoint_plus_five() -> list[Metric]:
            root = base / "checkpointed"
            build(root, commits=small + 5, checkpoint_at=[small])
            title = f"latest snapshot + file list: checkpoint at {small} + 5 commits"
            return [_latest_metric("snapshot.latest.checkpoint_plus_5", title, root, many)]

        def big_table() -> list[Metric]:
            root = base / "big"
            writer = build(
                root,
                commits=big_commits,
                adds_per_commit=1,
                initial_files=big_files,
                initial_commits=100,
                checkpoint_at=[100],
            )
            title = (
                f"latest snapshot + file list: {big_files:,} files in the checkpoint, "
                f"{big_commits:,} commits since"
            )
            latest = _latest_metric("snapshot.latest.big_table", title, root, rounds)
            return [latest, _refresh_metric(writer, rounds)]

        def scaling() -> list[Metric]:
            out = []
            for commits in curve_sizes:
                root = base / f"replay-{commits}"
                build(root, commits=commits, adds_per_commit=1, seed=7)
                title = f"latest snapshot + file list: {commits:,} commits, no checkpoint"
                fewer = max(3, rounds // 2) if commits >= 5_000 else rounds
                out.append(
                    _latest_metric(
                        f"snapshot.replay.{commits}_commits",
                        title,
                        root,
                        fewer,
                        curve="snapshot_replay_scaling",
                        x=commits,
                    )
                )
            return out

        def time_travel() -> list[Metric]:
            root = base / "travel"
            checkpoints = list(range(travel_every, travel_commits + 1, travel_every))
            build(root, commits=travel_commits, checkpoint_at=checkpoints)
            return _time_travel(root, travel_to, many)

        steps: list[Callable[[], list[Metric]]] = [
            small_commits,
            checkpoint_plus_five,
            big_table,
            time_travel,
            scaling,
        ]
        for step in steps:
            found = step()
            metrics.extend(found)
    return metrics
