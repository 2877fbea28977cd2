"""Multi-process stress: 8 OS processes on one table, killed at random with SIGKILL.

Each worker loops over blind appends, deletes, compactions and checkpoints
(tests/support/__init__.py ``run_operation``) and records every commit it is told about in its own
side file, after the commit returned. The parent SIGKILLs a random worker every fraction of a second
and starts a replacement. At the end: the log checks pass, the committed history passes the
isolation checker, every acknowledged commit is in the log at its version, no transaction committed
twice, delta-rs agrees, and a new writer commits the next version.

``DELTASPEC_STRESS_SECONDS`` sets the duration (default 6 s); ``DELTASPEC_STRESS_RESULTS=PATH``
writes the figures as JSON (benchmarks/results/reliability_stress.json comes from a long run).
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import random
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from support import (
    append_rows,
    create_reliability_table,
    deltalake_view,
    log_problems,
    run_operation,
    txn_ids_in_log,
)

from deltaspec.conformance.isolation.checker import check
from deltaspec.conformance.tools.inspect import history_from_log
from deltaspec.impl import errors
from deltaspec.impl.snapshot.delta_log import DeltaLog

pytest.importorskip("deltalake")

WORKERS = 8
SECONDS = float(os.environ.get("DELTASPEC_STRESS_SECONDS", "6"))
SETUP_COMMITS = 7  # the parent's: create the table, six appends
KINDS = ["append"] * 4 + ["delete"] * 2 + ["compact"] * 2 + ["checkpoint"]


def worker(root: str, acks: str, deadline: Any, seed: int) -> None:  # pragma: no cover
    """Work until ``deadline`` (a shared double: 0 until the parent starts the clock)."""
    logging.disable(logging.CRITICAL)  # failed post-commit checkpoints are logged, not raised
    rng = random.Random(seed)
    log = DeltaLog(root)
    Path(acks + ".ready").touch()
    with open(acks, "a", encoding="utf-8") as side:

        def record(**fields: object) -> None:
            side.write(json.dumps(fields) + "\n")
            side.flush()

        while not deadline.value or time.time() < deadline.value:
            kind = rng.choice(KINDS)
            try:
                txn, version = run_operation(log, kind, rng)
            except errors.DeltaConcurrentModificationException as conflict:
                record(kind="conflict", error=type(conflict).__name__)
                continue
            if txn is not None:
                record(kind=kind, version=version, txn=txn.txn_id)
            elif version is not None:
                record(kind="checkpoint", version=version)


def run_stress(root: Path, acks_dir: Path, seconds: float, seed: int) -> dict[str, object]:
    log = create_reliability_table(root, **{"delta.checkpointInterval": "5"})
    for part in "abcabc":  # SETUP_COMMITS
        append_rows(log, part, [0])
    acks_dir.mkdir()
    context = multiprocessing.get_context("spawn")
    rng = random.Random(seed)
    shared_deadline = context.Value("d", 0.0)
    spawned = 0

    def spawn() -> tuple[Any, Path]:
        nonlocal spawned
        spawned += 1
        acks = acks_dir / f"{spawned}.jsonl"
        args = (str(root), str(acks), shared_deadline, seed + spawned)
        process = context.Process(target=worker, args=args)
        process.start()
        return process, Path(f"{acks}.ready")

    workers = [spawn() for _ in range(WORKERS)]
    # the clock starts once every worker runs (starting 8 interpreters can take seconds)
    limit = time.time() + 120
    while not all(ready.exists() for _, ready in workers) and time.time() < limit:
        time.sleep(0.05)
    started = time.time()
    deadline = started + seconds
    shared_deadline.value = deadline
    kills = 0
    while time.time() < deadline - 0.5:
        time.sleep(rng.uniform(0.2, 0.6))
        index = rng.randrange(WORKERS)
        victim, ready = workers[index]
        if ready.exists() and victim.is_alive():  # kill workers that are working, not starting
            os.kill(victim.pid, signal.SIGKILL)
            victim.join(10)
            kills += 1
            if time.time() < deadline - 1:
                workers[index] = spawn()
    for process, _ in workers:
        process.join(60)
    elapsed = time.time() - started
    records = [
        json.loads(line)
        for path in sorted(acks_dir.iterdir())
        for line in path.read_text().splitlines()
        if line.endswith("}")  # a line cut by SIGKILL is not an acknowledgement
    ]
    return {"records": records, "kills": kills, "spawned": spawned, "seconds": elapsed}


@pytest.mark.slow  # 14 s of eight processes: the quick tier keeps the crash-point kills
@pytest.mark.rules(
    "LOG.PUT_IF_ABSENT", "LOG.CONTIGUITY", "LOG.ATOMIC_VISIBILITY", "CHECKPOINT.READ",
    "RETRY.NEXT_VERSION", "ISOLATION.LEVELS",
)  # fmt: skip
def test_eight_processes_with_random_sigkills_lose_nothing(tmp_path: Path) -> None:
    root = tmp_path / "t"
    result = run_stress(root, tmp_path / "acks", SECONDS, seed=8)
    records = result["records"]
    assert isinstance(records, list)
    acknowledged = [r for r in records if "txn" in r]
    in_log = txn_ids_in_log(root)
    assert all(len(v) == 1 for v in in_log.values()), "a transaction committed twice"
    for record in acknowledged:
        assert in_log.get(record["txn"]) == [record["version"]], record
    assert log_problems(root) == []
    assert check(history_from_log(str(root))) == ()
    snapshot = DeltaLog(str(root)).snapshot()
    assert deltalake_view(root) == (snapshot.version, sorted(p for p, _ in snapshot.files))
    version, _, _ = append_rows(DeltaLog(str(root)), "a", [1])
    assert version == snapshot.version + 1
    assert int(str(result["kills"])) >= 3 and len(acknowledged) >= 20

    figures = {
        "command": "DELTASPEC_STRESS_SECONDS=120 DELTASPEC_STRESS_RESULTS=PATH "
        ".venv/bin/python -m pytest tests/reliability/test_reliability_stress.py",
        "processes": WORKERS,
        "seconds": round(float(str(result["seconds"])), 1),
        "processes_started": result["spawned"],
        "sigkills": result["kills"],
        "commits_in_log": snapshot.version,
        "acknowledged_commits": len(acknowledged),
        "acknowledged_by_kind": {
            kind: sum(1 for r in acknowledged if r["kind"] == kind)
            for kind in ("append", "delete", "compact")
        },
        "checkpoints_acknowledged": sum(1 for r in records if r["kind"] == "checkpoint"),
        "conflicts": sum(1 for r in records if r["kind"] == "conflict"),
        # commits that landed in the log but whose worker was killed before recording them
        "unacknowledged_commits": len(in_log) - len(acknowledged) - SETUP_COMMITS,
        "lost": 0,
        "isolation_anomalies": 0,
    }
    out = os.environ.get("DELTASPEC_STRESS_RESULTS")
    if out:
        Path(out).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
