"""Refreshing a loaded table applies only the new commits to the state it keeps, and loads what a
cold load loads, over random histories with checkpoints, log cleanup, checksums, removes and time
travel (SNAPSHOT.REPLAY, CHECKPOINT.READ)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import examples

from deltaspec.impl import checksum
from deltaspec.impl.actions import AddFile, Metadata, Protocol, RemoveFile, SetTransaction
from deltaspec.impl.checkpoint.policy import checkpoint_version
from deltaspec.impl.errors import DeltaError
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.snapshot.cache import NO_CACHE, LogCache
from deltaspec.impl.snapshot.delta_log import DeltaLog, wall_clock_ms
from deltaspec.impl.snapshot.state import Snapshot
from deltaspec.impl.txn.transaction import OptimisticTransaction

NOW = 1_700_000_000_000
LATER = wall_clock_ms() + 90 * 86_400_000
"""A clock at which every file written now is past the default log retention (30 days)."""
SCHEMA = json.dumps(
    {
        "type": "struct",
        "fields": [{"name": "p", "type": "integer", "nullable": True, "metadata": {}}],
    }
)
STEP = st.tuples(
    st.sampled_from(
        ["append", "append", "remove", "remove long ago", "txn", "checkpoint", "crc", "time travel"]
    ),
    st.integers(0, 3),
)
WEEK_MS = 7 * 86_400_000


def _digest(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "version": snapshot.version,
        "checkpoint": snapshot.checkpoint_version,
        "timestamp": snapshot.timestamp,
        "protocol": snapshot.protocol,
        "metadata": snapshot.metadata,
        "files": sorted(snapshot.files.items()),
        "tombstones": sorted(snapshot.all_tombstones.to_pylist(), key=lambda r: r["path"]),
        "txns": sorted(snapshot.all_app_transactions.items()),
        "domains": sorted(snapshot.domains.items()),
    }


def _loads(log: DeltaLog, version: int | None) -> dict[str, Any] | str:
    try:
        return _digest(log.snapshot(version))
    except DeltaError as error:
        return type(error).__name__


def _step(writer: DeltaLog, reader: DeltaLog, kind: str, n: int, counter: int) -> None:
    if kind == "checkpoint":
        checkpoint_version(writer, writer.latest_version(), now_ms=LATER)  # cleans up too
        return
    if kind == "crc":
        checksum.write_checksum(writer, writer.latest_version())
        return
    if kind == "time travel":
        _loads(reader, max(0, reader.latest_version() - n))  # the reader keeps an older one
        return
    txn = OptimisticTransaction(writer, clock=lambda: NOW + counter)
    live = sorted(txn.snapshot.files.values(), key=lambda f: f.path) if txn.snapshot else []
    if kind.startswith("remove") and live:
        doomed = live[n % len(live)]
        # removed "at" LATER, a checkpoint written at LATER keeps the tombstone; removed at NOW,
        # it leaves it out, though the loads' clock (NOW) has not expired it
        at = NOW + counter if kind == "remove long ago" else LATER
        txn.commit([RemoveFile(doomed.path, at, True, True, doomed.partition_values, 1)])
    elif kind == "txn":
        txn.commit([SetTransaction(f"app-{n}", counter, NOW)])
    else:
        txn.commit([AddFile(f"p={n}/f{counter}.parquet", {"p": str(n)}, 10 + n, NOW, True)])


@pytest.mark.rules("SNAPSHOT.REPLAY", "CHECKPOINT.READ", "RETENTION.LOG", "RETENTION.TOMBSTONES")
@examples(0.25)
@given(steps=st.lists(STEP, min_size=1, max_size=12), interval=st.sampled_from([2, 3, 100]))
def test_a_refreshed_snapshot_is_the_cold_one(steps: list[tuple[str, int]], interval: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "t"
        writer = DeltaLog(root, clock=lambda: NOW)
        reader = DeltaLog(root, clock=lambda: NOW)
        configuration = {"delta.checkpointInterval": str(interval)}
        OptimisticTransaction(writer, None, clock=lambda: NOW).commit(
            [Protocol(1, 2), Metadata("t", SCHEMA, ("p",), configuration)]
        )
        for counter, (kind, n) in enumerate(steps, start=1):
            _step(writer, reader, kind, n, counter)
            cold = DeltaLog(root, clock=lambda: NOW, cache=False)
            expected = _loads(cold, None)
            assert _loads(reader, None) == expected
            assert _loads(writer, None) == expected


class _CountingStore(LocalLogStore):
    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads: list[str] = []

    def read(self, name: str) -> bytes:
        self.reads.append(name)
        return super().read(name)

    def local_path(self, name: str) -> str | None:
        self.reads.append(name)
        return super().local_path(name)

    def open_file(self, name: str) -> BinaryIO:
        self.reads.append(name)
        return super().open_file(name)


@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_a_refresh_reads_only_the_new_commits(tmp_path: Path) -> None:
    root = tmp_path / "t"
    writer = DeltaLog(root, clock=lambda: NOW)
    configuration = {"delta.checkpointInterval": "3"}
    OptimisticTransaction(writer, None, clock=lambda: NOW).commit(
        [Protocol(1, 2), Metadata("t", SCHEMA, ("p",), configuration)]
    )
    for i in range(4):  # a checkpoint at version 3
        OptimisticTransaction(writer).commit([AddFile(f"f{i}", {"p": "0"}, 1, NOW, True)])
    store = _CountingStore(root)
    reader = DeltaLog(root, store=store, clock=lambda: NOW)
    assert reader.snapshot().version == 4
    OptimisticTransaction(writer).commit([AddFile("f4", {"p": "0"}, 1, NOW, True)])
    store.reads.clear()
    snapshot = reader.snapshot()
    assert snapshot.version == 5 and snapshot.checkpoint_version == 3
    assert [r for r in store.reads if r != "_last_checkpoint"] == [commit_name(5)]
    assert sorted(f.path for f in snapshot.files.values()) == [f"f{i}" for i in range(5)]


@pytest.mark.rules("SNAPSHOT.REPLAY", "LOG.PUT_IF_ABSENT")
def test_a_rewritten_commit_is_not_refreshed_onto(tmp_path: Path) -> None:
    """A table re-created at the same path: the kept state is not the log's any more."""
    root = tmp_path / "t"
    log = DeltaLog(root, clock=lambda: NOW)
    OptimisticTransaction(log, None, clock=lambda: NOW).commit(
        [Protocol(1, 2), Metadata("t", SCHEMA, ("p",), {})]
    )
    OptimisticTransaction(log).commit([AddFile("old", {"p": "0"}, 1, NOW, True)])
    assert {f.path for f in log.snapshot().files.values()} == {"old"}
    path = root / "_delta_log" / commit_name(1)
    path.unlink()
    other = DeltaLog(root, clock=lambda: NOW, cache=False)
    OptimisticTransaction(other).commit([AddFile("new-and-longer", {"p": "0"}, 1, NOW, True)])
    os.utime(path, ns=(0, 0))
    assert {f.path for f in log.snapshot().files.values()} == {"new-and-longer"}


def _tombstoned_table(root: Path, clock: list[int]) -> DeltaLog:
    """A table whose version 2 removes ``f0`` at NOW, checkpointed at NOW + a week (the
    tombstone expired then), and a log of it that loaded version 2 before the checkpoint, its
    clock a millisecond before the checkpoint's (the tombstone not expired by it)."""
    log = DeltaLog(root, clock=lambda: clock[0])
    configuration = {"delta.checkpointInterval": "100"}
    OptimisticTransaction(log, None, clock=lambda: NOW).commit(
        [Protocol(1, 2), Metadata("t", SCHEMA, ("p",), configuration)]
    )
    OptimisticTransaction(log, clock=lambda: NOW).commit([AddFile("f0", {"p": "0"}, 1, NOW, True)])
    OptimisticTransaction(log, clock=lambda: NOW).commit(
        [RemoveFile("f0", NOW, True, True, {"p": "0"}, 1)]
    )
    checkpoint_version(log, 2, now_ms=NOW + WEEK_MS)
    clock[0] = NOW + WEEK_MS - 1
    return log


def _tombstone_paths(snapshot: Snapshot) -> list[str]:
    return sorted(path for path, _ in snapshot.tombstones)


@pytest.mark.rules("RETENTION.TOMBSTONES", "CHECKPOINT.READ", "SNAPSHOT.REPLAY")
def test_a_tombstone_the_writers_checkpoint_left_out_stays_out(tmp_path: Path) -> None:
    """The writer of the checkpoint commits again: its snapshot starts from what the checkpoint
    holds, as a cold load does, not from the state it kept (which still had the tombstone)."""
    clock = [NOW]
    log = _tombstoned_table(tmp_path / "t", clock)
    OptimisticTransaction(log, clock=lambda: clock[0]).commit(
        [AddFile("f1", {"p": "0"}, 1, NOW, True)]
    )
    cold = DeltaLog(tmp_path / "t", clock=lambda: clock[0], cache=False).snapshot()
    assert cold.checkpoint_version == 2 and _tombstone_paths(cold) == []
    assert _digest(log.snapshot()) == _digest(cold)


@pytest.mark.rules("RETENTION.TOMBSTONES", "CHECKPOINT.READ", "SNAPSHOT.REPLAY")
def test_a_tombstone_a_checkpoint_read_left_out_stays_out(tmp_path: Path) -> None:
    """A reader that read the checkpoint whole, then time travelled to version 1, loads the
    latest version from the checkpoint's state, not by refreshing version 1 across it (without
    ``_last_checkpoint`` every load lists the whole log, so version 1 is still listed)."""
    clock = [NOW]
    _tombstoned_table(tmp_path / "t", clock)
    (tmp_path / "t" / "_delta_log" / "_last_checkpoint").unlink()
    reader = DeltaLog(tmp_path / "t", clock=lambda: clock[0])
    assert _tombstone_paths(reader.snapshot()) == []
    assert reader.snapshot(1).checkpoint_version is None
    latest = reader.snapshot()
    assert latest.checkpoint_version == 2 and _tombstone_paths(latest) == []


@pytest.mark.rules("CHECKPOINT.READ", "CHECKPOINT.COMMITTED_VERSION")
def test_a_writer_loads_from_its_own_checkpoint_without_reading_it(tmp_path: Path) -> None:
    root = tmp_path / "t"
    store = _CountingStore(root)
    writer = DeltaLog(root, store=store, clock=lambda: NOW)
    OptimisticTransaction(writer, None, clock=lambda: NOW).commit(
        [Protocol(1, 2), Metadata("t", SCHEMA, ("p",), {"delta.checkpointInterval": "2"})]
    )
    for i in range(3):  # the post-commit step checkpoints version 2
        OptimisticTransaction(writer).commit([AddFile(f"f{i}", {"p": "0"}, 1, NOW, True)])
    snapshot = writer.snapshot()
    assert snapshot.version == 3 and snapshot.checkpoint_version == 2
    assert not [name for name in store.reads if ".checkpoint." in name]
    cold = DeltaLog(root, clock=lambda: NOW, cache=False).snapshot()
    assert _digest(snapshot) == _digest(cold)


def _digest(snapshot: Snapshot) -> tuple[object, ...]:
    return (snapshot.version, snapshot.timestamp, snapshot.metadata, sorted(snapshot.files.items()))


def _table(root: Path, commits: int) -> None:
    log = DeltaLog(root, clock=lambda: NOW)
    OptimisticTransaction(log, None, clock=lambda: NOW).commit(
        [Protocol(1, 2), Metadata("t", SCHEMA, ("p",), {})]
    )
    for n in range(commits):
        txn = OptimisticTransaction(log, clock=lambda: NOW)
        txn.commit([AddFile(f"p={n}/f.parquet", {"p": str(n)}, 10, NOW, True)])


@pytest.mark.rules("SNAPSHOT.REPLAY")
@pytest.mark.parametrize("uncached", [NO_CACHE, False])
def test_a_log_without_cache_reads_every_commit_each_load(tmp_path: Path, uncached: Any) -> None:
    """A log given NO_CACHE (or cache=False) keeps nothing: each load reads what the first did."""
    _table(tmp_path, 3)
    store = _CountingStore(tmp_path)
    log = DeltaLog(tmp_path, store=store, clock=lambda: NOW, cache=uncached)
    first = _digest(log.snapshot())
    assert log.cache is NO_CACHE and log.cache.last_snapshot is None
    read_once = len(store.reads)
    assert read_once >= 4  # commits 0..3
    assert _digest(log.snapshot()) == first
    assert len(store.reads) == 2 * read_once


@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_a_cache_passed_in_serves_every_log_given_it(tmp_path: Path) -> None:
    """Logs given one LogCache share what it keeps; a log given none has its own."""
    _table(tmp_path, 3)
    shared = LogCache()
    cold = _digest(DeltaLog(tmp_path, clock=lambda: NOW, cache=False).snapshot())
    assert _digest(DeltaLog(tmp_path, clock=lambda: NOW, cache=shared).snapshot()) == cold
    store = _CountingStore(tmp_path)
    second = DeltaLog(tmp_path, store=store, clock=lambda: NOW, cache=shared)
    assert second.cache is shared
    assert _digest(second.snapshot()) == cold
    # the same segment: the snapshot the first log kept, no commit read (only the hint)
    assert [name for name in store.reads if name.endswith(".json")] == []
    own = DeltaLog(tmp_path, clock=lambda: NOW)
    assert isinstance(own.cache, LogCache) and own.cache is not shared
