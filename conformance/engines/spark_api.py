"""delta-spark's public PySpark API and our Spark path's, as two engines with one vocabulary.

``delta``: ``format("delta")``, ``delta.tables.DeltaTable``, SQL on ``delta.`path```, and
delta-spark's ``DeltaLog`` for a checkpoint. ``ours``: ``format("deltaspec")``,
``deltaspec.spark.tables.DeltaTable``, and deltaspec.spark's functions (``write_delta``,
``delete``, ``update``, ``merge``, ``compact``) with the impl's checkpoint. The Spark path
differential runs its scripts on the DataFrame API and the ``table`` class of each; the writes
suite's live mode runs the operations (``save`` … ``checkpoint``) of each. Both need a session with
delta-spark (``deltaspark_session.delta_session``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, DataFrameWriter, SparkSession

from deltaspec.impl.checkpoint.policy import checkpoint_version
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.spark import MergeClause, compact, delete, merge, update, write_delta
from deltaspec.spark.datasource import register
from deltaspec.spark.tables import DeltaTable as OurDeltaTable

from .deltaspark import jvm as deltaspark_jvm


class Engine(ABC):
    """One engine's public API: ``name`` is its key (``delta``, ``ours``), ``fmt`` its data
    source's name; each engine implements the abstract operations."""

    name: str
    fmt: str

    @property
    @abstractmethod
    def table(self) -> Any:
        """The engine's ``DeltaTable`` class."""

    def write(self, df: DataFrame) -> DataFrameWriter:
        return df.write.format(self.fmt)

    def partitioned(self, writer: DataFrameWriter, *columns: str) -> DataFrameWriter:
        """``writer.partitionBy(*columns)``, on both engines (ours takes it through its JVM data
        source, spark/jvm_source.py)."""
        return writer.partitionBy(*columns)

    def read(self, spark: SparkSession, root: str, **options: Any) -> DataFrame:
        reader = spark.read.format(self.fmt)
        for key, value in options.items():
            reader = reader.option(key, value)
        return reader.load(root)

    @abstractmethod
    def save(
        self, df: DataFrame, root: str, mode: str, partition_by: Sequence[str] | None = None,
        **options: Any,
    ) -> None:  # fmt: skip
        """A WRITE of ``df`` in ``mode`` with the write ``options``."""

    @abstractmethod
    def delete(self, spark: SparkSession, root: str, condition: str) -> None:
        """DELETE the rows matching ``condition``."""

    @abstractmethod
    def update(
        self, spark: SparkSession, root: str, condition: str, assignments: Mapping[str, str]
    ) -> None:
        """UPDATE the rows matching ``condition`` with ``assignments`` (column → SQL)."""

    @abstractmethod
    def merge(
        self, spark: SparkSession, root: str, source: DataFrame, on: str,
        clauses: Sequence[MergeClause],
    ) -> None:  # fmt: skip
        """MERGE ``source`` (alias ``s``) into the table (alias ``t``) on ``on``."""

    @abstractmethod
    def compact(self, spark: SparkSession, root: str) -> None:
        """OPTIMIZE the whole table: one file per partition."""

    @abstractmethod
    def checkpoint(self, spark: SparkSession, root: str, version: int) -> None:
        """Write the checkpoint of ``version``."""


def table_sql(root: str) -> str:
    """The table at ``root`` in delta-spark's SQL: ``delta.`root```, backticks doubled."""
    return "delta.`" + root.replace("`", "``") + "`"


def merge_clauses(builder: Any, clauses: Sequence[MergeClause]) -> Any:
    """delta-spark's ``DeltaMergeBuilder`` with ``clauses`` added in order (assignments ``"*"``:
    ``whenMatchedUpdateAll``/``whenNotMatchedInsertAll``)."""
    for clause in clauses:
        condition, every = clause.condition, clause.assignments == "*"
        mapping = clause.assignments
        assignments = dict(mapping) if isinstance(mapping, Mapping) else None
        if clause.action == "delete" and clause.by_source:
            builder = builder.whenNotMatchedBySourceDelete(condition)
        elif clause.action == "delete":
            builder = builder.whenMatchedDelete(condition)
        elif clause.action == "update" and clause.by_source:
            builder = builder.whenNotMatchedBySourceUpdate(condition, assignments)
        elif clause.action == "update":
            builder = (builder.whenMatchedUpdateAll(condition) if every
                       else builder.whenMatchedUpdate(condition, assignments))  # fmt: skip
        else:
            builder = (builder.whenNotMatchedInsertAll(condition) if every
                       else builder.whenNotMatchedInsert(condition, assignments))  # fmt: skip
    return builder


class DeltaSpark(Engine):
    """Live delta-spark."""

    name = "delta"
    fmt = "delta"

    @property
    def table(self) -> Any:
        from delta.tables import DeltaTable

        return DeltaTable

    def save(
        self, df: DataFrame, root: str, mode: str, partition_by: Sequence[str] | None = None,
        **options: Any,
    ) -> None:  # fmt: skip
        writer = self.write(df).mode(mode)
        for key, value in options.items():
            writer = writer.option(key, value)
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        writer.save(root)

    def delete(self, spark: SparkSession, root: str, condition: str) -> None:
        self.table.forPath(spark, root).delete(condition)

    def update(
        self, spark: SparkSession, root: str, condition: str, assignments: Mapping[str, str]
    ) -> None:
        self.table.forPath(spark, root).update(condition, dict(assignments))

    def merge(
        self, spark: SparkSession, root: str, source: DataFrame, on: str,
        clauses: Sequence[MergeClause],
    ) -> None:  # fmt: skip
        builder = self.table.forPath(spark, root).alias("t").merge(source.alias("s"), on)
        merge_clauses(builder, clauses).execute()

    def compact(self, spark: SparkSession, root: str) -> None:
        spark.sql(f"OPTIMIZE {table_sql(root)}").collect()

    def checkpoint(self, spark: SparkSession, root: str, version: int) -> None:
        deltaspark_jvm.checkpoint(spark, root, version)


class OurSparkPath(Engine):
    """deltaspec's Spark path."""

    name = "ours"
    fmt = "deltaspec"

    @property
    def table(self) -> Any:
        return OurDeltaTable

    def save(
        self, df: DataFrame, root: str, mode: str, partition_by: Sequence[str] | None = None,
        **options: Any,
    ) -> None:  # fmt: skip
        write_delta(df, root, mode=mode, partition_by=partition_by, **options)

    def delete(self, spark: SparkSession, root: str, condition: str) -> None:
        delete(spark, root, condition)

    def update(
        self, spark: SparkSession, root: str, condition: str, assignments: Mapping[str, str]
    ) -> None:
        update(spark, root, assignments, condition)

    def merge(
        self, spark: SparkSession, root: str, source: DataFrame, on: str,
        clauses: Sequence[MergeClause],
    ) -> None:  # fmt: skip
        merge(spark, root, source, on, clauses)

    def compact(self, spark: SparkSession, root: str) -> None:
        compact(spark, root, target_files=1)

    def checkpoint(self, spark: SparkSession, root: str, version: int) -> None:
        log = DeltaLog(root)
        checkpoint_version(log, version, now_ms=log.clock())


DELTA_SPARK = DeltaSpark()
OURS = OurSparkPath()


def make_engines(spark: SparkSession) -> dict[str, Engine]:
    """delta-spark (``delta``) and our Spark path (``ours``) on ``spark``, which must have
    delta-spark loaded (``deltaspark_session.delta_session``), with ``format("deltaspec")``
    registered."""
    register(spark)
    return {DELTA_SPARK.name: DELTA_SPARK, OURS.name: OURS}
