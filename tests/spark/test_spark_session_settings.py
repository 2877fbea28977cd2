"""What our Spark path leaves in a commit where the Spark differential (across session settings
and whole commits) showed it differing from live delta-spark 4.4.0: tombstone statistics, the
tightBounds of files written on a table with deletion vectors, the dynamic-overwrite flag, a
timestamp read in the session's time zone, and a merge builder that does not change under a
second MERGE built from it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from deltaspec.conformance.spark_differential.scripts import (
    PARTITION_OVERWRITE_MODE,
    SESSION_TIME_ZONE,
    session_conf,
)
from deltaspec.impl.actions import AddFile, Protocol
from deltaspec.spark import rewrite, stats
from deltaspec.spark.options import WriteOptions, dynamic_mode_recorded
from deltaspec.spark.read import parse_timestamp
from deltaspec.spark.tables import DeltaTable

STATS = '{"numRecords":3,"minValues":{"id":1},"maxValues":{"id":3},"nullCount":{"id":0}}'


def _add(text: str | None) -> AddFile:
    return AddFile("p=a/f.parquet", {"p": "a"}, 10, 1, True, stats=text)


def test_a_tombstone_keeps_numrecords_all_the_stats_or_none() -> None:
    assert rewrite.remove(_add(STATS), 5, with_stats=True).stats == '{"numRecords":3}'
    assert rewrite.remove(_add(STATS), 5, whole_stats=True).stats == STATS
    assert rewrite.remove(_add(STATS), 5).stats is None
    # a file without a count: delta-spark's listing gives an empty object
    assert rewrite.remove(_add(None), 5, with_stats=True).stats == "{}"


def test_tight_bounds_where_the_protocol_has_deletion_vectors() -> None:
    with_vectors = Protocol(3, 7, ("deletionVectors",), ("deletionVectors",))
    assert stats.tight_bounds(with_vectors) is True
    assert stats.tight_bounds(Protocol(1, 2)) is None
    assert stats.tight_bounds(None) is None


def test_a_time_without_offset_is_in_the_zone_told() -> None:
    midnight_utc = int(dt.datetime(2024, 1, 1, tzinfo=dt.UTC).timestamp() * 1000)
    assert parse_timestamp(None, "2024-01-01 05:30:00", "Asia/Kolkata") == midnight_utc
    assert parse_timestamp(None, "2024-01-01 00:00:00") == midnight_utc
    assert parse_timestamp(None, "2024-01-01T00:00:00+00:00", "Asia/Kolkata") == midnight_utc


@pytest.mark.spark
def test_a_session_setting_is_put_back_as_it_was(spark: Any) -> None:
    zone = spark.conf.get(SESSION_TIME_ZONE)
    with session_conf(spark, {SESSION_TIME_ZONE: "Asia/Kolkata", "deltaspec.test.unset": "x"}):
        assert spark.conf.get(SESSION_TIME_ZONE) == "Asia/Kolkata"
    assert spark.conf.get(SESSION_TIME_ZONE) == zone
    assert spark.conf.get("deltaspec.test.unset", None) is None
    with pytest.raises(ValueError), session_conf(spark, {SESSION_TIME_ZONE: "America/Denver"}):
        raise ValueError("a script that fails")
    assert spark.conf.get(SESSION_TIME_ZONE) == zone


@pytest.mark.spark
def test_the_dynamic_flag_follows_the_option_else_the_session(spark: Any) -> None:
    assert not dynamic_mode_recorded(spark, WriteOptions.of({}))
    with session_conf(spark, {PARTITION_OVERWRITE_MODE: "dynamic"}):
        assert dynamic_mode_recorded(spark, WriteOptions.of({}))
        static = WriteOptions.of({"partitionOverwriteMode": "static"})
        assert not dynamic_mode_recorded(spark, static)
    assert dynamic_mode_recorded(spark, WriteOptions.of({"partitionOverwriteMode": "dynamic"}))


@pytest.mark.spark
def test_a_merge_builder_is_left_as_it_was_by_a_clause(spark: Any, tmp_path: Path) -> None:
    root = str(tmp_path / "t")
    spark.createDataFrame([(1, "a")], "id long, v string").write.format("deltaspec").save(root)
    source = spark.createDataFrame([(1, "b")], "id long, v string")
    base = DeltaTable.forPath(spark, root).alias("t").merge(source.alias("s"), "t.id = s.id")
    deleting = base.whenMatchedDelete(condition="s.v = 'none'")
    base.whenMatchedUpdateAll().execute()
    assert [tuple(r) for r in spark.read.format("deltaspec").load(root).collect()] == [(1, "b")]
    assert len(deleting.clauses) == 1 and base.clauses == ()
    last = (Path(root) / "_delta_log" / f"{1:020}.json").read_text().splitlines()
    info = next(json.loads(line)["commitInfo"] for line in last if "commitInfo" in line)
    assert json.loads(info["operationParameters"]["matchedPredicates"]) == [
        {"actionType": "update"}
    ]
