"""Our Spark path against live delta-spark 4.4.0 on the same tables and data: a write, DELETE
and UPDATE that data skipping narrows to one file, MERGE, OPTIMIZE (compaction) and snapshot
load, CPU and wall.

One SparkSession with delta-spark loaded runs both sides (conformance/engines/deltaspark/session).
Every pair starts both sides on byte-identical copies of a table delta-spark wrote (untimed), then
runs the operation once on each side, alternating which goes first (A B, B A, ...); the first pair
warms up and is dropped. The ratio is our time over delta-spark's (<= 1.0: as fast or faster).
CPU is the Python driver's plus the Spark JVM's (local mode: the executors too). Tables: 1 M rows
x 3 columns (id long clustered by file, x double, s string) in 16 files; OPTIMIZE on 32 files of
20 k rows in one partition-less table. Case 10 of the runner (``python -m benchmarks run --cases
spark_dml``); run alone it writes ``results/spark_dml.json``:

    .venv/bin/python -m benchmarks.bench_spark_dml --rows 1000000 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.harness import Metric, Target

RESULTS = Path(__file__).parent / "results" / "spark_dml.json"
TARGET = Target("ratio", "<=", 1.0, "≤ 1.0× live delta-spark's time")
OPERATIONS = ("write", "delete", "update", "merge", "optimize", "snapshot")

Operation = Callable[[str], object]


@dataclass(frozen=True)
class Sides:
    """One operation on each side, the template table both start from, and (warm runs)
    delta-spark's untimed load of the table's log into its session cache first."""

    template: str
    ours: Operation
    theirs: Operation
    load_theirs: Operation | None = None


class Clock:
    """Wall seconds and CPU seconds of this process plus the Spark JVM."""

    def __init__(self, spark: Any) -> None:
        self.jvm_pid = int(spark._jvm.java.lang.ProcessHandle.current().pid())
        self.tick = os.sysconf("SC_CLK_TCK")

    def cpu(self) -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        fields = Path(f"/proc/{self.jvm_pid}/stat").read_text().rsplit(")", 1)[1].split()
        return usage.ru_utime + usage.ru_stime + (int(fields[11]) + int(fields[12])) / self.tick

    def measure(self, run: Callable[[], object]) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), self.cpu()
        run()
        return time.perf_counter() - wall, self.cpu() - cpu


def _templates(spark: Any, work: Path, rows: int) -> dict[str, str]:
    base, small = str(work / "base"), str(work / "small")
    frame = spark.range(rows, numPartitions=16).selectExpr(
        "id", "cast(id % 1000 as double) * 1.5 as x", "concat('s', id % 100) as s"
    )
    frame.write.format("delta").save(base)
    spark.range(32 * 20_000, numPartitions=32).selectExpr(
        "id", "cast(id % 1000 as double) * 1.5 as x", "concat('s', id % 100) as s"
    ).write.format("delta").save(small)
    return {"base": base, "small": small}


def _sides(spark: Any, templates: dict[str, str], rows: int, warm: bool) -> dict[str, Sides]:
    from delta.tables import DeltaTable

    from deltaspec.impl.snapshot.delta_log import DeltaLog
    from deltaspec.spark import MergeClause, compact, delete, merge, update, write_delta

    appended = (
        spark.range(rows, 2 * rows, numPartitions=4)
        .selectExpr("id", "cast(id % 1000 as double) * 1.5 as x", "concat('s', id % 100) as s")
        .cache()
    )
    appended.count()
    one_file = f"id >= {rows // 8} AND id < {rows // 8 + 100}"
    source = (
        spark.range(rows // 2, rows // 2 + 1000)
        .union(spark.range(3 * rows, 3 * rows + 1000))
        .selectExpr("id", "-1.0 as x", "'m' as s")
        .cache()
    )
    source.count()
    clauses = [
        MergeClause("update", assignments={"x": "s.x"}),
        MergeClause("insert", assignments="*"),
    ]
    jvm = spark._jvm.org.apache.spark.sql.delta.DeltaLog

    def their_merge(path: str) -> None:
        (DeltaTable.forPath(spark, path).alias("t").merge(source.alias("s"), "t.id = s.id")
         .whenMatchedUpdate(set={"x": "s.x"}).whenNotMatchedInsertAll().execute())  # fmt: skip

    def their_load(path: str) -> int:
        return int(jvm.forTable(spark._jsparkSession, path).unsafeVolatileSnapshot().numOfFiles())

    def their_snapshot(path: str) -> int:
        jvm.clearCache()
        return their_load(path)

    base, small = templates["base"], templates["small"]
    sides = {
        "write": Sides(
            base,
            lambda p: write_delta(appended, p, mode="append"),
            lambda p: appended.write.format("delta").mode("append").save(p),
        ),
        "delete": Sides(
            base,
            lambda p: delete(spark, p, one_file),
            lambda p: DeltaTable.forPath(spark, p).delete(one_file),
        ),
        "update": Sides(
            base,
            lambda p: update(spark, p, {"x": "x + 1"}, one_file),
            lambda p: DeltaTable.forPath(spark, p).update(one_file, {"x": "x + 1"}),
        ),
        "merge": Sides(
            base,
            lambda p: merge(spark, p, source, "t.id = s.id", clauses),
            their_merge,
        ),
        "optimize": Sides(
            small, lambda p: compact(spark, p), lambda p: spark.sql(f"OPTIMIZE delta.`{p}`")
        ),
        "snapshot": Sides(base, lambda p: len(DeltaLog(p).snapshot().files), their_snapshot),
    }
    if warm:
        sides = {n: replace(found, load_theirs=their_load) for n, found in sides.items()}
    return sides


def _contents(spark: Any, path: str) -> tuple[Any, ...]:
    return tuple(
        spark.read.format("delta").load(path).selectExpr("count(*)", "sum(x)", "sum(id)").first()
    )


def _pair(
    clock: Clock, sides: Sides, work: Path, ours_first: bool, check: Any
) -> dict[str, tuple[float, float]]:
    """Both sides once on fresh copies of the template; ``check`` (a SparkSession, or None)
    compares the two tables' contents afterwards."""
    tag = uuid.uuid4().hex  # a new path each pair: no table state cached from an earlier pair
    ours_path, their_path = str(work / f"ours-{tag}"), str(work / f"theirs-{tag}")
    shutil.copytree(sides.template, ours_path)
    shutil.copytree(sides.template, their_path)
    if sides.load_theirs is not None:
        sides.load_theirs(their_path)
    order = [("ours", sides.ours, ours_path), ("theirs", sides.theirs, their_path)]
    taken = {}
    for name, run, path in order if ours_first else reversed(order):
        taken[name] = clock.measure(lambda: run(path))  # noqa: B023 - run at once
    if check is not None:
        ours, theirs = _contents(check, ours_path), _contents(check, their_path)
        assert ours == theirs, f"tables differ after the operation: {ours} != {theirs}"
    shutil.rmtree(ours_path)
    shutil.rmtree(their_path)
    return taken


def _ratios(found: dict[str, list[float]], kind: str) -> str:
    ratios = [o / t for o, t in zip(found[f"ours_{kind}"], found[f"theirs_{kind}"], strict=True)]
    return f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"


def _summary(name: str, found: dict[str, list[float]]) -> str:
    ours, theirs = statistics.median(found["ours_wall"]), statistics.median(found["theirs_wall"])
    return (
        f"{name}: ours/delta-spark wall {_ratios(found, 'wall')}, cpu {_ratios(found, 'cpu')}; "
        f"ours {ours:.2f}s, delta-spark {theirs:.2f}s"
    )


def measure(
    rows: int, rounds: int, operations: tuple[str, ...] = OPERATIONS, warm: bool = False
) -> dict[str, Any]:
    from deltaspec.conformance.engines.deltaspark.session import delta_session

    spark = delta_session("local[2]", "deltaspec-bench-dml",
                          confs={"spark.ui.showConsoleProgress": "false"})  # fmt: skip
    clock = Clock(spark)
    work = Path(tempfile.mkdtemp(prefix="deltaspec-bench-dml-"))
    out: dict[str, Any] = {}
    try:
        sides = _sides(spark, _templates(spark, work, rows), rows, warm)
        for name in operations:
            found: dict[str, list[float]] = {k: [] for k in ("ours_wall", "theirs_wall",
                                                             "ours_cpu", "theirs_cpu")}  # fmt: skip
            for i in range(rounds + 1):  # pair 0 warms up and is dropped
                check = spark if i == 0 and name != "snapshot" else None
                taken = _pair(clock, sides[name], work, i % 2 == 0, check)
                if i:
                    for side, (wall, cpu) in taken.items():
                        found[f"{side}_wall"].append(wall)
                        found[f"{side}_cpu"].append(cpu)
            out[name] = found
            print(_summary(name, found), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        spark.stop()
    return out


def run(quick: bool = False) -> list[Metric]:
    """Case 10 for the runner: wall and CPU per operation, ours over live delta-spark's."""
    rows, rounds = (200_000, 2) if quick else (1_000_000, 5)
    results = measure(rows, rounds)
    return [
        Metric(
            id=f"spark_dml.{name}.{kind}",
            case=10,
            title=f"Spark {name} vs live delta-spark 4.4.0, {rows:,}-row table, {kind} time",
            quantity="seconds",
            higher_is_better=False,
            ours=found[f"ours_{kind}"],
            peer=found[f"theirs_{kind}"],
            peer_name="live delta-spark 4.4.0",
            target=TARGET,
        )
        for name, found in results.items()
        for kind in ("wall", "cpu")
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--operations", default=",".join(OPERATIONS))
    parser.add_argument("--warm", action="store_true", help="delta-spark's log cached first")
    args = parser.parse_args()
    operations = tuple(args.operations.split(","))
    results = measure(args.rows, args.rounds, operations, args.warm)
    out = RESULTS.with_name("spark_dml_warm.json") if args.warm else RESULTS
    out.write_text(
        json.dumps(
            {
                "command": "python -m benchmarks.bench_spark_dml "
                f"--rows {args.rows} --rounds {args.rounds} --operations {args.operations}"
                + (" --warm" if args.warm else ""),
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
