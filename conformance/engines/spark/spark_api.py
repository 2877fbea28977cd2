"""deltaspec's Spark path as an ``Engine`` of the shared Spark API vocabulary:
``format("deltaspec")``, ``deltaspec.spark.tables.DeltaTable``, and deltaspec.spark's functions
(``write_delta``, ``delete``, ``update``, ``merge``, ``compact``) with the impl's checkpoint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from ....impl.checkpoint.policy import checkpoint_version
from ....impl.snapshot.delta_log import DeltaLog
from ....spark import MergeClause, compact, delete, merge, update, write_delta
from ....spark.tables import DeltaTable as OurDeltaTable
from ..spark_api import Engine


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


OURS = OurSparkPath()
