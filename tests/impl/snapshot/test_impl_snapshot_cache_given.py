"""A log is given its cache: its own ``LogCache`` by default, ``NO_CACHE`` (or ``cache=False``)
to keep nothing, or a cache passed in; the snapshots it loads are the same whichever it has."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deltaspec.impl.actions import AddFile, Metadata, Protocol
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.snapshot.cache import NO_CACHE, LogCache
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.snapshot.state import Snapshot
from deltaspec.impl.txn.transaction import OptimisticTransaction

NOW = 1_700_000_000_000
SCHEMA = json.dumps(
    {"type": "struct", "fields": [{"name": "x", "type": "long", "nullable": True, "metadata": {}}]}
)


def _digest(snapshot: Snapshot) -> tuple[object, ...]:
    return (snapshot.version, snapshot.timestamp, snapshot.metadata, sorted(snapshot.files.items()))


class CountingStore(LocalLogStore):
    """A local store that counts the files read."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads: list[str] = []

    def read(self, name: str) -> bytes:
        self.reads.append(name)
        return super().read(name)


def _table(root: Path, commits: int) -> None:
    log = DeltaLog(root, clock=lambda: NOW)
    OptimisticTransaction(log, None, clock=lambda: NOW).commit(
        [Protocol(1, 2), Metadata("t", SCHEMA, (), {})]
    )
    for n in range(commits):
        txn = OptimisticTransaction(log, clock=lambda: NOW)
        txn.commit([AddFile(f"f{n}.parquet", {}, 10, NOW, True)])


@pytest.mark.rules("SNAPSHOT.REPLAY")
@pytest.mark.parametrize("uncached", [NO_CACHE, False])
def test_a_log_without_cache_reads_every_commit_each_load(tmp_path: Path, uncached: object) -> None:
    _table(tmp_path, 3)
    store = CountingStore(tmp_path)
    log = DeltaLog(tmp_path, store=store, clock=lambda: NOW, cache=uncached)  # type: ignore[arg-type]
    first = _digest(log.snapshot())
    assert log.cache is NO_CACHE and log.cache.last_snapshot is None
    read_once = len(store.reads)
    assert read_once >= 4  # commits 0..3
    assert _digest(log.snapshot()) == first
    assert len(store.reads) == 2 * read_once


@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_a_cache_passed_in_serves_every_log_given_it(tmp_path: Path) -> None:
    _table(tmp_path, 3)
    shared = LogCache()
    cold = _digest(DeltaLog(tmp_path, clock=lambda: NOW, cache=False).snapshot())
    assert _digest(DeltaLog(tmp_path, clock=lambda: NOW, cache=shared).snapshot()) == cold
    store = CountingStore(tmp_path)
    second = DeltaLog(tmp_path, store=store, clock=lambda: NOW, cache=shared)
    assert second.cache is shared
    assert _digest(second.snapshot()) == cold
    # the same segment: the snapshot the first log kept, no commit read (only the hint)
    assert [name for name in store.reads if name.endswith(".json")] == []
    own = DeltaLog(tmp_path, clock=lambda: NOW)
    assert isinstance(own.cache, LogCache) and own.cache is not shared
