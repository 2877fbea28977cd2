"""deltaspec.impl.snapshot: replay, reconciliation, checkpoints on read, time travel (SNAPSHOT.*).

Logs are written here commit by commit with the codec and the store; a few tests also write
checkpoint files by hand (a corrupt one, an incomplete multi-part one, a v2 one with sidecars)
to exercise CHECKPOINT.READ's fallbacks.
"""

from __future__ import annotations

import json
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
    AddFile,
    CommitInfo,
    DeletionVector,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.errors import (
    CorruptLogError,
    MissingProtocolOrMetadataError,
    MissingVersionsError,
    TableNotFoundError,
    UnsupportedProtocolError,
    VersionNotFoundError,
)
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.replay.layouts import FILES_SCHEMA, TOMBSTONES_SCHEMA
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.table.features import check_reader_protocol
from deltaspec.impl.table.properties import parse_interval_ms

DAY = 24 * 3600 * 1000
NOW = 1_700_000_000_000
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
    return Metadata("table-id", SCHEMA, ("part",), dict(configuration), created_time=0)


def add(path: str, part: str = "a", dv: DeletionVector | None = None, size: int = 10) -> AddFile:
    return AddFile(path, {"part": part}, size, NOW, True, '{"numRecords":1}', None, dv)


def remove(path: str, when: int = NOW, dv: DeletionVector | None = None) -> RemoveFile:
    return RemoveFile(path, when, True, True, {"part": "a"}, 10, None, None, dv)


def dv(name: str, offset: int | None = 1) -> DeletionVector:
    return DeletionVector("u", f"{name:>20}".replace(" ", "a"), 34, 1, offset)


class Table:
    """A table written commit by commit (LOG.PUT_IF_ABSENT through the store)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = LocalLogStore(str(root))
        self.version = -1

    def commit(self, *actions: Action) -> int:
        self.version += 1
        info = CommitInfo({"timestamp": NOW + self.version, "operation": "WRITE"})
        self.store.write_new(commit_name(self.version), codec.encode_commit([info, *actions]))
        return self.version

    def create(self, *actions: Action, protocol: Protocol | None = None, **conf: str) -> int:
        return self.commit(protocol or Protocol(1, 2), metadata(**conf), *actions)

    def log(self, now: int = NOW) -> DeltaLog:
        return DeltaLog(str(self.root), clock=lambda: now)


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return Table(tmp_path / "t")


# --- replay and reconciliation -------------------------------------------------------------------


@pytest.mark.rules("SNAPSHOT.REPLAY", "SNAPSHOT.RECONCILE")
def test_replay_adds_removes_and_re_adds(table):
    table.create(add("a"), add("b"))
    table.commit(remove("a"), add("c"))
    table.commit(add("a", size=99))  # re-added: live again, tombstone gone
    table.commit(remove("zzz"))  # a remove of a key that is not live still records a tombstone
    snapshot = table.log().snapshot()
    assert snapshot.version == 3
    assert {p for p, _ in snapshot.files} == {"a", "b", "c"}
    assert snapshot.files[("a", None)].size == 99
    assert set(snapshot.tombstones) == {("zzz", None)}
    assert snapshot.num_files == 3 and snapshot.total_size == 99 + 10 + 10
    assert all(not f.data_change for f in snapshot.files.values())
    assert all(not r.data_change for r in snapshot.tombstones.values())
    assert snapshot.files_table().schema == FILES_SCHEMA
    assert snapshot.tombstones_table().schema == TOMBSTONES_SCHEMA


@pytest.mark.rules("SNAPSHOT.RECONCILE")
def test_last_action_in_file_order_wins(table):
    table.create(add("a"), remove("a"), add("b"))
    table.commit(add("b", size=5), remove("b"), add("b", size=7))
    snapshot = table.log().snapshot()
    assert {k: f.size for k, f in snapshot.files.items()} == {("b", None): 7}
    assert set(snapshot.tombstones) == {("a", None)}


@pytest.mark.rules("SNAPSHOT.FILE_KEY", "SNAPSHOT.RECONCILE")
def test_file_key_is_path_and_deletion_vector(table):
    first, second = dv("one"), dv("two", offset=None)
    assert first.unique_id.endswith("@1") and "@" not in second.unique_id
    table.create(add("f"))
    table.commit(remove("f"), add("f", dv=first))
    table.commit(remove("f", dv=first), add("f", dv=second))
    snapshot = table.log().snapshot()
    assert list(snapshot.files) == [("f", second.unique_id)]
    assert set(snapshot.tombstones) == {("f", None), ("f", first.unique_id)}
    assert snapshot.files[("f", second.unique_id)].deletion_vector == second


@pytest.mark.rules("SNAPSHOT.PROTOCOL_METADATA")
def test_latest_protocol_and_metadata_win(table):
    table.create()
    table.commit(metadata(**{"delta.appendOnly": "true"}))
    table.commit(Protocol(1, 4))
    snapshot = table.log().snapshot()
    assert snapshot.protocol == Protocol(1, 4)
    assert snapshot.metadata.configuration == {"delta.appendOnly": "true"}
    assert snapshot.partition_columns == ("part",)
    assert table.log().snapshot(0).protocol == Protocol(1, 2)


@pytest.mark.rules("SNAPSHOT.PROTOCOL_METADATA")
@pytest.mark.parametrize("missing", ["protocol", "metadata"])
def test_missing_protocol_or_metadata(table, missing):
    table.commit(metadata() if missing == "protocol" else Protocol(1, 2), add("a"))
    with pytest.raises(MissingProtocolOrMetadataError):
        table.log().snapshot()


@pytest.mark.rules("SNAPSHOT.PROTOCOL_METADATA")
@pytest.mark.parametrize(
    ("protocol", "supported"),
    [
        (Protocol(1, 2), True),
        (Protocol(2, 5), True),
        (Protocol(3, 7, ("deletionVectors", "columnMapping", "v2Checkpoint"), ()), True),
        (Protocol(3, 7, (), ()), True),
        (Protocol(4, 7), False),
        (Protocol(99, 7), False),
        # a data type: the log reads as any other (the Spark path's scan refuses it)
        (Protocol(3, 7, ("variantType",), ("variantType",)), True),
        (Protocol(3, 7, ("unknownReaderFeature-dev",), ()), False),
        (Protocol(3, 7, ("catalogManaged",), ()), False),
    ],
)
def test_reader_protocol_support(table, protocol, supported):
    table.create(protocol=protocol)
    if supported:
        assert table.log().snapshot().protocol == protocol
        check_reader_protocol(protocol)
    else:
        with pytest.raises(UnsupportedProtocolError):
            table.log().snapshot()


@pytest.mark.rules("SNAPSHOT.APP_TXN")
def test_latest_app_transaction_wins_even_if_lower(table):
    table.create(SetTransaction("app", 5, NOW))
    table.commit(SetTransaction("app", 3, NOW), SetTransaction("other", 1, NOW))
    snapshot = table.log().snapshot()
    assert snapshot.app_transactions["app"].version == 3
    assert snapshot.txn_version("other") == 1
    assert snapshot.txn_version("unknown") == -1


@pytest.mark.rules("RETENTION.SET_TRANSACTION", "SNAPSHOT.APP_TXN")
def test_app_transactions_expire_only_with_a_retention(table):
    table.create(SetTransaction("old", 1, NOW - 3 * DAY), SetTransaction("none", 1, None))
    table.commit(SetTransaction("new", 1, NOW - DAY))
    assert set(table.log(NOW + 365 * DAY).snapshot().app_transactions) == {"old", "none", "new"}
    table.commit(metadata(**{"delta.setTransactionRetentionDuration": "interval 2 days"}))
    snapshot = table.log().snapshot()
    assert set(snapshot.app_transactions) == {"new"}  # no lastUpdated also expires
    assert snapshot.txn_version("old") == -1
    assert set(snapshot.all_app_transactions) == {"old", "none", "new"}
    exactly = table.log(NOW - DAY + 2 * DAY).snapshot()  # at the cutoff: expired
    assert set(exactly.app_transactions) == set()


@pytest.mark.rules("SNAPSHOT.DOMAIN_METADATA")
def test_domain_metadata_latest_wins_and_removed_drops(table):
    table.create(DomainMetadata("d1", "a"), DomainMetadata("d2", "b"))
    table.commit(DomainMetadata("d1", "c"), DomainMetadata("d2", "b", removed=True))
    snapshot = table.log().snapshot()
    assert {d: m.configuration for d, m in snapshot.domains.items()} == {"d1": "c"}
    table.commit(DomainMetadata("d2", "again"))
    assert set(table.log().snapshot().domains) == {"d1", "d2"}


@pytest.mark.rules("SNAPSHOT.TOMBSTONES", "RETENTION.TOMBSTONES")
def test_tombstones_expire_with_the_clock(table):
    table.create(add("a"), add("b"), add("c"))
    table.commit(remove("a", when=NOW - 8 * DAY), remove("b", when=NOW - 7 * DAY))
    table.commit(RemoveFile("c", None))  # no deletionTimestamp counts as 0
    snapshot = table.log().snapshot()
    assert set(snapshot.tombstones) == set()  # 8 days, exactly 7 days and 0 are expired
    assert len(snapshot.all_tombstones) == 3
    earlier = table.log(NOW - 1).snapshot()
    assert set(earlier.tombstones) == {("b", None)}
    assert earlier.tombstones_table(NOW - 2 * DAY).num_rows == 2
    table.commit(metadata(**{"delta.deletedFileRetentionDuration": "interval 30 days"}))
    assert set(table.log().snapshot().tombstones) == {("a", None), ("b", None)}


@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_timestamp_is_commit_mtime_or_in_commit_timestamp(table):
    table.create(**{"delta.enableInCommitTimestamps": "true"})
    ict = CommitInfo({"inCommitTimestamp": 12345, "timestamp": 1})
    table.store.write_new(commit_name(1), codec.encode_commit([ict, add("a")]))
    table.version = 1
    log = table.log()
    assert log.snapshot().timestamp == 12345
    mtime = (table.root / "_delta_log" / commit_name(0)).stat().st_mtime_ns // 1_000_000
    assert log.snapshot(0).timestamp == mtime  # no inCommitTimestamp in commit 0


@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_cdc_and_commit_info_do_not_change_state(table):
    from deltaspec.impl.actions import AddCDCFile

    table.create(add("a"))
    table.commit(AddCDCFile("_change_data/x.parquet", {}, 1))
    snapshot = table.log().snapshot()
    assert {p for p, _ in snapshot.files} == {"a"} and not snapshot.tombstones


# --- time travel, table existence, listing -------------------------------------------------------


@pytest.mark.rules("SNAPSHOT.TIME_TRAVEL")
def test_time_travel_range(table):
    table.create(add("a"))
    table.commit(add("b"))
    table.commit(remove("a"))
    log = table.log()
    assert [{p for p, _ in log.snapshot(v).files} for v in range(3)] == [
        {"a"},
        {"a", "b"},
        {"b"},
    ]
    for bad in (-1, 3, 100):
        with pytest.raises(VersionNotFoundError):
            log.snapshot(bad)


@pytest.mark.rules("LOG.NEW_TABLE")
def test_no_table(tmp_path):
    log = DeltaLog(str(tmp_path / "nothing"))
    assert log.latest_version() == -1
    with pytest.raises(TableNotFoundError):
        log.snapshot()
    with pytest.raises(TableNotFoundError):
        log.snapshot(0)
    (tmp_path / "nothing" / "_delta_log").mkdir(parents=True)
    (tmp_path / "nothing" / "_delta_log" / "_last_checkpoint").write_text('{"version":3,"size":1}')
    assert log.latest_version() == -1
    with pytest.raises(TableNotFoundError):
        log.snapshot()


@pytest.mark.rules("LOG.COMMIT_FILE_NAME", "LOG.LISTING")
def test_only_commit_file_names_are_commits(table):
    table.create(add("a"))
    log_dir = table.root / "_delta_log"
    for name in (
        "1.json",
        "00000000000000000001.json.tmp",
        "0000000000000000001.json",
        "00000000000000000001.crc",
        "00000000000000000000.00000000000000000001.compacted.json",
        ".00000000000000000001.json.crc",
    ):
        (log_dir / name).write_text("not a commit")
    log = table.log()
    assert log.latest_version() == 0
    assert log.snapshot().version == 0
    assert log.list_commit_versions(-1) == [0]
    table.commit(add("b"))
    table.commit(add("c"))
    assert log.list_commit_versions(0) == [1, 2]
    assert log.list_commit_versions(2) == []
    assert [type(a).__name__ for a in log.read_commit(1)] == ["CommitInfo", "AddFile"]
    with pytest.raises(VersionNotFoundError):
        log.read_commit(7)


@pytest.mark.rules("LOG.CONTIGUITY", "SNAPSHOT.TIME_TRAVEL")
def test_gap_without_checkpoint(table):
    table.create(add("a"))
    table.commit(add("b"))
    table.commit(add("c"))
    (table.root / "_delta_log" / commit_name(1)).unlink()
    log = table.log()
    assert log.snapshot(0).version == 0
    for version in (None, 1, 2):
        with pytest.raises(MissingVersionsError):
            log.snapshot(version)
    (table.root / "_delta_log" / commit_name(0)).unlink()
    with pytest.raises(MissingVersionsError):  # truncated: nothing to start from
        log.snapshot()
    with pytest.raises(VersionNotFoundError):
        log.snapshot(2)


@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_corrupt_commit_is_reported(table):
    table.create(add("a"))
    table.store.write_new(commit_name(1), b'{"add": {"path": 1}}\n')
    with pytest.raises(CorruptLogError) as raised:
        table.log().snapshot()
    assert raised.value.version == 1


# --- reading checkpoints -------------------------------------------------------------------------


def _checkpointed(table: Table, versions: int = 5, at: int = 3, parts: int | None = None) -> None:
    table.create(add("f0"))
    for v in range(1, versions):
        table.commit(add(f"f{v}"), remove(f"f{v - 1}"))
        if v == at:
            log = table.log()
            write_checkpoint(log, log.snapshot(v), parts=parts, now_ms=NOW)


def _files(log: DeltaLog, version: int | None = None) -> set[str]:
    return {p for p, _ in log.snapshot(version).files}


@pytest.mark.rules("CHECKPOINT.READ", "CHECKPOINT.LAST_CHECKPOINT")
def test_checkpoint_is_used_and_hint_variants(table):
    _checkpointed(table)
    log_dir = table.root / "_delta_log"
    log = table.log()
    assert log.snapshot().checkpoint_version == 3
    assert log.snapshot(2).checkpoint_version is None
    for hint in ('{"version":3,"size":4}', "", "{not json", '{"version":"3"}', '{"version":99}'):
        (log_dir / "_last_checkpoint").write_text(hint)
        assert log.snapshot().checkpoint_version == 3, hint
        assert _files(log) == {"f4"}
    (log_dir / "_last_checkpoint").unlink()
    assert log.snapshot().checkpoint_version == 3
    # stale hint: newer checkpoints are found by the listing
    (log_dir / "_last_checkpoint").write_text('{"version":1,"size":4}')
    write_checkpoint(log, log.snapshot(1), now_ms=NOW)
    (log_dir / "_last_checkpoint").write_text('{"version":1,"size":4}')
    assert log.snapshot().checkpoint_version == 3
    assert log.snapshot(2).checkpoint_version == 1


@pytest.mark.rules("CHECKPOINT.READ")
def test_dangling_hint_and_commits_deleted_before_checkpoint(table):
    _checkpointed(table)
    log_dir = table.root / "_delta_log"
    for v in range(3):
        (log_dir / commit_name(v)).unlink()
    log = table.log()
    assert _files(log) == {"f4"}
    (log_dir / "00000000000000000003.checkpoint.parquet").unlink()  # hint now dangles
    with pytest.raises(MissingVersionsError):
        log.snapshot()


@pytest.mark.rules("CHECKPOINT.READ")
def test_corrupt_or_empty_checkpoint_falls_back(table):
    _checkpointed(table)
    log_dir = table.root / "_delta_log"
    checkpoint = log_dir / "00000000000000000003.checkpoint.parquet"
    checkpoint.write_bytes(b"")  # zero-length: ignored
    log = table.log()
    assert log.snapshot().checkpoint_version is None and _files(log) == {"f4"}
    checkpoint.write_bytes(b"PAR1 garbage")  # unreadable: the next older start is used
    assert log.snapshot().checkpoint_version is None and _files(log) == {"f4"}
    for v in range(3):
        (log_dir / commit_name(v)).unlink()
    with pytest.raises(CorruptLogError):
        log.snapshot()


@pytest.mark.rules("CHECKPOINT.READ")
def test_malformed_checkpoint_falls_back(table):
    _checkpointed(table)
    bad = pa.table({"protocol": [{"minReaderVersion": "one", "minWriterVersion": "two"}]})
    pq.write_table(bad, table.root / "_delta_log" / "00000000000000000003.checkpoint.parquet")
    log = table.log()
    assert log.snapshot().checkpoint_version is None and _files(log) == {"f4"}


@pytest.mark.rules("CHECKPOINT.READ")
def test_multi_part_checkpoint_needs_every_part(table):
    _checkpointed(table, parts=3)
    log_dir = table.root / "_delta_log"
    parts = sorted(log_dir.glob("00000000000000000003.checkpoint.*.parquet"))
    assert [p.name[-29:] for p in parts] == [f"{i:010d}.0000000003.parquet" for i in (1, 2, 3)]
    log = table.log()
    assert log.snapshot().checkpoint_version == 3
    parts[1].unlink()
    assert log.snapshot().checkpoint_version is None
    assert _files(log) == {"f4"}


def _write_v2_checkpoint(table: Table, version: int, *, json_top: bool) -> str:
    """A v2 checkpoint of ``version`` with its files in one sidecar (CHECKPOINT.CONTENTS)."""
    from deltaspec.impl.checkpoint.contents import checkpoint_table

    log = table.log()
    full = checkpoint_table(log.snapshot(version), now_ms=NOW)
    sidecar_dir = table.root / "_delta_log" / "_sidecars"
    sidecar_dir.mkdir(exist_ok=True)
    files = full.filter(pa.compute.or_(full["add"].is_valid(), full["remove"].is_valid()))
    sidecar = sidecar_dir / "0000-side.parquet"
    pq.write_table(files.select(["add", "remove"]), sidecar)
    actions = [
        {"checkpointMetadata": {"version": version, "tags": {}}},
        {
            "sidecar": {
                "path": sidecar.name,
                "sizeInBytes": sidecar.stat().st_size,
                "modificationTime": NOW,
                "tags": {},
            }
        },
    ]
    for row in full.filter(
        pa.compute.invert(pa.compute.or_(full["add"].is_valid(), full["remove"].is_valid()))
    ).to_pylist():
        key, body = next((k, v) for k, v in row.items() if v is not None)
        if key == "metaData":
            body = {
                **body,
                "configuration": dict(body["configuration"]),
                "format": {"provider": "parquet", "options": {}},
            }
        actions.append({key: {k: v for k, v in body.items() if v is not None}})
    name = f"{version:020d}.checkpoint.5e4c8b2a-0000-4000-8000-000000000000"
    if json_top:
        name += ".json"
        (table.root / "_delta_log" / name).write_text("\n".join(json.dumps(a) for a in actions))
    else:
        name += ".parquet"
        rows = pa.Table.from_pylist(
            [
                {"checkpointMetadata": {"version": version}, "sidecar": None},
                {
                    "checkpointMetadata": None,
                    "sidecar": {
                        "path": sidecar.name,
                        "sizeInBytes": sidecar.stat().st_size,
                        "modificationTime": NOW,
                    },
                },
            ]
        )
        non_file = full.filter(
            pa.compute.invert(pa.compute.or_(full["add"].is_valid(), full["remove"].is_valid()))
        )
        nulls = pa.table(
            {c: pa.nulls(2, non_file.schema.field(c).type) for c in non_file.column_names}
        )
        combined = pa.concat_tables([nulls, non_file])
        extra = pa.concat_tables(
            [
                rows,
                pa.table(
                    {
                        c: pa.nulls(non_file.num_rows, rows.schema.field(c).type)
                        for c in rows.column_names
                    }
                ),
            ]
        )
        for column in extra.column_names:
            combined = combined.append_column(column, extra.column(column))
        pq.write_table(combined, table.root / "_delta_log" / name)
    return name


@pytest.mark.rules("CHECKPOINT.READ", "CHECKPOINT.CONTENTS")
@pytest.mark.parametrize("json_top", [True, False])
def test_v2_checkpoint_with_sidecar(table, json_top):
    table.create(add("f0"), SetTransaction("app", 7, NOW), DomainMetadata("d", "x"))
    table.commit(add("f1"), remove("f0"))
    table.commit(add("f2"))
    expected = table.log().snapshot()
    _write_v2_checkpoint(table, 1, json_top=json_top)
    for v in range(2):
        (table.root / "_delta_log" / commit_name(v)).unlink()
    snapshot = table.log().snapshot()
    assert snapshot.checkpoint_version == 1
    assert snapshot.files == expected.files
    assert snapshot.tombstones == expected.tombstones
    assert snapshot.app_transactions == expected.app_transactions
    assert snapshot.domains == expected.domains
    assert snapshot.metadata == expected.metadata
    (table.root / "_delta_log" / "_sidecars" / "0000-side.parquet").unlink()
    with pytest.raises(CorruptLogError):  # the only start left lacks its sidecar
        table.log().snapshot()


# --- properties ----------------------------------------------------------------------------------


@pytest.mark.rules("RETENTION.TOMBSTONES", "RETENTION.LOG", "RETENTION.SET_TRANSACTION")
def test_interval_parsing():
    assert parse_interval_ms("interval 1 week") == 7 * DAY
    assert parse_interval_ms("interval 30 days") == 30 * DAY
    assert parse_interval_ms("7 days") == 7 * DAY
    assert parse_interval_ms("INTERVAL 1 day 2 hours") == DAY + 2 * 3600 * 1000
    assert parse_interval_ms("interval 90 seconds") == 90_000
    assert parse_interval_ms("interval 1 millisecond") == 1
    for bad in ("interval 1 month", "1 year", "forever", "", "interval", "3"):
        with pytest.raises(ValueError):
            parse_interval_ms(bad)


def _fold(commits: list[list[tuple[str, str, str | None]]]) -> tuple[set, set]:
    """The naive reconciliation of SNAPSHOT.RECONCILE over (op, path, dv) triples."""
    live: set[tuple[str, str | None]] = set()
    dead: set[tuple[str, str | None]] = set()
    for actions in commits:
        for op, path, dv_name in actions:
            key = (path, None if dv_name is None else dv(dv_name).unique_id)
            if op == "add":
                live.add(key)
                dead.discard(key)
            else:
                live.discard(key)
                dead.add(key)
    return live, dead


_ops = st.lists(
    st.lists(
        st.tuples(
            st.sampled_from(["add", "remove"]),
            st.sampled_from(["p1", "p2", "p3", "p%204%25"]),
            st.sampled_from([None, None, "x", "y"]),
        ),
        max_size=4,
    ),
    min_size=1,
    max_size=8,
)


@pytest.mark.rules("SNAPSHOT.REPLAY", "SNAPSHOT.RECONCILE", "SNAPSHOT.FILE_KEY", "CHECKPOINT.READ")
@examples(0.25)
@given(commits=_ops, checkpoint_at=st.integers(min_value=0, max_value=8))
def test_replay_matches_naive_fold_with_and_without_checkpoint(commits, checkpoint_at):
    with tempfile.TemporaryDirectory() as directory:
        table = Table(Path(directory) / "t")
        table.create()
        for actions in commits:
            table.commit(
                *(
                    add(p, dv=None if d is None else dv(d))
                    if op == "add"
                    else remove(p, dv=None if d is None else dv(d))
                    for op, p, d in actions
                )
            )
        log = table.log()
        if checkpoint_at <= table.version:
            write_checkpoint(log, log.snapshot(checkpoint_at), now_ms=NOW)
        for version in range(table.version + 1):
            live, dead = _fold(commits[:version])
            snapshot = log.snapshot(version)
            assert set(snapshot.files) == live
            assert set(snapshot.tombstones) == dead


@pytest.mark.rules("CHECKPOINT.CONTENTS")
def test_a_checkpoint_holding_a_live_file_twice_is_corrupt(table):
    """Two rows of one file key in a checkpoint are a corrupt checkpoint, named with its
    version and file, not a file kept twice."""
    table.create(add("a"), add("b"))
    log = table.log()
    write_checkpoint(log, log.snapshot(0), now_ms=NOW)
    name = "00000000000000000000.checkpoint.parquet"
    path = table.root / "_delta_log" / name
    rows = pq.read_table(path)
    is_add = pc.is_valid(pc.struct_field(rows.column("add"), "path"))
    pq.write_table(pa.concat_tables([rows, rows.filter(is_add).slice(0, 1)]), path)
    (table.root / "_delta_log" / commit_name(0)).unlink()  # the checkpoint is the only copy
    with pytest.raises(CorruptLogError, match="holds live file 'a' twice") as failed:
        table.log().snapshot()
    assert (failed.value.version, failed.value.file) == (0, name)
