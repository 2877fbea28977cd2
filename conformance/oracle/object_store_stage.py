"""The ``store`` stage of ``deltaspec check``: the impl's log on an object store, on the defaults.

The other stages keep the log on local files (``--store`` moves the race, services and machine
stages to a server, at several minutes). This one always runs, cheaply, on a server it starts on
loopback (moto's S3, or the ``--store`` server when one is given):

- put-if-absent under a thread race and under racing OS processes (LOG.PUT_IF_ABSENT): never two
  winners, and the stored commit is the winner's;
- what the store lists is what the server holds (LOG.LISTING, PATH.TABLE_LOCATION): two tables
  nested under one prefix each keep every key below their own root, and every listed name, size
  and modification time is the server's own listing of that key;
- table services with the log there (services.py, a few of its tables).

Where no server can start here (the ``servers`` extra missing), the stage is skipped, named.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from ...impl import AddFile, DeltaLog, Metadata, Operation, OptimisticTransaction, Protocol
from ...impl import write_checkpoint as checkpoint
from ...impl.log.names import LOG_DIR
from ..servers.serving import ObjectStoreServer
from .machine import race_put_if_absent
from .services import run_services
from .stage_result import StageResult, StageSkipped
from .store_race import race_processes

THREAD_RACES = 40
PROCESS_RACES = 4
SERVICE_TABLES = 3
COMMITS = 4
_SCHEMA = '{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}'


class StoreMismatch(AssertionError):
    """The store and the server disagree on what the table holds."""


def run_object_store(server: ObjectStoreServer | None, kind: str = "s3") -> StageResult:
    """The stage on ``server``, or on a ``kind`` server started (and stopped) here."""
    with _server(server, kind) as running:
        return _on(running)


@contextmanager
def _server(server: ObjectStoreServer | None, kind: str) -> Iterator[ObjectStoreServer]:
    if server is not None:
        yield server
        return
    try:
        from ..servers.serving import serving  # lazy: the servers extra is optional

        context = serving(kind)
        running = context.__enter__()
    except (ImportError, OSError, RuntimeError) as why:
        raise StageSkipped(f"no {kind} server starts here: {why}") from None
    try:
        yield running
    finally:
        context.__exit__(None, None, None)


def _on(server: ObjectStoreServer) -> StageResult:
    won = race_put_if_absent(server.log_store, rounds=THREAD_RACES)
    processes = race_processes(server.table_url("race"), server.options, rounds=PROCESS_RACES)
    try:
        listed = check_keys(server)
    except StoreMismatch as mismatch:
        return StageResult(False, f"{server.kind}: {mismatch}", {"mismatch": str(mismatch)})
    services = run_services(SERVICE_TABLES, server=server)
    passed = (
        won == THREAD_RACES
        and processes.many_winners == 0
        and processes.lost == 0
        and services.passed
    )
    summary = (
        f"{server.kind} server at {server.options.get('endpoint', '?')}: {won}/{THREAD_RACES} "
        f"thread races had one winner; {processes.line('processes')}; {listed} keys as the "
        f"server lists them; services: {services.summary}"
    )
    report = {
        "server": server.kind,
        "threads": won,
        "processes": vars(processes),
        "keys": listed,
        "services": services.report,
    }
    return StageResult(passed, summary, report)


def check_keys(server: ObjectStoreServer) -> int:
    """Two tables under one prefix (``lake-<id>/a``, ``lake-<id>/b``), each given commits and a
    checkpoint through the impl: each table's keys are below its own root, and its store lists
    exactly the server's keys of its log, with their sizes and modification times. Returns the
    number of keys compared; raises StoreMismatch."""
    lake = f"lake-{uuid.uuid4().hex[:12]}"
    roots = [f"{lake}/a", f"{lake}/b"]
    logs = [DeltaLog(f"{server.base_url}/{root}", storage_options=server.options) for root in roots]
    for number, log in enumerate(logs):
        _fill(log, commits=COMMITS + number)
    compared = 0
    everything = server.list_raw(f"{lake}/")
    for root, log in zip(roots, logs, strict=True):
        head = f"{root}/{LOG_DIR}/"
        held = {o.key[len(head) :]: o for o in everything if o.key.startswith(head)}
        listed = {info.name: info for info in log.store.list_from("")}
        if set(held) != set(listed):
            raise StoreMismatch(
                f"{log.store.table_path}: the store lists {sorted(set(listed) - set(held))} "
                f"that the server does not hold under {head}, and misses "
                f"{sorted(set(held) - set(listed))}"
            )
        for name, info in listed.items():
            stored = held[name]
            if (info.size, info.modification_time) != (stored.size, stored.modification_time):
                raise StoreMismatch(
                    f"{log.store.table_path}, {name}: the store lists size {info.size} and "
                    f"modification time {info.modification_time}, the server "
                    f"{stored.size} and {stored.modification_time}"
                )
        compared += len(listed)
    stray = [o.key for o in everything if not any(o.key.startswith(f"{r}/") for r in roots)]
    if stray:
        raise StoreMismatch(f"keys written outside both tables' roots: {stray}")
    expected = [COMMITS - 1 + n for n in range(len(logs))]
    versions = [log.snapshot().version for log in logs]
    if versions != expected:
        raise StoreMismatch(f"the tables' versions are {versions}, not {expected}")
    return compared


def _fill(log: DeltaLog, commits: int) -> None:
    create = OptimisticTransaction(log)
    create.stage([Protocol(1, 2), Metadata("t", _SCHEMA)])
    create.commit(operation=Operation("CREATE TABLE", {}))
    for version in range(1, commits):
        txn = OptimisticTransaction(log)
        txn.stage([AddFile(f"part-{version}.parquet", {}, 10 * version, 1, True)])
        txn.commit(operation=Operation("WRITE", {"mode": "Append"}))
        if version == commits // 2:
            checkpoint(log, log.snapshot(), now_ms=int(time.time() * 1000))
