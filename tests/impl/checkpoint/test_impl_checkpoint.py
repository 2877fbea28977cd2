"""deltaspec.impl.checkpoint and deltaspec.impl.retention.log_cleanup: writing checkpoints,
_last_checkpoint, retention, log cleanup.

(a) a checkpoint read back gives the snapshot that pure JSON replay gives (single and multi-part);
(b) delta-rs reads our checkpoints (the JSON commits they cover deleted, so it must);
(c) a failure while writing a part never leaves _last_checkpoint pointing at a partial checkpoint;
(d) retention of tombstones, application transactions and log files with an injected clock.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import examples

from deltaspec.impl import codec
from deltaspec.impl.actions import (
    Action,
    AddCDCFile,
    AddFile,
    CommitInfo,
    DeletionVector,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.impl.checkpoint.contents import CHECKPOINT_SCHEMA, checkpoint_table
from deltaspec.impl.checkpoint.policy import (
    checkpoint_interval,
    checkpoint_version,
    needs_checkpoint,
)
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.errors import VersionNotFoundError
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.retention.log_cleanup import cleanup_expired_logs, cleanup_may_truncate
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.snapshot.state import Snapshot
from deltaspec.impl.table.releases import Profile

deltalake = pytest.importorskip("deltalake")

DAY = 24 * 3600 * 1000
MIDNIGHT = 19674 * DAY  # 2023-11-14T00:00:00Z
NOW = MIDNIGHT + 20 * DAY
SCHEMA = json.dumps(
    {
        "type": "struct",
        "fields": [
            {"name": "id", "type": "long", "nullable": True, "metadata": {}},
            {"name": "part", "type": "string", "nullable": True, "metadata": {}},
        ],
    }
)


def metadata(**configuration: str) -> Metadata:
    return Metadata("table-id", SCHEMA, ("part",), dict(configuration), created_time=MIDNIGHT)


def add(path: str, part: str | None = "a", dv: DeletionVector | None = None) -> AddFile:
    stats = '{"numRecords":3,"minValues":{"id":1},"maxValues":{"id":3},"nullCount":{"id":0}}'
    return AddFile(path, {"part": part}, 100, NOW, True, stats, {"tag": "v"}, dv)


def remove(path: str, when: int, dv: DeletionVector | None = None) -> RemoveFile:
    return RemoveFile(
        path, when, True, True, {"part": "a"}, 100, '{"numRecords":3}', {"t": "x"}, dv
    )


DV = DeletionVector("u", "ab^-aqEH.-t@S}K{vb[*k^", 40, 6, 4)


class Table:
    def __init__(self, root: Path, store: LocalLogStore | None = None) -> None:
        self.root = root
        self.store = store or LocalLogStore(str(root))
        self.version = -1

    def commit(self, *actions: Action) -> int:
        self.version += 1
        info = CommitInfo({"timestamp": NOW, "operation": "WRITE"})
        self.store.write_new(commit_name(self.version), codec.encode_commit([info, *actions]))
        return self.version

    def log(self, now: int = NOW) -> DeltaLog:
        return DeltaLog(str(self.root), store=self.store, clock=lambda: now)

    def drop_commits_through(self, version: int) -> None:
        for v in range(version + 1):
            (self.root / "_delta_log" / commit_name(v)).unlink(missing_ok=True)


LEGACY = Protocol(1, 2)


def rich_history(table: Table, protocol: Protocol = LEGACY, **conf: str) -> None:
    """Partitions, a null partition value, tombstones old and new, txns, domains, cdc, a DV."""
    table.commit(protocol, metadata(**conf), add("part=a/f0"), add("part=a/f1"), add("x", None))
    table.commit(
        remove("part=a/f0", NOW - 30 * DAY),
        add("part=b/f2", "b"),
        SetTransaction("stale", 1, NOW - 40 * DAY),
    )
    table.commit(
        remove("part=a/f1", NOW - DAY),
        add("part=a/f3"),
        SetTransaction("fresh", 4, NOW - DAY),
        AddCDCFile("_change_data/c.parquet", {"part": "a"}, 5),
    )
    table.commit(DomainMetadata("keep", '{"a":1}'), DomainMetadata("gone", "x"))
    table.commit(DomainMetadata("gone", "x", removed=True), SetTransaction("fresh", 5, NOW - DAY))
    if "deletionVectors" in (protocol.reader_features or ()):
        table.commit(remove("part=a/f3", NOW), add("part=a/f3", dv=DV))


def same_state(ours: Snapshot, replayed: Snapshot) -> None:
    assert ours.version == replayed.version
    assert ours.protocol == replayed.protocol
    assert ours.metadata == replayed.metadata
    assert ours.files == replayed.files
    assert ours.tombstones == replayed.tombstones
    assert ours.app_transactions == replayed.app_transactions
    assert ours.domains == replayed.domains


# --- schema, contents, _last_checkpoint ----------------------------------------------------------


def _comparable(data_type: pa.DataType) -> str:
    """A type's shape without map entry names and nullability."""
    if pa.types.is_struct(data_type):
        inner = ",".join(f"{f.name}:{_comparable(f.type)}" for f in data_type)
        return f"struct<{inner}>"
    if pa.types.is_map(data_type):
        return f"map<{_comparable(data_type.key_type)},{_comparable(data_type.item_type)}>"
    if pa.types.is_list(data_type):
        return f"list<{_comparable(data_type.value_type)}>"
    return str(data_type)


@pytest.mark.rules("CHECKPOINT.CONTENTS")
def test_schema_mirrors_delta_spark(fixtures_dir):
    """rs-errlog-base's checkpoint was written by delta-spark 3.3.0."""
    theirs = pq.read_schema(
        fixtures_dir / "rs-errlog-base" / "_delta_log" / "00000000000000000010.checkpoint.parquet"
    )
    assert CHECKPOINT_SCHEMA.names == theirs.names
    for field in CHECKPOINT_SCHEMA:
        assert _comparable(field.type) == _comparable(theirs.field(field.name).type), field.name


@pytest.mark.rules("CHECKPOINT.CONTENTS", "CHECKPOINT.LAST_CHECKPOINT")
def test_contents_and_last_checkpoint(tmp_path):
    table = Table(tmp_path / "t")
    rich_history(table)
    log = table.log()
    result = write_checkpoint(log, log.snapshot(), now_ms=NOW)
    written = pq.read_table(
        tmp_path / "t" / "_delta_log" / "00000000000000000004.checkpoint.parquet"
    )
    assert written.schema.names == CHECKPOINT_SCHEMA.names
    counts = {n: len(written) - written.column(n).null_count for n in written.column_names}
    # protocol, metadata, 2 txns (no retention set), 1 live domain, 3 files, 1 live tombstone
    assert counts == {
        "txn": 2,
        "add": 3,
        "remove": 1,
        "metaData": 1,
        "protocol": 1,
        "domainMetadata": 1,
    }
    assert sum(counts.values()) == written.num_rows == result.size
    adds = written.column("add").drop_null()
    assert set(pc.struct_field(adds, "dataChange").to_pylist()) == {False}
    assert "stats" not in {f.name for f in written.schema.field("remove").type}
    assert pc.struct_field(adds, "stats").null_count == 0
    raw = (tmp_path / "t" / "_delta_log" / "_last_checkpoint").read_text()
    hint = json.loads(raw)
    assert list(hint) == ["version", "size", "sizeInBytes", "numOfAddFiles"]
    assert hint["version"] == 4 and hint["size"] == written.num_rows and hint["numOfAddFiles"] == 3
    assert hint["sizeInBytes"] == os.path.getsize(
        tmp_path / "t" / "_delta_log" / "00000000000000000004.checkpoint.parquet"
    )
    multi = write_checkpoint(log, log.snapshot(3), parts=2, now_ms=NOW)
    hint = json.loads((tmp_path / "t" / "_delta_log" / "_last_checkpoint").read_text())
    assert list(hint) == ["version", "size", "parts", "sizeInBytes", "numOfAddFiles"]
    assert hint["parts"] == 2 and multi.files == (
        "00000000000000000003.checkpoint.0000000001.0000000002.parquet",
        "00000000000000000003.checkpoint.0000000002.0000000002.parquet",
    )


@pytest.mark.rules("CHECKPOINT.INTERVAL")
def test_checkpoint_interval():
    assert checkpoint_interval(metadata()) == 10
    assert [v for v in range(31) if needs_checkpoint(v, metadata())] == [10, 20, 30]
    three = metadata(**{"delta.checkpointInterval": "3"})
    assert [v for v in range(10) if needs_checkpoint(v, three)] == [3, 6, 9]
    assert not needs_checkpoint(0, metadata(**{"delta.checkpointInterval": "1"}))
    for bad in ("0", "-2", "ten"):
        with pytest.raises(ValueError):
            checkpoint_interval(metadata(**{"delta.checkpointInterval": bad}))


# --- (a) read back == JSON replay ----------------------------------------------------------------


@pytest.mark.rules("CHECKPOINT.READ", "CHECKPOINT.CONTENTS", "SNAPSHOT.REPLAY")
@pytest.mark.parametrize("parts", [None, 2, 3, 7])
@pytest.mark.parametrize("dvs", [False, True])
def test_read_back_equals_json_replay(tmp_path, parts, dvs):
    table = Table(tmp_path / "t")
    protocol = Protocol(3, 7, ("deletionVectors",), ("deletionVectors",)) if dvs else Protocol(1, 2)
    rich_history(table, protocol)
    replayed = table.log().snapshot()
    write_checkpoint(table.log(), replayed, parts=parts, now_ms=NOW)
    table.drop_commits_through(table.version - 1)  # keep only the last commit file
    ours = table.log().snapshot()
    assert ours.checkpoint_version == table.version
    same_state(ours, replayed)
    assert sorted(ours.files_table().to_pylist(), key=repr) == sorted(
        replayed.files_table().to_pylist(), key=repr
    )


def _step(kind: str, n: int) -> Action:
    if kind == "add":
        return add(f"f{n}")
    if kind == "remove":
        return remove(f"f{n}", NOW - n * 3 * DAY)
    if kind == "txn":
        return SetTransaction(f"app{n}", n, NOW - n * DAY)
    return DomainMetadata(f"d{n}", str(n), removed=kind == "undomain")


@pytest.mark.rules("CHECKPOINT.READ", "SNAPSHOT.REPLAY", "SNAPSHOT.RECONCILE")
@examples(0.2)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["add", "remove", "txn", "domain", "undomain"]), st.integers(0, 4)
        ),
        min_size=1,
        max_size=12,
    ),
    at=st.integers(0, 12),
    parts=st.sampled_from([None, 2, 3]),
)
def test_checkpoint_anywhere_equals_replay(steps, at, parts):
    with tempfile.TemporaryDirectory() as directory:
        table = Table(Path(directory) / "t")
        table.commit(Protocol(1, 2), metadata())
        for kind, n in steps:
            table.commit(_step(kind, n))
        at = min(at, table.version)
        log = table.log()
        expected = [log.snapshot(v) for v in range(table.version + 1)]
        write_checkpoint(log, log.snapshot(at), parts=parts, now_ms=NOW)
        table.drop_commits_through(at - 1)
        for version in range(at, table.version + 1):
            same_state(log.snapshot(version), expected[version])


# --- (b) delta-rs reads our checkpoints ----------------------------------------------------------


@pytest.mark.rules("CHECKPOINT.CONTENTS", "CHECKPOINT.LAST_CHECKPOINT", "CHECKPOINT.READ")
@pytest.mark.parametrize("parts", [None, 3])
@pytest.mark.parametrize("dvs", [False, True])
def test_delta_rs_reads_our_checkpoint(tmp_path, parts, dvs):
    table = Table(tmp_path / "t")
    protocol = Protocol(3, 7, ("deletionVectors",), ("deletionVectors",)) if dvs else Protocol(1, 2)
    rich_history(table, protocol)
    snapshot = table.log().snapshot()
    write_checkpoint(table.log(), snapshot, parts=parts, now_ms=NOW)
    table.drop_commits_through(table.version)  # delta-rs can only use the checkpoint
    rs = deltalake.DeltaTable(str(tmp_path / "t"))
    assert rs.version() == snapshot.version
    actions = pa.table(rs.get_add_actions(flatten=True))
    assert sorted(actions.column("path").to_pylist()) == sorted(p for p, _ in snapshot.files)
    assert actions.column("num_records").to_pylist() == [3] * snapshot.num_files
    assert rs.metadata().id == snapshot.metadata.id
    assert list(rs.metadata().partition_columns) == ["part"]
    assert rs.protocol().min_reader_version == protocol.min_reader_version
    assert rs.transaction_version("fresh") == 5
    assert rs.transaction_version("stale") == 1


@pytest.mark.rules("CHECKPOINT.READ", "RETENTION.LOG")
def test_delta_rs_reads_after_our_cleanup(tmp_path):
    table = Table(tmp_path / "t")
    rich_history(table, **{"delta.logRetentionDuration": "interval 1 day"})
    for v in range(table.version + 1):
        os.utime(tmp_path / "t" / "_delta_log" / commit_name(v), (1, (MIDNIGHT + v) / 1000))
    checkpoint_version(table.log(), 3, now_ms=NOW)
    names = sorted(os.listdir(tmp_path / "t" / "_delta_log"))
    assert commit_name(2) not in names and commit_name(3) in names
    rs = deltalake.DeltaTable(str(tmp_path / "t"))
    assert sorted(pa.table(rs.get_add_actions()).column("path").to_pylist()) == sorted(
        p for p, _ in table.log().snapshot().files
    )
    assert rs.version() == table.version


# --- (c) failures while writing parts ------------------------------------------------------------


class FailingStore(LocalLogStore):
    """Fails the write of one named file once."""

    def __init__(self, root: str, fail: str) -> None:
        super().__init__(root)
        self.fail: str | None = fail

    def write_new(self, name: str, data: bytes) -> None:
        if name == self.fail:
            self.fail = None
            raise OSError("injected failure")
        super().write_new(name, data)


@pytest.mark.rules("CHECKPOINT.LAST_CHECKPOINT", "CHECKPOINT.READ")
@pytest.mark.parametrize("earlier", [False, True])
def test_failure_in_part_two_of_three(tmp_path, earlier):
    part2 = "00000000000000000004.checkpoint.0000000002.0000000003.parquet"
    store = FailingStore(str(tmp_path / "t"), part2)
    table = Table(tmp_path / "t", store)
    rich_history(table)
    log = table.log()
    hint_path = tmp_path / "t" / "_delta_log" / "_last_checkpoint"
    if earlier:
        write_checkpoint(log, log.snapshot(2), now_ms=NOW)
    before = hint_path.read_text() if earlier else None
    with pytest.raises(OSError, match="injected"):
        write_checkpoint(log, log.snapshot(), parts=3, now_ms=NOW)
    assert (tmp_path / "t" / "_delta_log" / part2.replace(".0000000002.", ".0000000001.")).exists()
    assert not (tmp_path / "t" / "_delta_log" / part2).exists()
    assert (hint_path.read_text() if hint_path.exists() else None) == before
    snapshot = log.snapshot()
    assert snapshot.checkpoint_version == (2 if earlier else None)
    # a retry completes the checkpoint; part 1 already exists and is kept
    result = write_checkpoint(log, log.snapshot(), parts=3, now_ms=NOW)
    assert json.loads(hint_path.read_text())["parts"] == 3
    assert result.files[1] == part2
    same_state(log.snapshot(), snapshot)
    assert log.snapshot().checkpoint_version == 4


@pytest.mark.rules("CHECKPOINT.INTERVAL")
def test_second_writer_of_same_checkpoint_is_fine(tmp_path):
    table = Table(tmp_path / "t")
    rich_history(table)
    log = table.log()
    first = write_checkpoint(log, log.snapshot(), now_ms=NOW)
    second = write_checkpoint(log.store, log.snapshot(), now_ms=NOW)
    assert first == second


# --- (d) retention -------------------------------------------------------------------------------


@pytest.mark.rules("RETENTION.TOMBSTONES", "CHECKPOINT.CONTENTS")
def test_expired_tombstones_left_out(tmp_path):
    table = Table(tmp_path / "t")
    table.commit(Protocol(1, 2), metadata(), add("a"), add("b"), add("c"), add("d"))
    table.commit(
        remove("a", NOW - 7 * DAY),  # exactly at the cutoff: expired
        remove("b", NOW - 7 * DAY + 1),
        RemoveFile("c", None),  # no deletionTimestamp: 0, expired
        remove("d", NOW),
    )
    log = table.log()
    snapshot = log.snapshot()
    assert set(snapshot.tombstones) == {("b", None), ("d", None)}
    later = checkpoint_table(snapshot, now_ms=NOW + 1)
    assert pc.struct_field(later.column("remove").drop_null(), "path").to_pylist() == ["d"]
    write_checkpoint(log, snapshot, now_ms=NOW)
    table.drop_commits_through(0)
    assert set(log.snapshot().tombstones) == {("b", None), ("d", None)}
    assert len(log.snapshot().all_tombstones) == 2  # the expired ones are gone for good
    custom = metadata(**{"delta.deletedFileRetentionDuration": "interval 2 hours"})
    table.commit(custom)
    assert set(table.log(NOW + 3600_000).snapshot().tombstones) == {("d", None)}


@pytest.mark.rules("RETENTION.SET_TRANSACTION", "CHECKPOINT.CONTENTS")
def test_expired_app_transactions_left_out(tmp_path):
    table = Table(tmp_path / "t")
    conf = {"delta.setTransactionRetentionDuration": "interval 3 days"}
    table.commit(
        Protocol(1, 2),
        metadata(**conf),
        SetTransaction("old", 1, NOW - 4 * DAY),
        SetTransaction("never", 1, None),
        SetTransaction("new", 2, NOW - DAY),
    )
    log = table.log()
    write_checkpoint(log, log.snapshot(), now_ms=NOW)
    table.drop_commits_through(0)
    table.commit(metadata())  # retention unset: what is left never expires
    snapshot = table.log(NOW + 365 * DAY).snapshot()
    assert set(snapshot.app_transactions) == {"new"}


def _history_with_times(
    table: Table,
    versions: int,
    checkpoints: tuple[int, ...],
    protocol: Protocol | None = None,
    **conf: str,
) -> None:
    """Commits 0..versions-1, version v's files timed at 01:00 UTC of day v after MIDNIGHT;
    the protocol (1, 2) unless given."""
    log_dir = table.root / "_delta_log"
    table.commit(protocol or Protocol(1, 2), metadata(**conf), add("f0"))
    for v in range(1, versions):
        table.commit(add(f"f{v}"))
        if v in checkpoints:
            write_checkpoint(table.log(), table.log().snapshot(v), now_ms=NOW)
    for v in range(versions):
        (log_dir / f"{v:020d}.crc").write_text("{}")
        (log_dir / f".{v:020d}.json.crc").write_text("")
    for name in os.listdir(log_dir):
        if name[:20].isdigit():
            when = MIDNIGHT + int(name[:20]) * DAY + 3600_000
            os.utime(log_dir / name, (when / 1000, when / 1000))


def _versions_left(table: Table) -> list[int]:
    return sorted(
        int(n[:20])
        for n in os.listdir(table.root / "_delta_log")
        if n.endswith(".json") and n[:20].isdigit()
    )


@pytest.mark.rules("RETENTION.LOG", "SNAPSHOT.TIME_TRAVEL")
def test_cleanup_deletes_whole_segments_before_a_checkpoint(tmp_path):
    table = Table(tmp_path / "t")
    conf = {"delta.logRetentionDuration": "interval 3 days"}
    _history_with_times(table, 13, (5, 10), **conf)
    meta = table.log().snapshot().metadata
    before = {v: table.log().snapshot(v) for v in range(5, 13)}
    # now = day 12, 01:00 -> cutoff day 9 01:00, truncated to day 9 00:00: 9.json (day 9 01:00)
    # is not expired, so checkpoint 10 does not qualify; 4.json is, so checkpoint 5 does
    now = MIDNIGHT + 12 * DAY + 3600_000
    assert cleanup_expired_logs(table.store, 10, now, meta) == sorted(
        [f"{v:020d}.{ext}" for v in range(5) for ext in ("crc", "json")]
    ) + [f".{v:020d}.json.crc" for v in range(5)]
    assert _versions_left(table) == list(range(5, 13))
    log = table.log()
    assert log.list_log().earliest_version == 5
    for version, snapshot in before.items():
        same_state(log.snapshot(version), snapshot)
    with pytest.raises(VersionNotFoundError):
        log.snapshot(4)
    # a day later checkpoint 10 qualifies: checkpoint 5 and everything before 10 go
    deleted = cleanup_expired_logs(table.store, 10, now + DAY, meta)
    assert "00000000000000000005.checkpoint.parquet" in deleted
    assert _versions_left(table) == [10, 11, 12]
    assert (table.root / "_delta_log" / "00000000000000000010.checkpoint.parquet").exists()
    same_state(table.log().snapshot(), before[12])
    # nothing more to do, ever, while 10 is the newest checkpoint
    assert cleanup_expired_logs(table.store, 10, now + 400 * DAY, meta) == []


PROTECTED = Protocol(1, 7, writer_features=("appendOnly", "invariants", "checkpointProtection"))
CLEANUP_CASES = (  # (new first version, the release followed, may it run)
    (5, "4.4.0", True), (5, "4.0.1", True), (5, "3.3.2", False), (10, "3.3.2", True),
    (11, "3.3.2", True), (0, "3.3.2", False),
)  # fmt: skip
"""With delta.requireCheckpointProtectionBeforeVersion = 10 (tests/model: the same cases)."""


@pytest.mark.rules("RETENTION.CHECKPOINT_PROTECTION", "RETENTION.LOG")
def test_cleanup_of_a_protected_table_runs_as_on_any_table(tmp_path):
    """Our cleanup creates no checkpoint and deletes none at or after its new start, so below
    delta.requireCheckpointProtectionBeforeVersion it truncates in chunks as on any table (as
    delta-spark 4.x does); following v3.3.x it must reach that version in one go."""
    conf = {"delta.logRetentionDuration": "interval 3 days",
            "delta.requireCheckpointProtectionBeforeVersion": "10"}  # fmt: skip
    table = Table(tmp_path / "t")
    _history_with_times(table, 13, (5, 10), PROTECTED, **conf)
    snapshot = table.log().snapshot()
    now = MIDNIGHT + 12 * DAY + 3600_000  # checkpoint 5 qualifies, 10 does not yet
    assert cleanup_expired_logs(table.store, 10, now, snapshot.metadata, snapshot.protocol)
    assert _versions_left(table) == list(range(5, 13))  # a chunk below 10
    for new_start, release, allowed in CLEANUP_CASES:
        at = Profile.parse(release)
        assert cleanup_may_truncate(
            snapshot.protocol, snapshot.metadata, new_start, at
        ) is allowed, (new_start, release)  # fmt: skip
        assert cleanup_may_truncate(  # without the feature, any cleanup may run
            Protocol(1, 7, writer_features=("appendOnly",)), snapshot.metadata, new_start, at
        )
    # following 3.3.x, the same cleanup deletes nothing: it cannot reach 10 in one go
    other = Table(tmp_path / "u")
    _history_with_times(other, 13, (5, 10), PROTECTED, **conf)
    old = Profile.parse("3.3.2")
    assert not cleanup_expired_logs(other.store, 10, now, snapshot.metadata, PROTECTED, old)
    assert _versions_left(other) == list(range(13))


@pytest.mark.rules("RETENTION.LOG")
def test_cleanup_respects_its_inputs(tmp_path):
    table = Table(tmp_path / "t")
    _history_with_times(table, 13, (5, 10))
    meta = table.log().snapshot().metadata
    far = MIDNIGHT + 400 * DAY
    # the default retention is 30 days: day 12 files are not expired 20 days later
    assert cleanup_expired_logs(table.store, 10, MIDNIGHT + 20 * DAY, meta) == []
    # checkpoint_version bounds the checkpoints considered
    cleanup_expired_logs(table.store, 5, far, meta)
    assert _versions_left(table) == list(range(5, 13))
    disabled = metadata(**{"delta.enableExpiredLogCleanup": "false"})
    assert cleanup_expired_logs(table.store, 10, far, disabled) == []
    assert _versions_left(table) == list(range(5, 13))


@pytest.mark.rules("RETENTION.LOG")
def test_cleanup_makes_times_strictly_increasing(tmp_path):
    table = Table(tmp_path / "t")
    _history_with_times(table, 13, (5, 10), **{"delta.logRetentionDuration": "interval 3 days"})
    log_dir = table.root / "_delta_log"
    # 8.json is new, 9.json claims to be old: adjusted, 9.json counts as 8.json's time + 1 ms
    late = MIDNIGHT + 30 * DAY
    os.utime(log_dir / commit_name(8), (late / 1000, late / 1000))
    os.utime(log_dir / f"{8:020d}.crc", (late / 1000, late / 1000))
    os.utime(log_dir / commit_name(9), (1, 1))
    meta = table.log().snapshot().metadata
    cleanup_expired_logs(table.store, 10, MIDNIGHT + 25 * DAY, meta)
    assert _versions_left(table) == list(range(5, 13))  # only checkpoint 5 qualified


@pytest.mark.rules("CHECKPOINT.COMMITTED_VERSION", "CHECKPOINT.INTERVAL", "RETENTION.LOG")
def test_checkpoint_version_checkpoints_that_version_and_cleans_up(tmp_path):
    table = Table(tmp_path / "t")
    _history_with_times(table, 13, (), **{"delta.checkpointInterval": "5"})
    log = table.log()
    result = checkpoint_version(log, 10, now_ms=MIDNIGHT + 100 * DAY)
    assert result.version == 10  # not the latest (12)
    assert (
        json.loads((tmp_path / "t" / "_delta_log" / "_last_checkpoint").read_text())["version"]
        == 10
    )
    assert _versions_left(table) == [10, 11, 12]  # 9.json is older than 30 days
    assert log.snapshot().checkpoint_version == 10
