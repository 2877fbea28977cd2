"""Case 3: commit latency of a small blind append, and 4 processes appending to one table.

The data file is written beforehand (untimed); what is timed is bringing the handle up to date
and committing one ``add`` of it. Ours: ``OptimisticTransaction(log)`` on a long-lived
``DeltaLog`` (it lists the log and replays from what the log kept) then ``commit``; delta-rs:
``DeltaTable.update_incremental()`` then ``create_write_transaction([AddAction], "append")``, its
low-level commit of pre-written files. Both tables checkpoint every 10 commits
(``delta.checkpointInterval`` = 10, as real writers do): ours in its post-commit step at versions
that are multiples of 10 (CHECKPOINT.INTERVAL), delta-rs 1.6.6 in its post-commit hook
(``create_checkpoint``, on by default) at versions 9, 19, 29...; both run their log cleanup after a
checkpoint (``delta.enableExpiredLogCleanup``, default true; nothing has expired here). So that
each measurement holds exactly one checkpoint per side, a measurement is a round of 10
consecutive commits, reported per commit, in wall time and in CPU time of the process (delta-rs's
Tokio threads included). Ours also writes a ``.crc`` per commit (CHECKSUM.WRITE, its histogram
updated from the previous version's) and fsyncs the commit file and the log directory before the
commit returns (LOG.PUT_IF_ABSENT with durability: 2 fsyncs per commit, none for the advisory
``.crc``, 2 more per checkpoint and ``_last_checkpoint``); delta-rs's local object store fsyncs
nothing and writes no ``.crc``. So each case runs twice: with equal work (ours on
``LocalLogStore(durable=False)``, which fsyncs nothing, as delta-rs and Hadoop's local file system
do; ids without a suffix) and with ours durable (ids ending ``_durable``). Both sides refresh
incrementally: ours applies the new commits to the snapshot its
``DeltaLog`` kept, delta-rs's ``update_incremental`` likewise.

The same on a table of 100k files (a checkpoint of it, then rounds of 10 commits, each round
rewriting the 100k-file checkpoint once on both sides).

Contention: 4 spawned processes each commit 25 blind appends to one fresh table (checkpoint
every 10 commits on both sides) as fast as they can, released together; throughput is commits/s
over the whole run. Retries: every commit records the version it read (our commitInfo
``readVersion``; for delta-rs, passed as commit metadata), so ``version - readVersion - 1``
counts the winners it had to check before landing; for ours, failed put-if-absent attempts are
also counted directly.

    .venv/bin/python -m benchmarks run --cases commit
"""

from __future__ import annotations

import json
import multiprocessing
import shutil
import statistics
import tempfile
import time
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import pyarrow as pa

from benchmarks.harness import Metric, alternate, seconds
from benchmarks.tables import EPOCH_MS, TableWriter, build, write_data_file
from deltaspec.impl.actions import AddFile
from deltaspec.impl.errors import VersionExistsError
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import LOG_DIR, commit_name, is_checkpoint_name, parse_commit_name
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

PEER = "delta-rs"
INTERVAL = 10
CONFIGURATION = {"delta.checkpointInterval": str(INTERVAL)}
ARROW_SCHEMA = pa.schema([("p", pa.int32()), ("x", pa.int64())])
APPEND = Operation("WRITE", {"mode": "Append", "partitionBy": ["p"]})


class CountingStore(LocalLogStore):
    """A LocalLogStore that counts lost put-if-absent races on commit files."""

    lost = 0

    def write_new(self, name: str, data: bytes) -> None:
        try:
            super().write_new(name, data)
        except VersionExistsError:
            if parse_commit_name(name) is not None:
                self.lost += 1
            raise


def _data_files(root: Path, tag: str, count: int) -> list[tuple[str, int]]:
    """``count`` small Parquet files under partition p=0, written now (untimed)."""
    out = []
    for i in range(count):
        relative = f"p=0/{tag}-{i:04d}.parquet"
        out.append((relative, write_data_file(root / relative)))
    return out


def _ours_add(path: str, size: int) -> AddFile:
    return AddFile(path, {"p": "0"}, size, EPOCH_MS, True, '{"numRecords":10}')


class _Peer:
    """delta-rs's side: one DeltaTable handle, one pre-written file per commit."""

    def __init__(self, root: Path, read_version: bool = False) -> None:
        from deltalake import DeltaTable
        from deltalake.transaction import CommitProperties, PostCommitHookProperties

        self.table = DeltaTable(str(root))
        self.hooks = PostCommitHookProperties(create_checkpoint=True, cleanup_expired_logs=None)
        self.properties = CommitProperties
        self.read_version = read_version

    def commit(self, path: str, size: int) -> None:
        from deltalake.transaction import AddAction

        self.table.update_incremental()
        metadata = {"readVersion": self.table.version()} if self.read_version else None
        self.table.create_write_transaction(
            [AddAction(path, size, {"p": "0"}, EPOCH_MS, True, '{"numRecords":10}')],
            mode="append",
            schema=ARROW_SCHEMA,
            partition_by=["p"],
            commit_properties=self.properties(custom_metadata=metadata, max_commit_retries=10_000),
            post_commithook_properties=self.hooks,
        )


class _Rounds:
    """Rounds of :data:`INTERVAL` commits of one side: each call times one round (wall, the
    return value; CPU time of the process, kept in ``cpu``)."""

    def __init__(self, commit: Any, files: list[tuple[str, int]]) -> None:
        self.commit = commit
        self.files = iter(files)
        self.cpu: list[float] = []

    def __call__(self) -> float:
        batch = [next(self.files) for _ in range(INTERVAL)]
        wall, cpu = time.perf_counter(), time.process_time()
        for path, size in batch:
            self.commit(path, size)
        self.cpu.append((time.process_time() - cpu) / INTERVAL)
        return (time.perf_counter() - wall) / INTERVAL


def _ours_commit(log: DeltaLog) -> Any:
    def commit(path: str, size: int) -> None:
        OptimisticTransaction(log).commit([_ours_add(path, size)], APPEND)

    return commit


def _checkpoints(root: Path) -> int:
    return sum(1 for p in (root / LOG_DIR).iterdir() if is_checkpoint_name(p.name))


def _durability(durable: bool) -> tuple[str, str]:
    """The id suffix and the note of a case run with ours ``durable`` or not."""
    if durable:
        return "_durable", "ours fsyncs the commit (2 fsyncs per commit); delta-rs fsyncs nothing"
    return "", "equal work: neither side fsyncs (ours on LocalLogStore(durable=False))"


def latency_pair(
    id: str,
    title: str,
    roots: tuple[Path, Path],
    rounds: int,
    extra: dict[str, Any],
    durable: bool,
) -> list[Metric]:
    """Wall and CPU metrics of rounds of commits on the two tables (ours, delta-rs)."""
    ours_root, peer_root = roots
    count = INTERVAL * (rounds + 1)
    before = (_checkpoints(ours_root), _checkpoints(peer_root))
    log = DeltaLog(ours_root, store=LocalLogStore(ours_root, durable=durable))
    ours = _Rounds(_ours_commit(log), _data_files(ours_root, "ours", count))
    peer = _Rounds(_Peer(peer_root).commit, _data_files(peer_root, "peer", count))
    wall = alternate(ours, peer, rounds)
    written = {
        "ours_checkpoints_written": _checkpoints(ours_root) - before[0],
        "peer_checkpoints_written": _checkpoints(peer_root) - before[1],
        "commits_per_side": count,
        "ours_durable": durable,
        **extra,
    }
    suffix, fsyncs = _durability(durable)
    notes = (
        f"per commit, rounds of {INTERVAL} commits with one checkpoint each; ours writes a .crc "
        f"per commit; {fsyncs}"
    )
    cpu = (ours.cpu[-rounds:], peer.cpu[-rounds:])
    id += suffix
    return [
        seconds(id, 3, title + " (wall)", wall, PEER, notes=notes, extra=written),
        seconds(id + "_cpu", 3, title + " (CPU)", cpu, PEER, notes=notes, extra=written),
    ]


def latency(work: Path, rounds: int, durable: bool) -> list[Metric]:
    roots = work / f"latency-ours-{durable}", work / f"latency-peer-{durable}"
    for root in roots:
        TableWriter(root, configuration=CONFIGURATION)
    title = f"commit latency, one blind append, checkpoint every {INTERVAL} commits"
    return latency_pair("commit.latency", title, roots, rounds, {}, durable)


def big_table_latency(work: Path, files: int, rounds: int) -> list[Metric]:
    """Commit latency on a table of ``files`` live files held in a checkpoint."""
    source = work / "big-source"
    writer = build(
        source, commits=0, initial_files=files, initial_commits=10, configuration=CONFIGURATION
    )
    writer.checkpoint()
    roots = work / "big-ours", work / "big-peer"
    for root in roots:
        shutil.copytree(source, root)
    title = f"commit latency on a {files:,}-file table, checkpoint every {INTERVAL} commits"
    extra = {"live_files": files}
    return latency_pair("commit.latency_big_table", title, roots, rounds, extra, durable=False)


# --- contention ----------------------------------------------------------------------------------


def _worker(
    side: str, root: str, writer: int, commits: int, barrier: Barrier, out: Any, durable: bool
) -> None:  # pragma: no cover - runs in a spawned process
    files = _data_files(Path(root), f"w{writer}", commits)
    lost = 0
    if side == "ours":
        store = CountingStore(root, durable=durable)
        log = DeltaLog(root, store=store)
        barrier.wait()
        for path, size in files:
            OptimisticTransaction(log).commit([_ours_add(path, size)], APPEND)
        lost = store.lost
    else:
        peer = _Peer(Path(root), read_version=True)
        barrier.wait()
        for path, size in files:
            peer.commit(path, size)
    out.put((writer, time.monotonic(), lost))


def _winners_checked(root: Path) -> tuple[int, int]:
    """Commits after version 0, and the sum over them of ``version - readVersion - 1``."""
    store = LocalLogStore(root)
    commits = 0
    checked = 0
    for info in store.list_from(commit_name(1)):
        version = parse_commit_name(info.name)
        if version is None:
            continue
        first = json.loads(store.read(info.name).split(b"\n", 1)[0])
        read = first.get("commitInfo", {}).get("readVersion")
        commits += 1
        checked += version - int(read) - 1
    return commits, checked


def contention_round(
    root: Path, side: str, writers: int, commits: int, durable: bool
) -> dict[str, float]:
    TableWriter(root, configuration=CONFIGURATION)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(writers + 1)
    out = context.Queue()
    processes = [
        context.Process(target=_worker, args=(side, str(root), w, commits, barrier, out, durable))
        for w in range(writers)
    ]
    for process in processes:
        process.start()
    barrier.wait(timeout=300)
    start = time.monotonic()
    results = [out.get(timeout=600) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        if process.exitcode != 0:
            raise RuntimeError(f"a {side} writer failed (exit code {process.exitcode})")
    seconds = max(end for _, end, _ in results) - start
    landed, checked = _winners_checked(root)
    if landed != writers * commits:
        raise AssertionError(f"{side}: {landed} commits landed, expected {writers * commits}")
    return {
        "seconds": seconds,
        "commits_per_second": landed / seconds,
        "winners_checked_per_commit": checked / landed,
        "lost_races_per_commit": sum(lost for _, _, lost in results) / landed,
    }


def contention(work: Path, rounds: int, writers: int, commits: int, durable: bool) -> Metric:
    ours_rounds: list[dict[str, float]] = []
    peer_rounds: list[dict[str, float]] = []
    for r in range(rounds):
        for side, found in (("ours", ours_rounds), ("peer", peer_rounds)):
            root = work / f"contention-{side}-{durable}-{r}"
            found.append(contention_round(root, side, writers, commits, durable))
    suffix, fsyncs = _durability(durable)
    ours_checked = statistics.median(r["winners_checked_per_commit"] for r in ours_rounds)
    peer_checked = statistics.median(r["winners_checked_per_commit"] for r in peer_rounds)
    lost = statistics.median(r["lost_races_per_commit"] for r in ours_rounds)
    return Metric(
        id="commit.contention" + suffix,
        case=3,
        title=f"{writers} processes x {commits} blind appends on one table, checkpoint every "
        f"{INTERVAL} commits: commits/s",
        quantity="commits/s",
        higher_is_better=True,
        ours=[r["commits_per_second"] for r in ours_rounds],
        peer=[r["commits_per_second"] for r in peer_rounds],
        peer_name=PEER,
        notes=f"winners checked per commit (version − readVersion − 1, median of rounds): ours "
        f"{ours_checked:.2f}, delta-rs {peer_checked:.2f}; ours lost {lost:.2f} put-if-absent "
        f"races per commit; {fsyncs}",
        extra={
            "ours_winners_checked_per_commit": [
                r["winners_checked_per_commit"] for r in ours_rounds
            ],
            "peer_winners_checked_per_commit": [
                r["winners_checked_per_commit"] for r in peer_rounds
            ],
            "ours_lost_races_per_commit": [r["lost_races_per_commit"] for r in ours_rounds],
        },
    )


def run(quick: bool = False) -> list[Metric]:
    with tempfile.TemporaryDirectory(prefix="deltaspec-bench-commit-") as work:
        base = Path(work)
        found = []
        for durable in (False, True):
            found += latency(base, 2 if quick else 9, durable)
        found += big_table_latency(base, 2_000 if quick else 100_000, 1 if quick else 3)
        shape = (1, 2, 5) if quick else (3, 4, 25)
        for durable in (False, True):
            found.append(contention(base, *shape, durable))
    return found
