"""The checksum a writer updates from the one it computed for the version before equals the one
computed in full from a cold load (CHECKSUM.WRITE), over random histories: appends of sizes in
any bin, re-adds of a live path with another size, removes of live and of unknown files."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import examples

from deltaspec.impl import checksum
from deltaspec.impl.actions import AddFile, Metadata, Protocol, RemoveFile
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

NOW = 1_700_000_000_000
SCHEMA = json.dumps({"type": "struct", "fields": []})
SIZES = st.sampled_from([0, 1, 8191, 8192, 4 * 2**20, 5 * 2**30, 2**45])
STEP = st.tuples(st.sampled_from(["add", "add", "re-add", "remove", "remove unknown"]), SIZES)


@pytest.mark.rules("CHECKSUM.WRITE")
@examples(0.25)
@given(steps=st.lists(STEP, min_size=1, max_size=12), interval=st.sampled_from([3, 100]))
def test_an_updated_checksum_is_the_full_one(steps: list[tuple[str, int]], interval: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "t"
        log = DeltaLog(root, clock=lambda: NOW)
        configuration = {"delta.checkpointInterval": str(interval)}
        OptimisticTransaction(log, None, clock=lambda: NOW).commit(
            [Protocol(1, 2), Metadata("t", SCHEMA, (), configuration)]
        )
        for counter, (kind, size) in enumerate(steps, start=1):
            txn = OptimisticTransaction(log, clock=lambda: NOW)
            live = sorted(txn.snapshot.files) if txn.snapshot else []
            if kind == "re-add" and live:
                action: AddFile | RemoveFile = AddFile(live[0][0], {}, size, NOW, True)
            elif kind == "remove" and live:
                action = RemoveFile(live[-1][0], NOW, True, True, {}, size)
            elif kind == "remove unknown":
                action = RemoveFile(f"gone{counter}", NOW, True, True, {}, size)
            else:
                action = AddFile(f"f{counter}", {}, size, NOW, True)
            version = txn.commit([action], Operation("WRITE"))
            written = checksum.read_checksum(log, version)
            cold = DeltaLog(root, clock=lambda: NOW, cache=False).snapshot(version)
            assert written is not None
            assert written == checksum.version_checksum(cold, written.get("txnId"))


@pytest.mark.rules("CHECKSUM.WRITE")
def test_the_histogram_update_matches_a_full_count() -> None:
    sizes = [0, 5, 8192, 9000, 2**30, 2**44]
    full = checksum.file_size_histogram(sizes)
    updated = checksum.updated_histogram(checksum.file_size_histogram(sizes[:4]), [], sizes[4:])
    assert updated == full
    assert checksum.updated_histogram(full, [9000], []) == checksum.file_size_histogram(
        [0, 5, 8192, 2**30, 2**44]
    )
    with pytest.raises(ValueError):
        checksum.updated_histogram(full, [], [-1])


@pytest.mark.rules("CHECKSUM.WRITE")
def test_a_table_recreated_under_the_writer_is_counted_in_full(tmp_path: Path) -> None:
    root = tmp_path / "t"
    log = DeltaLog(root, clock=lambda: NOW)

    def create(writer: DeltaLog, sizes: list[int]) -> None:
        OptimisticTransaction(writer, None, clock=lambda: NOW).commit(
            [Protocol(1, 2), Metadata("t", SCHEMA, (), {})]
        )
        OptimisticTransaction(writer).commit(
            [AddFile(f"f{i}", {}, size, NOW, True) for i, size in enumerate(sizes)]
        )

    create(log, [1, 2, 3])  # our writer computed the checksum of version 1
    shutil.rmtree(root)
    create(DeltaLog(root, clock=lambda: NOW, cache=False), [2**40, 9000])  # another table
    version = OptimisticTransaction(log).commit([AddFile("g", {}, 7, NOW, True)])
    cold = DeltaLog(root, clock=lambda: NOW, cache=False).snapshot(version)
    written = checksum.read_checksum(log, version)
    assert written == checksum.version_checksum(cold, written and written.get("txnId"))
