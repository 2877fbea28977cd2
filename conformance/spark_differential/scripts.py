"""The scripts: each is what a PySpark user writes, with the engine's format and DeltaTable;
it returns what it observed beyond the table itself (compared too)."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ...spark.streaming import idempotent_writer
from ..engines.spark_api import Engine

SCHEMA = "id long, p string, v string"


def frame(spark: SparkSession, rows: list[tuple[Any, ...]], schema: str = SCHEMA) -> DataFrame:
    return spark.createDataFrame(rows, schema).coalesce(1)


def table_rows(df: DataFrame) -> list[tuple[Any, ...]]:
    """A table's rows as compared (and recorded): tuples, in a stable order."""
    return sorted((tuple(r) for r in df.collect()), key=repr)


def stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


@contextmanager
def session_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """``settings`` on the session for the block, then each put back as it was (unset where it
    was not set): both engines run on one session, and no script leaks a setting into another."""
    before: dict[str, str | None] = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, old in before.items():
            if old is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, old)


PARTITION_OVERWRITE_MODE = "spark.sql.sources.partitionOverwriteMode"
SESSION_DYNAMIC = {PARTITION_OVERWRITE_MODE: "dynamic"}
"""The session's dynamic partition-overwrite mode (the writer option is not set)."""
SESSION_TIME_ZONE = "spark.sql.session.timeZone"


def commit_moment(spark: SparkSession, e: Engine, root: str, version: int) -> str:
    """The time of commit ``version`` as a user copies it from history(): a string without an
    offset, in the session time zone (``date_format`` prints it there)."""
    history = e.table.forPath(spark, root).history().where(f"version = {version}")
    moment = history.selectExpr("date_format(timestamp, 'yyyy-MM-dd HH:mm:ss.SSS')")
    return str(moment.collect()[0][0])


def create_append(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.partitioned(e.write(frame(spark, [(1, "a", "x"), (2, "b", "y")])).mode("append"), "p").save(
        root
    )
    e.write(frame(spark, [(3, "a", "z")])).mode("append").save(root)
    # a value Hive-escapes in its directory (':') and add.path then percent-escapes ('|', '%');
    # an empty string, which is a null partition
    e.write(frame(spark, [(4, "a:b|c", "e"), (5, "", "f")])).mode("append").save(root)
    return {}


def quickstart(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """delta-spark's quickstart as its documentation writes it: create with Spark's default save
    mode, read, overwrite, read an old version."""
    data = spark.range(0, 5)
    data.write.format(e.fmt).save(root)
    df = spark.read.format(e.fmt).load(root)
    created = sorted(map(tuple, df.collect()))
    data = spark.range(5, 10)
    data.write.format(e.fmt).mode("overwrite").save(root)
    df = spark.read.format(e.fmt).option("versionAsOf", 0).load(root)
    return {"created": created, "version 0": sorted(map(tuple, df.collect()))}


def default_save_mode(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """``partitionBy`` in Spark's default save mode creates the table; the default mode on it
    again fails (caught as what, with which condition), ``ignore`` writes nothing."""
    e.write(frame(spark, [(1, "a", "x"), (2, "b", "y")])).partitionBy("p").save(root)
    again = e.write(frame(spark, [(3, "c", "z")])).partitionBy("p")
    refused = _caught(lambda: again.save(root))
    e.write(frame(spark, [(4, "d", "w")])).mode("ignore").save(root)
    return {"again": refused}


def overwrite(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.write(frame(spark, [(1, "a", "x"), (2, "b", "y")])).mode("append").save(root)
    e.write(frame(spark, [(9, "c", "new")])).mode("overwrite").save(root)
    # a rewrite that changes no data: its removes and adds say dataChange=false
    e.write(frame(spark, [(9, "c", "new")])).mode("overwrite").option("dataChange", "false").save(
        root
    )
    return {}


def replace_where(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.partitioned(e.write(frame(spark, [(1, "a", "x"), (2, "b", "y")])).mode("append"), "p").save(
        root
    )
    writer = e.write(frame(spark, [(5, "a", "new")])).mode("overwrite")
    writer.option("replaceWhere", "p = 'a'").save(root)
    # the session's dynamic mode does not apply to replaceWhere: both partitions it names go,
    # although the data has rows of one only
    with session_conf(spark, SESSION_DYNAMIC):
        writer = e.write(frame(spark, [(6, "a", "dyn")])).mode("overwrite")
        writer.option("replaceWhere", "p = 'a' OR p = 'b'").save(root)
    return {}


def dynamic_partition_overwrite(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    rows = [(1, "a", "x"), (2, "b", "y"), (3, None, "z")]
    e.partitioned(e.write(frame(spark, rows)).mode("append"), "p").save(root)
    writer = e.write(frame(spark, [(5, "a", "new"), (6, None, "null")])).mode("overwrite")
    writer.option("partitionOverwriteMode", "dynamic").save(root)
    # the session's mode, no option: a partitioned table keeps the partitions not written, an
    # unpartitioned one (a sibling table, compared too) is overwritten whole
    with session_conf(spark, SESSION_DYNAMIC):
        e.write(frame(spark, [(7, "b", "session")])).mode("overwrite").save(root)
        flat = str(Path(root).parent / "unpartitioned")
        e.write(frame(spark, [(1, "a", "x"), (2, "b", "y")])).mode("append").save(flat)
        e.write(frame(spark, [(8, "c", "session")])).mode("overwrite").save(flat)
    return {}


def merge_schema(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.write(frame(spark, [(1, "a", "x")])).mode("append").save(root)
    wider = frame(spark, [(2, "b", "y", 7)], SCHEMA + ", n int")
    e.write(wider).mode("append").option("mergeSchema", "true").save(root)
    return {}


def delete(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    rows = [(1, "a", "x"), (2, "a", "y"), (3, "b", "z")]
    e.partitioned(e.write(frame(spark, rows)).mode("append"), "p").save(root)
    table = e.table.forPath(spark, root)
    table.delete("id = 2")
    table.delete(F.col("p") == "b")
    return {}


def delete_partition_function(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """A DELETE over partition columns only, one conjunct of which is a function call: it cannot
    be answered from partition values alone, so only the rows ``length(p) > 1`` also holds for
    go (not the whole files ``p = 'a' OR p = 'ab'`` names)."""
    rows = [(1, "a", "x"), (2, "ab", "y"), (3, "b", "z")]
    e.partitioned(e.write(frame(spark, rows)).mode("append"), "p").save(root)
    e.table.forPath(spark, root).delete("(p = 'a' OR p = 'ab') AND length(p) > 1")
    return {}


ROW_METRICS = {
    "UPDATE": ("numUpdatedRows", "numCopiedRows"),
    "MERGE": ("numSourceRows", "numTargetRowsInserted", "numTargetRowsUpdated",
              "numTargetRowsMatchedUpdated", "numTargetRowsNotMatchedBySourceUpdated",
              "numTargetRowsDeleted", "numTargetRowsMatchedDeleted",
              "numTargetRowsNotMatchedBySourceDeleted", "numTargetRowsCopied", "numOutputRows"),
}  # fmt: skip
"""The operationMetrics that count rows, by operation (DeltaOperationMetrics), compared by value:
they do not depend on how an engine lays rows out in files (timings and bytes do)."""


def row_metrics(spark: SparkSession, e: Engine, root: str) -> list[dict[str, str | None]]:
    """Per commit, oldest first, the row-counting operationMetrics of its operation, as
    history() shows them (a missing one is None)."""
    history = e.table.forPath(spark, root).history().orderBy("version").collect()
    return [
        {name: (h["operationMetrics"] or {}).get(name) for name in ROW_METRICS[h["operation"]]}
        for h in history
        if h["operation"] in ROW_METRICS
    ]


def update(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    rows = [(1, "a", "x"), (2, "a", "y"), (3, "b", "z")]
    e.partitioned(e.write(frame(spark, rows)).mode("append"), "p").save(root)
    table = e.table.forPath(spark, root)
    table.update("id = 1", {"v": "'one'"})
    table.update(F.col("p") == "b", {"v": F.upper(F.col("v"))})
    return {"metrics": row_metrics(spark, e, root)}


def merge(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    rows = [(1, "a", "x"), (2, "a", "y"), (3, "b", "z"), (4, "b", "w")]
    e.partitioned(e.write(frame(spark, rows)).mode("append"), "p").save(root)
    source = frame(spark, [(1, "a", "new"), (2, "a", "gone"), (5, "b", "ins")])
    result = (
        e.table.forPath(spark, root)
        .alias("t")
        .merge(source.alias("s"), "t.id = s.id AND t.p = 'a'")
        .whenMatchedDelete(condition="s.v = 'gone'")
        .whenMatchedUpdate(set={"v": "s.v"})
        .whenNotMatchedInsertAll()
        .whenNotMatchedBySourceUpdate(condition="t.id > 3", set={"v": F.lit("orphan")})
        .whenNotMatchedBySourceDelete()
        .execute()
    )
    return {"result": result.collect(), "metrics": row_metrics(spark, e, root)}


PYSPARK_EXCEPTIONS = ("AnalysisException", "IllegalArgumentException",
                      "UnsupportedOperationException")  # fmt: skip


def _caught(run: Callable[[], object]) -> tuple[str | None, tuple[str, ...]]:
    """How a user's ``except`` sees what ``run`` raises: its condition (getCondition(), else the
    Delta error class its message names) and which of PySpark's exception classes it is."""
    try:
        run()
    except Exception as error:
        condition = getattr(error, "getCondition", lambda: None)()
        if condition in (None, "PYTHON_DATA_SOURCE_ERROR"):
            # Spark gives every error a Python data source raises that one condition (Python
            # cannot set another); the Delta error class is then the one the message names
            found = re.search(r"\bDELTA_[A-Z_]+", str(error))
            condition = found[0] if found else condition
        names = {c.__name__ for c in type(error).__mro__}
        return condition, tuple(n for n in PYSPARK_EXCEPTIONS if n in names)
    return None, ()


def _error_class(run: Callable[[], object]) -> str | None:
    """The condition ``run`` fails with (:func:`_caught`), None if it passes."""
    return _caught(run)[0]


def merge_by_source_only(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """A MERGE whose only clauses are WHEN NOT MATCHED BY SOURCE (a sync that prunes and flags
    target rows the source no longer has). Then the same with a target row two source rows
    match, which is refused as ambiguous although no clause changes a matched row; with one
    unconditional WHEN MATCHED DELETE as its only matched clause it is not."""
    rows = [(1, "a", "x"), (2, "a", "y"), (3, "b", "z"), (4, "b", "w"), (5, "c", "v")]
    e.partitioned(e.write(frame(spark, rows)).mode("append"), "p").save(root)

    def by_source(source: DataFrame) -> Any:
        return (
            e.table.forPath(spark, root)
            .alias("t")
            .merge(source.alias("s"), "t.id = s.id")
            .whenNotMatchedBySourceUpdate(condition="t.p = 'b'", set={"v": F.lit("stale")})
            .whenNotMatchedBySourceDelete(condition="t.id = 2")
        )

    result = by_source(frame(spark, [(1, "a", "s1"), (3, "b", "s3")])).execute()
    twice = frame(spark, [(1, "a", "s1"), (1, "a", "s2")])
    refused = _error_class(lambda: by_source(twice).execute())
    deleted = by_source(twice).whenMatchedDelete().execute()
    return {"result": result.collect(), "twice": refused, "deleted twice": deleted.collect(),
            "metrics": row_metrics(spark, e, root)}  # fmt: skip


def optimize(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.partitioned(e.write(frame(spark, [(1, "a", "x")])).mode("append"), "p").save(root)
    for rows in ([(2, "a", "y")], [(3, "b", "z")], [(4, "b", "w")]):
        e.write(frame(spark, rows)).mode("append").save(root)
    e.table.forPath(spark, root).optimize().where("p = 'a'").executeCompaction()
    return {}


def restore(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.write(frame(spark, [(1, "a", "x")])).mode("append").save(root)
    e.write(frame(spark, [(2, "b", "y")])).mode("append").save(root)
    table = e.table.forPath(spark, root)
    table.delete("id = 1")
    table.restoreToVersion(1)
    # with the session in UTC: in America/Los_Angeles delta-spark 4.4.0 resolves this string to
    # a later version than it names (the zone applied twice), where its timestampAsOf reads the
    # same string right; time_travel tests the session's zone
    first = table.history().where("version = 0").collect()[0]["timestamp"]
    table.restoreToTimestamp(stamp(first))
    return {"after": sorted(map(tuple, e.read(spark, root).collect()))}


def history(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.write(frame(spark, [(1, "a", "x")])).mode("append").option("userMetadata", "m").save(root)
    table = e.table.forPath(spark, root)
    table.delete("id = 1")
    rows = table.history(1).select("version", "operation", "readVersion").collect()
    full = table.history()
    return {
        "last": [tuple(r) for r in rows],
        "columns": full.columns,
        "userMetadata": [r["userMetadata"] for r in full.orderBy("version").collect()],
        "detail": {
            k: v
            for k, v in table.detail().collect()[0].asDict().items()
            if k in {"format", "partitionColumns", "numFiles", "minReaderVersion", "properties"}
        },
    }


RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"
VACUUM_COUNTS = ("numFilesToDelete", "numDeletedFiles", "numVacuumedDirectories")
"""The VACUUM metrics that count (sizeOfDataToDelete is bytes: the engines' files differ)."""


def _vacuum_unchecked(spark: SparkSession, table: Any) -> None:
    """VACUUM ``table`` at a retention of 0 hours, the retention check off for that call only."""
    spark.conf.set(RETENTION_CHECK, "false")
    try:
        table.vacuum(0)
    finally:
        spark.conf.unset(RETENTION_CHECK)


def vacuum_history(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """VACUUM with a retention of 0 hours: refused while the retention check is on, run with
    it off, and recorded as VACUUM START and VACUUM END commits (their parameters are in the
    log shape compared; their counting metrics here)."""
    e.write(frame(spark, [(1, "a", "x")])).mode("append").save(root)
    e.write(frame(spark, [(2, "b", "y")])).mode("overwrite").save(root)
    table = e.table.forPath(spark, root)
    refused = _error_class(lambda: table.vacuum(0))
    _vacuum_unchecked(spark, table)
    history = table.history().orderBy("version").collect()
    return {
        "refused": refused,
        "vacuums": [
            (
                h["operation"],
                sorted(h["operationMetrics"] or {}),
                {k: v for k, v in (h["operationMetrics"] or {}).items() if k in VACUUM_COUNTS},
            )
            for h in history
            if h["operation"].startswith("VACUUM")
        ],
        "data files left": sum(1 for p in Path(root).iterdir() if p.suffix == ".parquet"),
    }


HIDDEN_NAMES_PLANTED = (
    "_x=1/f.parquet",  # no partition column is named _x: hidden
    "p=a/_tmp.parquet",
    ".p=a/f.parquet",
    "_hidden/p=a/f.parquet",
    "_change_data/cdc-00000.parquet",  # change data: cleaned like data files
    "_delta_index/i.parquet",
    "p=a/orphan.parquet",
    "q=1/f.parquet",  # not a partition column, but not hidden either
)
"""Old files no version references, under hidden names and names VACUUM cleans."""


def vacuum_hidden_names(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """VACUUM at a retention of 0 hours over :data:`HIDDEN_NAMES_PLANTED`, a month old, in a
    table partitioned by ``p``: which files each engine keeps, and its VACUUM END counts."""
    e.partitioned(e.write(frame(spark, [(1, "a", "x")])).mode("append"), "p").save(root)
    month_ago = dt.datetime.now().timestamp() - 30 * 86400
    for relative in HIDDEN_NAMES_PLANTED:
        path = Path(root) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"not parquet: never read")
        os.utime(path, (month_ago, month_ago))
    table = e.table.forPath(spark, root)
    _vacuum_unchecked(spark, table)
    end = table.history().where("operation = 'VACUUM END'").collect()[0]["operationMetrics"]
    return {
        "kept": [r for r in HIDDEN_NAMES_PLANTED if (Path(root) / r).exists()],
        "counts": {k: v for k, v in end.items() if k in VACUUM_COUNTS},
    }


def error_catching(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """What ``except AnalysisException`` (and its siblings) catches, with which condition: a
    path that holds no table, a version that does not exist, a restore to before the first
    commit, a VACUUM below the retention, an UPDATE of an unknown column and a MERGE whose target
    row two source rows match."""
    empty = str(Path(root).parent / "no-table")
    Path(empty).mkdir(parents=True, exist_ok=True)
    e.write(frame(spark, [(1, "a", "x")])).mode("append").save(root)
    table = e.table.forPath(spark, root)
    twice = frame(spark, [(1, "a", "s1"), (1, "a", "s2")])
    merge = table.alias("t").merge(twice.alias("s"), "t.id = s.id").whenMatchedUpdateAll()
    return {
        "no table": _caught(lambda: e.table.forPath(spark, empty)),
        "version": _caught(lambda: e.read(spark, root, versionAsOf=7).collect()),
        "restore early": _caught(lambda: table.restoreToTimestamp("2000-01-01 00:00:00")),
        "vacuum": _caught(lambda: table.vacuum(0)),
        "update column": _caught(lambda: table.update("id = 1", {"nope": "'x'"})),
        "merge twice": _caught(merge.execute),
        **merge_cardinality(spark, table),
    }


def merge_cardinality(spark: SparkSession, table: Any) -> dict[str, Any]:
    """A MERGE whose target row ``id = 1`` two source rows match is ambiguous, whatever its
    clauses' conditions say of the pair, unless its only WHEN MATCHED clause is one
    unconditional DELETE (inserts beside it too): then it deletes the row (it runs last)."""
    source = frame(spark, [(1, "a", "s1"), (1, "a", "s2"), (2, "b", "s3")])
    merge = table.alias("t").merge(source.alias("s"), "t.id = s.id")
    return {
        "twice, conditional delete": _caught(
            merge.whenMatchedDelete(condition="s.v = 's1'").execute
        ),
        "twice, delete no pair holds": _caught(
            merge.whenMatchedDelete(condition="s.v = 'none'").execute
        ),
        "twice, delete then update": _caught(
            merge.whenMatchedDelete(condition="s.v = 's1'").whenMatchedUpdateAll().execute
        ),
        "twice, unconditional delete and insert": _caught(
            merge.whenMatchedDelete().whenNotMatchedInsertAll().execute
        ),
    }


def time_travel(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.write(frame(spark, [(1, "a", "x")])).mode("append").save(root)
    e.write(frame(spark, [(2, "b", "y")])).mode("append").save(root)
    e.table.forPath(spark, root).delete("id = 1")
    moment = e.table.forPath(spark, root).history().where("version = 1").collect()[0]["timestamp"]
    # in a half-hour zone, without offset: the session's time zone, not UTC
    with session_conf(spark, {SESSION_TIME_ZONE: "Asia/Kolkata"}):
        local = commit_moment(spark, e, root, 1)
        at_local = sorted(map(tuple, e.read(spark, root, timestampAsOf=local).collect()))
    return {
        "v0": sorted(map(tuple, e.read(spark, root, versionAsOf=0).collect())),
        "at v1": sorted(map(tuple, e.read(spark, root, timestampAsOf=stamp(moment)).collect())),
        "at v1, Asia/Kolkata": at_local,
    }


def forget_last_batch(checkpoint: Path) -> None:
    """The crash between a batch's write and its completion mark: the mark (and its checksum)
    removed, so the restarted query runs the batch again."""
    commits = checkpoint / "commits"
    last = max((f for f in commits.iterdir() if f.name.isdigit()), key=lambda f: int(f.name))
    last.unlink()
    (commits / f".{last.name}.crc").unlink(missing_ok=True)


def streaming(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """foreachBatch with txnAppId = the query id and txnVersion = the batch id; the query is
    restarted after its last batch was written but not marked done (the crash a restart
    replays): the batch runs again and is skipped."""
    base = Path(root).parent / f"stream-{e.name}"
    source, checkpoint = base / "source", base / "checkpoint"
    source.mkdir(parents=True)

    def write_batch(batch: DataFrame, batch_id: int) -> None:
        query = batch.sparkSession.sparkContext.getLocalProperty("sql.streaming.queryId")
        writer = e.write(batch).mode("append").option("txnAppId", query)
        writer.option("txnVersion", batch_id).save(root)

    # ours: the helper deltaspec offers for exactly this (spark/streaming.py)
    ours = idempotent_writer(root)

    def batches(batch: DataFrame, batch_id: int) -> None:
        (write_batch if e.fmt == "delta" else ours)(batch, batch_id)

    def run() -> None:
        stream = spark.readStream.schema(SCHEMA).json(str(source))
        query = (
            stream.writeStream.foreachBatch(batches)
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination()

    (source / "1.json").write_text('{"id": 1, "p": "a", "v": "x"}\n')
    run()
    (source / "2.json").write_text('{"id": 2, "p": "b", "v": "y"}\n')
    run()
    forget_last_batch(checkpoint)  # batch 1 written, its completion lost

    run()
    return {"txn versions": txn_versions(root)}


def commit_actions(root: str) -> list[list[dict[str, Any]]]:
    """The actions of each commit file of ``root``, in version order."""
    return [
        [json.loads(line) for line in commit.read_text().splitlines()]
        for commit in sorted((Path(root) / "_delta_log").glob("*.json"))
    ]


def txn_versions(root: str) -> list[list[int]]:
    """Per commit, the versions its SetTransaction actions set (their app ids are query ids,
    which differ between runs)."""
    return [
        sorted(a["txn"]["version"] for a in actions if "txn" in a)
        for actions in commit_actions(root)
    ]


_SKIPPING = "id long, ts timestamp, d double, n double, p string"
_T = dt.datetime(2024, 1, 1, 0, 0, 0, 123456)


def rewrite_stats(root: str) -> list[list[str]]:
    """Per DELETE commit, the stats of the files it rewrote as written (JSON text re-dumped with
    sorted keys, so a NaN written unquoted differs from the string "NaN"). Appends through
    ``format("deltaspec")`` are left out: they write no float bounds (Parquet footers may leave
    NaN out of them), where delta-spark writes them."""
    out = []
    for actions in commit_actions(root):
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        if info.get("operation") == "DELETE":
            stats = [a["add"]["stats"] for a in actions if "add" in a]
            out.append(sorted(json.dumps(json.loads(text), sort_keys=True) for text in stats))
    return out


def data_skipping(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """Which files a DELETE rewrites is data skipping on the stats; a file wrongly skipped keeps
    the rows it should lose. Each delete sits on a boundary: a timestamp maximum cut to
    milliseconds, ``x <= v`` at a file's minimum, IS NULL, a literal on the left, an OR across
    files. The rewritten files' stats hold NaN, infinities and timestamps with milliseconds."""
    second = dt.timedelta(seconds=1)
    files: list[list[tuple[Any, ...]]] = [
        [(1, _T, 1.5, 1.0, "a"), (2, _T - second, float("nan"), None, "a")],
        [(5, _T - 2 * second, float("inf"), 2.0, "a"), (6, _T - 3 * second, -1.0, 3.0, "a")],
        [(7, _T - 4 * second, 0.0, None, "b"), (8, _T - 5 * second, float("-inf"), 4.0, "b")],
        [(10, _T - 6 * second, 2.0, 5.0, "c"), (11, _T - 7 * second, 3.0, 6.0, "c")],
    ]
    first = e.write(frame(spark, files[0], _SKIPPING)).mode("append")
    e.partitioned(first, "p").save(root)
    for rows in files[1:]:
        e.write(frame(spark, rows, _SKIPPING)).mode("append").save(root)
    table = e.table.forPath(spark, root)
    for condition in (
        "ts > TIMESTAMP'2024-01-01 00:00:00.1234'",
        "id <= 5",
        "n IS NULL",
        "7 < id AND id < 10",
        "id = 6 OR id = 10",
    ):
        table.delete(condition)
    return {"stats": rewrite_stats(root)}


def skipping_without_stats(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """``delta.dataSkippingNumIndexedCols`` = 1: statistics for ``id`` only, so no file has a
    null count for ``v``, and a DELETE by ``v IS NULL`` must read every file."""
    first = e.write(frame(spark, [(1, "a", "x")])).mode("append")
    first.option("delta.dataSkippingNumIndexedCols", "1").save(root)
    e.write(frame(spark, [(2, "b", None), (3, "b", "z")])).mode("append").save(root)
    e.table.forPath(spark, root).delete("v IS NULL")
    return {}


_FOREIGN_SCHEMA = {
    "type": "struct",
    "fields": [
        {"name": name, "type": kind, "nullable": True, "metadata": {}}
        for name, kind in (
            ("id", "long"),
            ("v", "string"),
            ("p", "string"),
            ("k", "integer"),
            ("ts", "timestamp"),
        )
    ],
}
_FOREIGN_FILES = {
    # partition values as another writer may put them (ACTION.PARTITION_VALUES): "" in a
    # non-string column is null (in a string column delta-spark reads "" as a value: actions.md);
    # ISO 8601 with "Z" or an offset (01:00+01:00 is midnight UTC)
    "f0.parquet": (1, "empty", {"p": "e", "k": "", "ts": "2024-01-01T00:00:00.000000Z"}),
    "f1.parquet": (2, "offset", {"p": "a", "k": "1", "ts": "2024-01-01T01:00:00.000000+01:00"}),
    "f2.parquet": (3, "plain", {"p": "b", "k": "2", "ts": "2024-01-01T06:00:00.000000Z"}),
}


def write_foreign_table(root: str) -> None:
    """Version 0 of a table another writer wrote: Parquet files by pyarrow and a commit by
    hand, with the partition values of ``_FOREIGN_FILES``."""
    log = Path(root) / "_delta_log"
    log.mkdir(parents=True)
    metadata = {
        "id": "foreign",
        "format": {"provider": "parquet", "options": {}},
        "schemaString": json.dumps(_FOREIGN_SCHEMA),
        "partitionColumns": ["p", "k", "ts"],
        "configuration": {},
        "createdTime": 0,
    }
    info = {"timestamp": 0, "operation": "WRITE", "operationParameters": {"mode": "Append"}}
    actions: list[dict[str, Any]] = [
        {"commitInfo": info},
        {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
        {"metaData": metadata},
    ]
    for name, (key, value, partition) in _FOREIGN_FILES.items():
        data = pa.table({"id": pa.array([key], pa.int64()), "v": pa.array([value])})
        pq.write_table(data, Path(root) / name)
        size = (Path(root) / name).stat().st_size
        add = {"path": name, "partitionValues": partition, "size": size}
        actions.append({"add": {**add, "modificationTime": 0, "dataChange": True}})
    text = "".join(json.dumps(a) + "\n" for a in actions)
    (log / "00000000000000000000.json").write_text(text)


def manifest_entries(root: str) -> list[tuple[str, list[str]]]:
    """The symlink manifest: per manifest file, its directory under ``_symlink_format_manifest``
    and the names of the data files it lists (their absolute paths differ between roots)."""
    base = Path(root) / "_symlink_format_manifest"
    return sorted(
        (str(m.parent.relative_to(base)), sorted(Path(line).name for line in m.read_text().split()))
        for m in base.rglob("manifest")
    )


def foreign_partition_values(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """A table another writer wrote with an empty-string integer partition value and timestamp
    partition values in UTC and with an offset: the rows read ("" is null, the offset is
    converted), the symlink manifest (its directories keep the values as written, "" as
    __HIVE_DEFAULT_PARTITION__) and a DELETE whose partition pruning must convert the offset.
    No filter on the integer column: delta-spark 4.4 on Spark 4 casts "" to int in ANSI mode
    and fails (CAST_INVALID_INPUT) where the protocol says null."""
    write_foreign_table(root)
    before = sorted(map(tuple, e.read(spark, root).collect()), key=repr)
    table = e.table.forPath(spark, root)
    table.generate("symlink_format_manifest")
    manifest = manifest_entries(root)
    table.delete("ts = TIMESTAMP'2024-01-01 00:00:00Z'")
    return {"before": before, "manifest": manifest}


_DV = "delta.enableDeletionVectors"


def deletion_vectors_seen(root: str) -> list[list[tuple[str, str, int]]]:
    """Per commit, the deletion vectors its adds carry: (path, storage type, cardinality), the
    part of DV.WRITE both engines must agree on (ids and offsets differ by design)."""
    seen = []
    for actions in commit_actions(root):
        adds = [a.get("add") for a in actions]
        vectors = [(a["path"], a["deletionVector"]) for a in adds if a and a.get("deletionVector")]
        seen.append(sorted((p, v["storageType"], v["cardinality"]) for p, v in vectors))
    return seen


def _dv_table(spark: SparkSession, e: Engine, root: str) -> Any:
    rows = [(i, "a" if i % 2 else "b", f"v{i}") for i in range(10)]
    e.write(frame(spark, rows)).mode("append").option(_DV, "true").save(root)
    return e.table.forPath(spark, root)


def _vector_shape(root: str) -> list[list[tuple[str, int]]]:
    """deletion_vectors_seen without the data file names (they differ between engines)."""
    return [[(kind, n) for _, kind, n in commit] for commit in deletion_vectors_seen(root)]


def dv_delete(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """DV.WRITE: a DELETE marks rows, a second one merges its rows into the vector, a third
    that empties the first file removes it (the second file keeps its rows)."""
    table = _dv_table(spark, e, root)
    e.write(frame(spark, [(20, "c", "w"), (21, "c", "x")])).mode("append").save(root)
    table.delete("id = 2")
    table.delete("id = 3 OR id = 5")
    table.delete("id < 10")
    return {"vectors": _vector_shape(root)}


def dv_update(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    table = _dv_table(spark, e, root)
    table.update("id < 3", {"v": "'low'"})
    table.update("id = 1", {"v": "'one'"})
    return {"vectors": _vector_shape(root)}


def dv_merge(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    table = _dv_table(spark, e, root)
    source = frame(spark, [(1, "a", "new"), (2, "b", "gone"), (50, "b", "ins")])
    (
        table.alias("t")
        .merge(source.alias("s"), "t.id = s.id")
        .whenMatchedDelete(condition="s.v = 'gone'")
        .whenMatchedUpdate(set={"v": "s.v"})
        .whenNotMatchedInsertAll()
        .execute()
    )
    return {"vectors": _vector_shape(root)}


SCRIPTS: dict[str, Callable[[SparkSession, Engine, str], dict[str, Any]]] = {
    f.__name__: f
    for f in (
        quickstart,
        default_save_mode,
        create_append,
        overwrite,
        replace_where,
        dynamic_partition_overwrite,
        merge_schema,
        delete,
        delete_partition_function,
        update,
        merge,
        merge_by_source_only,
        optimize,
        restore,
        history,
        vacuum_history,
        vacuum_hidden_names,
        error_catching,
        time_travel,
        streaming,
        data_skipping,
        skipping_without_stats,
        foreign_partition_values,
        dv_delete,
        dv_update,
        dv_merge,
    )
}

# script -> why it differs; the test checks each still differs (the list only shrinks)
KNOWN_DIFFERENCES: dict[str, str] = {}
