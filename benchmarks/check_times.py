"""The main job's wall time: ``deltaspec check`` run whole, as a user runs it.

    .venv/bin/python -m benchmarks.check_times [--runs fresh,warm,live] [--out PATH]

Each run is ``deltaspec check`` in a subprocess, timed from outside (wall seconds, the load
average before and after), with its report read back: every stage's seconds, and for the Spark
stage how many scripts and conflict cases replayed delta-spark's recorded side and how many ran
it live (conformance/spark_differential/reference.py), its slowest scripts and its set-up (the
stage's time less its scripts': the SparkSession's start, mostly).

- ``fresh``: an empty engines cache (``DELTASPEC_CACHE`` a new directory): the stage fetches
  delta-spark, runs it live and records it. pip's and Maven's own caches are whatever the
  machine has.
- ``warm``: the same cache again: delta-spark's side replayed.
- ``live``: the same cache with ``--live``: delta-spark run live (and re-recorded).

Without ``fresh``, ``warm`` and ``live`` use ``$DELTASPEC_CACHE`` (default ~/.cache/deltaspec).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RUNS = {"fresh": [], "warm": [], "live": ["--live"]}
DELTASPEC = Path(sys.executable).parent / "deltaspec"


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _setup(data: dict[str, Any]) -> float | None:
    """The Spark stage's time less its scripts' and cases' (the session's start, mostly)."""
    stage = next((s for s in data["stages"] if s["name"] == "spark"), None)
    per_case: dict[str, float] = data["reports"].get("spark", {}).get("seconds", {})
    if stage is None or not per_case:
        return None
    return round(float(stage["seconds"]) - sum(per_case.values()), 1)


def run_check(name: str, env: dict[str, str], report: Path) -> dict[str, Any]:
    """One ``deltaspec check`` (``name``: one of RUNS), timed, with its report's figures."""
    command = [str(DELTASPEC), "check", *RUNS[name], "--quiet", "--report", str(report)]
    before, started = _load(), time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    data = json.loads(report.read_text(encoding="utf-8"))
    spark_report = data["reports"].get("spark", {})
    spark = spark_report.get("delta_spark", {})
    slowest = sorted(spark_report.get("seconds", {}).items(), key=lambda kv: -kv[1])[:6]
    row = {
        "run": name,
        "command": " ".join(["deltaspec", "check", *RUNS[name]]),
        "exit_code": done.returncode,
        "wall_seconds": round(wall, 1),
        "load_before": before,
        "load_after": _load(),
        "stages": {s["name"]: s["seconds"] for s in data["stages"]},
        "skipped": data["skipped"],
        "spark_replayed": len(spark.get("replayed", [])),
        "spark_live": len(spark.get("live", [])),
        "spark_slowest_seconds": dict(slowest),
        "spark_setup_seconds": _setup(data),
    }
    print(f"{name:<6} exit {done.returncode}  {wall:7.1f} s  load {before} -> {row['load_after']}"
          f"  spark: {row['spark_replayed']} replayed, {row['spark_live']} live  "
          f"{row['stages']}", flush=True)  # fmt: skip
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", default="warm,live", help="comma-separated: fresh, warm, live")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/check_times.json"))
    args = parser.parse_args()
    names = args.runs.split(",")
    unknown = set(names) - set(RUNS)
    if unknown:
        parser.error(f"unknown runs {sorted(unknown)}; known: {', '.join(RUNS)}")
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="deltaspec-check-times-") as scratch:
        if "fresh" in names:
            env["DELTASPEC_CACHE"] = str(Path(scratch) / "cache")
        rows = [run_check(name, env, Path(scratch) / f"{name}.json") for name in names]
    result = {
        "command": ".venv/bin/python -m benchmarks.check_times --runs " + args.runs,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cores": os.cpu_count(),
        "runs": rows,
    }
    args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
