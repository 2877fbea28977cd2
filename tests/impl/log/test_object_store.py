"""The log store on object stores, against real servers on loopback: an S3-compatible server
(moto's server mode) and Azurite, each a separate OS process started for this module.

The LogStore contract (LOG.PUT_IF_ABSENT, LOG.ATOMIC_VISIBILITY, LOG.LISTING) under thread and
process races, typed errors and bounded waits, transactions from several processes losing no
commit, and delta-rs reading our table and we reading its, version by version.
"""

from __future__ import annotations

import json
import multiprocessing
import socket
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from deltaspec.conformance.oracle.machine import race_put_if_absent
from deltaspec.conformance.oracle.store_race import race_processes
from deltaspec.conformance.servers.serving import ObjectStoreServer, serving
from deltaspec.impl.actions import AddFile, Metadata, Protocol
from deltaspec.impl.errors import (
    LogAccessError,
    LogFileTooLargeError,
    StorageOutcomeUnknownError,
    UnsafePathError,
    UnsupportedLogStoreError,
    VersionExistsError,
)
from deltaspec.impl.log.object_store import ObjectLogStore
from deltaspec.impl.log.store import LAST_CHECKPOINT_MAX_BYTES
from deltaspec.impl.retention.vacuum import vacuum
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.table.paths import resolve_data_path
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

SCHEMA = json.dumps(
    {"type": "struct", "fields": [{"name": "id", "type": "long", "nullable": True, "metadata": {}}]}
)
C0 = "00000000000000000000.json"


@pytest.fixture(scope="module", params=["s3", "azure"])
def server(request: pytest.FixtureRequest) -> Iterator[ObjectStoreServer]:
    with serving(request.param) as running:
        yield running


def _create(log: DeltaLog, **configuration: str) -> None:
    txn = OptimisticTransaction(log)
    txn.stage([Protocol(1, 2), Metadata("t", SCHEMA, configuration=configuration)])
    txn.commit(operation=Operation("CREATE TABLE", {}))


def _append(log: DeltaLog, name: str) -> int:
    txn = OptimisticTransaction(log)
    txn.stage([AddFile(name, {}, 1, 1, True)])
    return txn.commit(operation=Operation("WRITE", {"mode": "Append"}))


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "LOG.ATOMIC_VISIBILITY")
def test_put_if_absent_under_a_thread_race(server: ObjectStoreServer) -> None:
    assert race_put_if_absent(server.log_store, rounds=40) == 40


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_processes_lose_no_commit_with_conditional_writes(server: ObjectStoreServer) -> None:
    count = race_processes(server.table_url("race"), server.options, rounds=10)
    assert (count.many_winners, count.lost) == (0, 0)


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_the_single_writer_store_loses_commits_between_processes(
    server: ObjectStoreServer,
) -> None:
    """What it is refused for, shown on the real server: check-then-write from several
    processes lets more than one writer believe it created the same commit."""
    count = race_processes(
        server.table_url("unsafe"), server.options, rounds=10, conditional_writes=False
    )
    assert count.lost > 0 and count.many_winners > 0


def test_a_store_without_conditional_writes_is_refused(server: ObjectStoreServer) -> None:
    with pytest.raises(UnsupportedLogStoreError, match="single_writer=True"):
        ObjectLogStore(server.table_url(), server.options, conditional_writes=False)


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "LOG.LISTING")
def test_the_store_contract(server: ObjectStoreServer) -> None:
    url = server.table_url("contract")
    store = ObjectLogStore(url, server.options)
    assert store.list_from() == []  # no table yet: an empty listing
    store.write_new(C0, b'{"a":1}\n')
    with pytest.raises(VersionExistsError) as lost:
        store.write_new(C0, b'{"b":1}\n')
    assert (lost.value.table, lost.value.version, lost.value.file) == (url, 0, C0)
    assert store.read(C0) == b'{"a":1}\n'  # never overwritten
    for name in ("00000000000000000002.json", "00000000000000000001.json", "_sidecars/s.parquet"):
        store.write_new(name, b"x")
    store.write_overwrite("_last_checkpoint", b"{}")
    listed = [info.name for info in store.list_from()]
    assert listed == [
        C0,
        "00000000000000000001.json",
        "00000000000000000002.json",
        "_last_checkpoint",
    ]
    assert [i.name for i in store.list_from("00000000000000000001.json")] == listed[1:]
    assert [i.name for i in store.list_dir("_sidecars")] == ["_sidecars/s.parquet"]
    with pytest.raises(ValueError, match="may be overwritten"):
        store.write_overwrite(C0, b"y")
    with pytest.raises(ValueError):
        store.write_new("../outside.json", b"x")
    store.delete("00000000000000000002.json")
    store.delete("00000000000000000009.json")  # a missing file is no error
    assert not store.exists("00000000000000000002.json")
    with pytest.raises(FileNotFoundError):
        store.read("00000000000000000009.json")
    store.write_overwrite("_last_checkpoint", b" " * (LAST_CHECKPOINT_MAX_BYTES + 1))
    with pytest.raises(LogFileTooLargeError):
        store.read("_last_checkpoint")


def test_nothing_is_written_outside_the_table(server: ObjectStoreServer) -> None:
    """A table's writes stay under its root: a sibling table sharing the prefix sees none."""
    url = server.table_url("root")
    ObjectLogStore(url, server.options).write_new(C0, b"x")
    assert ObjectLogStore(url + "-sibling", server.options).list_from() == []
    assert ObjectLogStore(url + "/nested", server.options).list_from() == []


@pytest.mark.rules("PATH.DATA_FILE")
def test_data_paths_of_a_table_on_an_object_store() -> None:
    root = "s3://bucket/tables/t"
    assert resolve_data_path(root, "s3://bucket/tables/t/p=1/x.parquet") == "p=1/x.parquet"
    assert resolve_data_path(root, "s3a://bucket/tables/t/x.parquet") == "x.parquet"
    assert resolve_data_path(root, "p=1/x.parquet") == "p=1/x.parquet"
    for outside in (
        "s3://other/tables/t/x.parquet",
        "s3://bucket/tables/t-other/x.parquet",
        "az://bucket/tables/t/x.parquet",
        "/tables/t/x.parquet",
        "file:///tables/t/x.parquet",
    ):
        with pytest.raises(ValueError):
            resolve_data_path(root, outside)


@pytest.mark.rules("PATH.DATA_FILE")
def test_an_add_in_another_bucket_is_refused(server: ObjectStoreServer) -> None:
    url = server.table_url("bucket")
    log = DeltaLog(url, storage_options=server.options)
    _create(log)
    foreign = {"add": {"path": "s3://elsewhere/x.parquet", "partitionValues": {}, "size": 1,
                       "modificationTime": 1, "dataChange": True}}  # fmt: skip
    log.store.write_new("00000000000000000001.json", json.dumps(foreign).encode() + b"\n")
    with pytest.raises(UnsafePathError):
        DeltaLog(url, storage_options=server.options).snapshot()


def _silent_server() -> tuple[socket.socket, int]:
    """A TCP server that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:
                return

    threading.Thread(target=accept, daemon=True).start()
    return listener, int(listener.getsockname()[1])


def test_a_silent_server_is_an_error_not_a_hang() -> None:
    """A write with no answer is an unknown outcome (an OSError the commit loop reads back
    after), a read is LogAccessError naming the file; both within the time limit."""
    listener, port = _silent_server()
    options = {"endpoint": f"http://127.0.0.1:{port}", "region": "us-east-1",
               "access_key_id": "k", "secret_access_key": "s", "allow_http": "true"}  # fmt: skip
    store = ObjectLogStore("s3://b/t", options, request_timeout=timedelta(seconds=2))
    try:
        started = time.monotonic()
        with pytest.raises(StorageOutcomeUnknownError) as unknown:
            store.write_new(C0, b"x")
        assert isinstance(unknown.value, OSError) and unknown.value.file == C0
        with pytest.raises(LogAccessError) as failed:
            store.read(C0)
        assert failed.value.table == "s3://b/t"
        assert time.monotonic() - started < 30
    finally:
        listener.close()


def _appender(url: str, options: dict[str, str], writer: int, count: int) -> None:
    log = DeltaLog(url, storage_options=options)
    for i in range(count):
        _append(log, f"w{writer}-{i}.parquet")


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "RETRY.NEXT_VERSION")
def test_transactions_from_processes_lose_no_commit(server: ObjectStoreServer) -> None:
    """Three processes append at once through the full commit loop: every append is in the
    log exactly once, at contiguous versions."""
    url = server.table_url("appends")
    _create(DeltaLog(url, storage_options=server.options), **{"delta.checkpointInterval": "4"})
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_appender, args=(url, server.options, w, 5)) for w in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=300)
        assert worker.exitcode == 0
    snapshot = DeltaLog(url, storage_options=server.options).snapshot()
    assert snapshot.version == 15
    assert sorted(path for path, _ in snapshot.files) == sorted(
        f"w{w}-{i}.parquet" for w in range(3) for i in range(5)
    )
    assert DeltaLog(url, storage_options=server.options).snapshot(version=4).version == 4


def _deltars_options(server: ObjectStoreServer) -> dict[str, Any]:
    """delta-rs's names for the same server (its S3 store has conditional put by default)."""
    if server.kind == "s3":
        return {"AWS_ENDPOINT_URL": server.options["endpoint"], "AWS_REGION": "us-east-1",
                "AWS_ACCESS_KEY_ID": server.options["access_key_id"],
                "AWS_SECRET_ACCESS_KEY": server.options["secret_access_key"],
                "AWS_ALLOW_HTTP": "true", "conditional_put": "etag"}  # fmt: skip
    return {"azure_storage_account_name": server.options["account_name"],
            "azure_storage_account_key": server.options["account_key"],
            "azure_storage_endpoint": server.options["endpoint"],
            "allow_http": "true"}  # fmt: skip


def _deltars_files(table: Any) -> list[str]:
    return sorted(uri.rsplit("/", 1)[-1] for uri in table.file_uris())


def test_delta_rs_reads_our_table_at_every_version(server: ObjectStoreServer) -> None:
    deltalake = pytest.importorskip("deltalake")
    url = server.table_url("ours")
    log = DeltaLog(url, storage_options=server.options)
    _create(log, **{"delta.checkpointInterval": "2"})
    for i in range(4):
        _append(log, f"part-{i}.parquet")
    for version in range(5):
        theirs = deltalake.DeltaTable(
            url, version=version, storage_options=_deltars_options(server)
        )
        assert theirs.version() == version
        assert _deltars_files(theirs) == [f"part-{i}.parquet" for i in range(version)]


def test_we_read_delta_rs_table_at_every_version(server: ObjectStoreServer) -> None:
    deltalake = pytest.importorskip("deltalake")
    import pyarrow as pa

    url = server.table_url("theirs")
    options = _deltars_options(server)
    for i in range(3):
        deltalake.write_deltalake(
            url, pa.table({"id": [i]}), mode="append", storage_options=options
        )
    for version in range(3):
        ours = DeltaLog(url, storage_options=server.options).snapshot(version=version)
        theirs = deltalake.DeltaTable(url, version=version, storage_options=options)
        assert sorted(p.rsplit("/", 1)[-1] for p, _ in ours.files) == _deltars_files(theirs)


def _put_object(server: ObjectStoreServer, url: str, data: bytes = b"x") -> None:
    """An object at ``url`` on the server, written around any table's log store."""
    import obstore

    config = {k: v for k, v in server.options.items() if k != "allow_http"}
    bucket = obstore.store.from_url(
        server.base_url, config=config, client_options={"allow_http": True}
    )
    obstore.put(bucket, url[len(server.base_url) + 1 :], data)


@pytest.mark.rules("RETENTION.TOMBSTONES")
def test_vacuum_through_the_store_deletes_what_delta_rs_would(server: ObjectStoreServer) -> None:
    """A table delta-rs wrote (two appends, then an overwrite), with a stray object of no
    version, hidden objects and a neighbouring table whose name extends this one's: our VACUUM
    through the store picks the files delta-rs's full VACUUM picks (but one, below), deletes
    exactly those, and the table still reads."""
    deltalake = pytest.importorskip("deltalake")
    import pyarrow as pa

    url = server.table_url("vacuum")
    options = _deltars_options(server)
    for i, mode in enumerate(["append", "append", "overwrite"]):
        deltalake.write_deltalake(url, pa.table({"id": [i]}), mode=mode, storage_options=options)
    for extra in ["stray.parquet", "_hidden/kept.parquet", ".kept", "p=1/_kept"]:
        _put_object(server, f"{url}/{extra}")
    _put_object(server, f"{url}-next/part.parquet")  # another table: never listed as this one's
    log = DeltaLog(url, storage_options=server.options)
    now = int(time.time() * 1000) + 2000  # every object above is older than the cutoff
    planned = vacuum(log, retention_ms=0, enforce_retention=False, dry_run=True, now_ms=now)
    theirs = deltalake.DeltaTable(url, storage_options=options).vacuum(
        retention_hours=0, enforce_retention_duration=False, dry_run=True, full=True
    )
    # delta-rs 1.6.6 also deletes p=1/_kept: it treats a name as hidden at the top level only.
    # delta-spark's VACUUM tests every file and directory name (isHiddenDirectory), as we do.
    assert sorted(p.split(url + "/")[-1] for p in theirs) == sorted([*planned.deleted, "p=1/_kept"])
    assert "stray.parquet" in planned.deleted and len(planned.deleted) == 3
    store = ObjectLogStore(url, server.options)
    before = {info.name for info in store.list_table_files()}
    done = vacuum(log, retention_ms=0, enforce_retention=False, now_ms=now)
    assert done.deleted == planned.deleted
    assert {info.name for info in store.list_table_files()} == before - set(done.deleted)
    assert ObjectLogStore(f"{url}-next", server.options).list_table_files()[0].name == (
        "part.parquet"
    )
    read = deltalake.DeltaTable(url, storage_options=options).to_pyarrow_table()
    assert read.column("id").to_pylist() == [2]
