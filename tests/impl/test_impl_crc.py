"""Version checksum files on the impl (spec/timestamps.md: CHECKSUM.*)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deltaspec.impl import checksum
from deltaspec.impl.actions import AddFile, Metadata, SetTransaction
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

SCHEMA = '{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}'


def table(root: Path) -> DeltaLog:
    log = DeltaLog(str(root))
    OptimisticTransaction(log).commit(
        [Metadata("t", SCHEMA), AddFile("a", {}, 100, 0, True), AddFile("b", {}, 20_000, 0, True)],
        Operation("CREATE TABLE"),
    )
    OptimisticTransaction(log).commit([SetTransaction("app", 3), AddFile("c", {}, 5, 0, True)])
    return log


@pytest.mark.rules("CHECKSUM.WRITE")
def test_every_commit_writes_its_checksum(tmp_path: Path) -> None:
    log = table(tmp_path)
    crc = json.loads((tmp_path / "_delta_log" / checksum.checksum_name(1)).read_text())
    assert list(crc) == [
        "txnId", "tableSizeBytes", "numFiles", "numMetadata", "numProtocol", "setTransactions",
        "domainMetadata", "metadata", "protocol", "fileSizeHistogram",
    ]  # fmt: skip
    assert (crc["tableSizeBytes"], crc["numFiles"]) == (20_105, 3)
    assert crc["setTransactions"] == [{"appId": "app", "version": 3}]
    assert crc["fileSizeHistogram"]["fileCounts"][:3] == [2, 0, 1]
    assert (
        crc["txnId"] == next(a for a in log.read_commit(1) if hasattr(a, "fields")).fields["txnId"]
    )
    assert checksum.verify_checksum(log) and checksum.verify_checksum(log, 0)


@pytest.mark.rules("CHECKSUM.WRITE")
def test_a_failed_checksum_write_does_not_fail_the_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = table(tmp_path)

    def broken(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(checksum, "write_checksum", broken)
    assert OptimisticTransaction(log).commit([AddFile("d", {}, 1, 0, True)]) == 2
    assert not (tmp_path / "_delta_log" / checksum.checksum_name(2)).exists()
    assert checksum.verify_checksum(log) is False  # absent: nothing to verify


@pytest.mark.rules("CHECKSUM.VERIFY")
def test_a_mismatching_checksum_is_reported_on_request(tmp_path: Path) -> None:
    log = table(tmp_path)
    path = tmp_path / "_delta_log" / checksum.checksum_name(1)
    crc = json.loads(path.read_text())
    path.write_text(json.dumps({**crc, "numFiles": 99}))
    assert log.snapshot().num_files == 3  # reading ignores the checksum
    with pytest.raises(checksum.ChecksumMismatchError) as raised:
        checksum.verify_checksum(log)
    assert raised.value.error_class == "DELTA_TXN_LOG_FAILED_INTEGRITY"
    path.write_text("{not json")
    assert checksum.verify_checksum(log) is False  # unreadable counts as absent
