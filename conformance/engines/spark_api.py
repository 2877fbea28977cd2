"""The Spark API as a vocabulary two engines share: delta-spark (``deltaspark/spark_api.py``) and
our Spark path (``spark/spark_api.py``) behind one ``Engine`` interface, the DataFrame API, a
``DeltaTable`` class, WRITE, DELETE, UPDATE, MERGE, OPTIMIZE and a checkpoint. The Spark path
differential runs its scripts on the DataFrame API and the ``table`` class of each; the writes
suite's live mode runs the operations (``save`` … ``checkpoint``) of each. Both need a session with
delta-spark (``deltaspark.session.delta_session``); ``registry.make_engines`` gives the pair."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, DataFrameWriter, SparkSession

from ...spark import MergeClause


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
