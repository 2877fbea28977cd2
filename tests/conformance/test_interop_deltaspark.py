"""Interop with live delta-spark 4.4.0, both ways, at every version.

- delta-spark reads what our Spark path writes: awkward partition values (space, ``%``, ``=``,
  ``/``, non-ASCII, null, the empty string, dates, timestamps), DML results, tombstones, our
  single and multi-part checkpoints: ``versionAsOf`` rows and ``DeltaLog`` file and tombstone lists
  equal ours.
- We read what delta-spark writes: its classic multi-part checkpoints
  (``spark.databricks.delta.checkpoint.partSize``), v2 checkpoints with sidecars
  (``delta.checkpointPolicy=v2``), deletion vectors, column mapping. Our ``DeltaLog`` snapshot,
  the reference scan (``impl/scan.py``) and ``spark.read_table`` agree with delta-spark's own
  snapshot and reads, except column mapping through Spark, which is refused with the typed
  ``UnsupportedFeatureError`` naming table and version.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from deltaspec.impl import codec, scan
from deltaspec.impl.checkpoint.policy import checkpoint_version
from deltaspec.impl.errors import UnsupportedFeatureError
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.spark import (
    MergeClause,
    compact,
    delete,
    merge,
    read_table,
    update,
    write_delta,
)

pytestmark = pytest.mark.spark

SCHEMA = "id long, p string, d date, ts timestamp, v string"
AWKWARD = ["a b", "x/y", "50%=", "ü€ß", None, "", "k=v"]
BASE = dt.datetime(2026, 11, 1, 12, 30, 15, 250000, tzinfo=dt.UTC)


def rows(ids: range) -> list[tuple[Any, ...]]:
    return [
        (i, AWKWARD[i % len(AWKWARD)], dt.date(2026, 1, 1 + i % 3),
         BASE + dt.timedelta(hours=i % 2), None if i % 5 == 0 else f"v{i}")
        for i in ids
    ]  # fmt: skip


def collected(df: Any) -> list[tuple[Any, ...]]:
    """Rows as tuples in column-name order, sorted (None-safe)."""
    columns = sorted(df.columns)
    return sorted((tuple(r[c] for c in columns) for r in df.collect()), key=repr)


def jvm_snapshot(spark: Any, path: Path, version: int) -> Any:
    jvm = spark._jvm
    log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, str(path))
    none = jvm.scala.Option.empty()
    return log.getSnapshotAt(version, none, none, False)


def their_files(spark: Any, path: Path, version: int) -> list[tuple[str, str | None]]:
    """delta-spark's live files at ``version``: (decoded path, deletion vector id)."""
    out = []
    for add in jvm_snapshot(spark, path, version).allFiles().collectAsList():
        dv = add.deletionVector()
        out.append((codec.decode_path(add.path()), None if dv is None else dv.uniqueId()))
    return sorted(out, key=repr)


def their_tombstones(spark: Any, path: Path, version: int) -> list[str]:
    snapshot = jvm_snapshot(spark, path, version)
    return sorted(codec.decode_path(r.path()) for r in snapshot.tombstones().collectAsList())


def our_files(path: Path, version: int) -> list[tuple[str, str | None]]:
    snapshot = DeltaLog(str(path)).snapshot(version)
    return sorted(
        ((codec.decode_path(a.path), None if a.deletion_vector is None else
          a.deletion_vector.unique_id) for a in snapshot.files.values()),
        key=repr,
    )  # fmt: skip


def versions(path: Path) -> range:
    return range(DeltaLog(str(path)).latest_version() + 1)


@contextmanager
def session_conf(spark: Any, key: str, value: str) -> Iterator[None]:
    previous = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if previous is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, previous)


@pytest.mark.rules(
    "ACTION.PARTITION_VALUES", "CHECKPOINT.CONTENTS", "CHECKPOINT.READ", "SNAPSHOT.FILE_KEY"
)
def test_delta_spark_reads_every_version_our_spark_path_writes(spark, tmp_path):
    path = tmp_path / "ours"
    frame = spark.createDataFrame(rows(range(21)), SCHEMA).repartition(2)
    write_delta(frame, path, partition_by=["p", "d", "ts"])
    write_delta(spark.createDataFrame(rows(range(21, 35)), SCHEMA), path, mode="append")
    delete(spark, path, "id = 3 OR v IS NULL")
    update(spark, path, {"v": "'u'"}, "id < 9")
    log = DeltaLog(str(path))
    checkpoint_version(log, 3, now_ms=log.clock())
    source = spark.createDataFrame(rows(range(30, 40)), SCHEMA)
    clauses = [MergeClause("update", assignments="*"), MergeClause("insert", assignments="*")]
    merge(spark, path, source, "t.id = s.id", clauses)
    compact(spark, path, target_files=1)
    checkpoint_version(log, 5, now_ms=log.clock(), parts=2)
    one = spark.createDataFrame([r for r in rows(range(40, 47)) if r[1] == "a b"], SCHEMA)
    write_delta(one, path, mode="overwrite", replaceWhere="p = 'a b'")
    assert len(list((path / "_delta_log").glob("*.checkpoint.*.parquet"))) == 2  # multi-part
    assert {p.name.split("/")[0] for p in path.iterdir()} >= {"p=a b", "p=x%2Fy", "p=50%25%3D"}
    for version in versions(path):
        theirs = spark.read.format("delta").option("versionAsOf", version).load(str(path))
        assert collected(theirs) == collected(read_table(spark, path, version=version)), version
        assert their_files(spark, path, version) == our_files(path, version), version
    latest = versions(path)[-1]
    ours = DeltaLog(str(path)).snapshot(latest)
    assert their_tombstones(spark, path, latest) == sorted(
        codec.decode_path(t.path) for t in ours.tombstones.values()
    )


def their_table(spark: Any, path: Path, **properties: str) -> None:
    """A delta-spark table: create, an append, a DELETE, an UPDATE, an OPTIMIZE."""
    frame = spark.createDataFrame(rows(range(14)), SCHEMA).repartition(2)
    writer = frame.write.format("delta").partitionBy("p")
    for key, value in properties.items():
        writer = writer.option(key, value)
    writer.save(str(path))
    more = spark.createDataFrame(rows(range(14, 28)), SCHEMA)
    more.write.format("delta").mode("append").save(str(path))
    from delta.tables import DeltaTable

    table = DeltaTable.forPath(spark, str(path))
    table.delete("id % 4 = 1")
    table.update("id < 10", {"v": "'u'"})
    spark.sql(f"OPTIMIZE delta.`{path}`").collect()


def assert_we_read_every_version(spark: Any, path: Path, *, through_spark: bool = True) -> None:
    for version in versions(path):
        assert our_files(path, version) == their_files(spark, path, version), version
        theirs = spark.read.format("delta").option("versionAsOf", version).load(str(path))
        expected = collected(theirs)
        reference = scan.scan(DeltaLog(str(path)).snapshot(version), path)
        assert collected(spark.createDataFrame(reference.to_pylist(), theirs.schema)) == expected
        if through_spark:
            assert collected(read_table(spark, path, version=version)) == expected, version


@pytest.mark.rules("CHECKPOINT.READ", "CHECKPOINT.CONTENTS", "SNAPSHOT.FILE_KEY")
def test_we_read_delta_sparks_multi_part_checkpoints_and_deletion_vectors(spark, tmp_path):
    path = tmp_path / "theirs"
    with session_conf(spark, "spark.databricks.delta.checkpoint.partSize", "3"):
        their_table(spark, path, **{"delta.checkpointInterval": "2",
                                    "delta.enableDeletionVectors": "true"})  # fmt: skip
    parts = sorted(p.name for p in (path / "_delta_log").glob("*.checkpoint.*.*.parquet"))
    assert parts, "delta-spark wrote no multi-part checkpoint"
    with_vectors = [v for v in versions(path) if any(dv for _, dv in our_files(path, v))]
    assert with_vectors, "delta-spark wrote no deletion vector"
    assert_we_read_every_version(spark, path)


@pytest.mark.rules("CHECKPOINT.READ")
def test_we_read_delta_sparks_v2_checkpoints_and_column_mapping(spark, tmp_path):
    """A v2 checkpoint with sidecars, on a table with column mapping (name mode, a renamed
    column): our snapshot and the reference scan read it; a read through Spark is refused with the
    typed error naming table and version."""
    path = tmp_path / "theirs"
    their_table(spark, path, **{"delta.checkpointPolicy": "v2", "delta.checkpointInterval": "2",
                                "delta.columnMapping.mode": "name"})  # fmt: skip
    spark.sql(f"ALTER TABLE delta.`{path}` RENAME COLUMN v TO renamed").collect()
    names = [p.name for p in (path / "_delta_log").iterdir()]
    assert any(".checkpoint." in n and n.count(".") >= 3 for n in names), names  # UUID-named
    assert list((path / "_delta_log" / "_sidecars").iterdir()), "no sidecar files"
    assert "v2Checkpoint" in (DeltaLog(str(path)).snapshot().protocol.writer_features or ())
    assert_we_read_every_version(spark, path, through_spark=False)
    latest = versions(path)[-1]
    with pytest.raises(UnsupportedFeatureError) as refused:
        read_table(spark, path, version=latest)
    assert refused.value.table == str(path) and refused.value.version == latest
