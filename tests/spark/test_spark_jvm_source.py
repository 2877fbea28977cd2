"""format("deltaspec") through its JVM data source (spark/jvm, issue 34 item 4): Spark's default
save mode, ``ignore`` and ``.partitionBy(...)`` as delta-spark's ``format("delta")`` takes them,
checked against live delta-spark in the same session; errors keep their Delta error class; the
jar is built once into the cache."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import (
    AnalysisException,
    IllegalArgumentException,
)
from pyspark.sql import SparkSession

from deltaspec.impl.errors import DeltaError
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.spark import jvm_source
from deltaspec.spark.errors import (
    DeltaPathExistsError,
    InvalidOptionError,
    MetadataMismatchError,
)
from deltaspec.spark.session import configure
from deltaspec.spark.tables import DeltaTable

pytestmark = pytest.mark.spark

ROWS = [(1, "a"), (2, "b"), (3, "a")]


def _df(spark: SparkSession, rows: list[tuple[Any, ...]] = ROWS) -> Any:
    return spark.createDataFrame(rows, "id long, p string").coalesce(1)


def _sorted(df: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.collect())


def _condition(run: Any) -> tuple[type[BaseException], str | None]:
    with pytest.raises(Exception) as caught:
        run()
    error = caught.value
    return type(error), error.getCondition() if hasattr(error, "getCondition") else None


def test_the_session_has_the_jvm_source(spark: SparkSession) -> None:
    """The tests' session (local_session) loads the JVM class under the name "deltaspec"; the
    Python data source stands behind it as "deltaspec_python"."""
    from deltaspec.spark.datasource import _jvm_provider

    assert _jvm_provider(spark) is not None
    jars = spark.sparkContext.getConf().get("spark.jars", "")
    assert str(jvm_source.jar_path()) in jars.split(",")
    assert any("delta-spark" in j or "delta-" in j for j in jars.split(","))  # kept, not replaced


def test_default_save_mode_creates_then_refuses_as_delta_spark(
    spark: SparkSession, tmp_path: Path
) -> None:
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    _df(spark).write.format("deltaspec").save(ours)  # Spark's default mode: ErrorIfExists
    _df(spark).write.format("delta").save(theirs)
    assert DeltaLog(ours).snapshot().version == 0
    assert _sorted(DeltaTable.forPath(spark, ours).toDF()) == ROWS
    info = DeltaTable.forPath(spark, ours).history().collect()[0]
    assert info["operationParameters"]["mode"] == "ErrorIfExists"

    with pytest.raises(AnalysisException) as caught:
        _df(spark).write.format("deltaspec").save(ours)
    with pytest.raises(AnalysisException) as expected:
        _df(spark).write.format("delta").save(theirs)
    assert caught.value.getCondition() == expected.value.getCondition() == "DELTA_PATH_EXISTS"
    assert isinstance(caught.value, DeltaPathExistsError)  # the facade's own error, as raised
    assert DeltaLog(ours).snapshot().version == 0
    # the same through DeltaWriter's spelling of the mode names
    with pytest.raises(AnalysisException):
        _df(spark).write.format("deltaspec").mode("error").save(ours)


def test_ignore_mode(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _df(spark).write.format("deltaspec").mode("ignore").save(path)  # no table: written
    _df(spark, [(9, "z")]).write.format("deltaspec").mode("ignore").save(path)  # table: nothing
    assert DeltaLog(path).latest_version() == 0
    assert _sorted(spark.read.format("deltaspec").load(path)) == ROWS


def test_partition_by_writes_a_partitioned_table_delta_spark_reads(
    spark: SparkSession, tmp_path: Path
) -> None:
    ours, theirs = str(tmp_path / "ours"), str(tmp_path / "theirs")
    _df(spark).write.format("deltaspec").partitionBy("p").save(ours)
    _df(spark).write.format("delta").partitionBy("p").save(theirs)
    ours_meta = DeltaLog(ours).snapshot().metadata
    assert ours_meta.partition_columns == DeltaLog(theirs).snapshot().metadata.partition_columns
    assert ours_meta.partition_columns == ("p",)
    assert sorted(os.listdir(ours)) == ["_delta_log", "_delta_staging", "p=a", "p=b"]
    info = DeltaTable.forPath(spark, ours).history().collect()[0]
    assert json.loads(info["operationParameters"]["partitionBy"]) == ["p"]
    # delta-spark reads our table, we read delta-spark's, the rows are the written ones
    assert _sorted(spark.read.format("delta").load(ours)) == ROWS
    assert _sorted(spark.read.format("deltaspec").load(theirs)) == ROWS
    assert _sorted(DeltaTable.forPath(spark, ours).toDF()) == ROWS
    # appending with another partitioning is refused as delta-spark refuses it
    other = _df(spark).write.format("deltaspec").mode("append").partitionBy("id")
    with pytest.raises(AnalysisException) as caught:
        other.save(ours)
    assert isinstance(caught.value, MetadataMismatchError)
    assert caught.value.getCondition() == "DELTA_METADATA_MISMATCH"


def test_the_partition_by_option_still_works(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _df(spark).write.format("deltaspec").mode("append").option("partitionBy", "p").save(path)
    assert DeltaLog(path).snapshot().metadata.partition_columns == ("p",)


def test_reads_time_travel_and_keep_the_error_class(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "t")
    _df(spark).write.format("deltaspec").save(path)
    _df(spark, [(4, "c")]).write.format("deltaspec").mode("append").save(path)
    assert len(spark.read.format("deltaspec").load(path).collect()) == 4
    first = spark.read.format("deltaspec").option("versionAsOf", 0).load(path)
    assert _sorted(first) == ROWS
    assert _sorted(first.where("id > 1").select("p")) == [("a",), ("b",)]
    with pytest.raises(AnalysisException) as caught:
        spark.read.format("deltaspec").option("versionAsOf", 7).load(path)
    assert isinstance(caught.value, DeltaError)
    assert caught.value.getCondition() != "PYTHON_DATA_SOURCE_ERROR"
    assert caught.value.getCondition() == caught.value.error_class  # type: ignore[attr-defined]
    with pytest.raises(AnalysisException) as missing:
        spark.read.format("deltaspec").load(str(tmp_path / "none"))
    assert missing.value.getCondition() == "DELTA_MISSING_DELTA_TABLE"


def test_write_errors_keep_their_class_and_pyspark_type(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "t")
    _df(spark).write.format("deltaspec").save(path)
    text_ids = spark.createDataFrame([("x", "a")], "id string, p string")
    with pytest.raises(AnalysisException) as mismatch:
        text_ids.write.format("deltaspec").mode("append").save(path)
    assert mismatch.value.getCondition() == "DELTA_METADATA_MISMATCH"
    bad_option = _df(spark).write.format("deltaspec").mode("append").option("dataChange", "no")
    with pytest.raises(IllegalArgumentException) as option:
        bad_option.save(path)
    assert isinstance(option.value, InvalidOptionError)
    assert option.value.getCondition() == "DELTA_ILLEGAL_OPTION"
    assert DeltaLog(path).latest_version() == 0


@pytest.mark.parametrize(
    ("base", "condition", "expected"),
    [
        ("AnalysisException", "DELTA_PATH_EXISTS", AnalysisException),
        ("IllegalArgumentException", "DELTA_ILLEGAL_OPTION", IllegalArgumentException),
    ],
)
def test_without_our_converter_the_java_error_has_the_class(
    spark: SparkSession, base: str, condition: str, expected: type[Exception]
) -> None:
    """What the converter deltaspec wraps (PySpark's, or delta-spark's around it) makes of the
    Java exception the JVM source throws: the PySpark class delta-spark raises, with the Delta
    error class and SQLSTATE."""
    from pyspark.errors.exceptions import captured

    from deltaspec.spark.datasource import PROVIDER

    plain = captured.convert_exception._original  # type: ignore[attr-defined]
    message = f"[{condition}] what went wrong"
    java = getattr(spark._jvm, PROVIDER).error(base, condition, "42000", message, "no-such-key")
    converted = plain(java)
    assert isinstance(converted, expected) and not isinstance(converted, DeltaError)
    assert converted.getCondition() == condition
    assert converted.getSqlState() == "42000"
    assert message in str(converted)
    # ours gives the same when it holds no Python exception for the key
    assert type(captured.convert_exception(java)) is type(converted)


def test_the_jar_is_built_once_into_the_cache(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("DELTASPEC_CACHE", str(tmp_path))
    jar = jvm_source.jar_path()
    assert jar == tmp_path / "spark-jvm" / jvm_source.fingerprint() / "deltaspec-spark.jar"
    names = zipfile.ZipFile(jar).namelist()
    assert "deltaspec/spark/jvm/DeltaspecSource.class" in names
    assert "deltaspec/spark/jvm/DeltaspecCallback.class" in names
    services = zipfile.ZipFile(jar).read(jvm_source.SERVICES).decode()
    assert services.strip() == jvm_source.PROVIDER
    built = jar.stat().st_mtime_ns
    assert jvm_source.jar_path() == jar and jar.stat().st_mtime_ns == built  # not rebuilt
    assert list(jar.parent.iterdir()) == [jar]  # no build leftovers


def test_configure_keeps_the_builders_jars(tmp_path: Path) -> None:
    builder = SparkSession.Builder().config("spark.jars", "/opt/a.jar,/opt/b.jar")
    configured = configure(builder)
    jars = configured._options["spark.jars"].split(",")
    assert jars == ["/opt/a.jar", "/opt/b.jar", str(jvm_source.jar_path())]
    assert configure(configured)._options["spark.jars"].split(",") == jars  # added once


def test_replace_where_over_a_data_column(spark: SparkSession, tmp_path: Path) -> None:
    """What the Python data source refused (it has no SQL parser): the JVM source writes through
    DeltaWriter, which has Spark's; the same rows as delta-spark's."""
    for fmt in ("deltaspec", "delta"):
        path = str(tmp_path / fmt)
        _df(spark).write.format(fmt).save(path)
        replacing = _df(spark, [(2, "c"), (3, "c")]).write.format(fmt).mode("overwrite")
        replacing.option("replaceWhere", "id >= 2").save(path)
        assert _sorted(spark.read.format(fmt).load(path)) == [(1, "a"), (2, "c"), (3, "c")]
