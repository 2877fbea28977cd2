"""Our Spark path on ``local-cluster[2,1,1024]``: two executor JVMs, each with its own Python
workers, apart from the driver, so that it passes only if nothing in our Spark path relies on
state that exists on the driver alone (a file the driver wrote, a JVM static the executors would
not see, a Python module imported on the driver only). Differential scripts against delta-spark
on local files, and writes to S3 (moto) through the commit protocol, whose tasks then run in the
executors' JVMs and hand their files to the driver's, read back by delta-spark.

pip's PySpark starts local-cluster once ``SPARK_HOME`` names its package directory (the executors
are launched from ``$SPARK_HOME/jars``). The session is started in a spawned process: one JVM holds
one SparkContext, and this worker's may be the ``spark`` fixture's ``local[2]``.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

import pytest
from support.spawned import reported

from deltaspec.conformance.servers.serving import serving
from deltaspec.spark import s3a_jars

MASTER = "local-cluster[2,1,1024]"
SCRIPTS = ("create_append",)
"""Writes and reads on local files (MERGE passes too, at about one more minute)."""
EXECUTOR_CONFS = {"spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"}
"""The executors' JVMs as the driver's in tests (FAST_START_CONFS): a quicker start."""
S3_WRITES = [("append", [(1, "a"), (2, "b"), (3, None)]), ("dynamic", [(4, "b")])]
S3_VERSIONS = [[(1, "a"), (2, "b"), (3, None)], [(1, "a"), (3, None), (4, "b")]]


@reported
def on_cluster(  # pragma: no cover - spawned
    names: tuple[str, ...], options: dict[str, str], url: str
) -> dict[str, object]:
    """The differential's verdict on each script, the rows delta-spark reads at each version of
    our S3 table, and how many executors there were."""
    import pyspark

    os.environ.setdefault("SPARK_HOME", os.path.dirname(pyspark.__file__))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from deltaspec.conformance.engines.deltaspark.session import delta_session
    from deltaspec.conformance.engines.registry import make_engines
    from deltaspec.conformance.spark_differential.compare import differences, run_both
    from deltaspec.conformance.spark_differential.suite import script_failures
    from deltaspec.spark import DeltaWriter, s3a

    begun = time.monotonic()
    endpoint = s3a.S3Endpoint.from_storage_options(options)
    confs = {**s3a.s3_confs(endpoint), **EXECUTOR_CONFS}
    spark = delta_session(MASTER, "deltaspec-local-cluster", confs=confs)
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()
    engines = make_engines(spark)
    found, seconds = {}, {"start": time.monotonic() - begun}
    with tempfile.TemporaryDirectory(prefix="deltaspec-cluster-") as work:
        for name in names:
            folder = Path(work) / name
            started = time.monotonic()
            found[name] = script_failures(name, differences(run_both(spark, engines, name, folder)))
            seconds[name] = time.monotonic() - started
    for how, rows in S3_WRITES:
        writer = DeltaWriter(spark.createDataFrame(rows, "id long, p string")).partitionBy("p")
        if how == "dynamic":
            writer = writer.mode("overwrite").option("partitionOverwriteMode", "dynamic")
        else:
            writer = writer.mode(how)
        writer.save(url)
    versions = [spark.read.format("delta").option("versionAsOf", v).load(url) for v in (0, 1)]
    s3_rows = [sorted((tuple(r) for r in frame.collect()), key=repr) for frame in versions]
    seconds["s3"] = time.monotonic() - begun - sum(seconds.values())
    spark.stop()
    return {"executors": executors, "found": found, "s3_rows": s3_rows, "seconds": seconds}


@pytest.mark.spark
def test_our_spark_path_on_a_local_cluster() -> None:
    s3a_jars.s3a_jars()  # fetched here, once, rather than in the child
    with serving("s3") as server, multiprocessing.get_context("spawn").Pool(1) as pool:
        url = server.table_url("cluster").replace("s3://", "s3a://")
        seen = pool.apply(on_cluster, (SCRIPTS, server.options, url))
    assert seen["executors"] == 3, seen  # the driver's block manager and two executors'
    assert seen["found"] == {name: [] for name in SCRIPTS}, seen["seconds"]
    assert seen["s3_rows"] == [sorted(rows, key=repr) for rows in S3_VERSIONS]
