"""Typed statistics (deltaspec.impl.replay.stats): the columnar fast path and the row-at-a-time
path give the same values, and both match the ``stats`` JSON the adds carry."""

from __future__ import annotations

import itertools
import json
import math
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from deltaspec.impl.actions import AddFile, Metadata, Protocol
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.replay import stats
from deltaspec.impl.replay.layouts import FILES_SCHEMA
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import OptimisticTransaction

FIELDS: list[dict[str, Any]] = [
    {"name": "p", "type": "integer"},
    {"name": "i", "type": "integer"},
    {"name": "b", "type": "byte"},
    {"name": "f", "type": "float"},
    {"name": "d", "type": "double"},
    {"name": "s", "type": "string"},
    {"name": "dt", "type": "date"},
    {"name": "ts", "type": "timestamp"},
    {"name": "ntz", "type": "timestamp_ntz"},
    {"name": "dec", "type": "decimal(10,2)"},
    {"name": "flag", "type": "boolean"},
    {"name": "bin", "type": "binary"},
    {"name": "arr", "type": {"type": "array", "elementType": "long", "containsNull": True}},
    {
        "name": "st",
        "type": {
            "type": "struct",
            "fields": [{"name": "x", "type": "long", "nullable": True, "metadata": {}}],
        },
    },
]


def _metadata(
    fields: list[dict[str, Any]] = FIELDS, partitions: tuple[str, ...] = ("p",)
) -> Metadata:
    schema = {
        "type": "struct",
        "fields": [{"nullable": True, "metadata": {}, **f} for f in fields],
    }
    return Metadata(id="t", schema_string=json.dumps(schema), partition_columns=partitions)


GOOD = json.dumps(
    {
        "numRecords": 7,
        "minValues": {
            "i": -5,
            "b": 3,
            "f": 1.5,
            "d": -2.25,
            "s": 'a\u00e9\\"',
            "dt": "2024-02-29",
            "ts": "2024-01-02T03:04:05.123+01:00",
            "ntz": "2024-01-02T03:04:05.123",
            "dec": 12.34,
            "st": {"x": 1},
        },
        "maxValues": {"i": 9, "s": "zz", "ts": "2024-01-02T03:04:05.000Z", "st": {"x": 2}},
        "nullCount": {"i": 0, "flag": 2, "bin": 1, "arr": 3, "st": {"x": 4}},
        "tightBounds": True,
    },
    separators=(",", ":"),
)


def _both(strings: list[str | None], metadata: Metadata | None = None) -> tuple[pa.Array, pa.Array]:
    layout = stats.stats_layout(metadata or _metadata())
    column = pa.array(strings, pa.string())
    fast = stats.parse_stats(column, layout)
    slow = stats._renamed(stats._read_slow(column, layout), layout.logical)
    return fast, slow


def test_layout_types_min_max_by_column_type_and_counts_as_int64() -> None:
    layout = stats.stats_layout(_metadata())
    low = layout.logical.field("minValues").type
    assert [f.name for f in low] == [
        "i",
        "b",
        "f",
        "d",
        "s",
        "dt",
        "ts",
        "ntz",
        "dec",
        "flag",
        "st",
    ]
    assert low.field("dt").type == pa.date32()
    assert low.field("ts").type == pa.timestamp("us", tz="UTC")
    assert low.field("dec").type == pa.decimal128(10, 2)
    counts = layout.logical.field("nullCount").type
    assert "p" not in [f.name for f in counts]  # partition columns carry no statistics
    assert counts.field("arr").type == pa.int64()
    assert counts.field("st").type == pa.struct([pa.field("x", pa.int64())])


def test_fast_path_equals_row_path_and_the_json() -> None:
    fast, slow = _both([GOOD, None, "{}", GOOD])
    assert fast.equals(slow)
    row = fast[0].as_py()
    assert row["numRecords"] == 7 and row["tightBounds"] is True
    low = row["minValues"]
    assert low["s"] == 'a\u00e9\\"'
    assert low["dt"] == date(2024, 2, 29)
    assert low["ts"] == datetime(2024, 1, 2, 2, 4, 5, 123000, tzinfo=UTC)
    assert low["ntz"] == datetime(2024, 1, 2, 3, 4, 5, 123000)
    assert low["dec"] == Decimal("12.34")
    assert row["nullCount"]["st"] == {"x": 4}
    assert fast[1].as_py() is None  # no statistics
    assert fast[2].as_py()["numRecords"] is None


@pytest.mark.parametrize(
    "odd",
    [
        '{"numRecords":1,"minValues":{"d":"NaN"}}',  # quoted NaN, as Jackson writes it
        '{"numRecords":1,"minValues":{"b":300}}',  # out of range for a byte
        '{"numRecords":18446744073709551616}',  # past 64 bits: pyarrow raises OverflowError
        '{"numRecords":1,"minValues":{"dt":"not a date"}}',
        "[1]",
        "not json",
        "",
        ' {"numRecords":1}',
        '{"numRecords":1}{"numRecords":2}',
    ],
)
def test_rows_the_fast_path_cannot_take_fall_back_row_by_row(odd: str) -> None:
    fast, slow = _both([GOOD, odd, GOOD])
    assert str(fast.to_pylist()) == str(slow.to_pylist())  # NaN equals no NaN
    assert fast[0].as_py() == fast[2].as_py() and fast[0].as_py()["numRecords"] == 7
    value = fast[1].as_py()
    if odd.startswith('{"numRecords":1,"minValues":{"d"'):
        assert math.isnan(value["minValues"]["d"])
    elif odd != ' {"numRecords":1}':
        assert value is None  # unreadable statistics: none, the file is always read


def test_column_mapping_reads_physical_names_and_names_columns_logically() -> None:
    fields = [
        {"name": "id", "type": "long", "metadata": {"delta.columnMapping.physicalName": "col-1"}},
    ]
    metadata = _metadata(fields, ())
    fast, slow = _both(
        ['{"numRecords":2,"minValues":{"col-1":5},"nullCount":{"col-1":0}}'], metadata
    )
    assert fast.equals(slow)
    assert fast[0].as_py()["minValues"] == {"id": 5}


def test_snapshot_stats_table_follows_files_table(tmp_path: Path) -> None:
    log = DeltaLog(tmp_path)
    adds = [
        AddFile(f"p=0/f{i}.parquet", {"p": "0"}, 10, 1, True, None if i == 2 else GOOD)
        for i in range(4)
    ]
    OptimisticTransaction(log).commit([Protocol(1, 2), _metadata(), *adds])
    snapshot = log.snapshot()
    typed = snapshot.stats_table
    assert len(typed) == snapshot.files_table().num_rows == 4
    for path, row, text in zip(
        snapshot.files_table().column("path").to_pylist(),
        typed.to_pylist(),
        snapshot.files_table().column("stats").to_pylist(),
        strict=True,
    ):
        assert (row is None) == (text is None), path
        if text is not None:
            assert row["minValues"]["i"] == json.loads(text)["minValues"]["i"]


# --- stats_parsed in checkpoints (CHECKPOINT.STATS_AS_STRUCT) -----------------------------------

SPARK_LIKE = json.dumps(
    {
        "numRecords": 7,
        "minValues": {"i": -5, "b": 3, "f": 1.5, "d": -2.25, "s": "a", "dt": "2024-02-29",
                      "ts": "2024-01-02T03:04:05.123Z", "ntz": "2024-01-02T03:04:05.123",
                      "dec": 12.34, "st": {"x": 1}},
        "maxValues": {"i": 9, "s": "zz", "ts": "2024-01-02T03:04:05.000Z", "st": {"x": 2}},
        "nullCount": {"i": 0, "flag": 2, "bin": 1, "arr": 3, "st": {"x": 4}},
    },
    separators=(",", ":"),
)  # fmt: skip
"""Statistics as delta-spark writes them: no min/max for booleans and binaries, no
``tightBounds`` without deletion vectors, a null count for every column."""


def _checkpointed(root: Path, conf: dict[str, str]) -> DeltaLog:
    log = DeltaLog(root)
    metadata = _metadata()
    metadata = Metadata(metadata.id, metadata.schema_string, ("p",), configuration=conf)
    adds = [
        AddFile(f"p=0/f{i}.parquet", {"p": "0"}, 10, 1, True, None if i == 2 else SPARK_LIKE)
        for i in range(4)
    ]
    OptimisticTransaction(log).commit([Protocol(1, 2), metadata, *adds])
    write_checkpoint(log, log.snapshot(), now_ms=0)
    OptimisticTransaction(log).commit([AddFile("p=0/late.parquet", {"p": "0"}, 1, 1, True, GOOD)])
    return DeltaLog(root)


@pytest.mark.rules("CHECKPOINT.STATS_AS_STRUCT")
def test_typed_stats_from_stats_parsed_equal_those_from_the_json(tmp_path: Path) -> None:
    """A checkpoint with both forms: the rows it holds take stats_parsed, the later commit's
    row its JSON; the result equals decoding every row's JSON."""
    snapshot = _checkpointed(tmp_path, {}).snapshot()
    assert snapshot.checkpoint_version == 0
    assert "stats_parsed" in snapshot.live_files.column_names
    assert snapshot.files_table().schema == FILES_SCHEMA
    from_json = stats.parse_stats(snapshot.files_table().column("stats"), _layout())
    assert snapshot.stats_table.equals(from_json)
    assert snapshot.stats_table[4].as_py()["tightBounds"] is True  # the later commit's JSON


@pytest.mark.rules("CHECKPOINT.STATS_AS_STRUCT")
def test_a_checkpoint_with_stats_parsed_alone_keeps_the_statistics(tmp_path: Path) -> None:
    no_json = {"delta.checkpoint.writeStatsAsJson": "false"}
    snapshot = _checkpointed(tmp_path, no_json).snapshot()
    assert snapshot.files_table().column("stats").null_count == 4  # the checkpoint's rows
    typed = snapshot.stats_table.to_pylist()
    expected = stats.parse_stats(pa.array([SPARK_LIKE]), _layout())[0].as_py()
    assert [row is None for row in typed] == [False, False, True, False, False]
    assert typed[0] == typed[1] == typed[3] == expected
    assert typed[0]["minValues"]["dt"] == date(2024, 2, 29)


@pytest.mark.rules("CHECKPOINT.STATS_AS_STRUCT")
def test_stats_parsed_that_does_not_fit_the_schema_falls_back_to_the_json() -> None:
    layout = _layout()
    strings = pa.array([SPARK_LIKE, SPARK_LIKE])
    wrong = pa.array([{"numRecords": "x", "minValues": {"i": "y"}}] * 2)
    assert stats.parse_stats(strings, layout, wrong).equals(stats.parse_stats(strings, layout))


@pytest.mark.rules("CHECKPOINT.STATS_AS_STRUCT")
def test_a_delta_spark_checkpoint_with_stats_parsed_alone(fixtures_dir: Path) -> None:
    """delta-spark's own fixture: its checkpoint holds stats_parsed and no stats."""
    root = fixtures_dir / "spark-log-schema-evolvability"
    snapshot = DeltaLog(root).snapshot(2)
    assert snapshot.files_table().column("stats").null_count == 2
    assert [row["numRecords"] for row in snapshot.stats_table.to_pylist()] == [4, 5]


def _layout() -> stats.StatsLayout:
    return stats.stats_layout(_metadata())


@pytest.mark.rules("CHECKPOINT.STATS_AS_STRUCT")
@pytest.mark.parametrize("as_json", ["true", "false"])
def test_the_next_checkpoint_keeps_stats_parsed_read_from_the_last(
    tmp_path: Path, as_json: str
) -> None:
    """A checkpoint written from a snapshot that was read from one with stats_parsed carries the
    same statistics, also when the first held no JSON statistics to decode again."""
    log = _checkpointed(tmp_path, {"delta.checkpoint.writeStatsAsJson": as_json})
    before = log.snapshot()
    write_checkpoint(log, before, now_ms=0)
    after = DeltaLog(tmp_path).snapshot()
    assert after.checkpoint_version == before.version == 1
    assert after.stats_table.equals(before.stats_table)
    assert (
        after.stats_table[0].as_py()
        == stats.parse_stats(pa.array([SPARK_LIKE]), _layout())[0].as_py()
    )


@pytest.mark.parametrize("most_runs", [stats.MOST_RUNS, 2])
@pytest.mark.parametrize("pattern", ["none", "suffix", "prefix", "scattered", "all", "chunked"])
def test_stats_parsed_merged_with_the_json_row_by_row(
    pattern: str, most_runs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows without ``stats_parsed`` anywhere (a suffix, a prefix, scattered runs, every row),
    over several chunks: each row is its ``stats_parsed`` where it has one, else its JSON; by
    joined slices and, past ``MOST_RUNS`` runs, by one take."""
    monkeypatch.setattr(stats, "MOST_RUNS", most_runs)
    meta = Metadata("t", json.dumps({"type": "struct", "fields": [
        {"name": "x", "type": "long", "nullable": True, "metadata": {}}]}))  # fmt: skip
    layout = stats.stats_layout(meta)
    count = 40
    without = {
        "none": set(),
        "suffix": set(range(35, 40)),
        "prefix": set(range(3)),
        "scattered": {0, 5, 6, 7, 20, 39},
        "all": set(range(count)),
        "chunked": {9, 10, 11, 29},
    }[pattern]
    texts = [json.dumps({"numRecords": i, "minValues": {"x": -i}}) for i in range(count)]
    rows = [
        None if i in without else {"numRecords": 1000 + i, "minValues": {"x": i}}
        for i in range(count)
    ]
    parsed_type = pa.struct(
        [("numRecords", pa.int64()), ("minValues", pa.struct([("x", pa.int64())]))]
    )
    cuts = [0, 10, 25, count]
    parsed = pa.chunked_array(
        [pa.array(rows[a:b], type=parsed_type) for a, b in itertools.pairwise(cuts)]
    )
    strings = pa.chunked_array([pa.array(texts[:17]), pa.array(texts[17:])])
    merged = stats.decode_stats(strings, layout, parsed).to_pylist()
    expected = [(i, -i) if i in without else (1000 + i, i) for i in range(count)]
    assert [(r["numRecords"], r["minValues"]["x"]) for r in merged] == expected
