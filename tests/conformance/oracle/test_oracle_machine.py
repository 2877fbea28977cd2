"""The differential state machine's reach beyond conflicts: the clock, checkpoints in parts, log
cleanup, time travel by timestamp, VACUUM, storage faults and partition values that need
escaping; and the model functions that answer for them."""

from __future__ import annotations

from pathlib import Path

import pytest

from deltaspec.conformance.engines.impl.adapter import ImplAdapter
from deltaspec.conformance.harness.adapter import TableSetup
from deltaspec.conformance.oracle.differential import Differential
from deltaspec.conformance.oracle.machine import (
    DAY_MS,
    KINDS,
    SHAPES,
    SWARMS,
    Tally,
    _directory_value,
    machine_for,
)
from deltaspec.conformance.workload.alphabet import Kind
from deltaspec.model.actions import AddFile, Commit, Metadata, RemoveFile
from deltaspec.model.checkpoint import (
    checkpoint_file_names,
    listed_commit_times,
    tombstones,
    vacuum_deletes,
)
from deltaspec.model.log import TimestampOutOfRange, version_at_timestamp
from deltaspec.model.snapshot import data_file_path, replay

WEEK_MS = 7 * DAY_MS


def test_the_swarms_draw_every_kind_the_machine_writes() -> None:
    assert set(KINDS) <= set(Kind) - {Kind.CREATE}
    assert {Kind.APPEND, *(kind for swarm in SWARMS for kind in swarm)} == set(KINDS)


def test_each_run_has_its_own_tally() -> None:
    first, second = machine_for([]), machine_for([], Tally(steps=3))
    assert first.tally is not second.tally
    assert first.tally.steps == 0 and second.tally.steps == 3


@pytest.mark.parametrize(
    ("times", "timestamp", "expected"),
    [
        ({0: 5, 1: 5, 2: 5}, 6, 1),  # equal times count as 5, 6, 7
        ({0: 5, 1: 5, 2: 5}, 7, 2),
        ({0: 10, 1: 3}, 10, 0),  # a clock that went back: 1 counts as 11
        ({0: 10, 1: 3}, 11, 1),
        ({3: 100, 4: 200}, 150, 3),  # only the listed commits count
    ],
)
def test_version_at_timestamp_adjusts_commit_times(
    times: dict[int, int], timestamp: int, expected: int
) -> None:
    assert version_at_timestamp(times, timestamp) == expected


def test_version_at_timestamp_outside_the_commits_is_an_error() -> None:
    for timestamp, kind in (
        (4, "TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"),
        (8, "TIMESTAMP_GREATER_THAN_COMMIT"),
    ):
        with pytest.raises(TimestampOutOfRange) as caught:
            version_at_timestamp({0: 5, 1: 5, 2: 5}, timestamp)
        assert caught.value.kind == kind


def test_listed_commit_times_follow_the_checkpoint_files_before_them() -> None:
    # 1.checkpoint.parquet (written at 50) lists before 1.json (written at 10)
    assert listed_commit_times({0: 0, 1: 10, 2: 20}, {1: [50]}) == {0: 0, 1: 51, 2: 52}
    # two parts and a classic file of checkpoint 0, written at 40, 40 and 5
    assert listed_commit_times({0: 1, 1: 30}, {0: [40, 40, 5]}) == {0: 43, 1: 44}
    assert checkpoint_file_names(3, 2)[1] == (
        "00000000000000000003.checkpoint.0000000002.0000000002.parquet"
    )


def _snapshot(removed_at: int) -> tuple[Commit, ...]:
    metadata = Metadata(
        "id", "{}", configuration=(("delta.deletedFileRetentionDuration", "1 week"),)
    )
    return (
        Commit(0, (metadata, AddFile("a%20b/f1", ()), AddFile("g", ()))),
        Commit(1, (RemoveFile("a%20b/f1", removed_at),), removed_at),
    )


def test_a_tombstone_expires_exactly_at_the_retention_boundary() -> None:
    snapshot = replay(_snapshot(removed_at=1_000))
    assert [r.path for r in tombstones(snapshot, 1_000 + WEEK_MS - 1)] == ["a%20b/f1"]
    assert tombstones(snapshot, 1_000 + WEEK_MS) == ()


def test_vacuum_deletes_decoded_paths_older_than_the_cutoff_and_unreferenced() -> None:
    commits = _snapshot(removed_at=1_000)
    snapshot = replay(commits)
    files = {"a b/f1": 0, "g": 0, "orphan": 5, "fresh": 1_000}
    assert vacuum_deletes(snapshot, commits, files, cutoff=999) == ("orphan",)
    # at the boundary the tombstone has expired, and a file written then is still too recent
    assert vacuum_deletes(snapshot, commits, files, cutoff=1_000) == ("a b/f1", "orphan")
    assert data_file_path("s=50%2525/x") == "s=50%25/x"


def test_partition_values_that_need_escaping_are_in_a_shape() -> None:
    (column,) = SHAPES["s"]
    assert {" ", "%", "/", "="} <= set("".join(v or "" for v in column[2]))
    assert "" in column[2] and None in column[2]
    assert _directory_value("") == _directory_value(None) == "__HIVE_DEFAULT_PARTITION__"


def _table(tmp_path: Path, configuration: dict[str, str]) -> Differential:
    diff = Differential([ImplAdapter(tmp_path / "impl")], TableSetup(profile="4.4.0"))
    create = {
        "operation": "CREATE TABLE",
        "actions": [
            {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
            {
                "metaData": {
                    "schema": [{"name": "s", "type": "string"}, {"name": "x", "type": "long"}],
                    "partitionColumns": ["s"],
                    "configuration": configuration,
                }
            },
        ],
    }
    diff.begin("w0", create)
    assert diff.commit("w0").get("committed") == 0
    return diff


def _append(diff: Differential, name: str, path: str, value: str | None) -> None:
    add = {"add": {"path": path, "partitionValues": {"s": value}}}
    diff.begin(name, {"operation": "WRITE", "actions": [add]})
    diff.commit(name)


def test_cleanup_time_travel_and_vacuum_agree_across_a_month(tmp_path: Path) -> None:
    diff = _table(tmp_path, {"delta.checkpointInterval": "100"})
    _append(diff, "w1", "s=50%2525/f1", "50%")
    diff.advance(0)  # equal commit times
    _append(diff, "w2", "s=a%2520b/f2", "a b")
    diff.begin("w3", {"operation": "DELETE", "reads": [{"whole_table": True}],
                      "actions": [{"remove": {"path": "s=50%2525/f1"}}]})  # fmt: skip
    diff.commit("w3")
    diff.advance(-1)  # the clock goes back
    _append(diff, "w4", "s=__HIVE_DEFAULT_PARTITION__/f3", "")
    diff.checkpoint(3, parts=2)
    diff.advance(31 * DAY_MS)
    _append(diff, "w5", "s=%C3%A9/f4", "\u00e9")
    diff.checkpoint(5)
    diff.compare_listing()
    assert diff.model.log_start == 5  # commit 4 expired: checkpoint 5 starts the log
    assert diff.model.checkpoints() == (5,)
    for version in (3, 5):  # cleaned up, then retained
        diff.compare_snapshots(version)
    diff.compare_snapshots()
    diff.compare_checkpoints()
    for timestamp in (0, 1, 2, 3, 4, 31 * DAY_MS + 3):
        diff.compare_version_at(timestamp)
    assert diff.vacuum(None) == ["s=50%25/f1"]
    diff.close()


def test_a_commit_whose_write_fails_or_loses_its_ack_lands_once(tmp_path: Path) -> None:
    diff = _table(tmp_path, {})
    for index, fault in enumerate(("WRITE_FAILS", "WRITE_LOST_ACK"), 1):
        diff.inject(fault)
        _append(diff, f"w{index}", f"s=a/f{index}", "a")
        assert diff.outcomes[f"w{index}"].get("committed") == index
    diff.compare_snapshots()
    diff.compare_listing()
    diff.close()


@pytest.mark.rules("TXN.READ_VERSION_RETAINED")
def test_a_writer_older_than_the_retained_log_is_not_committed_unseen(tmp_path: Path) -> None:
    """A writer reads version 0; log cleanup deletes commits 0 and 1 behind checkpoint 2; the
    writer's put-if-absent of version 1 would succeed (the file is gone) and no reader would see
    it (the latest snapshot is 2): model and impl both refuse, and nothing is written."""
    diff = _table(tmp_path, {"delta.checkpointInterval": "100"})
    _append(diff, "w1", "s=a/f1", "a")
    _append(diff, "w2", "s=a/f2", "a")
    add = {"add": {"path": "s=a/f3", "partitionValues": {"s": "a"}}}
    diff.begin("w3", {"operation": "WRITE", "actions": [add]}, version=0)
    diff.advance(31 * DAY_MS)
    diff.checkpoint(2)
    assert diff.model.log_start == 2
    assert diff.commit("w3") == {"error": "VERSION_NOT_FOUND"}
    diff.compare_listing()
    diff.compare_snapshots()
    diff.close()


@pytest.mark.rules("RETENTION.TOMBSTONES", "CHECKPOINT.READ")
def test_a_tombstone_a_checkpoint_left_out_stays_out_when_the_clock_goes_back(
    tmp_path: Path,
) -> None:
    """The schedule the per-kind machine found (issue 31 item 5): a file removed at a week + 2
    ms, version 2 checkpointed at two weeks + 2 ms (the tombstone expired then), then a commit a
    millisecond earlier, whose clock has not expired it. Model and impl read the latest version
    from the checkpoint, which left the tombstone out."""
    diff = _table(tmp_path, {"delta.checkpointInterval": "100"})
    _append(diff, "w1", "s=a/f1", "a")
    diff.advance(WEEK_MS + 2 - diff.now)
    diff.begin("w2", {"operation": "DELETE", "reads": [{"whole_table": True}],
                      "actions": [{"remove": {"path": "s=a/f1"}}]})  # fmt: skip
    diff.commit("w2")
    assert diff.compare_snapshots()["tombstones"] == ["s=a/f1"]
    diff.advance(WEEK_MS)
    diff.checkpoint(2)
    diff.advance(-1)
    _append(diff, "w3", "s=a/f2", "a")
    assert diff.compare_snapshots()["tombstones"] == []
    assert diff.compare_snapshots(2)["tombstones"] == []
    diff.close()
