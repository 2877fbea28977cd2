"""Oracle throughput: state-machine steps per second, model alone and model + impl.

    .venv/bin/python -m benchmarks.oracle_throughput [--examples N] [--repeats R] [--out PATH]

Runs the differential state machine (``deltaspec.conformance.oracle``) with the ``ci``
profile's step count, derandomized, ``N`` examples, ``R`` times each, alternating the two
configurations (A B A B); reports the median steps/s and min–max. A step is one rule:
a writer beginning, a commit, a checkpoint or a time-travel read, each compared across
the adapters.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
from dataclasses import replace
from pathlib import Path

from deltaspec.conformance.adapters.impl import ImplAdapter
from deltaspec.conformance.oracle import ORACLE_PROFILES, AdapterFactory, run_oracle


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/oracle_throughput.json")
    )
    args = parser.parse_args()
    profile = replace(ORACLE_PROFILES["ci"], max_examples=args.examples)
    configurations: dict[str, list[AdapterFactory]] = {
        "model_alone": [],
        "model_and_impl": [ImplAdapter],
    }
    rates: dict[str, list[float]] = {name: [] for name in configurations}
    steps: dict[str, int] = {}
    for _ in range(args.repeats):
        for name, factories in configurations.items():
            report = run_oracle(factories, profile)
            rates[name].append(report.steps_per_second)
            steps[name] = report.steps
    results = {
        name: {
            "steps_per_second_median": round(statistics.median(values), 1),
            "min": round(min(values), 1),
            "max": round(max(values), 1),
            "steps": steps[name],
        }
        for name, values in rates.items()
    }
    record = {
        "command": "python -m benchmarks.oracle_throughput "
        f"--examples {args.examples} --repeats {args.repeats}",
        "machine": f"{platform.python_version()} {platform.machine()} {os.cpu_count()} cores",
        "examples": args.examples,
        "steps_per_example": profile.steps,
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
