"""The scripts: each is what a PySpark user writes, with the engine's format and DeltaTable;
it returns what it observed beyond the table itself (compared too)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from deltaspec.conformance.spark_differential.engines import SCHEMA, Engine
from deltaspec.conformance.spark_differential.engines import frame as _df
from deltaspec.conformance.spark_differential.engines import stamp as _stamp
from deltaspec.impl.spark.streaming import idempotent_writer


def create_append(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.partitioned(e.write(_df(spark, [(1, "a", "x"), (2, "b", "y")])).mode("append"), "p").save(
        root
    )
    e.write(_df(spark, [(3, "a", "z")])).mode("append").save(root)
    # a value Hive-escapes in its directory (':') and add.path then percent-escapes ('|', '%');
    # an empty string, which is a null partition
    e.write(_df(spark, [(4, "a:b|c", "e"), (5, "", "f")])).mode("append").save(root)
    return {}


def overwrite(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.write(_df(spark, [(1, "a", "x"), (2, "b", "y")])).mode("append").save(root)
    e.write(_df(spark, [(9, "c", "new")])).mode("overwrite").save(root)
    # a rewrite that changes no data: its removes and adds say dataChange=false
    e.write(_df(spark, [(9, "c", "new")])).mode("overwrite").option("dataChange", "false").save(
        root
    )
    return {}


def replace_where(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.partitioned(e.write(_df(spark, [(1, "a", "x"), (2, "b", "y")])).mode("append"), "p").save(
        root
    )
    writer = e.write(_df(spark, [(5, "a", "new")])).mode("overwrite")
    writer.option("replaceWhere", "p = 'a'").save(root)
    return {}


def dynamic_partition_overwrite(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    rows = [(1, "a", "x"), (2, "b", "y"), (3, None, "z")]
    e.partitioned(e.write(_df(spark, rows)).mode("append"), "p").save(root)
    writer = e.write(_df(spark, [(5, "a", "new"), (6, None, "null")])).mode("overwrite")
    writer.option("partitionOverwriteMode", "dynamic").save(root)
    return {}


def merge_schema(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.write(_df(spark, [(1, "a", "x")])).mode("append").save(root)
    wider = _df(spark, [(2, "b", "y", 7)], SCHEMA + ", n int")
    e.write(wider).mode("append").option("mergeSchema", "true").save(root)
    return {}


def delete(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    rows = [(1, "a", "x"), (2, "a", "y"), (3, "b", "z")]
    e.partitioned(e.write(_df(spark, rows)).mode("append"), "p").save(root)
    table = e.table.forPath(spark, root)
    table.delete("id = 2")
    table.delete(F.col("p") == "b")
    return {}


def update(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    rows = [(1, "a", "x"), (2, "a", "y"), (3, "b", "z")]
    e.partitioned(e.write(_df(spark, rows)).mode("append"), "p").save(root)
    table = e.table.forPath(spark, root)
    table.update("id = 1", {"v": "'one'"})
    table.update(F.col("p") == "b", {"v": F.upper(F.col("v"))})
    return {}


def merge(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    rows = [(1, "a", "x"), (2, "a", "y"), (3, "b", "z"), (4, "b", "w")]
    e.partitioned(e.write(_df(spark, rows)).mode("append"), "p").save(root)
    source = _df(spark, [(1, "a", "new"), (2, "a", "gone"), (5, "b", "ins")])
    (
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
    return {}


def optimize(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.partitioned(e.write(_df(spark, [(1, "a", "x")])).mode("append"), "p").save(root)
    for rows in ([(2, "a", "y")], [(3, "b", "z")], [(4, "b", "w")]):
        e.write(_df(spark, rows)).mode("append").save(root)
    e.table.forPath(spark, root).optimize().where("p = 'a'").executeCompaction()
    return {}


def restore(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.write(_df(spark, [(1, "a", "x")])).mode("append").save(root)
    e.write(_df(spark, [(2, "b", "y")])).mode("append").save(root)
    table = e.table.forPath(spark, root)
    table.delete("id = 1")
    table.restoreToVersion(1)
    first = table.history().where("version = 0").collect()[0]["timestamp"]
    table.restoreToTimestamp(_stamp(first))
    return {"after": sorted(map(tuple, e.read(spark, root).collect()))}


def history(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.write(_df(spark, [(1, "a", "x")])).mode("append").option("userMetadata", "m").save(root)
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


def time_travel(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.write(_df(spark, [(1, "a", "x")])).mode("append").save(root)
    e.write(_df(spark, [(2, "b", "y")])).mode("append").save(root)
    e.table.forPath(spark, root).delete("id = 1")
    moment = e.table.forPath(spark, root).history().where("version = 1").collect()[0]["timestamp"]
    return {
        "v0": sorted(map(tuple, e.read(spark, root, versionAsOf=0).collect())),
        "at v1": sorted(map(tuple, e.read(spark, root, timestampAsOf=_stamp(moment)).collect())),
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

    # ours: the helper deltaspec offers for exactly this (impl/spark/streaming.py)
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
    return {}


_SKIPPING = "id long, ts timestamp, d double, n double, p string"
_T = dt.datetime(2024, 1, 1, 0, 0, 0, 123456)


def rewrite_stats(root: str) -> list[list[str]]:
    """Per DELETE commit, the stats of the files it rewrote as written (JSON text re-dumped with
    sorted keys, so a NaN written unquoted differs from the string "NaN"). Appends through
    ``format("deltaspec")`` are left out: they write no float bounds (Parquet footers may leave
    NaN out of them), where delta-spark writes them."""
    out = []
    for commit in sorted((Path(root) / "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in commit.read_text().splitlines()]
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
    first = e.write(_df(spark, files[0], _SKIPPING)).mode("append")
    e.partitioned(first, "p").save(root)
    for rows in files[1:]:
        e.write(_df(spark, rows, _SKIPPING)).mode("append").save(root)
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


_DV = "delta.enableDeletionVectors"


def deletion_vectors_seen(root: str) -> list[list[tuple[str, str, int]]]:
    """Per commit, the deletion vectors its adds carry: (path, storage type, cardinality), the
    part of DV.WRITE both engines must agree on (ids and offsets differ by design)."""
    seen = []
    for commit in sorted((Path(root) / "_delta_log").glob("*.json")):
        adds = [json.loads(line).get("add") for line in commit.read_text().splitlines()]
        vectors = [(a["path"], a["deletionVector"]) for a in adds if a and a.get("deletionVector")]
        seen.append(sorted((p, v["storageType"], v["cardinality"]) for p, v in vectors))
    return seen


def _dv_table(spark: SparkSession, e: Engine, root: str) -> Any:
    rows = [(i, "a" if i % 2 else "b", f"v{i}") for i in range(10)]
    e.write(_df(spark, rows)).mode("append").option(_DV, "true").save(root)
    return e.table.forPath(spark, root)


def _vector_shape(root: str) -> list[list[tuple[str, int]]]:
    """deletion_vectors_seen without the data file names (they differ between engines)."""
    return [[(kind, n) for _, kind, n in commit] for commit in deletion_vectors_seen(root)]


def dv_delete(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    """DV.WRITE: a DELETE marks rows, a second one merges its rows into the vector, a third
    that empties the first file removes it (the second file keeps its rows)."""
    table = _dv_table(spark, e, root)
    e.write(_df(spark, [(20, "c", "w"), (21, "c", "x")])).mode("append").save(root)
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
    source = _df(spark, [(1, "a", "new"), (2, "b", "gone"), (50, "b", "ins")])
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
        create_append,
        overwrite,
        replace_where,
        dynamic_partition_overwrite,
        merge_schema,
        delete,
        update,
        merge,
        optimize,
        restore,
        history,
        time_travel,
        streaming,
        data_skipping,
        dv_delete,
        dv_update,
        dv_merge,
    )
}

# script -> why it differs; the test checks each still differs (the list only shrinks)
KNOWN_DIFFERENCES: dict[str, str] = {}
