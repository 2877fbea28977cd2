"""Model throughput: commits per second for small transactions on the pure model.

    .venv/bin/python -m benchmarks.model_throughput [--commits N] [--repeats R] [--out PATH]

Three workloads, each a fresh log with a partitioned table (10 partitions):
- ``blind_appends``: one writer at a time, begin + one add + commit;
- ``rewrites``: begin, filter one partition, remove one file and add one (read-then-write);
- ``contended``: 4 writers begin on the same snapshot, each rewrites its own partition, then
  they commit in turn, so writer k checks k-1 winning commits.
Reports the median of R runs (and min–max) as commits/s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from deltaspec.model import machine as m
from deltaspec.model import transaction as t
from deltaspec.model.actions import AddFile, Metadata, Protocol, RemoveFile, pairs
from deltaspec.model.log import Log
from deltaspec.model.outcomes import Committed
from deltaspec.model.predicates import Compare, Literal

PARTITIONS = 10
SCHEMA = (
    '{"type":"struct","fields":[{"name":"p","type":"integer","nullable":true,"metadata":{}},'
    '{"name":"x","type":"long","nullable":true,"metadata":{}}]}'
)


def new_machine() -> m.Machine:
    files = tuple(AddFile(f"p={p}/seed.parquet", pairs({"p": str(p)})) for p in range(PARTITIONS))
    metadata = Metadata("bench", SCHEMA, ("p",))
    log = Log().write_new(0, (Protocol(1, 2), metadata, *files), 0)
    assert log is not None
    return m.Machine(log=log)


def _add(name: str, partition: int) -> AddFile:
    return AddFile(f"p={partition}/{name}.parquet", pairs({"p": str(partition)}))


def _append_one(i: int, txn: t.Transaction) -> t.Transaction:
    return t.stage(txn, [_add(f"a{i}", i % PARTITIONS)])


def blind_appends(n: int) -> int:
    machine = new_machine()
    for i in range(n):
        name = "w"
        began = m.begin(machine, name)
        assert isinstance(began, m.Machine)
        machine = m.update(began, name, partial(_append_one, i))
        machine = m.retire(m.commit(machine, name, now=i), name)
    return n


def _rewrite(machine: m.Machine, name: str, partition: int) -> m.Machine:
    def change(txn: t.Transaction) -> t.Transaction:
        txn = t.filter_files(txn, [Compare("=", "p", Literal(partition))])
        victim = txn.reads.files[0]
        return t.stage(txn, [RemoveFile(victim.path, 0, partition_values=victim.partition_values),
                             _add(name, partition)])  # fmt: skip

    return m.update(machine, name, change)


def rewrites(n: int) -> int:
    machine = new_machine()
    for i in range(n):
        name = "w"
        began = m.begin(machine, name)
        assert isinstance(began, m.Machine)
        machine = m.retire(m.commit(_rewrite(began, name, i % PARTITIONS), name, now=i), name)
    return n


def contended(n: int) -> int:
    machine = new_machine()
    committed = 0
    for round_ in range(n // 4):
        names = [f"w{k}" for k in range(4)]
        for k, name in enumerate(names):
            began = m.begin(machine, name)
            assert isinstance(began, m.Machine)
            machine = _rewrite(began, name, (4 * round_ + k) % PARTITIONS)
        for name in names:
            machine = m.commit(machine, name, now=round_)
            committed += isinstance(m.outcome(machine, name), Committed)
            machine = m.retire(machine, name)
    return committed


WORKLOADS: dict[str, Callable[[int], int]] = {
    "blind_appends": blind_appends,
    "rewrites": rewrites,
    "contended": contended,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--commits", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/model_throughput.json")
    )
    args = parser.parse_args()
    results = {}
    for name, workload in WORKLOADS.items():
        rates = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            commits = workload(args.commits)
            rates.append(commits / (time.perf_counter() - start))
        results[name] = {
            "commits_per_s_median": round(statistics.median(rates)),
            "min": round(min(rates)),
            "max": round(max(rates)),
            "commits": args.commits,
        }
        r = results[name]
        print(
            f"{name:<14} {r['commits_per_s_median']:>8} commits/s (min {r['min']}, max {r['max']})"
        )
    report = {
        "benchmark": "model_throughput",
        "command": "python -m benchmarks.model_throughput"
        f" --commits {args.commits} --repeats {args.repeats}",
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
