"""A local SparkSession configured for the write path and for tests; ``configure`` for a session
the user builds."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Mapping
from typing import TypeVar

from pyspark.sql import SparkSession

from . import jvm_source
from .datasource import register

# Confs that every session writing through deltaspec.spark should have: timestamps stored
# with Parquet statistics (INT96 columns have none), a UTC session zone (partition values and
# statistics print in the session zone, as in delta-spark), and listing many explicit file paths
# on the driver instead of a Spark job per 32 paths (3-4x faster scans of many files).
RECOMMENDED_CONFS: Mapping[str, str] = {
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.sources.parallelPartitionDiscovery.threshold": "1000000",
    "spark.hadoop.mapreduce.fileoutputcommitter.marksuccessfuljobs": "false",
    "spark.hadoop.parquet.enable.summary-metadata": "false",
}

# For tests: a smaller, faster JVM (about half the cold start) and few shuffle partitions.
FAST_START_CONFS: Mapping[str, str] = {
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.adaptive.enabled": "false",
}


def local_session(
    master: str = "local[2]",
    app_name: str = "deltaspec",
    *,
    fast_start: bool = True,
    confs: Mapping[str, str] | None = None,
) -> SparkSession:
    """The process's SparkSession on ``master`` (started once, then reused by getOrCreate).

    Points ``PYSPARK_PYTHON`` at this interpreter so Python workers run in the same environment.
    Loads ``format("deltaspec")``'s JVM data source (:func:`configure`; ``spark.jars`` in
    ``confs`` are kept); without a JDK to build it, warns and registers the Python data source
    alone.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {**RECOMMENDED_CONFS, **(FAST_START_CONFS if fast_start else {}), **(confs or {})}
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        builder = configure(builder)
    except jvm_source.JvmSourceUnavailable as error:
        warnings.warn(str(error), RuntimeWarning, stacklevel=2)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")

    register(session)
    return session


B = TypeVar("B", bound=SparkSession.Builder)


def configure(builder: B) -> B:
    """``builder`` with ``format("deltaspec")``'s JVM data source on ``spark.jars`` (the jars it
    names already kept), for a session you build yourself, as delta-spark's
    ``configure_spark_with_delta_pip``::

        spark = configure(SparkSession.builder.master("local[4]")).getOrCreate()
        deltaspec.spark.datasource.register(spark)

    Spark reads ``spark.jars`` when its JVM starts: configure the process's first session.
    Raises ``jvm_source.JvmSourceUnavailable`` when there is no JDK to build the jar."""
    return jvm_source.configure(builder)
