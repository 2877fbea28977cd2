"""Row tracking on the production commit path, on real files (ROWTRACKING.*): what a commit
writes, and what a retried commit writes after its rebase. Expectations come from the spec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deltaspec.impl import errors
from deltaspec.impl.actions import AddFile, CommitInfo, DomainMetadata, Metadata, Protocol
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import OptimisticTransaction

SCHEMA = '{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}'
ROW_TRACKING = Protocol(1, 7, None, ["domainMetadata", "rowTracking"])


def mark(n: int) -> str:
    return json.dumps(
        {"rowIdHighWaterMark": n, "domainName": "delta.rowTracking"}, separators=(",", ":")
    )


def add(path: str, n: int | None, **fields: int) -> AddFile:
    stats = None if n is None else json.dumps({"numRecords": n})
    return AddFile(path, {}, 10, 0, True, stats, **fields)  # type: ignore[arg-type]


def new_table(root: Path, protocol: Protocol = ROW_TRACKING) -> DeltaLog:
    log = DeltaLog(str(root))
    OptimisticTransaction(log).commit([protocol, Metadata("t", SCHEMA, (), {})])
    return log


def row_ids(log: DeltaLog) -> dict[str, tuple[int | None, int | None]]:
    snapshot = log.snapshot()
    return {f.path: (f.base_row_id, f.default_row_commit_version) for f in snapshot.files.values()}


def lines(root: Path, version: int) -> list[dict]:
    text = (root / "_delta_log" / commit_name(version)).read_text()
    return [json.loads(line) for line in text.splitlines()]


@pytest.mark.rules("ROWTRACKING.FRESH_ROW_IDS", "ROWTRACKING.DEFAULT_ROW_COMMIT_VERSION")
def test_a_commit_numbers_new_files_and_keeps_preserved_ones(tmp_path: Path) -> None:
    log = new_table(tmp_path)
    OptimisticTransaction(log).commit([add("a", 3), add("b", 2)])
    assert row_ids(log) == {"a": (0, 1), "b": (3, 1)}
    assert log.snapshot().domains["delta.rowTracking"].configuration == mark(4)
    OptimisticTransaction(log).commit(
        [add("a2", 3, base_row_id=0, default_row_commit_version=1), add("c", 0)]
    )
    assert row_ids(log)["a2"] == (0, 1) and row_ids(log)["c"] == (5, 2)
    assert not any("domainMetadata" in line for line in lines(tmp_path, 2))  # the mark stayed 4


@pytest.mark.rules("ROWTRACKING.FRESH_ROW_IDS")
def test_a_file_without_num_records_is_refused(tmp_path: Path) -> None:
    log = new_table(tmp_path)
    with pytest.raises(errors.RowIdAssignmentWithoutStatsError) as raised:
        OptimisticTransaction(log).commit([add("a", None)])
    assert raised.value.kind == "ROW_ID_ASSIGNMENT_WITHOUT_STATS"
    assert not (tmp_path / "_delta_log" / commit_name(1)).exists()
    plain = new_table(tmp_path / "plain", Protocol(1, 2))
    OptimisticTransaction(plain).commit([add("a", None)])
    assert row_ids(plain) == {"a": (None, None)}


@pytest.mark.rules("ROWTRACKING.REBASE")
def test_a_retried_commit_writes_its_rebased_row_ids(tmp_path: Path) -> None:
    log = new_table(tmp_path)
    loser = OptimisticTransaction(log)
    loser.stage([add("y", 2), add("kept", 1, base_row_id=0, default_row_commit_version=0)])
    OptimisticTransaction(log).commit([add("x", 3)])  # version 1: x = 0, mark 2
    OptimisticTransaction(log).commit([DomainMetadata("app", "{}")])  # version 2: no mark
    assert loser.commit() == 3
    # "kept" carries a baseRowId above the read mark (-1): it counts as this transaction's id
    assert row_ids(log)["y"] == (3, 3) and row_ids(log)["kept"] == (5, 0)
    written = lines(tmp_path, 3)
    assert "commitInfo" in written[0] and written[1] == {
        "domainMetadata": {
            "domain": "delta.rowTracking",
            "configuration": mark(5),
            "removed": False,
        }
    }
    assert isinstance(log.read_commit(3)[0], CommitInfo)
