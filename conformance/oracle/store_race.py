"""LOG.PUT_IF_ABSENT between OS processes on an object store: ``writers`` processes (``spawn``)
write the same commit name at once, round after round, each through its own store client, as
separate drivers do. A round is *lost* when a writer was told its commit was written but the
stored commit is another's: the commit a caller believes in is gone (the single-driver hazard).

The conditional store must lose nothing; the store without conditional writes
(``single_writer=True``, check-then-write) shows the loss on the same server.
"""

from __future__ import annotations

import json
import multiprocessing
import queue
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...impl.errors import VersionExistsError
from ...impl.log.names import commit_name
from ...impl.log.object_store import ObjectLogStore

__all__ = ["RaceCount", "race_processes"]

ROUND_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class RaceCount:
    """What one multi-process race gave: rounds run, rounds with more than one writer told it
    won, and rounds whose stored commit is not the one every winner was told it wrote."""

    rounds: int
    writers: int
    many_winners: int
    lost: int

    def line(self, what: str) -> str:
        return (
            f"{what}: {self.rounds} rounds x {self.writers} processes, "
            f"{self.many_winners} with several winners, {self.lost} lost commits"
        )


def _payload(writer: int, version: int) -> bytes:
    info = {"commitInfo": {"writer": writer, "round": version, "pad": "x" * 1024}}
    return json.dumps(info).encode() + b"\n"


def _writer(
    writer: int,
    table_url: str,
    options: Mapping[str, str],
    conditional: bool,
    rounds: int,
    barrier: Any,
    results: Any,
) -> None:
    store = ObjectLogStore(
        table_url, options, conditional_writes=conditional, single_writer=not conditional
    )
    won: list[int] = []
    for version in range(rounds):
        barrier.wait(ROUND_TIMEOUT_SECONDS)
        try:
            store.write_new(commit_name(version), _payload(writer, version))
            won.append(version)
        except (VersionExistsError, OSError):
            pass  # lost, or an unknown outcome (an OSError): never told it won
    results.put((writer, won))


def _collect(results: Any, processes: list[Any], seconds: float) -> dict[int, list[int]]:
    """Each writer's wins, as they report them; a writer that dies first (or a race past
    ``seconds``) is a RuntimeError, never a wait for a result that cannot come."""
    deadline = time.monotonic() + seconds
    won_by: dict[int, list[int]] = {}
    while len(won_by) < len(processes):
        try:
            writer, won = results.get(timeout=1.0)
            won_by[writer] = won
        except queue.Empty:
            dead = [p.exitcode for p in processes if p.exitcode not in (None, 0)]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(f"a racing writer failed (exit codes {dead})") from None
    return won_by


def race_processes(
    table_url: str,
    options: Mapping[str, str],
    *,
    rounds: int = 20,
    writers: int = 4,
    conditional_writes: bool = True,
) -> RaceCount:
    """Race ``writers`` processes over ``rounds`` commit names of the table at ``table_url``."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(writers)
    results = context.Queue()
    processes = [
        context.Process(
            target=_writer,
            args=(w, table_url, dict(options), conditional_writes, rounds, barrier, results),
            daemon=True,
        )
        for w in range(writers)
    ]
    for process in processes:
        process.start()
    try:
        won_by = _collect(results, processes, ROUND_TIMEOUT_SECONDS * rounds)
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
    store = ObjectLogStore(table_url, options, conditional_writes=True)
    many = lost = 0
    for version in range(rounds):
        winners = [w for w, won in won_by.items() if version in won]
        stored = store.read(commit_name(version))
        many += len(winners) > 1
        lost += any(stored != _payload(w, version) for w in winners)
    return RaceCount(rounds, writers, many, lost)
