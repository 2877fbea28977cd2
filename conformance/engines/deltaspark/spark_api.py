"""delta-spark's public PySpark API as an ``Engine`` of the shared Spark API vocabulary:
``format("delta")``, ``delta.tables.DeltaTable``, SQL on ``delta.`path```, and delta-spark's
``DeltaLog`` for a checkpoint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from ....spark import MergeClause
from ..spark_api import Engine
from . import jvm as deltaspark_jvm


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
        from delta.tables import DeltaTable  # lazy: delta-spark is optional

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


DELTA_SPARK = DeltaSpark()
