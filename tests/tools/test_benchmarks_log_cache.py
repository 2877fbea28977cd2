"""The DeltaLog cache that the benchmarks issue added: kept checkpoint states and decoded commits
must never change a snapshot. Every load lists the log afresh, so a concurrent writer's commit
(another DeltaLog, another process) is seen at once, and a file that changed under a kept name
is read again.
"""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from deltaspec.impl import codec
from deltaspec.impl.actions import Action, AddFile, Metadata, Protocol, RemoveFile, SetTransaction
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.snapshot.state import Snapshot
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

NOW = 1_700_000_000_000
SCHEMA = json.dumps(
    {
        "type": "struct",
        "fields": [{"name": "p", "type": "string", "nullable": True, "metadata": {}}],
    }
)
METADATA = Metadata("cache-test", SCHEMA, ("p",), {"delta.checkpointInterval": "1000"})


def _add(name: str, p: str = "a", stats: str | None = None) -> AddFile:
    return AddFile(f"p={p}/{name}", {"p": p}, 10, NOW, True, stats)


def _view(snapshot: Snapshot) -> tuple[object, ...]:
    return (
        snapshot.version,
        snapshot.checkpoint_version,
        sorted((key, add.stats) for key, add in snapshot.files.items()),
        sorted(snapshot.tombstones),
        sorted((app, t.version) for app, t in snapshot.app_transactions.items()),
        snapshot.metadata,
        snapshot.protocol,
    )


def _fresh(root: Path, version: int | None = None) -> tuple[object, ...]:
    """What a log that never read anything before (and keeps nothing) loads."""
    return _view(DeltaLog(root, clock=lambda: NOW, cache=False).snapshot(version))


def _commit(log: DeltaLog, *actions: Action) -> int:
    return OptimisticTransaction(log, clock=lambda: NOW).commit(list(actions), Operation("WRITE"))


@pytest.fixture
def table(tmp_path: Path) -> Path:
    log = DeltaLog(tmp_path, clock=lambda: NOW)
    OptimisticTransaction(log, None, clock=lambda: NOW).commit(
        [Protocol(1, 2), METADATA, _add("0")], Operation("CREATE TABLE")
    )
    return tmp_path


@pytest.mark.rules("SNAPSHOT.REPLAY", "LOG.LISTING")
def test_a_concurrent_writers_commits_are_seen_by_a_caching_log(table: Path) -> None:
    reader = DeltaLog(table, clock=lambda: NOW)
    writer = DeltaLog(table, clock=lambda: NOW)
    assert reader.snapshot().version == 0
    for i in range(1, 6):
        _commit(writer, _add(f"{i}"), SetTransaction("app", i))
        seen = reader.snapshot()
        assert seen.version == i
        assert _view(seen) == _fresh(table)
    # a checkpoint written by the other log, then more commits: the reader starts from it
    write_checkpoint(writer, writer.snapshot(), now_ms=NOW)
    _commit(writer, RemoveFile("p=a/2", NOW, True, True, {"p": "a"}, 10), _add("6"))
    seen = reader.snapshot()
    assert (seen.version, seen.checkpoint_version) == (6, 5)
    assert _view(seen) == _fresh(table)
    # time travel back behind the checkpoint, and forward again, still equal to a cold load
    for version in (3, 5, 6, 2):
        assert _view(reader.snapshot(version)) == _fresh(table, version)


def _commit_in_another_process(root: str, name: str) -> None:  # pragma: no cover - spawned
    log = DeltaLog(root, clock=lambda: NOW)
    _commit(log, _add(name, "b"))


@pytest.mark.rules("SNAPSHOT.REPLAY", "LOG.LISTING")
def test_a_commit_from_another_process_invalidates_nothing_it_should_not(table: Path) -> None:
    reader = DeltaLog(table, clock=lambda: NOW)
    before = reader.snapshot()
    context = multiprocessing.get_context("spawn")
    process = context.Process(target=_commit_in_another_process, args=(str(table), "other"))
    process.start()
    process.join(60)
    assert process.exitcode == 0
    after = reader.snapshot()
    assert after.version == before.version + 1
    assert ("p=b/other", None) in after.files
    assert _view(after) == _fresh(table)


@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_a_changed_file_under_a_kept_name_is_read_again(table: Path) -> None:
    log = DeltaLog(table, clock=lambda: NOW)
    _commit(log, _add("1", stats='{"numRecords":1}'))
    assert log.snapshot().files[("p=a/1", None)].stats == '{"numRecords":1}'
    # what no writer may do (LOG.PUT_IF_ABSENT), done anyway: the kept commit is not used
    path = table / "_delta_log" / commit_name(1)
    payload = codec.encode_commit([_add("1", stats='{"numRecords":12345}')])
    path.write_bytes(payload)
    assert log.snapshot().files[("p=a/1", None)].stats == '{"numRecords":12345}'
    assert _view(log.snapshot()) == _fresh(table)


@pytest.mark.rules("SNAPSHOT.REPLAY", "CHECKPOINT.READ")
def test_kept_states_are_not_mutated_by_later_replays(table: Path) -> None:
    log = DeltaLog(table, clock=lambda: NOW)
    _commit(log, _add("1"), SetTransaction("app", 1))
    write_checkpoint(log, log.snapshot(), now_ms=NOW)
    _commit(log, SetTransaction("app", 2), SetTransaction("other", 1))
    latest = log.snapshot()
    assert latest.app_transactions["app"].version == 2
    # the checkpoint's own state (kept) still says version 1 for "app"
    at_checkpoint = log.snapshot(1)
    assert at_checkpoint.app_transactions["app"].version == 1
    assert "other" not in at_checkpoint.app_transactions
    assert _view(log.snapshot()) == _view(latest) == _fresh(table)


@pytest.mark.rules("CHECKPOINT.READ")
def test_a_deleted_checkpoint_is_not_used_from_the_cache(table: Path) -> None:
    log = DeltaLog(table, clock=lambda: NOW)
    _commit(log, _add("1"))
    write_checkpoint(log, log.snapshot(), now_ms=NOW)
    assert log.snapshot().checkpoint_version == 1
    store = LocalLogStore(table)
    store.delete("00000000000000000001.checkpoint.parquet")
    store.delete("_last_checkpoint")
    again = log.snapshot()
    assert again.checkpoint_version is None
    assert _view(again) == _fresh(table)


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


@pytest.mark.rules("SNAPSHOT.REPLAY", "CHECKPOINT.READ")
def test_a_second_load_reads_only_what_is_new(table: Path) -> None:
    store = _CountingStore(table)
    log = DeltaLog(table, store=store, clock=lambda: NOW)
    _commit(log, _add("1"))
    write_checkpoint(log, log.snapshot(), now_ms=NOW)
    _commit(log, _add("2"))
    log.snapshot()
    store.reads.clear()
    _commit(DeltaLog(table, clock=lambda: NOW), _add("3"))  # another writer
    assert log.snapshot().version == 3
    assert sorted(store.reads) == ["00000000000000000003.json", "_last_checkpoint"]
    assert _view(log.snapshot()) == _fresh(table)
    uncached = _CountingStore(table)
    DeltaLog(table, store=uncached, clock=lambda: NOW, cache=False).snapshot()
    DeltaLog(table, store=uncached, clock=lambda: NOW, cache=False).snapshot()
    assert uncached.reads.count("00000000000000000002.json") == 2
