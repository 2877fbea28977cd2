"""deltaspec.impl against the tables delta-spark wrote (../shared/fixtures/delta-spark).

For every table in MANIFEST.json:

- positive and edge tables load at the latest version and at every version that has expected
  data; negative tables fail with the typed error their source test documents (NEGATIVE);
- where expected rows exist, a full scan of the snapshot's live files (data files read with
  pyarrow, partition values typed by the schema, column mapping and deletion vectors applied)
  equals them;
- the live files, version, protocol, metadata and application transactions agree with delta-rs
  (the ``deltalake`` package) reading the same log.

The scan lives here, not in deltaspec.impl: the snapshot only exposes the log's state, and the
scan is the test's way to check that state against rows Spark returned.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support.fixture_tables import EXPECTED, LOADABLE, SCAN_SESSION_ZONE, TABLES, label_version

from deltaspec.impl import codec
from deltaspec.impl.errors import (
    DeltaError,
    MissingProtocolOrMetadataError,
    MissingVersionsError,
    UnsupportedFeatureError,
    UnsupportedProtocolError,
    VersionNotFoundError,
)
from deltaspec.impl.scan import scan
from deltaspec.impl.snapshot.delta_log import DeltaLog

deltalake = pytest.importorskip("deltalake")

NEGATIVE: dict[str, tuple[type[DeltaError], str]] = {
    "golden-versions-not-contiguous": (
        MissingVersionsError,
        "commit 1 is missing between 0 and 2; delta-kernel-rs expects "
        "DELTA_VERSIONS_NOT_CONTIGUOUS (LOG.CONTIGUITY)",
    ),
    "golden-invalid-protocol-version": (
        UnsupportedProtocolError,
        "protocol minReaderVersion=99: the reader must refuse the table",
    ),
    "golden-checkpoint-missing-protocol": (
        MissingProtocolOrMetadataError,
        "the v10 checkpoint has no protocol and no earlier JSON is read: state reconstruction "
        "must fail (DELTA_STATE_RECOVER_ERROR)",
    ),
    "rs-errlog-gap-after-checkpoint": (
        MissingVersionsError,
        "commit 12 is missing after checkpoint 10; delta-rs expects open to fail",
    ),
}
"""Every negative table, the error it must raise, and why (the manifest's notes)."""

DELTA_RS_CANNOT_READ: dict[str, str] = {}
"""Tables delta-rs cannot open, with the reason (none at deltalake 1.6.6)."""


def _root(fixtures_dir: Path, name: str) -> Path:
    return fixtures_dir / name


def _versions_with_expected_data(name: str) -> list[int]:
    table = TABLES[name]
    labels = [v["label"] for v in table["expected"].get("versions", [])]
    return sorted(int(label[1:]) for label in labels if re.fullmatch(r"v\d+", label))


# --- loading -------------------------------------------------------------------------------------


@pytest.mark.rules("SNAPSHOT.REPLAY", "CHECKPOINT.READ", "LOG.CONTIGUITY")
def test_manifest_is_covered(fixtures_dir):
    """Every manifest table is tested; the negative list here is exactly the manifest's."""
    names = set(TABLES)
    assert len(names) == 54
    negative = {n for n in names if TABLES[n]["category"] == "negative"}
    assert negative == set(NEGATIVE)
    assert {n for n, _ in EXPECTED} <= names


@pytest.mark.rules(
    "SNAPSHOT.REPLAY",
    "SNAPSHOT.PROTOCOL_METADATA",
    "SNAPSHOT.TIME_TRAVEL",
    "CHECKPOINT.READ",
    "LOG.CONTIGUITY",
    "LOG.COMMIT_FILE_NAME",
)
@pytest.mark.parametrize("name", sorted(TABLES))
def test_fixture_loads_or_fails_as_documented(fixtures_dir, name):
    table = TABLES[name]
    log = DeltaLog(str(_root(fixtures_dir, name)))
    if table["category"] == "negative":
        error, reason = NEGATIVE[name]
        with pytest.raises(error):
            log.snapshot()
        assert reason
        return
    snapshot = log.snapshot()
    assert snapshot.version == table["latest_version"] == log.latest_version()
    assert snapshot.num_files == len(snapshot.files) == snapshot.files_table().num_rows
    assert snapshot.total_size == sum(f.size for f in snapshot.files.values())
    assert all(not f.data_change for f in snapshot.files.values())
    assert not set(snapshot.files) & set(snapshot.tombstones)
    summary = table["log_summary"]
    checkpoints = summary.get("checkpoints", [])
    if checkpoints:
        assert snapshot.checkpoint_version is not None
    else:
        assert snapshot.checkpoint_version is None
    for version in _versions_with_expected_data(name):
        assert log.snapshot(version).version == version


def _reconstructable(commits: set[int], checkpoints: set[int], version: int) -> bool:
    """SNAPSHOT.TIME_TRAVEL: commits 0..v exist, or a checkpoint c <= v and commits c+1..v."""
    starts = [-1, *checkpoints] if 0 in commits else list(checkpoints)
    return any(
        start <= version and all(v in commits for v in range(start + 1, version + 1))
        for start in starts
    )


@pytest.mark.rules("SNAPSHOT.TIME_TRAVEL", "LOG.CONTIGUITY")
@pytest.mark.parametrize("name", LOADABLE)
def test_fixture_time_travel_range(fixtures_dir, name):
    """Every reconstructable version loads; a gap fails; outside the range is not found."""
    log = DeltaLog(str(_root(fixtures_dir, name)))
    listing = log.list_log()
    earliest, latest = listing.earliest_version, listing.latest_version
    assert earliest is not None
    commits, checkpoints = set(listing.commits), set(listing.checkpoints)
    for version in range(earliest, latest + 1):
        if _reconstructable(commits, checkpoints, version):
            assert log.snapshot(version).version == version
        else:
            with pytest.raises(MissingVersionsError):
                log.snapshot(version)
    with pytest.raises(VersionNotFoundError):
        log.snapshot(latest + 1)
    with pytest.raises(VersionNotFoundError):
        log.snapshot(earliest - 1)


@pytest.mark.rules("CHECKPOINT.READ", "CHECKPOINT.LAST_CHECKPOINT")
def test_corrupt_and_missing_last_checkpoint_fall_back_to_listing(fixtures_dir):
    corrupted = DeltaLog(str(fixtures_dir / "golden-corrupted-last-checkpoint"))
    assert corrupted.read_last_checkpoint() is None  # empty file
    assert corrupted.snapshot().checkpoint_version == 10
    no_hint = DeltaLog(str(fixtures_dir / "krs-checkpoint-no-last-checkpoint"))
    assert no_hint.read_last_checkpoint() is None
    assert no_hint.snapshot().checkpoint_version == 2
    v2_no_hint = DeltaLog(str(fixtures_dir / "krs-v2-checkpoint-no-last-checkpoint"))
    assert v2_no_hint.snapshot().checkpoint_version == 2
    # _last_checkpoint names a UUID v2 file that does not exist; the classic-named one is used
    renamed = DeltaLog(str(fixtures_dir / "krs-v2-classic-checkpoint-parquet"))
    assert renamed.snapshot().checkpoint_version == 1


@pytest.mark.rules("LOG.CONTIGUITY", "CHECKPOINT.READ", "SNAPSHOT.TIME_TRAVEL")
def test_gaps_before_and_after_checkpoint(fixtures_dir):
    before = DeltaLog(str(fixtures_dir / "rs-errlog-gap-before-checkpoint"))
    assert before.snapshot().version == 13  # commit 7 is covered by checkpoint 10
    assert before.snapshot(6).version == 6
    with pytest.raises(MissingVersionsError):
        before.snapshot(8)
    after = DeltaLog(str(fixtures_dir / "rs-errlog-gap-after-checkpoint"))
    assert after.snapshot(11).version == 11
    with pytest.raises(MissingVersionsError):
        after.snapshot(12)
    base = DeltaLog(str(fixtures_dir / "rs-errlog-base"))
    assert set(base.snapshot().files) == set(before.snapshot().files)
    not_contiguous = DeltaLog(str(fixtures_dir / "golden-versions-not-contiguous"))
    assert not_contiguous.snapshot(0).version == 0


@pytest.mark.rules("SNAPSHOT.PROTOCOL_METADATA", "SNAPSHOT.TIME_TRAVEL")
def test_missing_protocol_only_at_the_bad_checkpoint(fixtures_dir):
    log = DeltaLog(str(fixtures_dir / "golden-checkpoint-missing-protocol"))
    assert log.snapshot(9).protocol.min_reader_version == 1  # replayed from JSON
    with pytest.raises(MissingProtocolOrMetadataError):
        log.snapshot(10)


@pytest.mark.rules("SNAPSHOT.TIME_TRAVEL", "LOG.NEW_TABLE", "CHECKPOINT.READ")
def test_log_starting_at_a_checkpoint(fixtures_dir):
    for name, checkpoint in (
        ("dat-no-replay", 2),
        ("rs-checkpoint-cdf-log-starts-at-checkpoint", 3),
    ):
        log = DeltaLog(str(fixtures_dir / name))
        assert log.snapshot(checkpoint).checkpoint_version == checkpoint
        with pytest.raises(VersionNotFoundError):
            log.snapshot(checkpoint - 1)


@pytest.mark.rules("SNAPSHOT.FILE_KEY", "SNAPSHOT.RECONCILE")
def test_reconciliation_cases(fixtures_dir):
    re_added = DeltaLog(str(fixtures_dir / "golden-delete-re-add-same-path")).snapshot()
    assert {path for path, _ in re_added.files} == {"foo", "bar"}  # the source test's answer
    keyed = DeltaLog(str(fixtures_dir / "golden-dv-key-cases")).snapshot()
    (only,) = keyed.files.values()
    assert only.deletion_vector is not None
    # the same path with three earlier DVs: three tombstones, each under its own (path, dvId)
    tombstone_keys = {
        r.key
        for r in DeltaLog(str(fixtures_dir / "golden-dv-key-cases"), clock=lambda: 0)
        .snapshot()
        .tombstones.values()
    }
    assert len(tombstone_keys) == 3
    assert {path for path, _ in tombstone_keys} == {only.path}
    assert only.key not in tombstone_keys


@pytest.mark.rules("SNAPSHOT.APP_TXN", "SNAPSHOT.DOMAIN_METADATA")
def test_app_transactions_and_domains(fixtures_dir):
    txns = DeltaLog(str(fixtures_dir / "golden-txn-cdc-manual")).snapshot().app_transactions
    assert {a: (t.version, t.last_updated) for a, t in txns.items()} == {"fakeAppId": (3, 200)}
    old = DeltaLog(str(fixtures_dir / "spark-delta-0.1.0")).snapshot()
    assert [t.last_updated for t in old.app_transactions.values()] == [None]
    multi = DeltaLog(str(fixtures_dir / "krs-multipart-checkpoint-txn")).snapshot()
    assert len(multi.app_transactions) == 2
    domains = DeltaLog(str(fixtures_dir / "pr-domain-metadata")).snapshot().domains
    assert {d: m.configuration for d, m in domains.items()} == {
        "testDomain1": '{"key1":"10"}',
        "testDomain3": "",
    }
    clustered = DeltaLog(str(fixtures_dir / "pr-clustered-v2-checkpoint")).snapshot()
    assert set(clustered.domains) == {"delta.clustering"}


@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_in_commit_timestamps(fixtures_dir):
    ict = DeltaLog(str(fixtures_dir / "rs-cdf-ict"))
    # hand-edited: v1's in-commit timestamp is a year before v0's
    assert ict.snapshot(1).timestamp == 1683874206883
    assert ict.snapshot(0).timestamp == 1783874203271
    clean = DeltaLog(str(fixtures_dir / "pr-ict-deletion-vectors"))
    stamps = [clean.snapshot(v).timestamp for v in range(5)]
    assert stamps == sorted(stamps)
    plain = DeltaLog(str(fixtures_dir / "golden-basic-merge"))
    log_file = fixtures_dir / "golden-basic-merge" / "_delta_log" / "00000000000000000001.json"
    assert plain.snapshot().timestamp == log_file.stat().st_mtime_ns // 1_000_000


@pytest.mark.rules("SNAPSHOT.PROTOCOL_METADATA")
@pytest.mark.parametrize(
    ("name", "label"),
    [(n, lbl) for n, lbl in EXPECTED if n.startswith("dat-")],
)
def test_dat_table_version_metadata(fixtures_dir, name, label):
    """DAT cases state the protocol versions and properties at each version."""
    meta = json.loads(
        (fixtures_dir / "_expected" / name / label / "table_version_metadata.json").read_text()
    )
    snapshot = DeltaLog(str(fixtures_dir / name)).snapshot(label_version(name, label))
    assert snapshot.version == meta["version"]
    assert snapshot.protocol.min_reader_version == meta["min_reader_version"]
    assert snapshot.protocol.min_writer_version == meta["min_writer_version"]
    assert snapshot.metadata.configuration == meta["properties"]


# --- scanning ------------------------------------------------------------------------------------


def _row_key(row: tuple[Any, ...]) -> str:
    return repr(row)


def _rows(table: pa.Table, names: list[str]) -> list[tuple[Any, ...]]:
    columns = [table.column(n).to_pylist() for n in names]
    return sorted(zip(*columns, strict=True), key=_row_key) if columns else []


@pytest.mark.rules(
    "SNAPSHOT.REPLAY", "SNAPSHOT.FILE_KEY", "SNAPSHOT.TIME_TRAVEL", "CHECKPOINT.READ"
)
@pytest.mark.parametrize(("name", "label"), EXPECTED)
def test_fixture_scan_matches_expected_rows(fixtures_dir, name, label):
    root = _root(fixtures_dir, name)
    snapshot = DeltaLog(str(root)).snapshot(label_version(name, label))
    expected = pq.read_table(fixtures_dir / "_expected" / name / label / "table_content")
    zone = SCAN_SESSION_ZONE.get(name, (None, ""))[0]
    try:
        ours = scan(snapshot, root, zone)
    except UnsupportedFeatureError as unsupported:
        pytest.skip(f"{name}: {unsupported}")
    names = expected.column_names
    assert set(names) <= set(ours.column_names), (names, ours.column_names)
    cast = (
        pa.table({n: ours.column(n).cast(expected.schema.field(n).type) for n in names})
        if ours.num_rows
        else expected.schema.empty_table()
    )
    assert ours.num_rows == expected.num_rows
    assert _rows(cast, names) == _rows(expected, names)


@pytest.mark.rules("SNAPSHOT.FILE_KEY", "SNAPSHOT.RECONCILE", "CHECKPOINT.READ")
def test_many_deletion_vector_versions_scan(fixtures_dir):
    """kernel DeletionVectorSuite's answer: ids 0..499 except multiples of 11 (454 rows)."""
    root = fixtures_dir / "kernel-dv-many-versions"
    rows = scan(DeltaLog(str(root)).snapshot(), root)
    assert sorted(rows.column("id").to_pylist()) == [i for i in range(500) if i % 11]


# --- delta-rs ------------------------------------------------------------------------------------


def _delta_rs_state(root: Path, version: int | None) -> tuple[Any, list[str], list[str]]:
    table = deltalake.DeltaTable(str(root), version=version)
    actions = pa.table(table.get_add_actions(flatten=False))
    return table, sorted(actions.column("path").to_pylist()), sorted(table.file_uris())


@pytest.mark.rules("SNAPSHOT.REPLAY", "SNAPSHOT.RECONCILE", "SNAPSHOT.APP_TXN", "CHECKPOINT.READ")
@pytest.mark.parametrize("name", LOADABLE)
def test_fixture_state_matches_delta_rs(fixtures_dir, name):
    if name in DELTA_RS_CANNOT_READ:
        pytest.skip(f"delta-rs cannot read {name}: {DELTA_RS_CANNOT_READ[name]}")
    root = _root(fixtures_dir, name)
    log = DeltaLog(str(root))
    for version in [None, *_versions_with_expected_data(name)]:
        snapshot = log.snapshot(version)
        table, paths, uris = _delta_rs_state(root, version)
        assert table.version() == snapshot.version
        assert sorted(add.path for add in snapshot.files.values()) == paths
        ours_uris = sorted(
            os.path.join(str(root), codec.decode_path(add.path)) for add in snapshot.files.values()
        )
        # real paths: delta-rs resolves symlinks in the table root, we keep the root as given
        assert [os.path.realpath(u) for u in ours_uris] == [
            os.path.realpath(u.removeprefix("file://")) for u in uris
        ]
        protocol = table.protocol()
        assert protocol.min_reader_version == snapshot.protocol.min_reader_version
        assert protocol.min_writer_version == snapshot.protocol.min_writer_version
        metadata = table.metadata()
        assert metadata.id == snapshot.metadata.id
        assert list(metadata.partition_columns) == list(snapshot.partition_columns)
        assert dict(metadata.configuration) == snapshot.metadata.configuration
        for app_id, txn in snapshot.app_transactions.items():
            assert table.transaction_version(app_id) == txn.version
