"""In-commit timestamps on the impl (spec/timestamps.md: ICT.*)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deltaspec.impl.actions import AddFile, CommitInfo, Metadata, Protocol
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.snapshot import time_travel
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.snapshot.timestamps import commit_timestamps
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

SCHEMA = '{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}'
ICT_ON = {"delta.enableInCommitTimestamps": "true"}
ICT_PROTOCOL = Protocol(1, 7, None, ("appendOnly", "inCommitTimestamp", "invariants"))


def clock(*times: int):
    moments = iter(times)
    return lambda: next(moments)


def info(log: DeltaLog, version: int) -> dict:
    return dict(next(a for a in log.read_commit(version) if isinstance(a, CommitInfo)).fields)


def append(log: DeltaLog, name: str, now: int) -> OptimisticTransaction:
    txn = OptimisticTransaction(log, clock=clock(now, now, now))
    txn.stage([AddFile(name, {}, 1, 0, True)])
    return txn


def set_mtime(log_dir: Path, version: int, ms: int) -> None:
    os.utime(log_dir / commit_name(version), ns=(ms * 1_000_000, ms * 1_000_000))


@pytest.mark.rules("ICT.ASSIGN", "ICT.ENABLEMENT")
def test_a_table_created_with_the_feature_stamps_every_commit(tmp_path: Path) -> None:
    log = DeltaLog(str(tmp_path))
    create = OptimisticTransaction(log, clock=clock(1000, 1000))
    create.commit(
        [ICT_PROTOCOL, Metadata("t", SCHEMA, (), dict(ICT_ON))], Operation("CREATE TABLE")
    )
    first = info(log, 0)
    assert next(iter(first)) == "inCommitTimestamp" and first["inCommitTimestamp"] == 1000
    append(log, "a", 500).commit()  # the clock went back: still strictly after version 0
    assert info(log, 1)["inCommitTimestamp"] == 1001 and info(log, 1)["timestamp"] == 500
    assert "delta.inCommitTimestampEnablementVersion" not in log.snapshot().metadata.configuration
    assert log.snapshot().timestamp == 1001


@pytest.mark.rules("ICT.ASSIGN")
def test_no_timestamp_without_the_property(tmp_path: Path) -> None:
    log = DeltaLog(str(tmp_path))
    OptimisticTransaction(log).commit([Metadata("t", SCHEMA)], Operation("CREATE TABLE"))
    append(log, "a", 5).commit()
    assert "inCommitTimestamp" not in info(log, 1)


@pytest.mark.rules("ICT.RETRY")
def test_a_rebased_commit_moves_past_the_winner(tmp_path: Path) -> None:
    log = DeltaLog(str(tmp_path))
    create = OptimisticTransaction(log, clock=clock(9000, 9000))
    create.commit(
        [ICT_PROTOCOL, Metadata("t", SCHEMA, (), dict(ICT_ON))], Operation("CREATE TABLE")
    )
    loser = append(log, "b", 9500)
    append(log, "a", 9700).commit()
    assert loser.commit() == 2
    assert info(log, 1)["inCommitTimestamp"] == 9700
    assert info(log, 2)["inCommitTimestamp"] == 9701  # its first attempt had 9500
    assert info(log, 2)["timestamp"] == 9500


@pytest.mark.rules("ICT.ENABLEMENT", "ICT.RETRY")
def test_enabling_later_records_version_and_timestamp_of_the_landing_commit(
    tmp_path: Path,
) -> None:
    log = DeltaLog(str(tmp_path))
    OptimisticTransaction(log, clock=clock(10, 10)).commit(
        [Metadata("t", SCHEMA)], Operation("CREATE TABLE")
    )
    set_mtime(tmp_path / "_delta_log", 0, 100)
    enabler = OptimisticTransaction(log, clock=clock(200, 200))
    enabler.stage([ICT_PROTOCOL, Metadata("t", SCHEMA, (), dict(ICT_ON))])
    append(log, "a", 300).commit()
    set_mtime(tmp_path / "_delta_log", 1, 400)
    assert enabler.commit(operation=Operation("SET TBLPROPERTIES")) == 2
    assert info(log, 2)["inCommitTimestamp"] == 401  # past the winner's file time
    configuration = log.snapshot().metadata.configuration
    assert configuration["delta.inCommitTimestampEnablementVersion"] == "2"
    assert configuration["delta.inCommitTimestampEnablementTimestamp"] == "401"


@pytest.mark.rules("ICT.TIME_TRAVEL")
def test_time_travel_in_a_mixed_history(tmp_path: Path) -> None:
    log = DeltaLog(str(tmp_path))
    OptimisticTransaction(log, clock=clock(10, 10)).commit(
        [Metadata("t", SCHEMA)], Operation("CREATE TABLE")
    )
    append(log, "a", 20).commit()
    log_dir = tmp_path / "_delta_log"
    set_mtime(log_dir, 0, 5_000)
    set_mtime(log_dir, 1, 5_000)  # not later than v0: raised to 5001
    enabler = OptimisticTransaction(log, clock=clock(7_000, 7_000))
    enabler.commit(
        [ICT_PROTOCOL, Metadata("t", SCHEMA, (), dict(ICT_ON))], Operation("SET TBLPROPERTIES")
    )
    append(log, "b", 8_000).commit()
    set_mtime(log_dir, 2, 1)  # file times no longer matter from the enablement version on
    set_mtime(log_dir, 3, 1)
    assert commit_timestamps(log) == {0: 5_000, 1: 5_001, 2: 7_000, 3: 8_000}
    assert time_travel.version_at(log, 6_999) == 1
    assert time_travel.version_at(log, 7_000) == 2
    assert time_travel.version_at(log, 8_000) == 3
    with pytest.raises(time_travel.TimestampEarlierThanCommitRetentionError):
        time_travel.version_at(log, 4_999)
    with pytest.raises(time_travel.TimestampGreaterThanCommitError):
        time_travel.version_at(log, 8_001)
