"""Float and double statistics on the Spark path (issue 21): the bounds delta-spark 4.4.0 writes
(NaN, zeros, infinities, all-NaN and all-null columns) and data skipping that never drops a file
holding a NaN row. The stats rows below are the ones live delta-spark 4.4.0 wrote for one file of
each value list (column ``d`` double, ``f`` float); the slow tests re-check against the engine."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deltaspec.impl import predicates
from deltaspec.spark import stats
from deltaspec.spark.skipping import may_match

NAN, INF = math.nan, math.inf
VALUES: dict[str, list[float | None]] = {
    "mixed": [1.5, NAN, -2.0, None],
    "nan_first": [NAN, -2.0, 1.0],
    "all_nan": [NAN, NAN],
    "nan_and_null": [NAN, None],
    "zeros": [0.0, -0.0],
    "negative_zeros": [-0.0, -0.0],
    "zeros_then_one": [-0.0, 0.0, 1.0],
    "infinities": [INF, -INF, 3.0],
    "positive_infinity": [INF, 1.0],
    "all_null": [None, None],
    "extremes": [1e-320, 1.0000000000000002, 3.4028235e38],
}
DELTA_SPARK_STATS = {
    "mixed": '{"numRecords":4,"minValues":{"d":-2.0,"f":-2.0},"maxValues":{"d":"NaN","f":"NaN"},'
    '"nullCount":{"d":1,"f":1}}',
    "nan_first": '{"numRecords":3,"minValues":{"d":-2.0,"f":-2.0},"maxValues":{"d":"NaN",'
    '"f":"NaN"},"nullCount":{"d":0,"f":0}}',
    "all_nan": '{"numRecords":2,"minValues":{"d":"NaN","f":"NaN"},"maxValues":{"d":"NaN",'
    '"f":"NaN"},"nullCount":{"d":0,"f":0}}',
    "nan_and_null": '{"numRecords":2,"minValues":{"d":"NaN","f":"NaN"},"maxValues":{"d":"NaN",'
    '"f":"NaN"},"nullCount":{"d":1,"f":1}}',
    "zeros": '{"numRecords":2,"minValues":{"d":0.0,"f":0.0},"maxValues":{"d":0.0,"f":0.0},'
    '"nullCount":{"d":0,"f":0}}',
    "negative_zeros": '{"numRecords":2,"minValues":{"d":-0.0,"f":-0.0},"maxValues":{"d":-0.0,'
    '"f":-0.0},"nullCount":{"d":0,"f":0}}',
    "zeros_then_one": '{"numRecords":3,"minValues":{"d":-0.0,"f":-0.0},"maxValues":{"d":1.0,'
    '"f":1.0},"nullCount":{"d":0,"f":0}}',
    "infinities": '{"numRecords":3,"minValues":{"d":"-Infinity","f":"-Infinity"},"maxValues":'
    '{"d":"Infinity","f":"Infinity"},"nullCount":{"d":0,"f":0}}',
    "positive_infinity": '{"numRecords":2,"minValues":{"d":1.0,"f":1.0},"maxValues":'
    '{"d":"Infinity","f":"Infinity"},"nullCount":{"d":0,"f":0}}',
    "all_null": '{"numRecords":2,"minValues":{},"maxValues":{},"nullCount":{"d":2,"f":2}}',
    "extremes": '{"numRecords":3,"minValues":{"d":1.0E-320,"f":0.0},"maxValues":'
    '{"d":3.4028235E38,"f":3.4028235E38},"nullCount":{"d":0,"f":0}}',
}
TYPES = {"d": "double", "f": "float"}
SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": "d", "type": "double", "nullable": True, "metadata": {}},
        {"name": "f", "type": "float", "nullable": True, "metadata": {}},
    ],
}
# the files delta-spark 4.4.0 reads for each condition over one file per value list
CONDITIONS: dict[str, tuple[Any, set[str]]] = {
    "d > 2": ([">", "d", 2.0], {"mixed", "nan_first", "all_nan", "nan_and_null", "infinities",
                                "positive_infinity", "extremes"}),
    "d < 0": (["<", "d", 0.0], {"mixed", "nan_first", "infinities"}),
    "d = 'NaN'": (["=", "d", "NaN"], {"mixed", "nan_first", "all_nan", "nan_and_null"}),
    "d >= 'Infinity'": ([">=", "d", "Infinity"], {"mixed", "nan_first", "all_nan",
                                                  "nan_and_null", "infinities",
                                                  "positive_infinity"}),
    "d = 0.0": (["=", "d", 0.0], {"mixed", "nan_first", "zeros", "negative_zeros",
                                  "zeros_then_one", "infinities"}),
    "d = -0.0": (["=", "d", -0.0], {"mixed", "nan_first", "zeros", "negative_zeros",
                                    "zeros_then_one", "infinities"}),
    "d < -1e300": (["<", "d", -1e300], {"infinities"}),
    "d IS NULL": (["is_null", "d"], {"mixed", "nan_and_null", "all_null"}),
    "f > 3.0e38": ([">", "f", 3.0e38], {"mixed", "nan_first", "all_nan", "nan_and_null",
                                        "infinities", "positive_infinity", "extremes"}),
}  # fmt: skip


def _rows_matching(condition: str, values: list[float | None]) -> bool:
    """Whether a row of ``values`` satisfies the condition in Spark's semantics."""
    expr, _ = CONDITIONS[condition]
    op, column = expr[0], expr[1]
    for raw in values:
        value = raw if column == "d" or raw is None else stats.as_float(raw)
        if op == "is_null":
            if value is None:
                return True
            continue
        if value is None:
            continue
        key, literal = _key(value), _key(float(expr[2]))
        if {"=": key == literal, "<": key < literal, ">": key > literal,
            ">=": key >= literal}[op]:  # fmt: skip
            return True
    return False


def _key(value: float) -> tuple[int, float]:
    return (1, 0.0) if math.isnan(value) else (0, value)


@pytest.mark.parametrize("condition", sorted(CONDITIONS))
def test_skipping_on_delta_spark_stats_keeps_what_delta_spark_reads(condition: str) -> None:
    expr, read_by_delta_spark = CONDITIONS[condition]
    kept = {
        name
        for name, text in DELTA_SPARK_STATS.items()
        if may_match([predicates.parse(expr)], text, TYPES)
    }
    assert kept == read_by_delta_spark
    holding = {name for name, values in VALUES.items() if _rows_matching(condition, values)}
    assert holding <= kept  # never a file holding a matching row skipped


def test_floating_bounds_order_nan_above_every_number() -> None:
    assert stats.floating_bounds([NAN, 1.0], [NAN, 2.0]) == (1.0, pytest.approx(NAN, nan_ok=True))
    low, high = stats.floating_bounds([NAN], [NAN])
    assert math.isnan(low) and math.isnan(high)
    assert stats.floating_bounds([-INF, 2.0], [3.0, INF]) == (-INF, INF)


def test_float_bounds_print_as_java_float_to_string() -> None:
    from deltaspec.impl import codec

    text = codec.encode_stats(
        1,
        {"f": stats.as_float(1.401298464324817e-45)},
        {"f": stats.as_float(3.4028234663852886e38)},
        {},
    )
    assert text == (
        '{"numRecords":1,"minValues":{"f":1.4E-45},"maxValues":{"f":3.4028235E38},"nullCount":{}}'
    )


def test_a_float_literal_spark_casts_to_float_is_never_skipped() -> None:
    # f = '0.1' compares as float: the row 0.1f matches although 0.1f != 0.1 as doubles
    text = '{"numRecords":1,"minValues":{"f":0.1},"maxValues":{"f":0.1},"nullCount":{"f":0}}'
    assert may_match([predicates.parse(["=", "f", "0.1"])], text, TYPES)
    assert may_match([predicates.parse(["<=", "f", 0.1])], text, TYPES)


def test_footers_that_leave_nan_out_give_no_float_bounds(tmp_path: Path) -> None:
    file = tmp_path / "part.parquet"
    pq.write_table(
        pa.table(
            {
                "d": pa.array([NAN, 1.0, 2.0]),
                "f": pa.array([1.0, 2.0, 3.0], pa.float32()),
            }
        ),
        file,
    )
    text, _ = stats.file_stats(pq.read_metadata(file), stats.indexed_leaves(SCHEMA, (), {}))
    assert json.loads(text) == {"numRecords": 3, "minValues": {}, "maxValues": {},
                                "nullCount": {"d": 0, "f": 0}}  # fmt: skip


def _frame(spark: Any, values: list[float | None]) -> Any:
    from pyspark.sql.types import DoubleType, FloatType, StructField, StructType

    schema = StructType([StructField("d", DoubleType()), StructField("f", FloatType())])
    return spark.createDataFrame([(v, v) for v in values], schema).coalesce(1)


def _zeros_equal(text: str) -> Any:
    """Stats with -0.0 read as 0.0: delta-spark keeps the first of equal zeros it meets."""
    return json.loads(text.replace("-0.0,", "0.0,").replace("-0.0}", "0.0}"))


@pytest.mark.spark
def test_our_spark_writes_float_stats_as_delta_spark(spark: Any, tmp_path: Path) -> None:
    from deltaspec.impl.snapshot.delta_log import DeltaLog
    from deltaspec.spark import write_delta

    for name, values in VALUES.items():
        theirs, ours = tmp_path / f"{name}-theirs", tmp_path / f"{name}-ours"
        _frame(spark, values).write.format("delta").save(str(theirs))
        write_delta(_frame(spark, values), ours)
        [their_add] = DeltaLog(str(theirs)).snapshot().files.values()
        [our_add] = DeltaLog(str(ours)).snapshot().files.values()
        assert their_add.stats == DELTA_SPARK_STATS[name], name
        assert _zeros_equal(our_add.stats or "") == _zeros_equal(their_add.stats or ""), name
        shutil.rmtree(theirs)
        shutil.rmtree(ours)


@pytest.mark.spark
def test_delete_skips_files_as_delta_spark_and_never_a_nan_row(spark: Any, tmp_path: Path) -> None:
    from deltaspec.impl.snapshot.delta_log import DeltaLog
    from deltaspec.spark import conditions, rewrite, write_delta

    table = tmp_path / "table"
    names = {}
    for name, values in VALUES.items():
        written = write_delta(_frame(spark, values), table, mode="append")
        assert written.version is not None
        names[written.version] = name
    snapshot = DeltaLog(str(table)).snapshot()
    by_path = {a.path: names[_version_of(table, a.path)] for a in snapshot.files.values()}
    frame = spark.read.format("delta").load(str(table))
    for condition, (_, expected) in CONDITIONS.items():
        parsed = conditions.parse(spark, condition, (), table=str(table))
        kept = {by_path[a.path] for a in rewrite.candidates(snapshot, parsed.filters())}
        theirs = {by_path[f.rsplit("/", 1)[-1]] for f in frame.where(condition).inputFiles()}
        assert kept == expected, condition
        assert theirs <= kept, condition


def _version_of(table: Path, path: str) -> int:
    for log in sorted((table / "_delta_log").glob("*.json")):
        if f'"path":"{path}"' in log.read_text():
            return int(log.stem)
    raise AssertionError(path)
