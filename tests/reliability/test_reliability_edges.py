"""Issue 16's defect classes, one test per example, on real files and real processes.

1. data loss (VACUUM and an undecodable path, cleanup behind a torn checkpoint, the no-hard-link
   fallback killed mid-write, a NaN retention, post-commit work raising after the commit landed);
2. escapes (a symlinked ``_sidecars`` swept, deletion vectors opened outside the root);
3. hangs (a FIFO at ``_last_checkpoint`` or a commit name, a 20-digit stray version, a huge sparse
   ``_last_checkpoint``), each load in a spawned process under a timeout;
4. the write boundary (actions the reader refuses, protocols the writer does not implement,
   table properties);
5. typed errors (non-files at log names, lone surrogates, bad checkpoint rows);
6. one file spelled three ways, a reader racing checkpoint and cleanup.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import resource
import signal
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import append_rows, create_reliability_table, reliability_metadata, tree_state

from deltaspec.impl import errors
from deltaspec.impl.actions import (
    AddFile,
    CommitInfo,
    DeletionVector,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.impl.checkpoint.contents import checkpoint_table
from deltaspec.impl.checkpoint.policy import checkpoint_version
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.deletion_vectors import deleted_rows
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.retention.log_cleanup import cleanup_expired_logs, sweep_temp_files
from deltaspec.impl.retention.vacuum import vacuum
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

DAY = 24 * 60 * 60 * 1000
FAR = 4_000_000_000_000  # year 2096: every file is past every retention
WATCHDOG_S = 60


def _log_dir(root: Path) -> Path:
    return root / "_delta_log"


def _table(root: Path, **configuration: str) -> DeltaLog:
    log = create_reliability_table(root, **{"delta.checkpointInterval": "100", **configuration})
    for part in "abc":
        append_rows(log, part, [1, 2])
    return log


def _raw_commit(root: Path, version: int, *actions: dict[str, Any]) -> None:
    lines = [{"commitInfo": {"operation": "WRITE"}}, *actions]
    (_log_dir(root) / commit_name(version)).write_text("".join(json.dumps(x) + "\n" for x in lines))


def _add(path: str, size: int = 10, **extra: Any) -> dict[str, Any]:
    body = {"path": path, "partitionValues": {"p": "a"}, "size": size, "modificationTime": 1}
    return {"add": {**body, "dataChange": True, **extra}}


# --- 1. data loss --------------------------------------------------------------------------------


@pytest.mark.rules("PATH.DATA_FILE")
def test_vacuum_never_deletes_a_live_file_whose_path_does_not_decode(tmp_path: Path) -> None:
    root = tmp_path / "t"
    log = _table(root)
    live = root / "p=a" / "x%zz.parquet"
    live.write_bytes(b"rows someone still needs")
    os.utime(live, (1, 1))
    _raw_commit(root, 4, _add("p=a/x%zz.parquet"))
    with pytest.raises(errors.UnsafePathError) as refused:
        vacuum(log, retention_ms=0, enforce_retention=False, now_ms=FAR)
    assert (refused.value.version, refused.value.file) == (4, commit_name(4))
    assert live.read_bytes() == b"rows someone still needs"


def _torn_checkpoint(root: Path, version: int) -> Path:
    path = _log_dir(root) / f"{version:020d}.checkpoint.parquet"
    good = bytearray()
    sink = pa.BufferOutputStream()
    pq.write_table(checkpoint_table(DeltaLog(str(root)).snapshot(version), now_ms=0), sink)
    good += sink.getvalue().to_pybytes()
    path.write_bytes(bytes(good[: len(good) // 2]))  # a writer died half-way (non-atomic store)
    return path


@pytest.mark.rules("RETENTION.VERIFIED_CHECKPOINT", "RETENTION.LOG")
def test_recheckpointing_replaces_a_torn_checkpoint_before_anything_trusts_it(
    tmp_path: Path,
) -> None:
    """A torn checkpoint file (a writer died half-way on a store without atomic writes) is
    replaced atomically by the re-checkpointing writer's whole copy, read back, and only then
    named by _last_checkpoint; before, it was refused and stayed, and delta-rs (which does not
    fall back past an unreadable checkpoint) could no longer read the table."""
    root = tmp_path / "t"
    log = _table(root)
    torn_file = _torn_checkpoint(root, 3)
    torn_size = torn_file.stat().st_size
    result = checkpoint_version(log, 3, now_ms=FAR)
    assert result.files == ("00000000000000000003.checkpoint.parquet",)
    assert torn_file.stat().st_size > torn_size
    fresh = DeltaLog(str(root))
    assert fresh.read_last_checkpoint()["version"] == 3
    assert fresh.snapshot().checkpoint_version == 3 and fresh.snapshot().num_files == 3
    from deltalake import DeltaTable

    assert DeltaTable(str(root)).version() == 3
    with pytest.raises(ValueError, match=r"LOG\.PUT_IF_ABSENT"):  # never a commit
        fresh.store.write_overwrite(commit_name(3), b"{}")


@pytest.mark.rules("RETENTION.VERIFIED_CHECKPOINT")
def test_cleanup_passes_over_a_torn_checkpoint(tmp_path: Path) -> None:
    root = tmp_path / "t"
    log = _table(root)
    _torn_checkpoint(root, 3)
    metadata = log.snapshot().metadata
    assert cleanup_expired_logs(log, 3, FAR, metadata) == []
    assert cleanup_expired_logs(log.store, 3, FAR, metadata) == []
    assert DeltaLog(str(root)).snapshot().version == 3


def _write_without_hard_links(root: str, limit: int) -> None:
    """A writer on a file system without hard links, killed by the OS (SIGXFSZ) mid-write."""

    def no_links(source: Any, target: Any, **_: Any) -> None:
        raise OSError(1, "Operation not permitted")  # EPERM: link(2) on such file systems

    os.link = no_links  # type: ignore[assignment]
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; the OS kill is the point
    log = DeltaLog(root)
    OptimisticTransaction(log).commit([], Operation("WRITE"))  # the store learns: no links
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    txn = OptimisticTransaction(log)
    txn.commit([], Operation("WRITE", {"mode": "Append"}, user_metadata="x" * (4 * limit)))


@pytest.mark.rules("LOG.ATOMIC_VISIBILITY", "LOG.PUT_IF_ABSENT")
def test_a_writer_killed_mid_write_without_hard_links_leaves_no_torn_commit(
    tmp_path: Path,
) -> None:
    root = tmp_path / "t"
    _table(root)
    context = multiprocessing.get_context("spawn")
    writer = context.Process(target=_write_without_hard_links, args=(str(root), 16 * 1024))
    writer.start()
    writer.join(WATCHDOG_S)
    assert writer.exitcode == -signal.SIGXFSZ, "the writer was not killed mid-write"
    assert DeltaLog(str(root)).snapshot().version == 4  # no torn commit 5 blocks the readers
    assert append_rows(DeltaLog(str(root)), "a", [7])[0] == 5  # nor the writers


@pytest.mark.rules("LOG.ATOMIC_VISIBILITY")
def test_no_hard_links_publishes_by_rename_without_replacing(tmp_path: Path) -> None:
    store = LocalLogStore(tmp_path)
    real_link = os.link

    def no_links(source: Any, target: Any, **_: Any) -> None:
        raise OSError(1, "Operation not permitted")

    os.link = no_links  # type: ignore[assignment]
    try:
        store.write_new(commit_name(0), b"first\n")
        with pytest.raises(errors.VersionExistsError):
            store.write_new(commit_name(0), b"second\n")
    finally:
        os.link = real_link
    assert store.read(commit_name(0)) == b"first\n"
    assert [i.name for i in store.list_from("")] == [commit_name(0)]


@pytest.mark.rules("PATH.DATA_FILE")
@pytest.mark.parametrize("retention", [float("nan"), float("inf"), float("-inf"), True, "1"])
def test_vacuum_refuses_a_retention_that_is_not_a_finite_number(
    tmp_path: Path, retention: Any
) -> None:
    root = tmp_path / "t"
    log = _table(root)
    in_flight = root / "p=a" / "being-written.parquet"  # a writer's file, not committed yet
    in_flight.write_bytes(b"x")
    before = tree_state(root)
    with pytest.raises(errors.VacuumRetentionInvalidError):
        vacuum(log, retention_ms=retention, enforce_retention=False)
    assert tree_state(root) == before


@pytest.mark.rules("TXN.COMMITTED_IS_FINAL", "TXN.TABLE_PROPERTIES", "CHECKPOINT.INTERVAL")
def test_a_commit_in_the_log_is_never_reported_as_failed(tmp_path: Path) -> None:
    root = tmp_path / "t"
    _table(root)
    # another engine stored a value this writer cannot interpret
    stored = replace(reliability_metadata(**{"delta.checkpointInterval": "0"}))
    _raw_commit(root, 4, {"metaData": json.loads(_metadata_json(stored))})
    version, txn_id, _ = append_rows(DeltaLog(str(root)), "a", [9])
    assert version == 5
    assert _commit_info(root, 5).get("txnId") == txn_id


def _commit_info(root: Path, version: int) -> CommitInfo:
    return next(a for a in DeltaLog(str(root)).read_commit(version) if isinstance(a, CommitInfo))


def _metadata_json(metadata: Metadata) -> str:
    from deltaspec.impl.codec import encode_action

    return json.dumps(json.loads(encode_action(metadata))["metaData"])


@pytest.mark.rules("TXN.TABLE_PROPERTIES")
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("delta.checkpointInterval", "0"),
        ("delta.checkpointInterval", "-3"),
        ("delta.checkpointInterval", "ten"),
        ("delta.checkpointInterval", "1.5"),
        ("delta.logRetentionDuration", "interval 1 month"),
        ("delta.logRetentionDuration", "forever"),
        ("delta.deletedFileRetentionDuration", "interval -1 day"),
        ("delta.setTransactionRetentionDuration", "1 fortnight"),
        ("delta.appendOnly", "yes"),
        ("delta.enableExpiredLogCleanup", "1"),
        ("DELTA.APPENDONLY", "sure"),
    ],
)
def test_an_invalid_table_property_commits_nothing(tmp_path: Path, key: str, value: str) -> None:
    root = tmp_path / "t"
    log = _table(root)
    before = tree_state(root)
    txn = OptimisticTransaction(log)
    with pytest.raises(errors.InvalidTablePropertyError) as refused:
        txn.commit([reliability_metadata(**{key: value})], Operation("SET TBLPROPERTIES"))
    assert type(refused.value) is errors.InvalidTablePropertyError
    assert (refused.value.table, refused.value.version) == (str(root), 4)
    assert tree_state(root) == before


@pytest.mark.rules("TXN.TABLE_PROPERTIES", "ISOLATION.TABLE_DEFAULT")
def test_isolation_level_is_case_insensitive_and_an_unknown_one_commits_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "t"
    log = _table(root)
    before = tree_state(root)
    with pytest.raises(errors.InvalidIsolationLevelError) as refused:
        OptimisticTransaction(log).commit(
            [reliability_metadata(**{"delta.isolationLevel": "Snapshot"})],
            Operation("SET TBLPROPERTIES"),
        )
    assert refused.value.error_class == "DELTA_INVALID_ISOLATION_LEVEL"
    assert tree_state(root) == before
    OptimisticTransaction(log).commit(
        [reliability_metadata(**{"delta.isolationLevel": "writeserializable"})],
        Operation("SET TBLPROPERTIES"),
    )
    version, _, _ = append_rows(log, "a", [5])
    assert _commit_info(root, version).get("isolationLevel") == "WriteSerializable"


# --- 2. escapes ----------------------------------------------------------------------------------


@pytest.mark.rules("PATH.NO_SYMLINKS")
def test_temporary_file_sweep_never_follows_a_symlinked_sidecars_dir(tmp_path: Path) -> None:
    root, outside = tmp_path / "t", tmp_path / "outside"
    _table(root)
    outside.mkdir()
    victim = outside / ".precious.0123.tmp"
    victim.write_bytes(b"not the table's")
    os.utime(victim, (1, 1))
    (_log_dir(root) / "_sidecars").symlink_to(outside)
    sweep_temp_files(LocalLogStore(root), FAR)
    assert victim.read_bytes() == b"not the table's"


def _dv_file(directory: Path) -> tuple[str, str, int]:
    """A deletion-vector file named as storage type ``u`` names it, in ``directory``: its
    file name, its Z85 id and its size (the content never matters: it must not be opened)."""
    import uuid

    from deltaspec.impl.codec.z85 import _Z85

    ident = uuid.uuid4()
    name = f"deletion_vector_{ident}.bin"
    (directory / name).write_bytes(b"\x01" + b"\x00" * 64)
    digits = []
    for start in range(0, 16, 4):
        number = int.from_bytes(ident.bytes[start : start + 4], "big")
        group = []
        for _ in range(5):
            number, rest = divmod(number, 85)
            group.append(_Z85[rest])
        digits.extend(reversed(group))
    return name, "".join(digits), 64


@pytest.mark.rules("PATH.DATA_FILE")
@pytest.mark.parametrize("storage", ["u-relative-prefix", "p-absolute", "p-file-uri"])
def test_a_deletion_vector_outside_the_root_is_never_opened(tmp_path: Path, storage: str) -> None:
    root, outside = tmp_path / "t", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    name, ident, size = _dv_file(outside)
    location = {
        "u-relative-prefix": ("u", f"../outside/{ident}"),
        "p-absolute": ("p", str(outside / name)),
        "p-file-uri": ("p", f"file://{outside / name}"),
    }[storage]
    dv = DeletionVector(location[0], location[1], size, 1, offset=1)
    opened: list[str] = []

    def audit(event: str, args: tuple[Any, ...]) -> None:
        if event == "open" and isinstance(args[0], str):
            opened.append(args[0])

    sys.addaudithook(audit)
    with pytest.raises(errors.UnsafePathError):
        deleted_rows(root, dv)
    assert not [p for p in opened if p.startswith(str(outside))]
    # and a log holding it is refused at load, so no scan or VACUUM ever meets it
    log = _table(root)
    add = _add("p=a/x.parquet", deletionVector={
        "storageType": dv.storage_type, "pathOrInlineDv": dv.path_or_inline_dv,
        "offset": 1, "sizeInBytes": size, "cardinality": 1})  # fmt: skip
    _raw_commit(root, 4, add)
    with pytest.raises(errors.UnsafePathError):
        DeltaLog(str(root)).snapshot()
    del log


# --- 3. hangs: every load in a spawned process under a watchdog ----------------------------------


def _load_in_child(root: str, queue: Any) -> None:
    try:
        snapshot = DeltaLog(root).snapshot()
        queue.put(("ok", snapshot.version, None, None))
    except errors.DeltaError as error:
        queue.put((type(error).__name__, error.version, error.file, error.table))
    except BaseException as error:  # reported to the parent as a failure
        queue.put(("raw " + type(error).__name__, None, None, None))


def load_with_watchdog(root: Path) -> tuple[str, int | None, str | None, str | None]:
    """Load the latest snapshot in a spawned process; fail if it does not finish."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_load_in_child, args=(str(root), queue))
    child.start()
    child.join(WATCHDOG_S)
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail(f"loading {root} hung for {WATCHDOG_S} s")
    result: tuple[str, int | None, str | None, str | None] = queue.get(timeout=5)
    return result


@pytest.mark.rules("PATH.REGULAR_FILES", "CHECKPOINT.LAST_CHECKPOINT")
def test_a_fifo_at_last_checkpoint_does_not_hang_the_reader(tmp_path: Path) -> None:
    root = tmp_path / "t"
    _table(root)
    os.mkfifo(_log_dir(root) / "_last_checkpoint")
    assert load_with_watchdog(root)[:2] == ("ok", 3)


@pytest.mark.rules("PATH.REGULAR_FILES")
def test_a_fifo_at_a_commit_name_is_a_typed_error_not_a_hang(tmp_path: Path) -> None:
    root = tmp_path / "t"
    _table(root)
    os.mkfifo(_log_dir(root) / commit_name(4))
    assert load_with_watchdog(root) == ("NotRegularFileError", 4, commit_name(4), str(root))


@pytest.mark.rules("PATH.REGULAR_FILES", "LOG.CONTIGUITY")
def test_a_twenty_digit_stray_version_costs_one_comparison(tmp_path: Path) -> None:
    root = tmp_path / "t"
    _table(root)
    stray = "99999999999999999999.json"
    (_log_dir(root) / stray).write_bytes((_log_dir(root) / commit_name(3)).read_bytes())
    assert load_with_watchdog(root) == ("MissingVersionsError", 4, commit_name(4), str(root))


@pytest.mark.rules("PATH.REGULAR_FILES", "CHECKPOINT.LAST_CHECKPOINT")
def test_a_huge_sparse_last_checkpoint_is_not_read_whole(tmp_path: Path) -> None:
    root = tmp_path / "t"
    _table(root)
    with open(_log_dir(root) / "_last_checkpoint", "wb") as hint:
        hint.write(b'{"version":3,')
        hint.truncate(64 * 1024**3)  # 64 GiB, sparse
    assert load_with_watchdog(root)[:2] == ("ok", 3)


# --- 4. the write boundary -----------------------------------------------------------------------

_GOOD = AddFile("p=a/new.parquet", {"p": "a"}, 10, 1, True)
_KEPT = ("appendOnly", "invariants")  # what writer version 2 implies: no protocol downgrade


def _bad_adds() -> list[tuple[str, Any]]:
    return [
        ("path leaving the root", replace(_GOOD, path="../outside/x.parquet")),
        ("absolute path outside", replace(_GOOD, path="/etc/passwd")),
        ("path into _delta_log", replace(_GOOD, path="_delta_log/" + commit_name(0))),
        ("empty path", replace(_GOOD, path="")),
        ("undecodable path", replace(_GOOD, path="p=a/x%zz.parquet")),
        ("s3 URI", replace(_GOOD, path="s3://bucket/x.parquet")),
        ("negative size", replace(_GOOD, size=-1)),
        ("overflowing size", replace(_GOOD, size=2**64)),
        ("boolean size", replace(_GOOD, size=True)),
        ("null modificationTime", replace(_GOOD, modification_time=None)),
        ("overflowing modificationTime", replace(_GOOD, modification_time=2**63)),
        ("non-string partition value", replace(_GOOD, partition_values={"p": 1})),
        ("lone surrogate in the path", replace(_GOOD, path="p=a/\udc80.parquet")),
        ("DV outside the root", replace(_GOOD, deletion_vector=DeletionVector(
            "p", "/etc/passwd", 10, 1, offset=1))),
        ("remove leaving the root", RemoveFile("../../x.parquet", 1, True)),
        ("overflowing deletionTimestamp", RemoveFile("p=a/x.parquet", 2**64, True)),
        ("overflowing txn version", SetTransaction("app", 2**64, 1)),
        ("metaData without id", replace(reliability_metadata(), id=None)),
        ("unknown reader feature", Protocol(3, 7, ("fromTheFuture",), (*_KEPT, "fromTheFuture"))),
        ("reader version 4", Protocol(4, 7, (), _KEPT)),
        ("writer version 8", Protocol(1, 8, None, _KEPT)),
        ("unknown writer feature", Protocol(1, 7, None, (*_KEPT, "fromTheFuture"))),
        ("readerFeatures at reader version 2", Protocol(2, 2, ("columnMapping",), None)),
        ("writerFeatures at writer version 2", Protocol(1, 2, None, _KEPT)),
    ]  # fmt: skip


@pytest.mark.rules(
    "TXN.WRITE_BOUNDARY",
    "ACTION.ADD",
    "ACTION.PROTOCOL",
    "ACTION.METADATA",
    "ACTION.PROTOCOL_FEATURE_LISTS",
)
@pytest.mark.parametrize(("name", "action"), _bad_adds(), ids=[n for n, _ in _bad_adds()])
def test_the_writer_refuses_what_its_reader_refuses(tmp_path: Path, name: str, action: Any) -> None:
    root = tmp_path / "t"
    log = _table(root)
    before = tree_state(root)
    with pytest.raises(errors.CommitValidationError) as refused:
        OptimisticTransaction(log).commit([action], Operation("WRITE"))
    expected: tuple[type[errors.DeltaError], ...] = (
        errors.InvalidCommitActionError,
        errors.UnsupportedWriterProtocolError,
    )
    if getattr(action, "deletion_vector", None) is not None:
        # this table does not enable deletion vectors: DV.ADD_CHECKS refuses the add first
        expected = (*expected, errors.DeletionVectorsDisallowedError)
    assert isinstance(refused.value, expected), refused.value
    assert (refused.value.table, refused.value.version) == (str(root), 4)
    assert tree_state(root) == before, f"{name}: something was written"
    assert DeltaLog(str(root)).snapshot().version == 3


@pytest.mark.rules("TXN.WRITE_BOUNDARY", "ACTION.PROTOCOL")
@pytest.mark.parametrize(
    "protocol",
    [
        {"minReaderVersion": 1, "minWriterVersion": 8},
        {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["fromTheFuture"]},
        {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["catalogManaged"]},
    ],
)
def test_the_writer_refuses_tables_whose_protocol_it_does_not_implement(
    tmp_path: Path, protocol: dict[str, Any]
) -> None:
    root = tmp_path / "t"
    _table(root)
    _raw_commit(root, 4, {"protocol": protocol})
    before = tree_state(_log_dir(root))
    with pytest.raises(errors.UnsupportedWriterProtocolError):
        append_rows(DeltaLog(str(root)), "a", [1])
    assert tree_state(_log_dir(root)) == before
    assert DeltaLog(str(root)).snapshot().version == 4


# --- 5. typed errors -----------------------------------------------------------------------------


@pytest.mark.rules("PATH.REGULAR_FILES")
def test_a_directory_at_a_commit_name_is_a_typed_error_not_a_silent_gap(tmp_path: Path) -> None:
    root = tmp_path / "t"
    _table(root)
    (_log_dir(root) / commit_name(4)).mkdir()
    _raw_commit(root, 5, _add("p=a/y.parquet"))
    with pytest.raises(errors.NotRegularFileError) as refused:
        DeltaLog(str(root)).snapshot()
    assert (refused.value.version, refused.value.file) == (4, commit_name(4))


def _checkpoint_with(root: Path, edit: Callable[[list[dict[str, Any]]], None]) -> None:
    log = DeltaLog(str(root))
    rows = checkpoint_table(log.snapshot(3), now_ms=0).to_pylist()
    edit(rows)
    schema = checkpoint_table(log.snapshot(3), now_ms=0).schema
    pq.write_table(
        pa.Table.from_pylist(rows, schema=schema),
        _log_dir(root) / "00000000000000000003.checkpoint.parquet",
    )
    for version in range(3):
        (_log_dir(root) / commit_name(version)).unlink()


def _duplicate_add(rows: list[dict[str, Any]]) -> None:
    rows.append(next(r for r in rows if r["add"] is not None))


def _null_path(rows: list[dict[str, Any]]) -> None:
    next(r for r in rows if r["add"] is not None)["add"]["path"] = None


def _two_protocols(rows: list[dict[str, Any]]) -> None:
    rows.append(next(r for r in rows if r["protocol"] is not None))


def _null_reader_version(rows: list[dict[str, Any]]) -> None:
    next(r for r in rows if r["protocol"] is not None)["protocol"]["minReaderVersion"] = None


@pytest.mark.rules("CHECKPOINT.CONTENTS", "CHECKPOINT.READ")
@pytest.mark.parametrize(
    "edit", [_duplicate_add, _null_path, _two_protocols, _null_reader_version],
    ids=["live file twice", "add without path", "two protocol rows", "null minReaderVersion"],
)  # fmt: skip
def test_null_or_duplicate_checkpoint_rows_are_a_typed_error(
    tmp_path: Path, edit: Callable[[list[dict[str, Any]]], None]
) -> None:
    root = tmp_path / "t"
    _table(root)
    _checkpoint_with(root, edit)
    with pytest.raises(errors.CorruptLogError) as corrupt:
        DeltaLog(str(root)).snapshot()
    assert corrupt.value.table == str(root)
    assert corrupt.value.version == 3
    assert corrupt.value.file == "00000000000000000003.checkpoint.parquet"


# --- 6. smaller ones -----------------------------------------------------------------------------


@pytest.mark.rules("SNAPSHOT.CANONICAL_PATH", "SNAPSHOT.FILE_KEY")
def test_one_file_spelled_three_relative_ways_is_one_live_file(tmp_path: Path) -> None:
    root = tmp_path / "t"
    _table(root)
    for version, spelling in enumerate(["p=a/x.parquet", "./p=a/x.parquet", "p=a//x.parquet"], 4):
        _raw_commit(root, version, _add(spelling))
    snapshot = DeltaLog(str(root)).snapshot()
    assert snapshot.num_files == 4
    assert ("p=a/x.parquet", None) in snapshot.files
    _raw_commit(root, 7, {"remove": {"path": "p=a/./x.parquet", "deletionTimestamp": 1}})
    assert ("p=a/x.parquet", None) not in DeltaLog(str(root)).snapshot().files
    write_checkpoint(DeltaLog(str(root)), DeltaLog(str(root)).snapshot(6), now_ms=0)
    assert DeltaLog(str(root)).snapshot(6).num_files == 4


class _CleanupRacesTheReader(LocalLogStore):
    """The reader's store: the first time it reads commit 1, another writer checkpoints the
    table and cleans the log up, as a concurrent process would between listing and reading."""

    raced = False

    def read(self, name: str) -> bytes:
        if name == commit_name(1) and not self.raced:
            type(self).raced = True
            other = DeltaLog(self.table_path)
            checkpoint_version(other, other.latest_version(), now_ms=FAR)
        return super().read(name)


@pytest.mark.rules("SNAPSHOT.RELIST", "RETENTION.LOG")
def test_a_reader_racing_checkpoint_and_cleanup_lists_again(tmp_path: Path) -> None:
    root = tmp_path / "t"
    _table(root)
    assert not (_log_dir(root) / "_last_checkpoint").exists()
    reader = DeltaLog(str(root), store=_CleanupRacesTheReader(root))
    snapshot = reader.snapshot()
    assert _CleanupRacesTheReader.raced
    assert not (_log_dir(root) / commit_name(1)).exists()  # cleanup really ran under it
    assert (snapshot.version, snapshot.num_files, snapshot.checkpoint_version) == (3, 3, 3)


@pytest.mark.rules("TXN.TABLE_PROPERTIES", "ISOLATION.TABLE_DEFAULT")
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("delta.isolationLevel", "serializable"),
        ("delta.isolationLevel", "WRITESERIALIZABLE"),
        ("delta.isolationLevel", "Snapshot"),
        ("delta.isolationLevel", ""),
        ("delta.checkpointInterval", "3"),
        ("delta.checkpointInterval", "0"),
        ("delta.checkpointInterval", "x"),
        ("delta.logRetentionDuration", "interval 2 days"),
        ("delta.logRetentionDuration", "forever"),
        ("delta.appendOnly", "TRUE"),
        ("delta.appendOnly", "yes"),
        ("delta.enableExpiredLogCleanup", "false"),
        ("delta.enableExpiredLogCleanup", "0"),
        ("delta.somethingElse", "anything"),
    ],
)
def test_model_and_impl_refuse_the_same_property_values(key: str, value: str) -> None:
    from deltaspec.impl.table import properties
    from deltaspec.model import actions as model_actions
    from deltaspec.model.properties import invalid_property

    model_metadata = model_actions.Metadata("t", "{}", configuration=((key, value),))
    try:
        properties.validate({key: value})
        impl_kind = None
    except errors.InvalidTablePropertyError as refused:
        impl_kind = refused.kind
    model_kind = invalid_property(model_metadata)
    assert impl_kind == (None if model_kind is None else model_kind.value)


@pytest.mark.rules("SNAPSHOT.CANONICAL_PATH")
@pytest.mark.parametrize(
    "spelling",
    ["p=a/x.parquet", "./p=a/x.parquet", "p=a//x.parquet", "p=a/./x.parquet", "./p=a/./x.parquet",
     "p=a/x%20y.parquet", "/t/p=a/x.parquet", "file:/t/p=a/x.parquet", "file:///t/x.parquet"],
)  # fmt: skip
def test_model_and_impl_canonicalise_paths_alike(spelling: str) -> None:
    from deltaspec.impl.table.paths import canonical_path as impl_canonical
    from deltaspec.model.snapshot import canonical_path as model_canonical

    assert impl_canonical(spelling) == model_canonical(spelling)
    relative = not spelling.startswith(("/", "file:"))
    assert impl_canonical(spelling) == ("p=a/x%20y.parquet" if "%20" in spelling else (
        "p=a/x.parquet" if relative else spelling))  # fmt: skip


@pytest.mark.spark
@pytest.mark.rules("SNAPSHOT.CANONICAL_PATH", "SNAPSHOT.FILE_KEY")
def test_delta_spark_keys_spellings_of_one_file_as_the_spec_says(
    spark: Any, tmp_path: Path
) -> None:
    """The live engine: relative spellings are one file, absolute spellings further ones."""
    from pyspark.sql import DataFrame

    root = tmp_path / "t"
    (root / "d").mkdir(parents=True)
    _log_dir(root).mkdir()
    pq.write_table(pa.table({"id": pa.array([1], pa.int64())}), root / "d" / "x.parquet")
    size = (root / "d" / "x.parquet").stat().st_size
    schema = (
        '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}'
    )
    metadata = {"id": "canon", "format": {"provider": "parquet", "options": {}},
                "schemaString": schema, "partitionColumns": [], "configuration": {}}  # fmt: skip
    _raw_commit(root, 0, {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
                {"metaData": metadata})  # fmt: skip
    spellings = ["d/x.parquet", "./d/x.parquet", "d//x.parquet", "d/./x.parquet",
                 f"{root}/d/x.parquet", f"file:{root}/d/x.parquet"]  # fmt: skip
    for version, spelling in enumerate(spellings, 1):
        body = {"path": spelling, "partitionValues": {}, "size": size, "modificationTime": 1}
        _raw_commit(root, version, {"add": {**body, "dataChange": True}})
    jvm = spark._jvm
    # delta-spark's default 50 state partitions: whether it merges /t/d/x.parquet with
    # file:/t/d/x.parquet depends on this setting (with 2 it merged them; spec/snapshot.md)
    previous = spark.conf.get("spark.databricks.delta.snapshotPartitions", None)
    spark.conf.set("spark.databricks.delta.snapshotPartitions", "50")
    engine = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, str(root))
    found = {}
    try:
        for version in range(1, len(spellings) + 1):
            state = engine.getSnapshotAt(version, jvm.scala.Option.empty(),
                                         jvm.scala.Option.empty(), False)  # fmt: skip
            files = DataFrame(state.allFiles().toDF(), spark).collect()
            found[version] = sorted(r[0] for r in files)
    finally:  # the worker's session serves later tests
        if previous is None:
            spark.conf.unset("spark.databricks.delta.snapshotPartitions")
        else:
            spark.conf.set("spark.databricks.delta.snapshotPartitions", previous)
    for version in range(1, len(spellings) + 1):
        theirs = found[version]
        ours = sorted(path for path, _ in DeltaLog(str(root)).snapshot(version).files)
        # relative spellings: one file, the same on both
        assert [p for p in ours if not p.startswith(("/", "file:"))] == [
            p for p in theirs if not p.startswith("file:")
        ], (version, ours, theirs)
        # absolute spellings: ours keeps each as written; delta-spark keeps them apart or merges
        # /t/d/x.parquet with file:/t/d/x.parquet, as the paths hash into its 50 state
        # partitions (spec/snapshot.md: no engine is asked to match that), never more files
        absolute = [s for s in spellings[:version] if s.startswith(("/", "file:"))]
        assert [p for p in ours if p.startswith(("/", "file:"))] == sorted(absolute)
        theirs_absolute = [p for p in theirs if p.startswith("file:")]
        assert min(1, len(absolute)) <= len(theirs_absolute) <= len(absolute), (version, theirs)
