"""The writes suite's live mode (``--adapter deltaspark-ops``): our Spark path (spark) and
live delta-spark run the same operation on copies of one table, and a checkpoint of the same log;
the commits and checkpoints are compared field by field, with the accepted differences of
``known_issues/writes-live-spark.json`` applied."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ...spark import MergeClause
from ..engines.deltaspark.spark_api import DELTA_SPARK
from ..engines.spark.spark_api import OURS
from ..engines.spark_api import Engine
from ..harness.verdicts import (
    KNOWN_ISSUES,
    CaseResult,
    Verdict,
    apply_known,
    load_known_issues,
)
from .commits import read_commit

Json = dict[str, Any]

LIVE_KNOWN = KNOWN_ISSUES / "writes-live-spark.json"
"""Accepted differences between our Spark path's commits and live delta-spark's, with reasons."""
LIVE_SCHEMA = "id long, p string, d date, ts timestamp, v string, x double"
AWKWARD_PARTITIONS = ("a b", "x/y", "50%=", "ü€", None, "")
"""Partition values whose directory names need escaping (space, slash, percent, equals, non-ASCII),
plus null and the empty string (both written as null, ACTION.PARTITION_VALUES)."""
_DETERMINISTIC_METRIC = re.compile(r"^num\w*(Rows|RemovedFiles)$")
_COMPARED_INFO = ("operation", "isBlindAppend", "isolationLevel", "readVersion")


def live_rows(count: int = 24) -> list[tuple[Any, ...]]:
    """The input rows: every awkward partition value, dates, timestamps, strings, doubles, nulls."""
    base = dt.datetime(2026, 11, 1, 12, 30, 15, 123456, tzinfo=dt.UTC)
    return [
        (
            i,
            AWKWARD_PARTITIONS[i % len(AWKWARD_PARTITIONS)],
            dt.date(2026, 1, 1) + dt.timedelta(days=i),
            base + dt.timedelta(hours=i),
            None if i % 5 == 0 else f"value-{i:03d}-" + "z" * 30,
            None if i % 7 == 0 else i / 4,
        )
        for i in range(count)
    ]


@dataclass(frozen=True)
class LiveOperation:
    """One operation, run the same way on each engine (``engines/spark_api``), on a table
    root."""

    label: str
    run: Callable[[Any, Engine, str], object]
    creates: bool = False


def _frame(spark: Any, rows: list[tuple[Any, ...]] | None = None, parts: int = 2) -> Any:
    return spark.createDataFrame(rows or live_rows(), LIVE_SCHEMA).repartition(parts)


def _write(mode: str, rows: Any = None, **options: Any) -> Callable[[Any, Engine, str], object]:
    """A WRITE in ``mode``; the one that creates the table partitions it by ``p``."""
    partition_by = ["p"] if mode == "errorifexists" else None

    def run(spark: Any, engine: Engine, root: str) -> None:
        engine.save(_frame(spark, rows), root, mode, partition_by, **options)

    return run


def _merge_source(spark: Any) -> Any:
    return _frame(spark, [r for r in live_rows(30) if r[0] % 4 == 1 or r[0] >= 24], parts=1)


_UPSERT = [MergeClause("update", assignments="*"), MergeClause("insert", assignments="*")]


def live_operations() -> list[LiveOperation]:
    """WRITE in each mode and option, DELETE, UPDATE, MERGE and OPTIMIZE."""
    more = live_rows(36)[24:]
    one = [r for r in live_rows(36) if r[1] == "a b"]

    def write(label: str, mode: str, rows: Any = None, **options: Any) -> LiveOperation:
        return LiveOperation(label, _write(mode, rows, **options), mode == "errorifexists")

    return [
        write("WRITE ErrorIfExists", "errorifexists"),
        write("WRITE Append", "append", more),
        write("WRITE Append txn", "append", more, txnAppId="job", txnVersion=3),
        write("WRITE Append dataChange=false", "append", more, dataChange="false"),
        write("WRITE Overwrite", "overwrite", more),
        write("WRITE Overwrite replaceWhere", "overwrite", one, replaceWhere="p = 'a b'"),
        write("WRITE Overwrite dynamic", "overwrite", one, partitionOverwriteMode="dynamic"),
        LiveOperation("DELETE", lambda s, e, p: e.delete(s, p, "id = 4 OR p = 'x/y'")),
        LiveOperation("UPDATE", lambda s, e, p: e.update(s, p, "id < 9", {"v": "'u'"})),
        LiveOperation(
            "MERGE", lambda s, e, p: e.merge(s, p, _merge_source(s), "t.id = s.id", _UPSERT)
        ),
        LiveOperation("OPTIMIZE", lambda s, e, p: e.compact(s, p)),
    ]


def _actions(root: Path, version: int) -> list[Json]:
    return read_commit(root / "_delta_log" / f"{version:020d}.json")


def _merged_stats(adds: list[Json]) -> dict[str, Json]:
    """Per partition: summed numRecords and nullCount, least minValues, greatest maxValues."""
    out: dict[str, Json] = {}
    for add in adds:
        key = json.dumps(add.get("partitionValues", {}), sort_keys=True)
        stats = json.loads(add["stats"]) if add.get("stats") else {}
        merged = out.setdefault(key, {"numRecords": 0, "minValues": {}, "maxValues": {},
                                      "nullCount": {}})  # fmt: skip
        merged["numRecords"] += stats.get("numRecords", 0)
        for column, value in stats.get("minValues", {}).items():
            held = merged["minValues"].get(column)
            merged["minValues"][column] = value if held is None else min(held, value)
        for column, value in stats.get("maxValues", {}).items():
            held = merged["maxValues"].get(column)
            merged["maxValues"][column] = value if held is None else max(held, value)
        for column, value in stats.get("nullCount", {}).items():
            merged["nullCount"][column] = merged["nullCount"].get(column, 0) + value
    return out


def _field_names(bodies: list[Json]) -> list[str]:
    return sorted({k for b in bodies for k in b})


def _partitions(files: list[Json]) -> list[str]:
    return sorted({json.dumps(f.get("partitionValues", {}), sort_keys=True) for f in files})


def _directories(files: list[Json]) -> list[str]:
    """The directory part of each path as written in the log (its escaping and encoding)."""
    return sorted({f["path"].rsplit("/", 1)[0] if "/" in f["path"] else "" for f in files})


def _stats_keys(adds: list[Json]) -> list[str]:
    return sorted({k for f in adds if f.get("stats") for k in json.loads(f["stats"])})


class _Diff:
    """Differences of one operation, one case per field."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.results: list[CaseResult] = []

    def check(self, where: str, ours: Any, theirs: Any) -> None:
        if ours != theirs:
            details = (f"ours: {ours!r}"[:600], f"delta-spark: {theirs!r}"[:600])
            self.results.append(CaseResult(f"writes-live/{self.label}/{where}", Verdict.WRONG,
                                           details))  # fmt: skip


def compare_live(label: str, ours: list[Json], theirs: list[Json]) -> list[CaseResult]:
    """Field by field: ``ours`` and ``theirs`` are the actions of one commit each."""
    diff = _Diff(label)

    def kinds(lines: list[Json]) -> dict[str, list[Json]]:
        found: dict[str, list[Json]] = defaultdict(list)
        for line in lines:
            for kind, body in line.items():
                found[kind].append(body)
        return found

    mine, peer = kinds(ours), kinds(theirs)
    diff.check("action kinds", sorted(mine), sorted(peer))
    for kind in sorted(set(mine) & set(peer) - {"add", "remove"}):
        diff.check(f"{kind} count", len(mine[kind]), len(peer[kind]))
    for kind in sorted(set(mine) & set(peer)):
        diff.check(f"{kind} fields", _field_names(mine[kind]), _field_names(peer[kind]))
    if "commitInfo" in mine and "commitInfo" in peer:
        a, b = mine["commitInfo"][0], peer["commitInfo"][0]
        for key in _COMPARED_INFO:
            diff.check(f"commitInfo.{key}", a.get(key), b.get(key))
        pa_, pb = a.get("operationParameters", {}), b.get("operationParameters", {})
        diff.check("operationParameters keys", sorted(pa_), sorted(pb))
        for key in sorted(set(pa_) & set(pb)):
            mine_value, peer_value = pa_[key], pb[key]
            if key == "predicate":  # delta-spark renders attribute ids (id#15293L): types only
                mine_value, peer_value = type(mine_value).__name__, type(peer_value).__name__
            diff.check(f"operationParameters.{key}", mine_value, peer_value)
        ma, mb = a.get("operationMetrics", {}), b.get("operationMetrics", {})
        diff.check("operationMetrics keys", sorted(ma), sorted(mb))
        for key in sorted(k for k in set(ma) & set(mb) if _DETERMINISTIC_METRIC.match(k)):
            diff.check(f"operationMetrics.{key}", ma[key], mb[key])
    for kind in ("add", "remove"):
        a_files, b_files = mine.get(kind, []), peer.get(kind, [])
        diff.check(f"{kind} dataChange", sorted({f.get("dataChange") for f in a_files}, key=str),
                   sorted({f.get("dataChange") for f in b_files}, key=str))  # fmt: skip
        diff.check(f"{kind} partitionValues", _partitions(a_files), _partitions(b_files))
        diff.check(f"{kind} path directories", _directories(a_files), _directories(b_files))
    diff.check("remove paths", sorted(r["path"] for r in mine.get("remove", [])),
               sorted(r["path"] for r in peer.get("remove", [])))  # fmt: skip
    a_adds, b_adds = mine.get("add", []), peer.get("add", [])
    diff.check("add.stats keys", _stats_keys(a_adds), _stats_keys(b_adds))
    a_stats, b_stats = _merged_stats(a_adds), _merged_stats(b_adds)
    for part in ("numRecords", "minValues", "maxValues", "nullCount"):
        values = [
            (p, a_stats[p][part], b_stats[p][part]) for p in sorted(set(a_stats) & set(b_stats))
        ]
        if part in {"minValues", "maxValues"}:
            doubles = [
                (p, sorted(set(a) & _DOUBLES), sorted(set(b) & _DOUBLES)) for p, a, b in values
            ]
            diff.check(f"add.stats.{part} (double columns)", *_sides(doubles))
            values = [(p, _without(a, _DOUBLES), _without(b, _DOUBLES)) for p, a, b in values]
        diff.check(f"add.stats.{part}", *_sides(values))
    return diff.results or [CaseResult(f"writes-live/{label}", Verdict.PASS)]


_DOUBLES = frozenset({"x"})
"""The float/double columns of LIVE_SCHEMA."""


def _without(values: Json, columns: frozenset[str]) -> Json:
    return {k: v for k, v in values.items() if k not in columns}


def _sides(rows: list[tuple[str, Any, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per partition, ours and theirs, keeping only the partitions where they differ."""
    differ = [(p, a, b) for p, a, b in rows if a != b]
    return {p: a for p, a, _ in differ}, {p: b for p, _, b in differ}


def _parquet_fields(path: Path) -> list[str]:
    """Every field of a checkpoint's Parquet schema, as dotted paths with their types."""
    out: list[str] = []

    def walk(prefix: str, kind: pa.DataType) -> None:
        if pa.types.is_struct(kind):
            for child in kind:
                walk(f"{prefix}.{child.name}", child.type)
        else:
            out.append(f"{prefix}: {kind}")

    schema = pq.read_schema(path)
    for name in schema.names:
        walk(name, schema.field(name).type)
    return sorted(out)


def compare_live_checkpoints(ours: Path, theirs: Path) -> list[CaseResult]:
    """The checkpoint of the same log version written by each: columns and their types, and
    which actions it holds (tombstones included)."""
    diff = _Diff("checkpoint")
    a = sorted(ours.glob("_delta_log/*.checkpoint*.parquet"))
    b = sorted(theirs.glob("_delta_log/*.checkpoint*.parquet"))
    diff.check("files", [p.name.split(".", 1)[1] for p in a], [p.name.split(".", 1)[1] for p in b])
    if a and b:
        mine, peer = set(_parquet_fields(a[0])), set(_parquet_fields(b[0]))
        diff.check("columns only ours", sorted(mine - peer), [])
        diff.check("columns only delta-spark", [], sorted(peer - mine))

        def held(path: Path) -> dict[str, int]:
            table = pq.read_table(path)
            kinds = {"add", "remove", "txn", "metaData", "protocol", "domainMetadata"}
            return {
                c: table.num_rows - table[c].null_count for c in table.column_names if c in kinds
            }

        diff.check("actions held", held(a[0]), held(b[0]))
    return diff.results or [CaseResult("writes-live/checkpoint", Verdict.PASS)]


def run_live_writes(spark: Any, scratch: Path) -> list[CaseResult]:
    """Each operation of :func:`live_operations` by our Spark path and by delta-spark, on copies
    of one delta-spark-created table, then a checkpoint of the same log by each; compared field by
    field, with the accepted differences of ``writes-live-spark.json`` applied."""
    results: list[CaseResult] = []
    base = scratch / "base"
    for index, operation in enumerate(live_operations()):
        ours, theirs = scratch / f"{index}-ours", scratch / f"{index}-delta-spark"
        if not operation.creates:
            if not base.exists():
                _write("errorifexists")(spark, DELTA_SPARK, str(base))
            shutil.copytree(base, ours)
            shutil.copytree(base, theirs)
        operation.run(spark, OURS, str(ours))
        operation.run(spark, DELTA_SPARK, str(theirs))
        version = 0 if operation.creates else 1
        results += compare_live(operation.label, _actions(ours, version), _actions(theirs, version))
    # the same log (delta-spark's DELETE result, with tombstones) checkpointed by each
    source = scratch / f"{[o.label for o in live_operations()].index('DELETE')}-delta-spark"
    ours, theirs = scratch / "checkpoint-ours", scratch / "checkpoint-delta-spark"
    shutil.copytree(source, ours)
    shutil.copytree(source, theirs)
    OURS.checkpoint(spark, str(ours), 1)
    DELTA_SPARK.checkpoint(spark, str(theirs), 1)
    results += compare_live_checkpoints(ours, theirs)
    return apply_known(results, load_known_issues("spark", LIVE_KNOWN))
