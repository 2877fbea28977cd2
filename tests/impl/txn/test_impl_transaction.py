"""Optimistic transactions of the production path, on real files (TXN.*, ISOLATION.*, CONFLICT.*,
RETRY.*). Independent of the model: expectations come from the spec's rules."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from deltaspec.impl import errors
from deltaspec.impl.actions import (
    AddFile,
    CommitInfo,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.predicates import parse
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.table.releases import Profile
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

SCHEMA = json.dumps(
    {"type": "struct", "fields": [
        {"name": "p", "type": "string", "nullable": True, "metadata": {}},
        {"name": "x", "type": "long", "nullable": True, "metadata": {}}]},
    separators=(",", ":"),
)  # fmt: skip


def add(path: str, p: str | None = "a", data_change: bool = True) -> AddFile:
    return AddFile(path, {"p": p}, 10, 0, data_change)


def remove(path: str, p: str | None = "a", data_change: bool = True) -> RemoveFile:
    return RemoveFile(path, 1, data_change, True, {"p": p}, 10)


def new_table(root: Path, properties: dict[str, str] | None = None, files: int = 2) -> DeltaLog:
    log = DeltaLog(str(root))
    txn = OptimisticTransaction(log)
    metadata = Metadata("t", SCHEMA, ("p",), dict(properties or {}))
    seed = [add(f"p={p}/{p}{i}.parquet", p) for p in "ab" for i in range(files)]
    txn.commit([metadata, *seed], Operation("CREATE TABLE"))
    return log


def commit_info(log: DeltaLog, version: int) -> dict:
    info = next(a for a in log.read_commit(version) if isinstance(a, CommitInfo))
    return dict(info.fields)


def updater(log: DeltaLog, partition: str = "a", **kw) -> OptimisticTransaction:
    txn = OptimisticTransaction(log, **kw)
    txn.filter_files([parse(["=", "p", partition])])
    txn.stage([remove(f"p={partition}/{partition}0.parquet", partition),
               add(f"p={partition}/{partition}0-u.parquet", partition)])  # fmt: skip
    return txn


@pytest.mark.rules("TXN.FIRST_COMMIT", "LOG.NEW_TABLE")
def test_first_commit_needs_metadata_and_gets_a_protocol(tmp_path: Path) -> None:
    log = DeltaLog(str(tmp_path))
    with pytest.raises(errors.MetadataAbsentError) as raised:
        OptimisticTransaction(log).commit([add("f.parquet")])
    assert raised.value.table == str(tmp_path) and raised.value.version == 0
    assert not (tmp_path / "_delta_log" / commit_name(0)).exists()
    new_table(tmp_path)
    actions = log.read_commit(0)
    assert isinstance(actions[0], CommitInfo)
    assert Protocol(1, 2) in actions
    assert "readVersion" not in commit_info(log, 0)


@pytest.mark.rules("TXN.COMMIT_INFO", "TXN.BLIND_APPEND", "ISOLATION.RECORDED")
def test_commit_info_is_first_with_delta_spark_field_order(tmp_path: Path) -> None:
    log = new_table(tmp_path)
    txn = OptimisticTransaction(log, clock=lambda: 1234)
    op = Operation("WRITE", {"mode": "Append", "partitionBy": []}, user_metadata="hello")
    version = txn.commit([add("p=a/new.parquet")], op)
    first_line = (tmp_path / "_delta_log" / commit_name(version)).read_text().splitlines()[0]
    info = json.loads(first_line)["commitInfo"]
    assert list(info) == [
        "timestamp", "operation", "operationParameters", "readVersion", "isolationLevel",
        "isBlindAppend", "userMetadata", "engineInfo", "txnId",
    ]  # fmt: skip
    assert info["timestamp"] == 1234 and info["readVersion"] == 0
    assert info["operationParameters"] == {"mode": "Append", "partitionBy": "[]"}
    assert info["isBlindAppend"] is True and info["isolationLevel"] == "Serializable"
    assert info["engineInfo"].startswith("deltaspec/")
    reader = updater(log)
    reader.commit(operation=Operation("UPDATE"))
    assert commit_info(log, 2)["isBlindAppend"] is False


@pytest.mark.rules("ISOLATION.DOWNGRADE", "ISOLATION.TABLE_DEFAULT")
def test_compaction_runs_under_snapshot_isolation(tmp_path: Path) -> None:
    log = new_table(tmp_path)
    txn = OptimisticTransaction(log)
    txn.filter_files([parse(["=", "p", "a"])])
    txn.stage([
        remove("p=a/a0.parquet", data_change=False),
        remove("p=a/a1.parquet", data_change=False),
        add("p=a/c.parquet", data_change=False),
    ])  # fmt: skip
    version = txn.commit(operation=Operation("OPTIMIZE"))
    assert commit_info(log, version)["isolationLevel"] == "SnapshotIsolation"
    ws = new_table(tmp_path / "ws", {"delta.isolationLevel": "WriteSerializable"})
    rewrite = OptimisticTransaction(ws)
    rewrite.stage(
        [remove("p=a/a0.parquet", data_change=False), add("p=a/c.parquet", data_change=False)]
    )
    v = rewrite.commit(operation=Operation("WRITE"))  # WRITE changes data: no downgrade
    assert commit_info(ws, v)["isolationLevel"] == "WriteSerializable"


@pytest.mark.rules("TXN.APPEND_ONLY", "TXN.SINGLE_METADATA", "TXN.DUPLICATE_ACTIONS")
def test_prepare_commit_rejections(tmp_path: Path) -> None:
    log = new_table(tmp_path, {"delta.appendOnly": "true"})
    with pytest.raises(errors.AppendOnlyViolationError):
        OptimisticTransaction(log).commit([remove("p=a/a0.parquet")])
    OptimisticTransaction(log).commit([remove("p=a/a0.parquet", data_change=False)])
    md = log.snapshot().metadata
    with pytest.raises(errors.MetadataChangedTwiceError):
        OptimisticTransaction(log).commit([md, md])
    with pytest.raises(errors.DuplicateActionsError):
        OptimisticTransaction(log).commit([add("p=a/d.parquet"), add("p=a/d.parquet")])
    old = OptimisticTransaction(log, profile=Profile.parse("4.2.0"))
    assert old.commit([add("p=a/d.parquet"), add("p=a/d.parquet")]) == 2


@pytest.mark.rules("TXN.SET_TRANSACTION_DEDUP", "TXN.EMPTY_COMMIT", "TXN.READ_APP_IDS")
def test_set_transactions_and_empty_commits(tmp_path: Path) -> None:
    log = new_table(tmp_path)
    with pytest.raises(errors.DuplicateSetTransactionError):
        OptimisticTransaction(log).commit([SetTransaction("app", 1), SetTransaction("app", 2)])
    v = OptimisticTransaction(log).commit([SetTransaction("app", 1), SetTransaction("app", 1)])
    assert sum(isinstance(a, SetTransaction) for a in log.read_commit(v)) == 1
    txn = OptimisticTransaction(log)
    assert txn.txn_version("app") == 1 and txn.txn_version("other") == -1
    assert OptimisticTransaction(log).commit_if_needed() is None
    assert log.latest_version() == v
    assert OptimisticTransaction(log, profile=Profile.parse("2.2.0")).commit_if_needed() == v + 1


@pytest.mark.rules("CONFLICT.APPEND_MATCH", "CONFLICT.APPEND_CANDIDATES", "CONFLICT.KINDS")
def test_append_into_a_read_partition_conflicts_with_hint_and_commit(tmp_path: Path) -> None:
    log = new_table(tmp_path)
    loser = updater(log, "a")
    disjoint = updater(log, "b")
    winner = OptimisticTransaction(log)
    winner.commit([add("p=a/new.parquet")], Operation("WRITE"))
    with pytest.raises(errors.ConcurrentAppendException) as raised:
        loser.commit(operation=Operation("UPDATE"))
    conflict = raised.value
    assert conflict.winning_version == 1 and conflict.partition_hint == "[p=a]"
    assert conflict.conflicting_commit is not None
    assert conflict.conflicting_commit["operation"] == "WRITE"
    assert conflict.error_class == "DELTA_CONCURRENT_APPEND" and conflict.sqlstate == "2D521"
    assert str(tmp_path) in str(conflict)
    assert disjoint.commit(operation=Operation("UPDATE")) == 2


@pytest.mark.rules(
    "CONFLICT.DELETE_READ", "CONFLICT.DELETE_DELETE", "CONFLICT.DELETE_READ_WHOLE_TABLE"
)
def test_deletes_against_reads_and_deletes(tmp_path: Path) -> None:
    log = new_table(tmp_path)
    compaction = OptimisticTransaction(log)
    compaction.filter_files([parse(["=", "p", "a"])])
    compaction.stage(
        [remove("p=a/a0.parquet", data_change=False), add("p=a/c.parquet", data_change=False)]
    )
    blind_delete = OptimisticTransaction(log)
    blind_delete.stage([remove("p=a/a0.parquet")])
    whole = OptimisticTransaction(log)
    whole.read_whole_table()
    whole.stage([add("p=b/w.parquet")])
    updater(log, "a").commit(operation=Operation("UPDATE"))
    with pytest.raises(errors.ConcurrentDeleteReadException):
        compaction.commit(operation=Operation("OPTIMIZE"))
    with pytest.raises(errors.ConcurrentDeleteDeleteException):
        blind_delete.commit(operation=Operation("DELETE"))
    with pytest.raises(errors.ConcurrentAppendException):  # append check comes first
        whole.commit(operation=Operation("WRITE"))


@pytest.mark.rules("CONFLICT.PROTOCOL", "CONFLICT.METADATA", "CONFLICT.APP_TXN")
def test_protocol_metadata_and_app_id_conflicts(tmp_path: Path) -> None:
    log = DeltaLog(str(tmp_path))
    first, second = OptimisticTransaction(log), OptimisticTransaction(log)
    metadata = Metadata("t", SCHEMA, ("p",))
    first.commit([metadata], Operation("CREATE TABLE"))
    with pytest.raises(errors.ProtocolChangedException):
        second.commit([metadata], Operation("CREATE TABLE"))
    writer = OptimisticTransaction(log)
    writer.stage([add("p=a/x.parquet")])
    writer.txn_version("stream")
    OptimisticTransaction(log).commit([SetTransaction("stream", 7)], Operation("STREAMING UPDATE"))
    with pytest.raises(errors.ConcurrentTransactionException):
        writer.commit()
    loser = OptimisticTransaction(log)
    loser.stage([add("p=a/y.parquet")])
    props = Metadata("t", SCHEMA, ("p",), {"delta.appendOnly": "true"})
    OptimisticTransaction(log).commit([props], Operation("SET TBLPROPERTIES"))
    with pytest.raises(errors.MetadataChangedException):
        loser.commit()


@pytest.mark.rules("RETRY.NEXT_VERSION", "TXN.COMMIT_INFO_FIXED", "CONFLICT.PER_WINNER")
def test_a_blind_append_retries_past_every_winner(tmp_path: Path) -> None:
    log = new_table(tmp_path)
    late = OptimisticTransaction(log)
    for i in range(3):
        OptimisticTransaction(log).commit([add(f"p=b/w{i}.parquet", "b")])
    assert late.commit([add("p=a/late.parquet")]) == 4
    assert commit_info(log, 4)["readVersion"] == 0


@pytest.mark.rules("RETRY.MAX_ATTEMPTS", "RETRY.NONE_V01")
def test_retry_limits(tmp_path: Path) -> None:
    log = new_table(tmp_path)
    bounded = OptimisticTransaction(log, profile=Profile.parse("4.4.0", max_commit_attempts=0))
    ancient = OptimisticTransaction(log, profile=Profile.parse("0.1.0"))
    OptimisticTransaction(log).commit([add("p=b/w.parquet", "b")])
    with pytest.raises(errors.MaxCommitRetriesExceededError) as raised:
        bounded.commit([add("p=a/x.parquet")])
    assert raised.value.version == 1
    with pytest.raises(errors.ConcurrentModificationException):
        ancient.commit([add("p=a/y.parquet")])
    assert log.latest_version() == 1


@pytest.mark.rules("CHECKPOINT.INTERVAL", "CHECKPOINT.COMMITTED_VERSION")
def test_a_checkpoint_follows_every_tenth_commit(tmp_path: Path) -> None:
    log = new_table(tmp_path, {"delta.checkpointInterval": "5"})
    for i in range(10):
        OptimisticTransaction(log).commit([add(f"p=a/n{i}.parquet")])
    names = sorted(p.name for p in (tmp_path / "_delta_log").glob("*.checkpoint*.parquet"))
    assert names == [f"{5:020d}.checkpoint.parquet", f"{10:020d}.checkpoint.parquet"]
    assert log.snapshot().checkpoint_version == 10
    assert len(log.snapshot().files) == 14


def _append_many(root: str, worker: int, count: int) -> list[int]:
    log = DeltaLog(root)
    versions = []
    for i in range(count):
        txn = OptimisticTransaction(log)
        versions.append(txn.commit([add(f"p=a/w{worker}-{i}.parquet")], Operation("WRITE")))
    return versions


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "RETRY.NEXT_VERSION")
def test_four_processes_append_a_hundred_commits(tmp_path: Path) -> None:
    new_table(tmp_path, files=0)
    context = multiprocessing.get_context("spawn")
    with context.Pool(4) as pool:
        results = pool.starmap(_append_many, [(str(tmp_path), w, 25) for w in range(4)])
    versions = sorted(v for per_worker in results for v in per_worker)
    assert versions == list(range(1, 101))
    log = DeltaLog(str(tmp_path))
    assert log.latest_version() == 100
    snapshot = log.snapshot()
    assert {f.path for f in snapshot.files.values()} == {
        f"p=a/w{w}-{i}.parquet" for w in range(4) for i in range(25)
    }
    for w, per_worker in enumerate(results):
        for i, v in enumerate(per_worker):
            assert any(isinstance(a, AddFile) and a.path == f"p=a/w{w}-{i}.parquet"
                       for a in log.read_commit(v))  # fmt: skip


def test_the_spark_path_honours_only_features_the_commit_path_keeps() -> None:
    from deltaspec.impl.table.features import SPARK_PATH_WRITER_FEATURES, WRITER_FEATURES

    assert SPARK_PATH_WRITER_FEATURES < WRITER_FEATURES


@pytest.mark.rules("TXN.WRITER_PROTOCOL")
def test_the_commit_path_keeps_every_feature_the_newest_release_writes() -> None:
    """A release that adds a writer feature fails this until the impl implements it (or the
    spec says the impl refuses it, and the model agrees)."""
    from deltaspec.impl.table.features import WRITER_FEATURES
    from deltaspec.releases_table import latest_release, writer_support

    assert writer_support(latest_release()).features <= WRITER_FEATURES


@pytest.mark.rules("TXN.WRITER_PROTOCOL")
def test_a_table_naming_a_commit_coordinator_is_not_written(tmp_path: Path) -> None:
    from deltaspec.impl.errors import UnsupportedWriterProtocolError

    txn = OptimisticTransaction(DeltaLog(str(tmp_path / "t")))
    properties = {"delta.coordinatedCommits.commitCoordinator-preview": "dynamodb"}
    with pytest.raises(UnsupportedWriterProtocolError) as refused:
        txn.commit(
            [
                Protocol(1, 7, writer_features=("coordinatedCommits-preview",)),
                Metadata("t", SCHEMA, ("p",), properties),
            ],
            Operation("CREATE TABLE"),
        )
    assert "dynamodb" in refused.value.message and refused.value.version == 0
    assert not (tmp_path / "t" / "_delta_log" / "00000000000000000000.json").exists()


@pytest.mark.rules("TXN.READ_VERSION_RETAINED")
def test_a_writer_whose_read_version_was_cleaned_up_writes_nothing(tmp_path: Path) -> None:
    """Commits 0 and 1 are gone behind checkpoint 2 (what log cleanup leaves): a writer that read
    version 0 is refused before its put-if-absent of version 1, which would succeed unseen; a
    writer that read version 2 commits 3."""
    from deltaspec.impl.checkpoint.policy import checkpoint_version

    log = DeltaLog(str(tmp_path))
    schema = '{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}'
    create = [Protocol(1, 2), Metadata("t", schema, (), {}), AddFile("a", {}, 1, 0, True)]
    OptimisticTransaction(log).commit(create, Operation("CREATE TABLE"))
    stale = OptimisticTransaction(log)
    for name in ("b", "c"):
        OptimisticTransaction(log).commit([AddFile(name, {}, 1, 0, True)])
    checkpoint_version(log, 2, now_ms=0)
    for version in (0, 1):
        (tmp_path / "_delta_log" / commit_name(version)).unlink()
    with pytest.raises(errors.VersionNotFoundError, match="no longer in the log") as refused:
        stale.commit([AddFile("d", {}, 1, 0, True)])
    assert refused.value.version == 1 and refused.value.file == commit_name(0)
    assert not (tmp_path / "_delta_log" / commit_name(1)).exists()
    fresh = OptimisticTransaction(DeltaLog(str(tmp_path)))
    assert fresh.commit([AddFile("e", {}, 1, 0, True)]) == 3


@pytest.mark.parametrize("staged", [False, True])
@pytest.mark.parametrize(
    ("before", "after", "checkpointed"), [("10", "2", True), ("2", "10", False)]
)
@pytest.mark.rules("CHECKPOINT.INTERVAL", "TXN.COMMITTED_IS_FINAL")
def test_the_commit_that_changes_the_interval_is_checkpointed_by_the_new_one(
    tmp_path: Path, staged: bool, before: str, after: str, checkpointed: bool
) -> None:
    """CHECKPOINT.INTERVAL reads the interval as of the commit: the metadata it commits, whether
    staged first or given to commit()."""
    log = new_table(tmp_path, {"delta.checkpointInterval": before}, files=1)
    for i in range(3):
        OptimisticTransaction(log).commit([add(f"p=a/n{i}.parquet")])
    changed = Metadata("t", SCHEMA, ("p",), {"delta.checkpointInterval": after})
    txn = OptimisticTransaction(log)
    if staged:
        txn.stage([changed])
    version = txn.commit([] if staged else [changed], Operation("SET TBLPROPERTIES"))
    assert version == 4
    checkpoint = tmp_path / "_delta_log" / "00000000000000000004.checkpoint.parquet"
    assert checkpoint.exists() is checkpointed
