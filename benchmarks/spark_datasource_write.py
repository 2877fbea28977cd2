"""``df.write.format(...)`` through the Python data source (``deltaspec_python`` behind the JVM
data source, which writes through DeltaWriter; ``deltaspec`` without a JDK) against
``DeltaWriter`` (Spark's native Parquet writer + one commit) and Spark's native
``df.write.parquet``, on the same cached DataFrame (unpartitioned and 8 table partitions).

Rounds alternate the order of the three writers; each round gives two throughput ratios
(native time / data source time, DeltaWriter time / data source time); the median and min-max
are reported. Case 8 of the runner (``python -m benchmarks run --cases datasource``); run alone
it writes ``results/spark_datasource_write.json``. Small sizes only on a shared machine:

    .venv/bin/python -m benchmarks.spark_datasource_write --rows 1000000 --rounds 3
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.harness import Metric, Target
from deltaspec.spark import DeltaWriter, local_session
from deltaspec.spark.datasource import python_format

RESULTS = Path(__file__).parent / "results" / "spark_datasource_write.json"
TARGET = Target("ratio", ">=", 0.5, "≥ 0.5× native Parquet throughput (pyarrow in Python workers)")


def _timed(write: Callable[[], object]) -> float:
    start = time.perf_counter()
    write()
    return time.perf_counter() - start


def _writers(frame: Any, target: Path, columns: list[str]) -> dict[str, Callable[[], object]]:
    def datasource() -> None:
        writer = frame.write.format(python_format(frame.sparkSession)).mode("append")
        if columns:
            writer = writer.option("partitionBy", ",".join(columns))
        writer.save(str(target / "datasource"))

    def delta_writer() -> object:
        return DeltaWriter(frame).mode("append").partitionBy(*columns).save(target / "writer")

    def native() -> None:
        writer = frame.write.mode("overwrite")
        if columns:
            writer = writer.partitionBy(*columns)
        writer.parquet(str(target / "native"))

    return {"datasource": datasource, "DeltaWriter": delta_writer, "native": native}


def measure(rows: int, rounds: int) -> dict[str, Any]:
    spark = local_session("local[2]", "deltaspec-bench", fast_start=False)
    df = (
        spark.range(rows, numPartitions=4)
        .selectExpr("id", "cast(id % 1000 as double) * 1.5 as x", "concat('s', id % 100) as s")
        .cache()
    )
    df.count()
    partitioned = df.selectExpr("*", "cast(id % 8 as int) as p").cache()
    partitioned.count()
    out: dict[str, Any] = {}
    work = Path(tempfile.mkdtemp(prefix="deltaspec-bench-ds-"))
    try:
        for variant, frame, columns in (
            ("unpartitioned", df, []),
            ("partitioned", partitioned, ["p"]),
        ):
            seconds: dict[str, list[float]] = {"datasource": [], "DeltaWriter": [], "native": []}
            for i in range(rounds + 1):  # round 0 warms up and is dropped
                target = work / f"{variant}-{i}"
                writers = _writers(frame, target, columns)
                order = list(writers) if i % 2 == 0 else list(reversed(writers))
                taken = {name: _timed(writers[name]) for name in order}
                shutil.rmtree(target)
                if i:
                    for name, value in taken.items():
                        seconds[name].append(value)
            vs_native = [
                n / d for n, d in zip(seconds["native"], seconds["datasource"], strict=True)
            ]
            vs_writer = [
                w / d for w, d in zip(seconds["DeltaWriter"], seconds["datasource"], strict=True)
            ]
            out[variant] = {
                "seconds": seconds,
                "vs_native_median": statistics.median(vs_native),
                "vs_native_range": [min(vs_native), max(vs_native)],
                "vs_delta_writer_median": statistics.median(vs_writer),
                "vs_delta_writer_range": [min(vs_writer), max(vs_writer)],
            }
            print(f"{variant}: data source / native {statistics.median(vs_native):.2f}x, "
                  f"/ DeltaWriter {statistics.median(vs_writer):.2f}x throughput")  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()
    return out


def run(quick: bool = False) -> list[Metric]:
    """Case 8 for the runner."""
    rows, rounds = (100_000, 2) if quick else (1_000_000, 3)
    results = measure(rows, rounds)
    return [
        Metric(
            id=f"spark_datasource_write.{variant}",
            case=8,
            title=f"format('deltaspec') write of {rows:,} rows x 3 columns, {variant}",
            quantity="rows/s",
            higher_is_better=True,
            ours=[rows / s for s in found["seconds"]["datasource"]],
            peer=[rows / s for s in found["seconds"]["native"]],
            peer_name="native df.write.parquet",
            target=TARGET,
            extra={"delta_writer_seconds": found["seconds"]["DeltaWriter"]},
        )
        for variant, found in results.items()
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    results = measure(args.rows, args.rounds)
    RESULTS.write_text(
        json.dumps(
            {
                "command": "python -m benchmarks.spark_datasource_write "
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
