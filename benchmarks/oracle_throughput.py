"""Oracle throughput: state-machine steps per second, model alone and model + impl.

    .venv/bin/python -m benchmarks.oracle_throughput [--examples N] [--repeats R] [--out PATH]

Runs the differential state machine (``deltaspec.conformance.oracle.machine``) with the ``ci``
profile's step count, derandomized, ``N`` examples, ``R`` times each, alternating the two
configurations (A B A B); reports the median steps/s and min–max. A step is one rule:
a writer beginning, a commit, a checkpoint or a time-travel read, each compared across
the adapters. Case 6 of the runner (``python -m benchmarks run --cases oracle``, results in
``bench.json``); run alone it writes ``results/oracle_throughput.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
from dataclasses import replace
from pathlib import Path

from benchmarks.harness import Metric, Target
from deltaspec.conformance.engines.impl.adapter import ImplAdapter
from deltaspec.conformance.oracle.machine import ORACLE_PROFILES, AdapterFactory, run_oracle


def run(quick: bool = False) -> list[Metric]:
    """Case 6 for the runner: steps/s of model + impl against the model alone, alternately."""
    examples, repeats = (5, 1) if quick else (60, 5)
    profile = replace(ORACLE_PROFILES["ci"], max_examples=examples)
    alone: list[float] = []
    both: list[float] = []
    steps = 0
    for _ in range(repeats):
        alone.append(run_oracle([], profile).steps_per_second)
        report = run_oracle([ImplAdapter], profile)
        both.append(report.steps_per_second)
        steps = report.steps
    return [
        Metric(
            id="oracle.steps_per_second",
            case=6,
            title=f"oracle steps/s, model + impl on real files ({examples} examples of up to "
            f"{profile.steps} steps, ci profile)",
            quantity="steps/s",
            higher_is_better=True,
            ours=both,
            peer=alone,
            peer_name="model alone",
            target=Target("ours", ">=", 200, "≥ 200 steps/s with the impl"),
            extra={"steps": steps, "examples": examples},
        )
    ]


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
