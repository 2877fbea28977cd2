"""Case 11: the log on an S3-compatible server (moto's server mode on loopback, started here),
ours against delta-rs on the same server.

Commit latency: rounds of 10 blind appends of one ``add`` (no data file: neither side reads one),
checkpoint every 10 commits on both sides, as bench_commit.py's local case: ours
``OptimisticTransaction(log).commit`` on a long-lived ``DeltaLog`` of the table's URL; delta-rs
``update_incremental()`` then ``create_write_transaction`` (its S3 store's conditional put,
``conditional_put=etag``). Both sides do the same requests a real writer does: list the log from
the last version, PUT the commit with ``If-None-Match: *``, and every 10th commit the checkpoint and
``_last_checkpoint``; ours also PUTs a ``.crc`` per commit.

Snapshot load: a fresh handle of a table of 200 commits with a checkpoint at 190 (ours
``DeltaLog(url).snapshot()``, delta-rs ``DeltaTable(url)``), each loading the checkpoint and the
10 commits after it.

Contention: 4 spawned processes each commit 10 blind appends to one fresh table, released
together; commits/s over the whole run.

    .venv/bin/python -m benchmarks run --cases object_store
"""

from __future__ import annotations

import multiprocessing
import time
from multiprocessing.synchronize import Barrier
from typing import Any

from benchmarks.bench_commit import APPEND, ARROW_SCHEMA, CONFIGURATION, INTERVAL, PEER, _ours_add
from benchmarks.harness import Metric, alternate, seconds
from benchmarks.tables import EPOCH_MS
from deltaspec.conformance.servers.serving import ObjectStoreServer, serving
from deltaspec.impl.actions import Metadata, Protocol
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

SCHEMA_STRING = (
    '{"type":"struct","fields":[{"name":"p","type":"integer","nullable":true,"metadata":{}},'
    '{"name":"x","type":"long","nullable":true,"metadata":{}}]}'
)


def _peer_options(server: ObjectStoreServer) -> dict[str, str]:
    options = server.options
    return {"AWS_ENDPOINT_URL": options["endpoint"], "AWS_REGION": options["region"],
            "AWS_ACCESS_KEY_ID": options["access_key_id"],
            "AWS_SECRET_ACCESS_KEY": options["secret_access_key"], "AWS_ALLOW_HTTP": "true",
            "conditional_put": "etag"}  # fmt: skip


def _create(server: ObjectStoreServer, name: str) -> str:
    """A fresh table (protocol, metadata partitioned by p, checkpoint every 10) on the server."""
    url = server.table_url(name)
    txn = OptimisticTransaction(DeltaLog(url, storage_options=server.options))
    txn.stage([Protocol(1, 2), Metadata("bench", SCHEMA_STRING, ("p",), dict(CONFIGURATION))])
    txn.commit(operation=Operation("CREATE TABLE", {}))
    return url


class _Ours:
    def __init__(self, server: ObjectStoreServer, url: str) -> None:
        self.log = DeltaLog(url, storage_options=server.options)
        self.count = 0

    def commit(self) -> None:
        self.count += 1
        OptimisticTransaction(self.log).commit(
            [_ours_add(f"p=0/f{self.count}.parquet", 10)], APPEND
        )


class _Peer:
    def __init__(self, server: ObjectStoreServer, url: str) -> None:
        from deltalake import DeltaTable
        from deltalake.transaction import CommitProperties, PostCommitHookProperties

        self.table = DeltaTable(url, storage_options=_peer_options(server))
        self.hooks = PostCommitHookProperties(create_checkpoint=True, cleanup_expired_logs=None)
        # delta-rs gives up after 15 lost races by default: a bound 4 writers never reach here
        self.properties = CommitProperties(max_commit_retries=10_000)
        self.count = 0

    def commit(self) -> None:
        from deltalake.transaction import AddAction

        self.count += 1
        self.table.update_incremental()
        self.table.create_write_transaction(
            [AddAction(f"p=0/f{self.count}.parquet", 10, {"p": "0"}, EPOCH_MS, True, "{}")],
            mode="append",
            schema=ARROW_SCHEMA,
            partition_by=["p"],
            commit_properties=self.properties,
            post_commithook_properties=self.hooks,
        )


def _round(side: Any) -> Any:
    def timed() -> float:
        started = time.perf_counter()
        for _ in range(INTERVAL):
            side.commit()
        return (time.perf_counter() - started) / INTERVAL

    return timed


def latency(server: ObjectStoreServer, rounds: int) -> Metric:
    ours = _Ours(server, _create(server, "latency-ours"))
    peer = _Peer(server, _create(server, "latency-peer"))
    pair = alternate(_round(ours), _round(peer), rounds)
    return seconds("object_store.commit_latency", 11,
                   f"S3 (moto): commit latency, one blind append, checkpoint every {INTERVAL}",
                   pair, PEER, notes="per commit, rounds of 10 commits with one checkpoint each; "
                   "ours also PUTs a .crc per commit")  # fmt: skip


def snapshot_load(server: ObjectStoreServer, commits: int, rounds: int) -> Metric:
    url = _create(server, "load")
    writer = _Ours(server, url)
    for _ in range(commits):
        writer.commit()

    def ours() -> float:
        started = time.perf_counter()
        DeltaLog(url, storage_options=server.options).snapshot()
        return time.perf_counter() - started

    def peer() -> float:
        from deltalake import DeltaTable

        started = time.perf_counter()
        DeltaTable(url, storage_options=_peer_options(server))
        return time.perf_counter() - started

    title = f"S3 (moto): snapshot load, {commits + 1} commits, checkpoint every {INTERVAL}"
    return seconds("object_store.snapshot_load", 11, title, alternate(ours, peer, rounds), PEER)


def _worker(side: str, url: str, options: dict[str, str], kind: str, commits: int,
            barrier: Barrier) -> None:  # fmt: skip  # pragma: no cover - a spawned process
    server = ObjectStoreServer(kind, options, "")
    committer: Any = _Ours(server, url) if side == "ours" else _Peer(server, url)
    barrier.wait()
    for _ in range(commits):
        committer.commit()


def _contention_round(server: ObjectStoreServer, side: str, writers: int, commits: int) -> float:
    url = _create(server, f"contention-{side}")
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(writers + 1)
    args = (url, server.options, server.kind, commits, barrier)
    processes = [context.Process(target=_worker, args=(side, *args)) for _ in range(writers)]
    for process in processes:
        process.start()
    barrier.wait()
    started = time.perf_counter()
    for process in processes:
        process.join()
        if process.exitcode != 0:
            raise RuntimeError(f"a {side} writer failed ({process.exitcode})")
    return writers * commits / (time.perf_counter() - started)


def contention(server: ObjectStoreServer, rounds: int, writers: int, commits: int) -> Metric:
    pair = alternate(
        lambda: _contention_round(server, "ours", writers, commits),
        lambda: _contention_round(server, "peer", writers, commits),
        rounds,
        warmup=0,
    )
    return Metric("object_store.contention", 11,
                  f"S3 (moto): {writers} processes x {commits} blind appends to one table",
                  "commits/s", True, pair[0], pair[1], PEER)  # fmt: skip


def run(quick: bool = False) -> list[Metric]:
    with serving("s3") as server:
        return [
            latency(server, 2 if quick else 5),
            snapshot_load(server, 40 if quick else 200, 3 if quick else 9),
            contention(server, 1 if quick else 3, 4, 5 if quick else 10),
        ]
