"""delta-spark's JVM classes through py4j: the Scala values its methods take, its ``DeltaLog``,
and a checkpoint of one version. Shared by the delta-spark adapters, the engine pair
(``spark_api``) and the hand-driven losing transaction (``loser``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: importing this module needs no PySpark
    from pyspark.sql import SparkSession


def jvm(spark: SparkSession) -> Any:
    """The py4j view of the driver JVM."""
    return spark._jvm


def delta_package(spark: SparkSession) -> Any:
    """delta-spark's package ``org.apache.spark.sql.delta``."""
    return jvm(spark).org.apache.spark.sql.delta


def scala_object(package: Any, name: str) -> Any:
    """The singleton of Scala ``object name`` in a py4j package view."""
    return getattr(getattr(package, f"{name}$"), "MODULE$")


def scala_none(spark: SparkSession) -> Any:
    return jvm(spark).scala.Option.empty()


def scala_seq(spark: SparkSession, items: Sequence[Any]) -> Any:
    """``items`` as a Scala ``Seq``."""
    java_list = jvm(spark).java.util.ArrayList()
    for item in items:
        java_list.add(item)
    return jvm(spark).org.apache.spark.api.python.PythonUtils.toSeq(java_list)


def java_view(spark: SparkSession, scala_collection: Any) -> Any:
    """A Scala collection as the Java collection py4j iterates."""
    return jvm(spark).scala.jdk.javaapi.CollectionConverters.asJava(scala_collection)


def delta_log(spark: SparkSession, path: str) -> Any:
    """delta-spark's ``DeltaLog`` of the table at ``path`` (cached by delta-spark per path)."""
    return delta_package(spark).DeltaLog.forTable(spark._jsparkSession, path)


def checkpoint(spark: SparkSession, path: str, version: int) -> None:
    """delta-spark writes the checkpoint of ``version`` of the table at ``path``."""
    log, none = delta_log(spark, path), scala_none(spark)
    log.checkpoint(log.getSnapshotAt(version, none, none, False), none)


def java_throwable(error: BaseException) -> Any | None:
    """The Java exception behind a py4j or PySpark exception, if any."""
    for attribute in ("java_exception", "_origin"):
        throwable = getattr(error, attribute, None)
        if throwable is not None:
            return throwable
    return None
