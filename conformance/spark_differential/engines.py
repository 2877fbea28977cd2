"""The two engines a script runs on, and the small helpers scripts share."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame, DataFrameWriter, SparkSession

from deltaspec.spark.datasource import register
from deltaspec.spark.tables import DeltaTable as OurDeltaTable

SCHEMA = "id long, p string, v string"


@dataclass(frozen=True)
class Engine:
    name: str
    fmt: str
    table: Any  # the DeltaTable class

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


def make_engines(spark: SparkSession) -> dict[str, Engine]:
    """delta-spark (``delta``) and our Spark path (``ours``) on ``spark``, which must have
    delta-spark loaded (conformance/adapters/deltaspark_session.delta_session)."""
    register(spark)
    from delta.tables import DeltaTable as TheirDeltaTable

    return {
        "delta": Engine("delta", "delta", TheirDeltaTable),
        "ours": Engine("ours", "deltaspec", OurDeltaTable),
    }


def frame(spark: SparkSession, rows: list[tuple[Any, ...]], schema: str = SCHEMA) -> DataFrame:
    return spark.createDataFrame(rows, schema).coalesce(1)


def stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
