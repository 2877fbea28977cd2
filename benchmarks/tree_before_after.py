"""Commit latency and snapshot load of two checkouts of deltaspec, side by side (issue 31: a
restructuring must not make either slower).

Each checkout runs this file with its own interpreter (the venv whose editable install points at
it); the two alternate, A B then B A, so neither always runs first, and every pair gives one
ratio after / before (below 1: the newer tree is faster). One run of a side, in a fresh process:
100 blind-append commits of one ``add`` on a long-lived ``DeltaLog`` (durable=False, checkpoint
every 10 commits, as benchmark case 3), then 20 cold loads of the resulting table
(``DeltaLog(path).snapshot()`` and its live files); then 100 commits on a table with in-commit
timestamps (each attempt stamps its commitInfo), and 20 commits each retried past 5 winners
that landed after its read (resolve, second attempt). Both sides build the same tables with the
same names and sizes; only the import paths differ between the trees (``deltaspec.impl.snapshot``
became a package), and the script finds either.

    .venv/bin/python -m benchmarks.tree_before_after --before /work/main/.venv/bin/python \\
        --after .venv/bin/python --pairs 7

Wall-clock ratios of a few milliseconds spread widely from process to process on a shared machine
(0.6–1.7 per pair), so the run also counts, once per side, the Python function calls the same
work makes under cProfile (``calls``): a count that barely moves between runs (two runs of one
tree differed by 220 calls in 1.18 M, 0.02%, whatever the load) and that grows when a change
makes the commit or the load do more.
"""

from __future__ import annotations

import argparse
import importlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

COMMITS = 100
LOADS = 20
METRICS = ("commit_s", "load_s", "ict_commit_s", "retry_commit_s")


def _find(name: str, modules: tuple[str, ...]) -> Any:
    """``name`` from the first of ``modules`` this checkout has."""
    for module in modules:
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):
            continue
    raise ImportError(f"no {name} in this checkout")


SCHEMA = '{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}'
WINNERS = 5
"""Commits that land between a transaction's read and its commit in the retried-commit case."""


def measure_here() -> dict[str, float]:
    """One side's run in this process: seconds per commit and per cold load (medians), and per
    commit on a table with in-commit timestamps and per commit retried past WINNERS winners."""
    from deltaspec.impl.actions import AddFile, Metadata, Protocol
    from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

    delta_log = _find("DeltaLog", ("deltaspec.impl.snapshot.delta_log", "deltaspec.impl.snapshot"))
    store = _find("LocalLogStore", ("deltaspec.impl.log.local_store", "deltaspec.impl.log.store"))

    def create(root: str, protocol: Protocol, configuration: dict[str, str]) -> Any:
        log = delta_log(root, store(root, durable=False))
        metadata = Metadata(id="bench", schema_string=SCHEMA, configuration=configuration)
        OptimisticTransaction(log).commit([protocol, metadata], Operation("CREATE TABLE"))
        return log

    def add(name: str, size: int) -> AddFile:
        return AddFile(f"{name}.parquet", {}, size, 0, True)

    def timed_commits(log: Any, prefix: str) -> list[float]:
        seconds = []
        for i in range(COMMITS):
            started = time.perf_counter()
            OptimisticTransaction(log).commit([add(f"{prefix}-{i:05d}", 100 + i)], Operation())
            seconds.append(time.perf_counter() - started)
        return seconds

    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="deltaspec-tree-bench-") as root:
        log = create(root, Protocol(1, 2), {"delta.checkpointInterval": "10"})
        figures["commit_s"] = statistics.median(timed_commits(log, "part"))
        loads = []
        for _ in range(LOADS):
            started = time.perf_counter()
            snapshot = delta_log(root, store(root, durable=False)).snapshot()
            assert len(snapshot.files) == COMMITS
            loads.append(time.perf_counter() - started)
        figures["load_s"] = statistics.median(loads)
    with tempfile.TemporaryDirectory(prefix="deltaspec-tree-bench-ict-") as root:
        ict = Protocol(1, 7, None, ("inCommitTimestamp",))
        log = create(root, ict, {"delta.enableInCommitTimestamps": "true"})
        figures["ict_commit_s"] = statistics.median(timed_commits(log, "ict"))
    with tempfile.TemporaryDirectory(prefix="deltaspec-tree-bench-retry-") as root:
        log = create(root, Protocol(1, 2), {"delta.checkpointInterval": "1000"})
        retried = []
        for i in range(COMMITS // WINNERS):
            late = OptimisticTransaction(log)
            for w in range(WINNERS):
                OptimisticTransaction(log).commit([add(f"w-{i}-{w}", 10)], Operation())
            started = time.perf_counter()
            late.commit([add(f"late-{i}", 10)], Operation())
            retried.append(time.perf_counter() - started)
        figures["retry_commit_s"] = statistics.median(retried)
    return figures


def count_calls_here() -> int:
    """The Python function calls one run of :func:`measure_here` makes (after a first run has
    imported everything), under cProfile."""
    import cProfile
    import pstats

    measure_here()
    profile = cProfile.Profile()
    profile.runcall(measure_here)
    return int(pstats.Stats(profile).total_calls)  # type: ignore[attr-defined]


def run_side(python: str, *flags: str) -> dict[str, float]:
    command = [python, __file__, "--here", *flags]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--here", action="store_true", help="measure this process's checkout")
    parser.add_argument("--calls", action="store_true", help="with --here: count calls instead")
    parser.add_argument("--before", help="the older checkout's python")
    parser.add_argument("--after", help="the newer checkout's python")
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    if args.here:
        print(json.dumps({"calls": count_calls_here()} if args.calls else measure_here()))
        return 0
    ratios: dict[str, list[float]] = {m: [] for m in METRICS}
    sides: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
    pythons = [("before", args.before), ("after", args.after)]
    for pair in range(args.pairs):
        got = dict(
            (name, run_side(python)) for name, python in pythons[:: 1 if pair % 2 == 0 else -1]
        )
        for metric in ratios:
            ratios[metric].append(got["after"][metric] / got["before"][metric])
            for name in sides:
                sides[name].setdefault(metric, []).append(got[name][metric])
    summary = {
        metric: {
            "ratio_median": statistics.median(values),
            "ratio_min": min(values),
            "ratio_max": max(values),
            "before_median_s": statistics.median(sides["before"][metric]),
            "after_median_s": statistics.median(sides["after"][metric]),
        }
        for metric, values in ratios.items()
    }
    calls = {name: run_side(python, "--calls")["calls"] for name, python in pythons}
    summary["calls"] = {**calls, "ratio": calls["after"] / calls["before"]}
    summary["command"] = " ".join(["python -m benchmarks.tree_before_after", *argv])  # type: ignore[assignment]
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
