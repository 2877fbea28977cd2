"""Transactions of a scenario vector from separate driver processes on a real object store,
their commits racing: how ``deltaspec explore --no-put-if-absent --on s3|azure`` replays the
lost write it found, and what the race stage of ``deltaspec check --store`` runs.

The explorer's broken store (``--no-put-if-absent``) overwrites an existing version and reports
success. On an object store that is what two drivers meet when each checks for the next commit
and then writes it: delta-spark's ``S3SingleDriverLogStore``, or our
:class:`~deltaspec.impl.log.object_store.ObjectLogStore` with ``single_writer=True``, whose lock
orders the check and the write inside one process only. :func:`replay` runs the violation's
vector on a server started on loopback with **one spawn process per writer** (a driver, with its
own store client and its own lock), through the impl's whole commit loop:

- the vector's ``begin`` steps run in order, each in its writer's driver;
- each run of consecutive ``commit`` steps of different writers is released together at a
  barrier: the model's interleaving of their attempts (the second write landing while the
  first's check-then-write is open) as separate drivers meet it.

A round is **lost** when a writer was told it committed version ``v`` but version ``v`` holds
another commit (its ``commitInfo.txnId`` is not the writer's). Each round uses a fresh table;
the store that checks, then writes, and the conditional store (create-only PUT) each run the
same rounds. The conditional store must lose nothing (LOG.PUT_IF_ABSENT).
"""

from __future__ import annotations

import logging
import multiprocessing
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...impl.actions import CommitInfo
from ...impl.log.object_store import ObjectLogStore
from ...impl.snapshot.delta_log import DeltaLog
from ..engines.impl.adapter import ObjectStoreImplAdapter
from ..harness.adapter import Json
from ..harness.outcomes import outcome_json
from ..harness.scenarios import Begin, Commit, Scenario, parse_scenario
from ..servers.serving import ObjectStoreServer

__all__ = ["STORES", "StoreReplay", "replay"]

STORES = {"single-writer": False, "conditional": True}
"""The stores a violation is replayed with: name -> whether it writes with a create-only PUT."""

STEP_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class StoreReplay:
    """What one store did over the rounds: how many lost a commit, and the first loss."""

    store: str
    rounds: int
    lost: int
    first_loss: str | None = None

    def line(self) -> str:
        what = (
            "the store that checks, then writes"
            if self.store == "single-writer"
            else ("the conditional store (create-only PUT)")
        )
        found = f": {self.first_loss}" if self.first_loss else ""
        return f"{what}: {self.lost} of {self.rounds} rounds lost a commit{found}"


def _groups(scenario: Scenario) -> Iterator[tuple[str, tuple[str, ...]]]:
    """The steps as ("begin", (writer,)) and ("commit", writers that race)."""
    pending: list[str] = []
    for step in scenario.steps:
        if isinstance(step, Commit) and step.commit not in pending:
            pending.append(step.commit)
            continue
        if pending:
            yield "commit", tuple(pending)
            pending = []
        if isinstance(step, Commit):
            pending.append(step.commit)
        elif isinstance(step, Begin):
            yield "begin", (step.begin,)
        else:
            raise ValueError(f"{scenario.id}: only begin and commit steps replay on a server")
    if pending:
        yield "commit", tuple(pending)


def _driver(
    writer: str,
    vector: str,
    options: Mapping[str, str],
    conditional: bool,
    barriers: Mapping[int, Any],
    commands: Any,
) -> None:
    """One writer's driver: a process of its own, serving its orchestrator's commands. Its
    impl's warnings (a checksum that cannot be written beside a lost commit) stay quiet: the
    orchestrator reports what was lost."""
    logging.disable(logging.WARNING)
    scenario = parse_scenario(vector, "replay")
    spec = scenario.writers[writer]
    adapter: ObjectStoreImplAdapter | None = None
    with tempfile.TemporaryDirectory(prefix="deltaspec-driver-") as scratch:
        while (command := commands.recv()) is not None:
            kind, argument, now = command
            if kind == "table":
                store = ObjectLogStore(
                    argument, options, conditional_writes=conditional, single_writer=not conditional
                )
                adapter = ObjectStoreImplAdapter(Path(scratch) / argument.rsplit("/", 1)[-1], store)
                commands.send(None)
            elif kind == "begin":
                assert adapter is not None
                failed = adapter.begin(writer, spec.spec, None, now)
                if failed is None:
                    for read in spec.reads:
                        adapter.read(writer, read)
                    adapter.stage(writer, spec.actions, now)
                commands.send(None if failed is None else outcome_json(failed))
            else:
                assert adapter is not None
                txn_id = adapter.txns[writer][0].txn_id
                barriers[argument].wait(STEP_TIMEOUT_SECONDS)
                commands.send((outcome_json(adapter.commit(writer, now)), txn_id))


def _ask(pipe: Any, command: tuple[Any, ...]) -> Any:
    pipe.send(command)
    if not pipe.poll(STEP_TIMEOUT_SECONDS):
        raise RuntimeError(f"a driver did not answer {command[0]!r} in {STEP_TIMEOUT_SECONDS} s")
    return pipe.recv()


def _lost(
    server: ObjectStoreServer,
    table_url: str,
    told: Mapping[str, Json],
    txn_ids: Mapping[str, str],
) -> str | None:
    """The first writer told it committed a version that holds another commit, described."""
    log = DeltaLog(table_url, storage_options=server.options)
    for writer, outcome in sorted(told.items()):
        version = outcome.get("committed")
        if not isinstance(version, int):
            continue
        infos = [a for a in log.read_commit(version) if isinstance(a, CommitInfo)]
        stored = infos[0].fields.get("txnId") if infos else None
        if stored != txn_ids[writer]:
            holder = next((w for w, t in txn_ids.items() if t == stored), "another writer")
            return f"{writer} was told it committed version {version}, but it holds {holder}'s"
    return None


def _rounds(
    server: ObjectStoreServer, scenario: Scenario, vector: str, store: str, rounds: int
) -> StoreReplay:
    context = multiprocessing.get_context("spawn")
    writers = sorted(scenario.writers)
    barriers = {size: context.Barrier(size) for size in range(1, len(writers) + 1)}
    pipes: dict[str, Any] = {}
    drivers = []
    for writer in writers:
        ours, theirs = context.Pipe()
        pipes[writer] = ours
        args = (writer, vector, server.options, STORES[store], barriers, theirs)
        drivers.append(context.Process(target=_driver, args=args, daemon=True))
    for driver in drivers:
        driver.start()
    lost, first = 0, None
    try:
        for _ in range(rounds):
            table_url = server.table_url("explore-replay")
            with tempfile.TemporaryDirectory(prefix="deltaspec-replay-") as scratch:
                creator = ObjectLogStore(table_url, server.options)
                ObjectStoreImplAdapter(Path(scratch), creator).create(scenario.setup)
            for pipe in pipes.values():
                _ask(pipe, ("table", table_url, 0))
            found = _lost(server, table_url, *_play(scenario, pipes))
            lost += found is not None
            first = first or found
    finally:
        for pipe in pipes.values():
            pipe.send(None)
        for driver in drivers:
            driver.join(timeout=10)
            if driver.is_alive():
                driver.kill()
    return StoreReplay(store, rounds, lost, first)


def _play(scenario: Scenario, pipes: Mapping[str, Any]) -> tuple[dict[str, Json], dict[str, str]]:
    """The vector's steps, each in its writer's driver: begins in order, commit runs racing.
    What each writer was told, and the ``txnId`` of each commit it tried."""
    told: dict[str, Json] = {}
    txn_ids: dict[str, str] = {}
    now = 0
    for kind, writers in _groups(scenario):
        now += 1
        if kind == "begin":
            failed = _ask(pipes[writers[0]], ("begin", None, now))
            if failed is not None:
                told[writers[0]] = failed
            continue
        for writer in writers:
            pipes[writer].send(("commit", len(writers), now))
        for writer in writers:
            if not pipes[writer].poll(STEP_TIMEOUT_SECONDS):
                raise RuntimeError(f"driver {writer} did not finish its commit")
            told[writer], txn_ids[writer] = pipes[writer].recv()
    return told, txn_ids


def replay(
    server: ObjectStoreServer, vector: str, rounds: int, stores: Sequence[str] = tuple(STORES)
) -> list[StoreReplay]:
    """The vector (JSON text) replayed ``rounds`` times with each of ``stores``."""
    scenario = parse_scenario(vector, "replay")
    list(_groups(scenario))  # refuse a vector with other steps before starting any process
    return [_rounds(server, scenario, vector, store, rounds) for store in stores]
