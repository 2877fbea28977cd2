"""Concurrent checkpoints: two writers checkpointing the same version at once.

Each writer has its own clock, so their checkpoints of one version differ in the rows that expire
(an application transaction past ``delta.setTransactionRetentionDuration``). Classic files and
parts are put-if-absent, so the writers can end up with each other's parts; whatever mix lands,
every checkpoint of every kind must read back as the JSON replay of its version, and delta-rs must
open the table at every version.
"""

from __future__ import annotations

import multiprocessing
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from support import (
    create_reliability_table,
    deltalake_view,
    json_only_log,
    log_problems,
    snapshot_view,
    write_data_file,
)

from deltaspec.impl.actions import RemoveFile, SetTransaction
from deltaspec.impl.checkpoint import write as checkpoint_write
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import is_checkpoint_name, part_checkpoint_name
from deltaspec.impl.log.store import FileInfo
from deltaspec.impl.snapshot.delta_log import DeltaLog, wall_clock_ms
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

deltalake = pytest.importorskip("deltalake")

DAY = 24 * 3600 * 1000
T = wall_clock_ms() - 10 * DAY  # when the application transactions were last updated
CLOCKS = (T + DAY // 2, T + 2 * DAY)  # writer 0 keeps them, writer 1 has them expired
MODES: list[tuple[int | None, int | None]] = [(None, None), (3, 3), (None, 3), (2, 3), (3, None)]


def build(root: Path, versions: int) -> None:
    """Appends, deletes and app transactions (expiring after a day) over ``versions`` commits."""
    log = create_reliability_table(
        root,
        **{"delta.checkpointInterval": "1000", "delta.setTransactionRetentionDuration": "1 day"},
    )
    for i in range(1, versions + 1):
        txn = OptimisticTransaction(log)
        if i % 3 == 0:
            victim = sorted(txn.snapshot.files)[0][0]  # type: ignore[union-attr]
            txn.commit([RemoveFile(victim, T, True)], Operation("DELETE"))
        elif i % 3 == 1:
            txn.commit([SetTransaction(f"app{i % 4}", i, T)], Operation("STREAMING UPDATE"))
        else:
            adds = [write_data_file(root, part, [i]) for part in ("abc"[i % 3], "abc"[i % 2])]
            txn.commit(adds, Operation("WRITE"))
    assert log.latest_version() == versions


class OnlyCheckpoint(LocalLogStore):
    """The log with one chosen checkpoint as the only checkpoint (and no hint)."""

    def __init__(self, root: str, files: tuple[FileInfo, ...]) -> None:
        super().__init__(root)
        self.keep = {f.name for f in files}

    def list_from(self, start: str = "") -> list[FileInfo]:
        listed = super().list_from(start)
        return [i for i in listed if not is_checkpoint_name(i.name) or i.name in self.keep]

    def read(self, name: str) -> bytes:
        if name == "_last_checkpoint":
            raise FileNotFoundError(name)
        return super().read(name)


def checkpoint_problems(root: Path) -> list[str]:
    """Every complete checkpoint of every kind, read alone, against JSON replay."""
    problems: list[str] = []
    listing = DeltaLog(str(root)).list_log(None)
    replay = json_only_log(root)
    for version, variants in sorted(listing.checkpoints.items()):
        expected = snapshot_view(replay.snapshot(version))
        for cp in variants:
            log = DeltaLog(str(root), store=OnlyCheckpoint(str(root), cp.files))
            snapshot = log.snapshot(version)
            if snapshot.checkpoint_version != version or snapshot_view(snapshot) != expected:
                problems.append(f"{cp.kind} checkpoint of version {version} differs from replay")
    return problems


def deltalake_problems(root: Path, versions: int) -> list[str]:
    problems = []
    for version in range(versions + 1):
        ours = sorted(p for p, _ in DeltaLog(str(root)).snapshot(version).files)
        table = deltalake.DeltaTable(str(root), version=version)
        theirs = sorted(pa.table(table.get_add_actions()).column("path").to_pylist())
        if ours != theirs:
            problems.append(f"delta-rs disagrees at version {version}")
    return problems


def checkpoint_writer(root: str, index: int, barrier: Any, versions: int) -> None:
    """Writer ``index``: every version in turn, in step with the other writer."""
    log = DeltaLog(root)
    for version in range(1, versions + 1):
        parts = MODES[version % len(MODES)][index]
        snapshot = log.snapshot(version)
        barrier.wait(60)
        write_checkpoint(log, snapshot, parts=parts, now_ms=CLOCKS[index])


@pytest.mark.rules("CHECKPOINT.READ", "CHECKPOINT.CONTENTS", "CHECKPOINT.LAST_CHECKPOINT")
@pytest.mark.parametrize("writers", ["threads", "processes"])
def test_two_writers_checkpoint_every_version_at_once(tmp_path: Path, writers: str) -> None:
    versions = 10
    build(tmp_path, versions)
    args = (str(tmp_path),)
    if writers == "threads":
        barrier: Any = threading.Barrier(2)
        runs: list[Any] = [
            threading.Thread(target=checkpoint_writer, args=(*args, i, barrier, versions))
            for i in range(2)
        ]
    else:
        context = multiprocessing.get_context("spawn")
        barrier = context.Barrier(2)
        runs = [
            context.Process(target=checkpoint_writer, args=(*args, i, barrier, versions))
            for i in range(2)
        ]
    for run in runs:
        run.start()
    for run in runs:
        run.join(120)
    if writers == "processes":
        assert [run.exitcode for run in runs] == [0, 0]
    listing = DeltaLog(str(tmp_path)).list_log(None)
    kinds = {cp.kind for variants in listing.checkpoints.values() for cp in variants}
    assert kinds == {"classic", "multi-part"} and sorted(listing.checkpoints) == list(
        range(1, versions + 1)
    )
    assert checkpoint_problems(tmp_path) == []
    assert log_problems(tmp_path) == []
    assert deltalake_problems(tmp_path, versions) == []
    assert deltalake_view(tmp_path)[0] == versions


class StopsAfterPart1(LocalLogStore):
    """A writer that dies after part 1 of its multi-part checkpoint."""

    def write_new(self, name: str, data: bytes) -> None:
        if ".checkpoint.0000000002." in name:
            raise OSError("killed")
        super().write_new(name, data)


def contiguous_parts(table: pa.Table, parts: int) -> list[int]:
    """The split this module used before: contiguous slices of the rows."""
    rows = table.num_rows
    return [min(parts - 1, i * parts // rows) for i in range(rows)] if rows else []


@pytest.mark.rules("CHECKPOINT.READ", "CHECKPOINT.CONTENTS")
@pytest.mark.parametrize("split", ["by path hash", "contiguous (old)"])
def test_parts_of_two_writers_with_different_clocks_combine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, split: str
) -> None:
    """Writer 0 (keeps the app transactions) dies after part 1; writer 1 (has them expired)
    completes the checkpoint, keeping writer 0's part 1. Split by path, every live file is in
    exactly one part either way; split into contiguous slices, the rows shift between the two
    writers and the combined checkpoint loses or repeats files (the control case)."""
    if split != "by path hash":
        monkeypatch.setattr(checkpoint_write, "part_of_rows", contiguous_parts)
    build(tmp_path, 8)
    log = DeltaLog(str(tmp_path))
    snapshot = log.snapshot()
    with pytest.raises(OSError, match="killed"):
        write_checkpoint(StopsAfterPart1(str(tmp_path)), snapshot, parts=3, now_ms=CLOCKS[0])
    write_checkpoint(log, snapshot, parts=3, now_ms=CLOCKS[1])
    assert (tmp_path / "_delta_log" / part_checkpoint_name(8, 3, 3)).exists()
    problems = checkpoint_problems(tmp_path)
    if split == "by path hash":
        assert problems == []
        assert deltalake_problems(tmp_path, 8) == []
    else:
        assert problems == ["multi-part checkpoint of version 8 differs from replay"]
