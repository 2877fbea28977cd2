"""Isolation checker throughput: commits per second of ``check`` on a generated history.

    .venv/bin/python -m benchmarks.isolation_checker [--commits N] [--repeats R] [--out PATH]

The history is a table with 10 partitions (10 seed files each) and N commits of about ten
file actions each, every commit reading a snapshot up to 3 versions old:
- 40% blind appends: 10 new files spread over 1-3 random partitions (WriteSerializable or
  Serializable);
- 45% rewrites: read one partition (predicate and 8 files), remove 5 of them, add 5;
- 15% compactions (SnapshotIsolation, dataChange=false): read and remove up to 10 files of
  one partition, add one.
Read versions are chosen so that the history keeps every promise (a Serializable rewrite
sees every earlier commit in its partition; a WriteSerializable one may miss blind appends),
so ``check`` finds nothing and the time is the dependency graph plus the cycle searches.
Reports the median of R runs (and min–max) as commits/s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import time
from pathlib import Path

from deltaspec.conformance.isolation.checker import (
    CommitRecord,
    FileWrite,
    History,
    Level,
    check,
    dependency_graph,
)

PARTITIONS = 10
MAX_LAG = 3


def _writes(paths: list[tuple[str, int]], data_change: bool = True) -> dict[str, FileWrite]:
    return {path: FileWrite({"p": str(part)}, data_change) for path, part in paths}


def generate(commits: int, seed: int = 7) -> History:
    """A correct history of ``commits`` commits after the seed commit v0."""
    rng = random.Random(seed)
    live: dict[int, list[str]] = {
        p: [f"p={p}/seed-{i}.parquet" for i in range(10)] for p in range(PARTITIONS)
    }
    seed_files = [(path, p) for p, paths in live.items() for path in paths]
    records = [CommitRecord(0, -1, Level.SERIALIZABLE, True, adds=_writes(seed_files))]
    touched = dict.fromkeys(range(PARTITIONS), 0)  # last commit with any file action there
    rewritten = dict.fromkeys(range(PARTITIONS), 0)  # last non-blind commit there
    for v in range(1, commits + 1):
        lag_floor = max(0, v - 1 - rng.randrange(MAX_LAG + 1))
        kind = rng.random()
        if kind < 0.40:
            targets = rng.sample(range(PARTITIONS), k=rng.randint(1, 3))
            parts = [rng.choice(targets) for _ in range(10)]
            appended = [(f"p={p}/a{v}-{i}.parquet", p) for i, p in enumerate(parts)]
            level = rng.choice([Level.WRITE_SERIALIZABLE, Level.SERIALIZABLE])
            records.append(CommitRecord(v, lag_floor, level, True, adds=_writes(appended)))
            for path, p in appended:
                live[p].append(path)
                touched[p] = v
            continue
        p = rng.randrange(PARTITIONS)
        compaction = kind >= 0.85
        if compaction:
            level = Level.SNAPSHOT_ISOLATION
        else:
            level = rng.choice([Level.WRITE_SERIALIZABLE, Level.SERIALIZABLE])
        must_see = rewritten[p] if level is Level.WRITE_SERIALIZABLE else touched[p]
        read_version = max(lag_floor, must_see)
        # a WriteSerializable rewrite may miss blind appends: it reads only files it saw
        visible = [f for f in live[p] if _added_at(f) <= read_version]
        read = rng.sample(visible, k=min(len(visible), 10 if compaction else 8))
        victims = read if compaction else read[:5]
        if compaction:
            adds = _writes([(f"p={p}/c{v}.parquet", p)], data_change=False)
        else:
            adds = _writes([(f"p={p}/r{v}-{i}.parquet", p) for i in range(5)])
        records.append(
            CommitRecord(
                v, read_version, level, False,
                read_predicates=(["=", "p", p],), read_files=frozenset(read),
                adds=adds, removes=_writes([(f, p) for f in victims], not compaction),
                operation="OPTIMIZE" if compaction else "UPDATE",
            )
        )  # fmt: skip
        live[p] = [f for f in live[p] if f not in victims] + list(adds)
        touched[p] = rewritten[p] = v
    return History({"p": "integer"}, tuple(records))


def _added_at(path: str) -> int:
    """The version encoded in a generated file name (``seed-`` files: 0)."""
    name = path.split("/")[1]
    if name.startswith("seed-"):
        return 0
    return int(name[1:].split("-")[0].split(".")[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/isolation_checker.json")
    )
    args = parser.parse_args()
    history = generate(args.commits)
    graph = dependency_graph(history)
    anomalies = check(history)
    rates, graph_rates = [], []
    for _ in range(args.repeats):
        start = time.perf_counter()
        dependency_graph(history)
        graph_rates.append(len(history.commits) / (time.perf_counter() - start))
        start = time.perf_counter()
        check(history)
        rates.append(len(history.commits) / (time.perf_counter() - start))
    actions = sum(len(c.adds) + len(c.removes) for c in history.commits)
    results = {
        "commits": len(history.commits),
        "file_actions": actions,
        "edges": graph.number_of_edges(),
        "anomalies": len(anomalies),
        "check_commits_per_s_median": round(statistics.median(rates)),
        "check_min": round(min(rates)),
        "check_max": round(max(rates)),
        "check_seconds_median": round(len(history.commits) / statistics.median(rates), 3),
        "graph_commits_per_s_median": round(statistics.median(graph_rates)),
        "graph_seconds_median": round(len(history.commits) / statistics.median(graph_rates), 3),
    }
    report = {
        "benchmark": "isolation_checker",
        "command": "python -m benchmarks.isolation_checker"
        f" --commits {args.commits} --repeats {args.repeats}",
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "results": results,
    }
    print(json.dumps(report, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
