"""The smoke check of a fetched engine: its own Python starts a local[1] SparkSession with the
kept jars and delta's two session settings, writes ``spark.range(3)`` as a Delta table and reads
it back. Run one at a time: each is a JVM."""

from __future__ import annotations

import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .cache import InstalledEngine

TIMEOUT_SECONDS = 600

SCRIPT = """
import sys
from pyspark.sql import SparkSession

jars, table = sys.argv[1], sys.argv[2]
spark = (
    SparkSession.builder.master("local[1]")
    .appName("deltaspec-engine-smoke")
    .config("spark.jars", jars)
    .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    .config("spark.ui.enabled", "false")
    .getOrCreate()
)
spark.range(3).write.format("delta").save(table)
ids = sorted(row.id for row in spark.read.format("delta").load(table).collect())
print("SMOKE", spark.version, spark._jvm.io.delta.package.VERSION(), ids)
spark.stop()
"""


@dataclass(frozen=True)
class SmokeResult:
    """What the smoke check saw: ok, the Spark and delta versions it ran, or why it failed."""

    ok: bool
    seconds: float
    detail: str


def smoke(engine: InstalledEngine) -> SmokeResult:
    jars = ",".join(str(engine.home / "jars" / name) for name, _ in engine.pin.jars)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="deltaspec-smoke-") as scratch:
        command = [str(engine.python), "-c", SCRIPT, jars, str(Path(scratch) / "table")]
        try:
            done = subprocess.run(command, capture_output=True, text=True,
                                  timeout=TIMEOUT_SECONDS, cwd=scratch)  # fmt: skip
        except subprocess.TimeoutExpired:
            return SmokeResult(False, time.monotonic() - start, f"timed out after "
                               f"{TIMEOUT_SECONDS} s")  # fmt: skip
    seconds = time.monotonic() - start
    seen = [line for line in done.stdout.splitlines() if line.startswith("SMOKE ")]
    if done.returncode == 0 and seen and seen[-1].endswith("[0, 1, 2]"):
        return SmokeResult(True, seconds, seen[-1].removeprefix("SMOKE "))
    return SmokeResult(False, seconds, failure_reason(done.stderr) or f"exit {done.returncode}")


def failure_reason(stderr: str) -> str:
    """The most telling line of a failed run: the last exception or error line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    telling = [line for line in lines if "Error" in line or "Exception" in line]
    return (telling or lines or [""])[-1][:400]
