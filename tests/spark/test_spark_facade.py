"""The DeltaTable facade, format("deltaspec"), streaming and the Spark-path door checks (issue 16):
typed errors for bad options and conditions, no write through a symlink, staging reclaimed,
races made on purpose (withCommitHook, atVersion), delta-spark's exception names."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from deltaspec.conformance.spark_differential.scripts import forget_last_batch
from deltaspec.impl.actions import CommitInfo
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.spark import exceptions as delta_exceptions
from deltaspec.spark import write_delta
from deltaspec.spark.datasource import python_format, register
from deltaspec.spark.errors import (
    InvalidOptionError,
    NonDeterministicConditionError,
    NonDeterministicMergeConditionError,
    RestoreMissingFilesError,
    UnresolvedColumnError,
    UnsafeWritePathError,
    UnsupportedSubqueryError,
)
from deltaspec.spark.files import STAGING_DIR, reclaim_staging
from deltaspec.spark.manifest import MANIFEST_DIR
from deltaspec.spark.streaming import idempotent_writer
from deltaspec.spark.tables import DeltaTable

pytestmark = pytest.mark.spark

SCHEMA = "id long, p string, v string"


def _table(spark: SparkSession, root: Path, rows: list[tuple[Any, ...]], **options: Any) -> None:
    write_delta(
        spark.createDataFrame(rows, SCHEMA).coalesce(1), root, partition_by=["p"], **options
    )


def _rows(spark: SparkSession, root: Path) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in DeltaTable.forPath(spark, str(root)).toDF().collect())


def _info(root: Path, version: int) -> dict[str, Any]:
    actions = DeltaLog(str(root)).read_commit(version)
    return next(a for a in actions if isinstance(a, CommitInfo)).fields


# --- issue 16: write options with bad values -------------------------------------------------


@pytest.mark.parametrize(
    ("options", "mode"),
    [
        ({"dataChange": "no"}, "append"),
        ({"mergeSchema": "yes"}, "append"),
        ({"txnAppId": "job", "txnVersion": "1.5"}, "append"),
        ({"txnAppId": "job", "txnVersion": "-1"}, "append"),
        ({"txnAppId": "job", "txnVersion": True}, "append"),
        ({}, "bogus"),
    ],
)
def test_bad_write_options_are_typed_errors_and_commit_nothing(
    spark: SparkSession, tmp_path: Path, options: dict[str, Any], mode: str
) -> None:
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x")])
    df = spark.createDataFrame([(2, "a", "y")], SCHEMA)
    with pytest.raises(InvalidOptionError) as raised:
        write_delta(df, root, mode=mode, **options)
    assert raised.value.error_class == "DELTA_ILLEGAL_OPTION"
    register(spark)
    if mode == "append":  # the data source reads the same options the same way
        writer = df.write.format("deltaspec").mode("append")
        for key, value in options.items():
            writer = writer.option(key, value)
        with pytest.raises(Exception, match="DELTA_ILLEGAL_OPTION"):
            writer.save(str(root))
    assert DeltaLog(str(root)).latest_version() == 0


@pytest.mark.parametrize(
    "options",
    [
        {"compression": "zip"},
        {"compression": 5},
        {"maxRecordsPerFile": "many"},
        {"maxRecordsPerFile": 1.5},
        {"userMetadata": {"note": 1}},
        {"userMetadata": 5},
        {"replaceWhere": 5},
    ],
    ids=repr,
)
def test_bad_parquet_and_text_options_are_refused_before_anything_is_written(
    spark: SparkSession, tmp_path: Path, options: dict[str, Any]
) -> None:
    root = tmp_path / "t"
    df = spark.createDataFrame([(2, "a", "y")], SCHEMA)
    with pytest.raises(InvalidOptionError) as raised:
        write_delta(df, root, mode="overwrite", **options)
    assert raised.value.error_class == "DELTA_ILLEGAL_OPTION"
    assert not root.exists()
    if all(isinstance(v, str) for v in options.values()):  # the data source gets strings only
        register(spark)
        with pytest.raises(Exception, match="DELTA_ILLEGAL_OPTION"):
            df.write.format("deltaspec").mode("append").options(**options).save(str(root))
        assert not (root / "_delta_log").exists()


# --- issue 16: never through a symlink ---------------------------------------------------------


def test_a_symlinked_partition_directory_is_never_written_through(
    spark: SparkSession, tmp_path: Path
) -> None:
    root, outside = tmp_path / "t", tmp_path / "outside"
    _table(spark, root, [(1, "a", "x")])
    outside.mkdir()
    os.symlink(outside, root / "p=evil")
    df = spark.createDataFrame([(2, "evil", "y")], SCHEMA)
    with pytest.raises(UnsafeWritePathError):
        write_delta(df, root, mode="append")
    register(spark)
    with pytest.raises(Exception, match="DELTA_UNSAFE_PATH"):
        df.write.format("deltaspec").mode("append").save(str(root))
    assert list(outside.iterdir()) == []
    assert DeltaLog(str(root)).latest_version() == 0


def test_a_symlinked_staging_directory_is_never_written_through(
    spark: SparkSession, tmp_path: Path
) -> None:
    root, outside = tmp_path / "t", tmp_path / "outside"
    _table(spark, root, [(1, "a", "x")])
    outside.mkdir()
    (root / STAGING_DIR).rmdir()  # left empty by the first write
    os.symlink(outside, root / STAGING_DIR)
    with pytest.raises(UnsafeWritePathError):
        write_delta(spark.createDataFrame([(2, "a", "y")], SCHEMA), root, mode="append")
    assert list(outside.iterdir()) == []


# --- issue 16: staging directories of killed writes --------------------------------------------


def _staged(root: Path, age_s: float) -> Path:
    folder = root / STAGING_DIR / str(uuid.uuid4()) / "p=a"
    folder.mkdir(parents=True)
    data = folder / "part-0.parquet"
    data.write_bytes(b"PAR1")
    old = time.time() - age_s
    for path in (data, folder, folder.parent):
        os.utime(path, (old, old))
    return folder.parent


def test_vacuum_reclaims_staging_left_by_killed_writes_under_retention(
    spark: SparkSession, tmp_path: Path
) -> None:
    root, outside = tmp_path / "t", tmp_path / "outside"
    _table(spark, root, [(1, "a", "x")])
    stale, fresh = _staged(root, 8 * 24 * 3600), _staged(root, 60)
    outside.mkdir()
    (outside / "keep.parquet").write_bytes(b"PAR1")
    os.symlink(outside, root / STAGING_DIR / "linked")
    DeltaTable.forPath(spark, str(root)).vacuum()
    assert not stale.exists()
    assert fresh.exists()  # within retention: maybe a live write
    assert (outside / "keep.parquet").exists() and (root / STAGING_DIR / "linked").is_symlink()
    assert _rows(spark, root) == [(1, "a", "x")]


def test_staging_reclaim_never_follows_a_symlinked_staging_root(tmp_path: Path) -> None:
    root, outside = tmp_path / "t", tmp_path / "outside"
    root.mkdir()
    victim = outside / str(uuid.uuid4())
    victim.mkdir(parents=True)
    old = time.time() - 30 * 24 * 3600
    os.utime(victim, (old, old))
    os.symlink(outside, root / STAGING_DIR)
    assert reclaim_staging(str(root), 0, int(time.time() * 1000)) == []
    assert victim.exists()
    with pytest.raises(ValueError):
        reclaim_staging(str(root), float("nan"), 0)  # type: ignore[arg-type]


# --- issue 16: DML conditions refused as delta-spark refuses them ------------------------------


@pytest.mark.parametrize(
    ("condition", "error", "error_class"),
    [
        ("rand() > 0.5", NonDeterministicConditionError, "INVALID_NON_DETERMINISTIC_EXPRESSIONS"),
        ("id IN (SELECT 1)", UnsupportedSubqueryError, "DELTA_UNSUPPORTED_SUBQUERY"),
        ("EXISTS (SELECT 1)", UnsupportedSubqueryError, "DELTA_UNSUPPORTED_SUBQUERY"),
        ("nosuch = 1", UnresolvedColumnError, "UNRESOLVED_COLUMN.WITH_SUGGESTION"),
    ],
)
def test_dml_conditions_refused_with_typed_errors(
    spark: SparkSession, tmp_path: Path, condition: str, error: type, error_class: str
) -> None:
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x")])
    table = DeltaTable.forPath(spark, str(root))
    for run in (lambda: table.delete(condition), lambda: table.update(condition, {"v": "'q'"})):
        with pytest.raises(error) as raised:
            run()
        assert raised.value.error_class == error_class
        assert isinstance(raised.value, AnalysisException)  # a user's except clause catches it
        assert raised.value.table == str(root) and raised.value.version == 0
        assert "__deltaspec" not in str(raised.value)
    with pytest.raises(UnresolvedColumnError):
        table.update("id = 1", {"v": "nosuch"})
    with pytest.raises(UnresolvedColumnError) as unresolved:
        table.delete(F.col("nosuch") == 1)
    assert "__deltaspec" not in str(unresolved.value)
    assert DeltaLog(str(root)).latest_version() == 0


def test_merge_refuses_a_non_deterministic_condition(spark: SparkSession, tmp_path: Path) -> None:
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x")])
    source = spark.createDataFrame([(1, "a", "y")], SCHEMA)
    builder = (
        DeltaTable.forPath(spark, str(root))
        .alias("t")
        .merge(source.alias("s"), "t.id = s.id AND rand() > 0.5")
    )
    with pytest.raises(NonDeterministicMergeConditionError) as raised:
        builder.whenMatchedDelete().execute()
    assert raised.value.error_class == "DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED"


# --- issue 19: races on purpose, delta-spark's exception names ---------------------------------


def test_with_commit_hook_races_and_delta_names_catch_the_conflict(
    spark: SparkSession, tmp_path: Path
) -> None:
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x"), (2, "b", "y")])
    table = DeltaTable.forPath(spark, str(root))

    def concurrent_append() -> None:
        write_delta(spark.createDataFrame([(3, "a", "z")], SCHEMA), root, mode="append")

    with pytest.raises(delta_exceptions.ConcurrentAppendException) as raised:
        table.withCommitHook(concurrent_append).delete("p = 'a' AND id = 1")
    assert isinstance(raised.value, delta_exceptions.DeltaConcurrentModificationException)
    assert raised.value.getErrorClass() == "DELTA_CONCURRENT_APPEND"
    assert raised.value.winning_version == 1


@pytest.mark.rules("CONFLICT.APPEND_MATCH", "TXN.READ_PREDICATES")
def test_at_version_starts_an_operation_on_an_older_snapshot(
    spark: SparkSession, tmp_path: Path
) -> None:
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x"), (2, "b", "y")])
    write_delta(spark.createDataFrame([(3, "b", "z")], SCHEMA), root, mode="append")
    table = DeltaTable.forPath(spark, str(root))
    table.atVersion(0).delete("p = 'a'")  # disjoint from the append to p=b at v1: commits
    assert _info(root, 2)["readVersion"] == 0
    with pytest.raises(delta_exceptions.ConcurrentAppendException):
        table.atVersion(0).delete("p = 'b'")  # missed the append to p=b
    assert _rows(spark, root) == [(2, "b", "y"), (3, "b", "z")]


# --- issue 19: the facade's table services -----------------------------------------------------


def test_restore_history_detail_and_manifest(spark: SparkSession, tmp_path: Path) -> None:
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x")])
    _table(spark, root, [(2, "b", "y")], mode="append")
    table = DeltaTable.forPath(spark, str(root))
    table.delete("id = 1")
    metrics = table.restoreToVersion(1).collect()[0].asDict()
    assert metrics["num_restored_files"] == 1 and metrics["num_removed_files"] == 0
    assert _rows(spark, root) == [(1, "a", "x"), (2, "b", "y")]
    assert _info(root, 3)["operationParameters"] == {"version": 1, "timestamp": None}
    history = table.history(2).collect()
    assert [r["operation"] for r in history] == ["RESTORE", "DELETE"]
    assert history[0]["operationParameters"] == {"version": "1", "timestamp": "null"}
    detail = table.detail().collect()[0]
    assert (detail["format"], detail["partitionColumns"], detail["numFiles"]) == ("delta", ["p"], 2)
    table.generate("symlink_format_manifest")
    manifests = sorted(
        p.relative_to(root / MANIFEST_DIR) for p in (root / MANIFEST_DIR).rglob("manifest")
    )
    assert [str(m) for m in manifests] == ["p=a/manifest", "p=b/manifest"]
    listed = (root / MANIFEST_DIR / "p=a" / "manifest").read_text().split()
    assert len(listed) == 1 and listed[0].startswith("file:" + str(root))


def test_manifest_post_commit_hook_follows_every_commit(
    spark: SparkSession, tmp_path: Path
) -> None:
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x"), (2, "b", "y")],
           **{"delta.compatibility.symlinkFormatManifest.enabled": "true"})  # fmt: skip
    assert (root / MANIFEST_DIR / "p=b" / "manifest").exists()
    DeltaTable.forPath(spark, str(root)).delete("p = 'b'")
    assert not (root / MANIFEST_DIR / "p=b" / "manifest").exists()  # its partition is gone
    assert (root / MANIFEST_DIR / "p=a" / "manifest").exists()


def test_restore_refuses_a_version_whose_files_were_vacuumed(
    spark: SparkSession, tmp_path: Path
) -> None:
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x")])
    table = DeltaTable.forPath(spark, str(root))
    table.delete("id = 1")
    (first,) = [p for p in (root / "p=a").iterdir() if p.suffix == ".parquet"]
    first.unlink()
    with pytest.raises(RestoreMissingFilesError):
        table.restoreToVersion(0)
    assert DeltaLog(str(root)).latest_version() == 1


def test_format_deltaspec_round_trip_with_options(spark: SparkSession, tmp_path: Path) -> None:
    """The Python data source: behind the JVM one (``deltaspec_python``, which reads through it),
    or ``deltaspec`` itself without a JDK (tests/spark/test_spark_jvm_source.py: the JVM one)."""
    register(spark)
    fmt = python_format(spark)
    root = str(tmp_path / "t")
    df = spark.createDataFrame([(1, "a", "x"), (2, "b", None)], SCHEMA)
    df.write.format(fmt).mode("append").option("partitionBy", "p").save(root)
    extra = spark.createDataFrame([(3, "a", "z")], SCHEMA)
    (extra.write.format(fmt).mode("append").option("userMetadata", "nightly")
     .option("txnAppId", "job").option("txnVersion", 5).save(root))  # fmt: skip
    extra.write.format(fmt).mode("append").option("txnAppId", "job").option("txnVersion", 5).save(
        root
    )  # already applied: skipped
    assert DeltaLog(root).latest_version() == 1
    assert _info(Path(root), 1)["userMetadata"] == "nightly"
    with pytest.raises(Exception, match="DELTA_UNSUPPORTED_FEATURE"):  # needs Spark's parser
        extra.write.format(fmt).mode("overwrite").option("replaceWhere", "id = 3").save(root)
    with pytest.raises(Exception, match="DELTA_REPLACE_WHERE_MISMATCH"):
        extra.write.format(fmt).mode("overwrite").option("replaceWhere", "p = 'b'").save(root)
    assert DeltaLog(root).latest_version() == 1
    latest = spark.read.format(fmt).load(root)
    assert sorted(map(tuple, latest.collect())) == [(1, "a", "x"), (2, "b", None), (3, "a", "z")]
    first = spark.read.format(fmt).option("versionAsOf", 0).load(root)
    assert first.count() == 2
    metadata = DeltaLog(root).snapshot().metadata
    assert metadata.partition_columns == ("p",)
    stats = json.loads(next(iter(DeltaLog(root).snapshot().files.values())).stats or "{}")
    assert stats["numRecords"] >= 1 and "minValues" in stats


@pytest.mark.rules("SNAPSHOT.APP_TXN", "ACTION.TXN")
def test_idempotent_foreach_batch_writer_skips_a_replayed_batch(
    spark: SparkSession, tmp_path: Path
) -> None:
    root, source, checkpoint = tmp_path / "t", tmp_path / "src", tmp_path / "ckpt"
    source.mkdir()

    def run() -> None:
        query = (
            spark.readStream.schema(SCHEMA).json(str(source)).writeStream
            .foreachBatch(idempotent_writer(root, partition_by=["p"]))
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )  # fmt: skip
        query.awaitTermination()

    (source / "1.json").write_text('{"id": 1, "p": "a", "v": "x"}\n')
    run()
    (source / "2.json").write_text('{"id": 2, "p": "b", "v": "y"}\n')
    run()
    forget_last_batch(checkpoint)  # the batch was committed to the table; its completion lost
    run()
    assert _rows(spark, root) == [(1, "a", "x"), (2, "b", "y")]
    assert DeltaLog(str(root)).latest_version() == 1
