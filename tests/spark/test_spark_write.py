"""The PySpark write path on real local Spark: save modes, partitioning, replaceWhere, dynamic
partition overwrite, schema evolution, constraints, statistics, idempotent writes, reads."""

from __future__ import annotations

import json
import os
import time

import deltalake
import pytest
from pyspark.sql.types import LongType, StringType, StructField, StructType

from deltaspec.impl import codec
from deltaspec.impl.actions import CommitInfo
from deltaspec.impl.errors import (
    AppendOnlyViolationError,
    LogAccessError,
    UnsupportedFeatureError,
)
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.snapshot.time_travel import TimestampGreaterThanCommitError
from deltaspec.spark import (
    DeltaWriter,
    create_table,
    read_table,
    write_delta,
)
from deltaspec.spark.datasource import register
from deltaspec.spark.errors import (
    CheckConstraintViolationError,
    DataChangeFalseError,
    DeltaPathExistsError,
    NonPartitionColumnReferenceError,
    NotNullViolationError,
    OverwriteRequiredError,
    PartitioningMismatchError,
    ReplaceWhereMismatchError,
    ReplaceWhereWithDynamicPartitionOverwriteError,
    SchemaMismatchError,
)

pytestmark = pytest.mark.spark


def _rows(spark, root, **kw):
    return sorted(tuple(r) for r in read_table(spark, root, **kw).collect())


def _commit_info(root, version) -> dict:
    actions = DeltaLog(str(root)).read_commit(version)
    return next(a for a in actions if isinstance(a, CommitInfo)).fields


def _df(spark, rows, schema="id long, p string, v string"):
    return spark.createDataFrame(rows, schema)


def test_append_creates_then_appends_blindly(spark, tmp_path):
    root = tmp_path / "t"
    first = DeltaWriter(_df(spark, [(1, "a", "x"), (2, "b", None)])).mode("append").save(root)
    second = DeltaWriter(_df(spark, [(3, "a", "y")])).mode("append").save(root)
    assert (first.version, second.version) == (0, 1)
    assert _rows(spark, root) == [(1, "a", "x"), (2, "b", None), (3, "a", "y")]
    info = _commit_info(root, 1)
    assert info["operation"] == "WRITE"
    assert info["operationParameters"] == {"mode": "Append", "partitionBy": "[]"}
    assert info["isBlindAppend"] is True and info["readVersion"] == 0
    assert info["operationMetrics"]["numOutputRows"] == "1"
    snapshot = DeltaLog(str(root)).snapshot()
    assert json.loads(snapshot.metadata.schema_string)["fields"][0] == {
        "name": "id",
        "type": "long",
        "nullable": True,
        "metadata": {},
    }


def test_error_if_exists_is_the_default_and_ignore_skips(spark, tmp_path):
    root = tmp_path / "t"
    DeltaWriter(_df(spark, [(1, "a", "x")])).save(root)
    with pytest.raises(DeltaPathExistsError) as error:
        DeltaWriter(_df(spark, [(2, "a", "x")])).save(root)
    assert error.value.table == str(root) and error.value.version == 0
    ignored = DeltaWriter(_df(spark, [(2, "a", "x")])).mode("ignore").save(root)
    assert ignored.version is None and ignored.skipped == "ignore"
    assert DeltaLog(str(root)).latest_version() == 0
    assert _rows(spark, root) == [(1, "a", "x")]


@pytest.mark.rules("PATH.REGULAR_FILES")
def test_a_table_path_that_is_a_regular_file_is_a_typed_error_naming_it(spark, tmp_path):
    """Issue 48: the write made its data files' directory with os.makedirs and raised a raw
    FileExistsError; now LogAccessError naming the table path, before any data is written, from
    the DataFrame writer and from format("deltaspec") (whose errors reach PySpark as the facade's
    exceptions, error class first) alike, and the file is left as it was."""
    register(spark)
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"not a table")
    df = _df(spark, [(1, "a", "x")])
    for root in (blocker, blocker / "below"):
        with pytest.raises(LogAccessError) as refused:
            DeltaWriter(df).mode("append").save(root)
        assert refused.value.table == str(root)
        assert "not a directory" in refused.value.message
        with pytest.raises(Exception, match=r"DELTA_LOG_ACCESS_ERROR.*not a directory"):
            df.write.format("deltaspec").mode("append").save(str(root))
        assert blocker.read_bytes() == b"not a table"
        assert os.listdir(tmp_path) == ["a-file"]


def test_overwrite_reads_the_whole_table(spark, tmp_path):
    root = tmp_path / "t"
    write_delta(_df(spark, [(1, "a", "x"), (2, "b", "y")]), root, partition_by=["p"])
    result = write_delta(_df(spark, [(9, "c", "z")]), root, mode="overwrite")
    assert _rows(spark, root) == [(9, "c", "z")]
    assert len(result.removes) == 2 and all(r.data_change for r in result.removes)
    info = _commit_info(root, 1)
    assert info["operationParameters"]["mode"] == "Overwrite"
    assert info["isBlindAppend"] is False


SPECIAL = ["a b", "x/y", "100%", "k=v", "c:d", "é ü", "[*]{?}", "#hash", None, ""]


def test_special_partition_values_escape_like_delta_spark(spark, tmp_path):
    root = tmp_path / "t"
    rows = [(i, value, f"v{i}") for i, value in enumerate(SPECIAL)]
    write_delta(_df(spark, rows), root, partition_by=["p"])
    snapshot = DeltaLog(str(root)).snapshot()
    for add in snapshot.files.values():
        value = add.partition_values["p"]
        directory = codec.partition_directory([("p", value)])
        assert codec.decode_path(add.path).startswith(directory + "/")
        assert add.path == codec.encode_path(codec.decode_path(add.path))
        assert (root / codec.decode_path(add.path)).exists()
    values = sorted((a.partition_values["p"] or "<null>") for a in snapshot.files.values())
    assert values == sorted({(v or "<null>") for v in SPECIAL})
    # empty string and null both land in the default partition, as in Spark
    expected = sorted((i, v if v else None, f"v{i}") for i, v in enumerate(SPECIAL))
    assert _rows(spark, root) == sorted(expected, key=repr) or _rows(spark, root) == expected
    theirs = deltalake.DeltaTable(str(root)).to_pyarrow_table()
    ours = sorted(zip(*(theirs.column(c).to_pylist() for c in ("id", "p", "v")), strict=True))
    assert ours == sorted(_rows(spark, root))


def test_replace_where_on_partitions(spark, tmp_path):
    root = tmp_path / "t"
    write_delta(_df(spark, [(1, "a", "x"), (2, "b", "y")]), root, partition_by=["p"])
    write_delta(_df(spark, [(3, "a", "z")]), root, mode="overwrite", replaceWhere="p = 'a'")
    assert _rows(spark, root) == [(2, "b", "y"), (3, "a", "z")]
    info = _commit_info(root, 1)
    assert info["operationParameters"]["predicate"] == "p = 'a'"
    with pytest.raises(ReplaceWhereMismatchError):
        write_delta(_df(spark, [(4, "b", "w")]), root, mode="overwrite", replaceWhere="p = 'a'")
    assert DeltaLog(str(root)).latest_version() == 1
    # the rejected write's data file was deleted again
    assert len(list((root / "p=b").glob("*.parquet"))) == 1


def test_replace_where_on_data_columns(spark, tmp_path):
    root = tmp_path / "t"
    write_delta(_df(spark, [(i, "a", "x") for i in range(6)]), root, partition_by=["p"])
    write_delta(_df(spark, [(10, "a", "new")]), root, mode="overwrite", replaceWhere="id >= 3")
    assert _rows(spark, root) == [(0, "a", "x"), (1, "a", "x"), (2, "a", "x"), (10, "a", "new")]
    with pytest.raises(ReplaceWhereMismatchError):
        write_delta(_df(spark, [(1, "a", "bad")]), root, mode="overwrite", replaceWhere="id >= 3")
    with pytest.raises(NonPartitionColumnReferenceError):
        write_delta(
            _df(spark, [(11, "a", "z")]),
            root,
            mode="overwrite",
            replaceWhere="id >= 3",
            **{"replaceWhere.dataColumns.enabled": "false"},
        )
    assert DeltaLog(str(root)).latest_version() == 1


def test_dynamic_partition_overwrite_replaces_only_written_partitions(spark, tmp_path):
    root = tmp_path / "t"
    write_delta(
        _df(spark, [(1, "a", "x"), (2, "b", "y"), (3, None, "n")]), root, partition_by=["p"]
    )
    write_delta(
        _df(spark, [(4, "a", "new"), (5, None, "nn")]),
        root,
        mode="overwrite",
        partitionOverwriteMode="dynamic",
    )
    assert _rows(spark, root) == sorted([(2, "b", "y"), (4, "a", "new"), (5, None, "nn")], key=repr)
    with pytest.raises(ReplaceWhereWithDynamicPartitionOverwriteError):
        write_delta(
            _df(spark, [(6, "a", "z")]),
            root,
            mode="overwrite",
            partitionOverwriteMode="dynamic",
            replaceWhere="p = 'a'",
        )


def test_schema_evolution_and_mismatches(spark, tmp_path):
    root = tmp_path / "t"
    write_delta(_df(spark, [(1, "a", "x")]), root, partition_by=["p"])
    extra = spark.createDataFrame([(2, "a", "y", 7)], "id long, p string, v string, w int")
    with pytest.raises(SchemaMismatchError):
        write_delta(extra, root, mode="append")
    write_delta(extra, root, mode="append", mergeSchema="true")
    names = [
        f["name"]
        for f in json.loads(DeltaLog(str(root)).snapshot().metadata.schema_string)["fields"]
    ]
    assert names == ["id", "p", "v", "w"]
    assert _rows(spark, root) == [(1, "a", "x", None), (2, "a", "y", 7)]
    wrong_type = spark.createDataFrame([(3, "a", 5)], "id long, p string, v int")
    with pytest.raises(SchemaMismatchError):
        write_delta(wrong_type, root, mode="append")
    with pytest.raises(PartitioningMismatchError):
        write_delta(_df(spark, [(4, "a", "x")]), root, mode="append", partition_by=["v"])
    with pytest.raises(OverwriteRequiredError):
        write_delta(_df(spark, [(4, "a", "x")]), root, mode="overwrite", partition_by=["v"])
    replaced = spark.createDataFrame([("only",)], "q string")
    write_delta(replaced, root, mode="overwrite", overwriteSchema="true", partition_by=[])
    snapshot = DeltaLog(str(root)).snapshot()
    assert snapshot.metadata.partition_columns == ()
    assert _rows(spark, root) == [("only",)]
    with pytest.raises(DataChangeFalseError):
        write_delta(extra, root, mode="append", mergeSchema="true", dataChange="false")


def test_not_null_and_check_constraints_are_enforced(spark, tmp_path):
    root = tmp_path / "t"
    schema = StructType(
        [StructField("id", LongType(), False), StructField("p", StringType(), False),
         StructField("v", StringType(), True)]
    )  # fmt: skip
    create_table(root, schema, partition_by=["p"], properties={"delta.constraints.pos": "id > 0"})
    write_delta(_df(spark, [(1, "a", None)]), root, mode="append")
    before = sorted(str(p) for p in root.rglob("*.parquet"))
    with pytest.raises(NotNullViolationError, match="id"):
        write_delta(_df(spark, [(None, "a", "x")]), root, mode="append")
    with pytest.raises(NotNullViolationError, match="p"):
        write_delta(_df(spark, [(2, None, "x")]), root, mode="append")
    with pytest.raises(CheckConstraintViolationError):
        write_delta(_df(spark, [(-5, "a", "x")]), root, mode="append")
    assert DeltaLog(str(root)).latest_version() == 1
    assert sorted(str(p) for p in root.rglob("*.parquet")) == before


def test_append_only_tables_refuse_overwrite(spark, tmp_path):
    root = tmp_path / "t"
    write_delta(_df(spark, [(1, "a", "x")]), root, **{"delta.appendOnly": "true"})
    write_delta(_df(spark, [(2, "a", "x")]), root, mode="append")
    with pytest.raises(AppendOnlyViolationError):
        write_delta(_df(spark, [(3, "a", "x")]), root, mode="overwrite")
    assert DeltaLog(str(root)).snapshot().metadata.configuration == {"delta.appendOnly": "true"}


def test_user_metadata_and_idempotent_writes(spark, tmp_path):
    root = tmp_path / "t"
    options = {"txnAppId": "job-1", "txnVersion": 5, "userMetadata": "nightly"}
    first = write_delta(_df(spark, [(1, "a", "x")]), root, mode="append", **options)
    again = write_delta(_df(spark, [(1, "a", "x")]), root, mode="append", **options)
    older = write_delta(
        _df(spark, [(1, "a", "x")]), root, mode="append", **{**options, "txnVersion": 4}
    )
    newer = write_delta(
        _df(spark, [(2, "a", "y")]), root, mode="append", **{**options, "txnVersion": 6}
    )
    assert (first.version, again.skipped, older.skipped, newer.version) == (0, "txn", "txn", 1)
    assert _rows(spark, root) == [(1, "a", "x"), (2, "a", "y")]
    assert DeltaLog(str(root)).snapshot().txn_version("job-1") == 6
    assert _commit_info(root, 1)["userMetadata"] == "nightly"


def test_data_change_false_rearrangement_is_snapshot_isolation(spark, tmp_path):
    root = tmp_path / "t"
    write_delta(_df(spark, [(i, "a", "x") for i in range(4)]), root)
    result = write_delta(
        read_table(spark, root).coalesce(1), root, mode="overwrite", dataChange="false"
    )
    assert all(not a.data_change for a in result.adds)
    assert all(not r.data_change for r in result.removes)
    assert _commit_info(root, 1)["isolationLevel"] == "SnapshotIsolation"
    assert len(_rows(spark, root)) == 4


def test_statistics_shape_and_first_32_columns(spark, tmp_path):
    root = tmp_path / "t"
    columns = ", ".join(f"c{i} long" for i in range(40))
    long_text = "z" * 40
    df = (
        spark.createDataFrame(
            [(*range(40), "a" * 40, "2024-01-02")], columns + ", s string, d string"
        )
        .selectExpr("*", "cast(d as date) as day")
        .drop("d")
    )
    write_delta(df, root)
    (add,) = DeltaLog(str(root)).snapshot().files.values()
    stats = json.loads(add.stats)
    assert stats["numRecords"] == 1
    assert sorted(stats["minValues"]) == sorted(f"c{i}" for i in range(32))
    assert sorted(stats["nullCount"]) == sorted(f"c{i}" for i in range(32))
    write_delta(
        spark.createDataFrame([(long_text, 1)], "s string, n long"),
        tmp_path / "u",
        **{"delta.dataSkippingNumIndexedCols": "-1"},
    )
    (add,) = DeltaLog(str(tmp_path / "u")).snapshot().files.values()
    stats = json.loads(add.stats)
    assert stats["minValues"]["s"] == "z" * 32
    assert stats["maxValues"]["s"] == "z" * 32 + "\u007f"


def test_reads_by_version_and_timestamp(spark, tmp_path):
    root = tmp_path / "t"
    write_delta(_df(spark, [(1, "a", "x")]), root)
    time.sleep(0.05)
    write_delta(_df(spark, [(2, "a", "y")]), root, mode="append")
    log = DeltaLog(str(root))
    first_time = os.stat(root / "_delta_log" / "00000000000000000000.json").st_mtime_ns // 1_000_000
    assert _rows(spark, root, version=0) == [(1, "a", "x")]
    assert _rows(spark, root, timestamp_ms=first_time) == [(1, "a", "x")]
    assert len(_rows(spark, root)) == 2
    with pytest.raises(TimestampGreaterThanCommitError):
        read_table(spark, root, timestamp_ms=log.snapshot().timestamp + 60_000)


def test_deletion_vectors_are_applied(spark, fixtures_dir):
    """kernel DeletionVectorSuite's answer: ids 0..499 except multiples of 11 (454 rows)."""
    rows = read_table(spark, fixtures_dir / "kernel-dv-many-versions").collect()
    assert sorted(r["id"] for r in rows) == [i for i in range(500) if i % 11]


def test_column_mapping_is_a_typed_unsupported_error(spark, fixtures_dir):
    root = fixtures_dir / "golden-dv-column-mapping"
    with pytest.raises(UnsupportedFeatureError) as error:
        read_table(spark, root)
    assert error.value.table == str(root) and error.value.version is not None


def test_written_tables_read_identically_by_deltalake(spark, tmp_path):
    root = tmp_path / "t"
    df = spark.createDataFrame(
        [(i, f"p{i % 3}", i * 1.5, f"s{i}") for i in range(50)],
        "id long, p string, x double, s string",
    )
    write_delta(df, root, partition_by=["p"])
    write_delta(df.where("id < 10 AND p = 'p1'"), root, mode="overwrite", replaceWhere="p = 'p1'")
    ours = sorted(tuple(r) for r in read_table(spark, root).select("id", "p", "x", "s").collect())
    table = deltalake.DeltaTable(str(root)).to_pyarrow_table()
    theirs = sorted(zip(*(table.column(c).to_pylist() for c in ("id", "p", "x", "s")), strict=True))
    assert ours == theirs
    assert len(ours) == 50 - 17 + 3
