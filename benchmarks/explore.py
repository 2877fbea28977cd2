"""Exhaustive exploration: distinct states, depth and states/s of ``deltaspec explore``.

    .venv/bin/python -m benchmarks.explore [--out PATH]

Distinct states, transitions, BFS depth, terminal states, seconds and states/s of one
complete search (one partition, Serializable, the newest release), with and without
symmetry reduction: 2 writers x 3 operations and 3 writers x 2 operations of blind appends
and UPDATEs (an alphabet about the size of a TLA+ spec's), then 2 x 2 and 3 x 1 of the
whole alphabet.
Then how fast the two seeded problems are found: the lost write without put-if-absent, and the
UPDATE that misses an INSERT when the append check is dropped under Serializable. The
reference point is TLC on Vanlightly's TLA+ spec of Delta: about 48 k distinct states in
7.6 s for 2 writers x 3 operations, the lost write found in 9 states.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
from pathlib import Path

from deltaspec.conformance.explore.search import ExploreConfig, ExploreReport, explore
from deltaspec.conformance.workload.alphabet import ALPHABET


def _row(report: ExploreReport) -> dict[str, object]:
    row: dict[str, object] = {
        "states": report.states,
        "transitions": report.transitions,
        "depth": report.depth,
        "terminal": report.terminal,
        "seconds": round(report.seconds, 2),
        "states_per_s": round(report.states_per_second),
        "complete": report.complete,
    }
    if report.violation is not None:
        row["violation"] = f"{report.violation.problem.rule} ({report.violation.problem.kind})"
        row["violation_depth"] = report.violation.depth
    return row


def _run(label: str, config: ExploreConfig) -> dict[str, object]:
    _, report = explore(config)
    row = _row(report)
    print(f"{label:<44} {report.states:>9,} states  depth {report.depth:>2}  "
          f"{report.seconds:7.1f} s  {report.states_per_second:>7,.0f} states/s"
          + (f"  {row['violation']} at depth {row['violation_depth']}" if "violation" in row
             else ""), flush=True)  # fmt: skip
    return {"config": label, **row}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/explore.json"))
    args = parser.parse_args()
    sections: dict[str, list[dict[str, object]]] = {}
    for name, alphabet, shapes in (
        ("insert_update", ("append", "update"), ((2, 3), (3, 2))),
        ("whole_alphabet", ALPHABET, ((2, 2), (3, 1))),
    ):
        print(f"alphabet: {', '.join(alphabet)}")
        sections[name] = [
            _run(f"{w} writers x {k} ops, symmetry {'on' if sym else 'off'}",
                 ExploreConfig(w, k, alphabet=alphabet, symmetry=sym))
            for w, k in shapes
            for sym in (True, False)
        ]  # fmt: skip
    print("finding the seeded problems:")
    sections["finding"] = [
        _run("lost write, blind appends only", ExploreConfig(
            2, 1, alphabet=("append",), put_if_absent=False)),
        _run("lost write, whole alphabet", ExploreConfig(2, 1, put_if_absent=False)),
        _run("UPDATE misses INSERT (mutant)", ExploreConfig(
            2, 1, alphabet=("append", "update"), isolation="Serializable",
            fault="no-append-check-under-serializable")),
    ]  # fmt: skip
    report = {
        "benchmark": "explore",
        "command": "python -m benchmarks.explore",
        "table": "one partition, Serializable (the table default), release 4.4.0",
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "tlc_reference": {
            "spec": "Vanlightly's TLA+ spec of Delta, 2 writers x 3 operations",
            "states": 48_000, "seconds": 7.6, "lost_write_states": 9,
        },
        **sections,
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
