"""Case 3: commit latency of a small blind append, and 4 processes appending to one table.

The data file is written beforehand (untimed); what is timed is bringing the handle up to date
and committing one ``add`` of it. Ours: ``OptimisticTransaction(log)`` on a long-lived
``DeltaLog`` (it lists the log and replays from what the log kept) then ``commit``; delta-rs:
``DeltaTable.update_incremental()`` then ``create_write_transaction([AddAction], "append")``, its
low-level commit of pre-written files. Both tables are built alike with
``delta.checkpointInterval`` large, so that neither writes a checkpoint inside the timing (case 7
measures checkpoints). Ours fsyncs the commit's temporary file and the log directory on every
commit (LOG.PUT_IF_ABSENT with durability); delta-rs's local object store links the file into
place without fsync.

Contention: 4 spawned processes each commit 25 blind appends to one fresh table as fast as they
can, released together; throughput is commits/s over the whole run. Retries: every commit
records the version it read (our commitInfo ``readVersion``; for delta-rs, passed as commit
metadata), so ``version - readVersion - 1`` counts the winners it had to check before landing;
for ours, failed put-if-absent attempts are also counted directly.

    .venv/bin/python -m benchmarks run --cases commit
"""

from __future__ import annotations

import json
import multiprocessing
import statistics
import tempfile
import time
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import pyarrow as pa

from benchmarks.harness import Metric, alternate, seconds, timed
from benchmarks.tables import EPOCH_MS, TableWriter, write_data_file
from deltaspec.impl.actions import AddFile
from deltaspec.impl.errors import VersionExistsError
from deltaspec.impl.log.names import commit_name, parse_commit_name
from deltaspec.impl.log.store import LocalLogStore
from deltaspec.impl.snapshot import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

PEER = "delta-rs"
CONFIGURATION = {"delta.checkpointInterval": "1000000"}
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
        self.hooks = PostCommitHookProperties(create_checkpoint=False, cleanup_expired_logs=False)
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


def latency(work: Path, commits: int) -> Metric:
    ours_root, peer_root = work / "latency-ours", work / "latency-peer"
    for root in (ours_root, peer_root):
        TableWriter(root, configuration=CONFIGURATION)
    ours_files = iter(_data_files(ours_root, "ours", commits + 1))
    peer_files = iter(_data_files(peer_root, "peer", commits + 1))
    log = DeltaLog(ours_root)
    peer = _Peer(peer_root)

    def ours() -> float:
        path, size = next(ours_files)
        start = time.perf_counter()
        OptimisticTransaction(log).commit([_ours_add(path, size)], APPEND)
        return time.perf_counter() - start

    def theirs() -> float:
        path, size = next(peer_files)
        return timed(lambda: peer.commit(path, size))

    return seconds(
        "commit.latency",
        3,
        "commit latency: one blind append of a pre-written file (refresh + commit)",
        alternate(ours, theirs, commits),
        PEER,
        notes="ours fsyncs the commit file and the log directory; delta-rs does not fsync",
        extra={"commits_per_side": commits},
    )


# --- contention ----------------------------------------------------------------------------------


def _worker(
    side: str, root: str, writer: int, commits: int, barrier: Barrier, out: Any
) -> None:  # pragma: no cover - runs in a spawned process
    files = _data_files(Path(root), f"w{writer}", commits)
    lost = 0
    if side == "ours":
        store = CountingStore(root)
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


def contention_round(root: Path, side: str, writers: int, commits: int) -> dict[str, float]:
    TableWriter(root, configuration=CONFIGURATION)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(writers + 1)
    out = context.Queue()
    processes = [
        context.Process(target=_worker, args=(side, str(root), w, commits, barrier, out))
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


def contention(work: Path, rounds: int, writers: int, commits: int) -> Metric:
    ours_rounds: list[dict[str, float]] = []
    peer_rounds: list[dict[str, float]] = []
    for r in range(rounds):
        for side, found in (("ours", ours_rounds), ("peer", peer_rounds)):
            found.append(contention_round(work / f"contention-{side}-{r}", side, writers, commits))
    ours_checked = statistics.median(r["winners_checked_per_commit"] for r in ours_rounds)
    peer_checked = statistics.median(r["winners_checked_per_commit"] for r in peer_rounds)
    lost = statistics.median(r["lost_races_per_commit"] for r in ours_rounds)
    return Metric(
        id="commit.contention",
        case=3,
        title=f"{writers} processes x {commits} blind appends on one table: commits/s",
        quantity="commits/s",
        higher_is_better=True,
        ours=[r["commits_per_second"] for r in ours_rounds],
        peer=[r["commits_per_second"] for r in peer_rounds],
        peer_name=PEER,
        notes=f"winners checked per commit (version − readVersion − 1, median of rounds): ours "
        f"{ours_checked:.2f}, delta-rs {peer_checked:.2f}; ours lost {lost:.2f} put-if-absent "
        "races per commit",
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
        found = [latency(base, 20 if quick else 100)]
        found.append(contention(base, 1 if quick else 3, 2 if quick else 4, 5 if quick else 25))
    return found
