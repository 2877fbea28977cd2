"""Data files written by Spark at their final names, through deltaspec's commit protocol
(``spark/jvm/DeltaspecCommitProtocol.java``), as delta-spark's DelayedCommitProtocol does: each
task writes ``<table>/<partition directories>/part-<task>-<uuid>.<ext>`` directly and reports
it; nothing is staged and moved, which on an object store would be a copy of every file.

Spark takes one commit protocol class per session (``spark.sql.sources.commitProtocolClass``);
the first write sets deltaspec's, which hands every write that is not deltaspec's (no write id
among its options) to Spark's own protocol, so nothing else in the session changes. A session
already set to another protocol is left alone and the write refused
(:class:`CommitProtocolError`)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, SparkSession

from .errors import SparkPathError

PROTOCOL_CONF = "spark.sql.sources.commitProtocolClass"
PROTOCOL = "deltaspec.spark.jvm.DeltaspecCommitProtocol"
SPARK_PROTOCOL = "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol"
WRITE_ID = "deltaspec.writeId"
"""The write option that makes a write deltaspec's (the Java class's ``WRITE_ID``)."""


class CommitProtocolError(SparkPathError, error_class="DELTASPEC_COMMIT_PROTOCOL"):
    """The session cannot write files at their final names: deltaspec's JVM classes are not
    loaded (no JDK), another commit protocol is configured, or the write bypassed it."""


@dataclass(frozen=True)
class FinalFile:
    """A file the write made: its path relative to the table root (Hive partition directories
    included, as Spark escaped them), its size and its modification time (ms)."""

    relative: str
    size: int
    modification_time: int


def use_protocol(spark: SparkSession, table: str) -> None:
    """Select deltaspec's commit protocol for the session (once)."""
    current = spark.conf.get(PROTOCOL_CONF, SPARK_PROTOCOL)
    if current == PROTOCOL:
        return
    if current != SPARK_PROTOCOL:
        raise CommitProtocolError(
            f"the session's {PROTOCOL_CONF} is {current!r}; writing {table} at final names "
            f"needs {PROTOCOL}",
            table=table,
        )
    try:
        spark._jvm.java.lang.Class.forName(  # type: ignore[union-attr]
            PROTOCOL,
            True,
            spark._jvm.org.apache.spark.util.Utils.getContextOrSparkClassLoader(),  # type: ignore[union-attr]
        )
    except Exception as error:  # py4j's Py4JJavaError: the jar is not on spark.jars
        raise CommitProtocolError(
            f"{PROTOCOL} is not loaded in this session (start it with "
            "deltaspec.spark.session.configure, which needs a JDK)",
            table=table,
        ) from error
    spark.conf.set(PROTOCOL_CONF, PROTOCOL)


def write_at_final_names(
    df: DataFrame,
    root: str,
    partition_columns: Sequence[str],
    writer_options: Mapping[str, str] | None = None,
) -> list[FinalFile]:
    """Write ``df`` as Parquet files of the table at ``root`` (a Hadoop path or URL Spark
    writes), each at its final name; returns what the tasks committed."""
    spark = df.sparkSession
    use_protocol(spark, root)
    write_id = str(uuid.uuid4())
    writer = df.write.format("parquet").mode("append").option(WRITE_ID, write_id)
    if partition_columns:
        writer = writer.partitionBy(*partition_columns)
    for key, value in (writer_options or {}).items():
        writer = writer.option(key, value)
    writer.save(root)
    committed = spark._jvm.deltaspec.spark.jvm.DeltaspecCommitProtocol.takeFiles(write_id)  # type: ignore[union-attr]
    if committed is None:
        raise CommitProtocolError(
            f"the write of {root} did not go through {PROTOCOL} (was {PROTOCOL_CONF} changed?)",
            table=root,
        )
    return [FinalFile(str(f[0]), int(f[1]), int(f[2])) for f in committed]
