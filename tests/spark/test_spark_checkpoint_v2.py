"""Interop with live delta-spark 4.4.0: it reads the v2 checkpoints and the stats_parsed
checkpoints our impl writes (rows, version, files) with the commits they cover deleted, we read
the v2 checkpoints it writes, and both read a log compaction file the same way
(CHECKPOINT.V2_WRITE, CHECKPOINT.STATS_AS_STRUCT, LOG.COMPACTION)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.errors import CorruptLogError
from deltaspec.impl.log.names import commit_name, compaction_name
from deltaspec.impl.snapshot.delta_log import DeltaLog

pytestmark = pytest.mark.spark


def _spark_state(spark: Any, root: Path, version: int | None = None) -> tuple[int, list[str], int]:
    """delta-spark's version, live paths and row count of ``root`` (a fresh DeltaLog)."""
    from pyspark.sql import DataFrame

    jvm = spark._jvm
    jvm.org.apache.spark.sql.delta.DeltaLog.clearCache()
    log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, str(root))
    none = jvm.scala.Option.empty()
    snap = (
        log.update(False, none, none)
        if version is None
        else log.getSnapshotAt(version, none, none, False)
    )
    paths = sorted(
        r["path"] for r in DataFrame(snap.allFiles().toDF(), spark).select("path").collect()
    )
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", version)
    return snap.version(), paths, reader.load(str(root)).count()


def _ours(root: Path, version: int | None = None) -> tuple[int, list[str]]:
    snapshot = DeltaLog(str(root), cache=False).snapshot(version)
    return snapshot.version, sorted(snapshot.files_table().column("path").to_pylist())


def _table(spark: Any, root: Path, properties: str, inserts: int = 3) -> None:
    spark.sql(
        f"CREATE TABLE delta.`{root}` (id INT, p STRING) USING delta PARTITIONED BY (p) "
        f"TBLPROPERTIES ('delta.checkpointInterval'='1000'{properties})"
    )
    for i in range(inserts):
        spark.sql(f"INSERT INTO delta.`{root}` VALUES ({i}, 'a{i % 2}'), ({i + 10}, 'b')")


def _drop_below(root: Path, version: int) -> None:
    """Delete the commits (and their checksums) below ``version``: readers must use the
    checkpoint."""
    log = root / "_delta_log"
    for v in range(version):
        for name in (commit_name(v), f"{v:020d}.crc"):
            (log / name).unlink(missing_ok=True)


@pytest.mark.rules("CHECKPOINT.V2_WRITE", "CHECKPOINT.LAST_CHECKPOINT")
def test_deltaspark_reads_our_v2_checkpoint(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "ours_v2"
    _table(spark, root, ", 'delta.checkpointPolicy'='v2'")
    before = _spark_state(spark, root)
    log = DeltaLog(str(root), cache=False)
    result = write_checkpoint(log, log.snapshot(), now_ms=int(time.time() * 1000))
    assert ".checkpoint." in result.files[0] and result.files[0].endswith(".json")
    _drop_below(root, before[0])
    assert _spark_state(spark, root) == before
    assert _ours(root) == (before[0], before[1])


@pytest.mark.rules("CHECKPOINT.V2_WRITE", "CHECKPOINT.READ")
def test_we_read_deltaspark_v2_checkpoint(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "theirs_v2"
    _table(spark, root, ", 'delta.checkpointPolicy'='v2'")
    jvm = spark._jvm
    jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, str(root)).checkpoint()
    before = _spark_state(spark, root)
    assert any((root / "_delta_log" / "_sidecars").iterdir())
    _drop_below(root, before[0])
    assert _ours(root) == (before[0], before[1])


@pytest.mark.rules("CHECKPOINT.STATS_AS_STRUCT")
def test_deltaspark_reads_our_stats_parsed(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "ours_struct"
    _table(spark, root, ", 'delta.checkpoint.writeStatsAsStruct'='true'")
    before = _spark_state(spark, root)
    log = DeltaLog(str(root), cache=False)
    write_checkpoint(log, log.snapshot(), now_ms=int(time.time() * 1000))
    _drop_below(root, before[0])
    assert _spark_state(spark, root) == before
    # data skipping from the checkpoint's stats: a filter on id prunes files
    count = spark.read.format("delta").load(str(root)).where("id = 11").count()
    assert count == 1


@pytest.mark.rules("LOG.COMPACTION")
def test_compaction_file_read_alike(spark: Any, tmp_path: Path) -> None:
    root = tmp_path / "compacted"
    _table(spark, root, "", inserts=4)
    log_dir = root / "_delta_log"
    lines: list[str] = []
    for v in (1, 2, 3):
        text = (log_dir / commit_name(v)).read_text()
        lines += [line for line in text.splitlines() if '"add"' in line]
    (log_dir / compaction_name(1, 3)).write_text("\n".join(lines) + "\n")
    for version in (None, 2, 3):
        theirs = _spark_state(spark, root, version)
        assert _ours(root, version) == (theirs[0], theirs[1])
    (log_dir / compaction_name(1, 3)).write_text('{"add":{"path":\n')
    from py4j.protocol import Py4JJavaError

    with pytest.raises(Py4JJavaError, match="compacted"):
        _spark_state(spark, root)
    with pytest.raises(CorruptLogError, match="compacted") as corrupt:
        _ours(root)
    assert corrupt.value.version == 1 and corrupt.value.file == compaction_name(1, 3)
    assert _ours(root, 2) == _spark_state(spark, root, 2)[:2]  # not used below version 3
