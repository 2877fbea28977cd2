"""The Spark reader on delta-spark-written tables: every fixture with expected rows reads back
those rows (partition values from the log), or fails with a typed unsupported error."""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import pyarrow.parquet as pq
import pytest
from support.fixture_tables import EXPECTED, SCAN_SESSION_ZONE, label_version

from deltaspec.impl.errors import UnsupportedFeatureError
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.spark.read import scan

pytestmark = pytest.mark.spark


def _plain(value: Any) -> Any:
    """One comparable form for Spark's and Arrow's Python values."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value.isoformat()
    if isinstance(value, dt.date | decimal.Decimal):
        return str(value)
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, dict):
        return tuple(sorted((k, _plain(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(_plain(v) for v in value)
    if isinstance(value, bytearray):
        return bytes(value)
    return value


def _spark_plain(row: Any) -> Any:
    return _plain(row.asDict(recursive=True)) if hasattr(row, "asDict") else _plain(row)


@pytest.mark.parametrize(("name", "label"), EXPECTED)
def test_spark_scan_matches_expected_rows(spark, fixtures_dir, name, label):
    if name in SCAN_SESSION_ZONE:
        pytest.skip(f"{name}: {SCAN_SESSION_ZONE[name][1]}")
    root = fixtures_dir / name
    snapshot = DeltaLog(str(root)).snapshot(label_version(name, label))
    expected = pq.read_table(fixtures_dir / "_expected" / name / label / "table_content")
    try:
        df = scan(spark, str(root), snapshot)
    except UnsupportedFeatureError as unsupported:
        assert unsupported.table == str(root) and unsupported.version == snapshot.version
        pytest.skip(f"{name}: {unsupported.message}")
    names = expected.column_names
    ours = sorted(
        (tuple(_spark_plain(row[n]) for n in names) for row in df.select(*names).collect()),
        key=repr,
    )
    columns = [expected.column(n).to_pylist() for n in names]
    theirs = sorted((tuple(_plain(v) for v in row) for row in zip(*columns, strict=True)), key=repr)
    assert ours == theirs
