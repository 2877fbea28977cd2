"""The Spark write path against Spark's native ``df.write.parquet`` of the same DataFrame.

Each round writes the same cached DataFrame (5 M rows x 3 columns by default, 4 Spark
partitions) once through ``deltaspec.spark.write_delta`` (data files + footer statistics +
commit) and once with ``df.write.parquet``, alternating (A B, B A, ...); the ratio is native
time over ours (throughput ratio: 1.0 = as fast as native). An unpartitioned and a partitioned
variant.
Case 5 of the runner (``python -m benchmarks run --cases spark``, results in ``bench.json``);
run alone it writes ``results/spark_write.json``.

    .venv/bin/python -m benchmarks.spark_write --rows 5000000 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.harness import Metric, Target
from deltaspec.spark import local_session, write_delta

RESULTS = Path(__file__).parent / "results" / "spark_write.json"
TARGET = Target("ratio", ">=", 0.9, "≥ 0.9× native Parquet throughput")


def run(quick: bool = False) -> list[Metric]:
    """Case 5 for the runner: rows/s of ours and native, alternately, both variants."""
    rows, rounds = (200_000, 2) if quick else (5_000_000, 7)
    results = measure(rows, rounds)
    return [
        Metric(
            id=f"spark_write.{variant}",
            case=5,
            title=f"Spark write of {rows:,} rows x 3 columns, 4 Spark partitions, {variant}"
            + (" (8 table partitions)" if variant == "partitioned" else ""),
            quantity="rows/s",
            higher_is_better=True,
            ours=[rows / s for s in found["ours_seconds"]],
            peer=[rows / s for s in found["native_seconds"]],
            peer_name="native df.write.parquet",
            target=TARGET,
            extra={
                "ours_seconds": found["ours_seconds"],
                "native_seconds": found["native_seconds"],
            },
        )
        for variant, found in results.items()
    ]


def _time_delta(frame: Any, path: Path, columns: list[str]) -> float:
    start = time.perf_counter()
    write_delta(frame, path, partition_by=columns)
    return time.perf_counter() - start


def _time_native(frame: Any, path: Path, columns: list[str]) -> float:
    writer = frame.write.mode("overwrite")
    if columns:
        writer = writer.partitionBy(*columns)
    start = time.perf_counter()
    writer.parquet(str(path))
    return time.perf_counter() - start


def measure(rows: int, rounds: int) -> dict[str, Any]:
    spark = local_session(
        "local[2]",
        "deltaspec-bench",
        fast_start=False,
        confs={"spark.ui.showConsoleProgress": "false"},
    )
    df = (
        spark.range(rows, numPartitions=4)
        .selectExpr("id", "cast(id % 1000 as double) * 1.5 as x", "concat('s', id % 100) as s")
        .cache()
    )
    df.count()
    partitioned = df.selectExpr("*", "cast(id % 8 as int) as p").cache()
    partitioned.count()
    out: dict[str, Any] = {}
    work = Path(tempfile.mkdtemp(prefix="deltaspec-bench-"))
    try:
        for variant, frame, columns in (
            ("unpartitioned", df, []),
            ("partitioned", partitioned, ["p"]),
        ):
            ours, native = [], []
            for i in range(rounds + 1):  # the first round warms the JVM up and is dropped
                target = work / f"{variant}-{i}"
                # alternate which side goes first, so that neither always follows the other
                if i % 2 == 0:
                    a = _time_delta(frame, target / "delta", columns)
                    b = _time_native(frame, target / "native", columns)
                else:
                    b = _time_native(frame, target / "native", columns)
                    a = _time_delta(frame, target / "delta", columns)
                shutil.rmtree(target)
                if i:
                    ours.append(a)
                    native.append(b)
            ratios = [n / o for n, o in zip(native, ours, strict=True)]
            out[variant] = {
                "ours_seconds": ours,
                "native_seconds": native,
                "throughput_ratio_median": statistics.median(ratios),
                "throughput_ratio_min": min(ratios),
                "throughput_ratio_max": max(ratios),
            }
            print(f"{variant}: ratio median {statistics.median(ratios):.3f} "
                  f"({min(ratios):.3f}-{max(ratios):.3f}); ours {statistics.median(ours):.2f}s, "
                  f"native {statistics.median(native):.2f}s")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    results = measure(args.rows, args.rounds)
    RESULTS.write_text(
        json.dumps(
            {
                "command": "python -m benchmarks.spark_write "
                f"--rows {args.rows} --rounds {args.rounds}",
                "machine": f"{platform.python_version()}, {platform.machine()}, 2 cores, local[2]",
                "rows": args.rows,
                "results": results,
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
