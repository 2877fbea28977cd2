"""The same PySpark user scripts against live delta-spark (``format("delta")``,
``delta.tables.DeltaTable``) and against deltaspec's facade (``format("deltaspec")``,
``deltaspec.impl.spark.tables.DeltaTable``), on one session.

Each script runs once per engine into its own table; then the rows (each engine reading its own
table *and* the other's), the log's shape per version (operation, parameters with expression ids
stripped, the kinds of actions with their dataChange flags and partition values, the blind-append
flag) and the commitInfo metric names are compared. ``KNOWN_DIFFERENCES`` lists what still differs
with the reason; a listed difference that no longer shows fails the test, so the list only
shrinks. Interleaved operations are compared in test_conflicts_match_delta_spark: our operation
is raced with ``withCommitHook``, delta-spark's through a hand-driven transaction recording the
same reads.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame, DataFrameWriter, SparkSession
from pyspark.sql import functions as F

from deltaspec.impl.spark.datasource import register
from deltaspec.impl.spark.tables import DeltaTable as OurDeltaTable

pytestmark = pytest.mark.spark

SCHEMA = "id long, p string, v string"


@dataclass(frozen=True)
class Engine:
    name: str
    fmt: str
    table: Any  # the DeltaTable class

    def write(self, df: DataFrame) -> DataFrameWriter:
        return df.write.format(self.fmt)

    def partitioned(self, writer: DataFrameWriter, *columns: str) -> DataFrameWriter:
        """delta-spark takes ``partitionBy``; a Python data source cannot (Spark checks the
        partitioning against the source's table, which has none), so ours takes it as an option
        (KNOWN_DIFFERENCES["partitionBy"])."""
        if self.fmt == "delta":
            return writer.partitionBy(*columns)
        return writer.option("partitionBy", ",".join(columns))

    def read(self, spark: SparkSession, root: str, **options: Any) -> DataFrame:
        reader = spark.read.format(self.fmt)
        for key, value in options.items():
            reader = reader.option(key, value)
        return reader.load(root)


@pytest.fixture(scope="module")
def engines(spark: SparkSession) -> dict[str, Engine]:
    register(spark)
    from delta.tables import DeltaTable as TheirDeltaTable

    return {
        "delta": Engine("delta", "delta", TheirDeltaTable),
        "ours": Engine("ours", "deltaspec", OurDeltaTable),
    }


def _df(spark: SparkSession, rows: list[tuple[Any, ...]], schema: str = SCHEMA) -> DataFrame:
    return spark.createDataFrame(rows, schema).coalesce(1)


def _stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


# --- the scripts: each is what a PySpark user writes, with the engine's format and DeltaTable ----


def create_append(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.partitioned(e.write(_df(spark, [(1, "a", "x"), (2, "b", "y")])).mode("append"), "p").save(
        root
    )
    e.write(_df(spark, [(3, "a", "z")])).mode("append").save(root)
    return {}


def overwrite(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.write(_df(spark, [(1, "a", "x"), (2, "b", "y")])).mode("append").save(root)
    e.write(_df(spark, [(9, "c", "new")])).mode("overwrite").save(root)
    return {}


def replace_where(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    e.partitioned(e.write(_df(spark, [(1, "a", "x"), (2, "b", "y")])).mode("append"), "p").save(
        root
    )
    writer = e.write(_df(spark, [(5, "a", "new")])).mode("overwrite")
    writer.option("replaceWhere", "p = 'a'").save(root)
    return {}


def dynamic_partition_overwrite(spark: SparkSession, e: Engine, root: str) -> dict[str, Any]:
    rows = [(1, "a", "x"), (2, "b", "y")]
    e.partitioned(e.write(_df(spark, rows)).mode("append"), "p").save(root)
    writer = e.write(_df(spark, [(5, "a", "new")])).mode("overwrite")
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
        .merge(source.alias("s"), "t.id = s.id")
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

    def run() -> None:
        stream = spark.readStream.schema(SCHEMA).json(str(source))
        query = (
            stream.writeStream.foreachBatch(write_batch)
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
    )
}

# script -> why it differs; the test checks each still differs (the list only shrinks)
KNOWN_DIFFERENCES: dict[str, str] = {}


# --- comparing --------------------------------------------------------------------------------

_EXPR_ID = re.compile(r"#\d+L?")
_QUALIFIER = re.compile(r"\b[A-Za-z_]\w*\.(?=[A-Za-z_`])")
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$")


def _normalised(value: Any) -> Any:
    """A parameter value with what legitimately varies taken out: expression ids, qualifiers and
    quotes in predicates (delta-spark prints resolved expressions, ``(id#12L = b)``; we print
    Spark's SQL, ``(t.id = 'b')``), JSON spacing, the wall-clock time of a timestamp."""
    if not isinstance(value, str):
        return value
    if _TIMESTAMP.match(value):
        return "<timestamp>"
    try:
        decoded = json.loads(value)
    except ValueError:
        decoded = None
    if isinstance(decoded, list | dict):
        return _normalised_json(decoded)
    return _QUALIFIER.sub("", _EXPR_ID.sub("", value)).replace("'", "")


def _normalised_json(value: Any) -> Any:
    if isinstance(value, list):
        return [_normalised_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalised_json(v) for k, v in value.items()}
    return _normalised(value)


def log_shape(root: str) -> list[dict[str, Any]]:
    """Per version: operation, parameters, action kinds with dataChange and partition values,
    and the blind-append flag; metric names apart (see metric_names)."""
    shape = []
    log = Path(root) / "_delta_log"
    for commit in sorted(log.glob("*.json")):
        actions = [json.loads(line) for line in commit.read_text().splitlines() if line.strip()]
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        files = sorted(
            {
                (kind, a[kind].get("dataChange"), json.dumps(a[kind].get("partitionValues")))
                for a in actions
                for kind in ("add", "remove")
                if kind in a
            }
        )
        others = sorted({k for a in actions for k in a if k not in {"add", "remove", "commitInfo"}})
        shape.append(
            {
                "version": int(commit.stem),
                "operation": info.get("operation"),
                "parameters": {
                    k: _normalised(v) for k, v in info.get("operationParameters", {}).items()
                },
                "files": files,
                "others": others,
                "isBlindAppend": info.get("isBlindAppend"),
            }
        )
    return shape


def metric_names(root: str) -> list[set[str]]:
    log = Path(root) / "_delta_log"
    out = []
    for commit in sorted(log.glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "commitInfo" in action:
                out.append(set(action["commitInfo"].get("operationMetrics", {})))
    return out


def _rows(df: DataFrame) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def run_both(
    spark: SparkSession, engines: dict[str, Engine], name: str, tmp_path: Path
) -> dict[str, Any]:
    roots = {key: str(tmp_path / key / "table") for key in engines}
    outcome: dict[str, Any] = {}
    for key, engine in engines.items():
        os.makedirs(os.path.dirname(roots[key]), exist_ok=True)
        try:
            outcome[key] = {"observed": SCRIPTS[name](spark, engine, roots[key])}
        except Exception as error:  # the difference is reported, not raised
            outcome[key] = {"error": f"{type(error).__name__}: {error}"[:300]}
            continue
        outcome[key]["log"] = log_shape(roots[key])
        outcome[key]["rows"] = _rows(engine.read(spark, roots[key]))
    if all("rows" in o for o in outcome.values()):
        # each engine reads the other's table
        outcome["ours"]["reads delta's"] = _rows(engines["ours"].read(spark, roots["delta"]))
        outcome["delta"]["reads ours"] = _rows(engines["delta"].read(spark, roots["ours"]))
        outcome["metrics missing"] = [
            sorted(o - t)
            for o, t in zip(metric_names(roots["ours"]), metric_names(roots["delta"]), strict=False)
        ]
    for root in roots.values():
        shutil.rmtree(os.path.dirname(root), ignore_errors=True)
    return outcome


def differences(outcome: dict[str, Any]) -> list[str]:
    ours, theirs = outcome["ours"], outcome["delta"]
    found = []
    if "error" in ours or "error" in theirs:
        return [f"ours: {ours.get('error')}; delta-spark: {theirs.get('error')}"]
    if ours["rows"] != theirs["rows"]:
        found.append(f"rows: ours {ours['rows']} delta-spark {theirs['rows']}")
    if ours["reads delta's"] != theirs["rows"] or theirs["reads ours"] != ours["rows"]:
        found.append("cross-read rows differ")
    if ours["observed"] != theirs["observed"]:
        found.append(f"observed: ours {ours['observed']} delta-spark {theirs['observed']}")
    for mine, reference in zip(ours["log"], theirs["log"], strict=False):
        if mine != reference:
            found.append(f"log v{reference['version']}: ours {mine} delta-spark {reference}")
    if len(ours["log"]) != len(theirs["log"]):
        found.append(f"versions: ours {len(ours['log'])} delta-spark {len(theirs['log'])}")
    if any(outcome["metrics missing"]):
        found.append(f"metrics ours has and delta-spark not: {outcome['metrics missing']}")
    return found


@pytest.mark.rules("SNAPSHOT.TIME_TRAVEL", "SNAPSHOT.APP_TXN", "ACTION.TXN")
@pytest.mark.parametrize("name", list(SCRIPTS))
def test_script_matches_delta_spark(
    spark: SparkSession, engines: dict[str, Engine], name: str, tmp_path: Path
) -> None:
    found = differences(run_both(spark, engines, name, tmp_path))
    if name in KNOWN_DIFFERENCES:
        assert found, f"{name} now matches delta-spark: drop it from KNOWN_DIFFERENCES"
    else:
        assert not found, "\n".join(found)


# --- interleaved operations ---------------------------------------------------------------------


def _seq(spark: SparkSession, items: list[Any]) -> Any:
    jvm = spark._jvm
    java_list = jvm.java.util.ArrayList()
    for item in items:
        java_list.add(item)
    return jvm.scala.jdk.javaapi.CollectionConverters.asScala(java_list).toSeq()


def _outcome(error: BaseException) -> str:
    """The conflict's class name: delta-spark's Python exceptions (``delta.exceptions``) and
    ours have the same names."""
    return type(error).__name__


def delta_spark_loser(
    spark: SparkSession,
    root: str,
    winner: Callable[[], object],
    read: list[str] | None = None,
    app_id: str | None = None,
) -> str:
    """delta-spark's outcome for a transaction that read what our operation reads (the files
    matching the conjuncts ``read``, which it removes, or the version of ``app_id``, which it
    sets), begun before ``winner`` committed: delta-spark has no commit hook, so the loser is
    driven by hand through its public OptimisticTransaction."""
    jvm = spark._jvm
    log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, root)
    txn = log.startTransaction()
    actions: list[Any] = []
    if read is not None:
        frame = spark.read.format("delta").load(root)
        parts = [frame.where(c)._jdf.queryExecution().analyzed().condition() for c in read]
        files = txn.filterFiles(_seq(spark, parts), False)
        actions = [files.apply(i).remove() for i in range(files.size())]
    if app_id is not None:
        txn.txnVersion(app_id)
        line = json.dumps({"txn": {"appId": app_id, "version": 0, "lastUpdated": 0}})
        actions.append(jvm.org.apache.spark.sql.delta.actions.Action.fromJson(line))
    winner()
    operation = getattr(jvm.org.apache.spark.sql.delta, "DeltaOperations$ManualUpdate$")
    try:
        txn.commit(_seq(spark, actions), getattr(operation, "MODULE$"))
    except Exception as error:
        return _outcome(error)
    return "committed"


def our_loser(spark: SparkSession, root: str, winner: Callable[[], object], case: str) -> str:
    table = OurDeltaTable.forPath(spark, root)
    try:
        if case == "same app id":
            from deltaspec.impl.spark import write_delta

            df = _df(spark, [(7, "a", "q")])
            write_delta(df, root, mode="append", txnAppId="q", txnVersion=0, before_commit=winner)
        else:
            table.withCommitHook(winner).delete("p = 'a' AND id = 1")
    except Exception as error:
        return _outcome(error)
    return "committed"


CONFLICTS: dict[str, tuple[str, Callable[[SparkSession, Engine, str], None]]] = {
    "delete vs append to its partition": (
        "ConcurrentAppendException",
        lambda spark, e, root: e.write(_df(spark, [(3, "a", "w")])).mode("append").save(root),
    ),
    "delete vs append to another partition": (
        "committed",
        lambda spark, e, root: e.write(_df(spark, [(3, "b", "w")])).mode("append").save(root),
    ),
    "delete vs delete of its partition": (
        "ConcurrentDeleteReadException",
        lambda spark, e, root: e.table.forPath(spark, root).delete("p = 'a'"),
    ),
    "same app id": (
        "ConcurrentTransactionException",
        lambda spark, e, root: (
            e.write(_df(spark, [(8, "b", "w")]))
            .mode("append")
            .option("txnAppId", "q")
            .option("txnVersion", 0)
            .save(root)
        ),
    ),
}


@pytest.mark.rules(
    "CONFLICT.APPEND_MATCH", "CONFLICT.DELETE_READ", "CONFLICT.APP_TXN", "TXN.READ_PREDICATES",
    "TXN.READ_APP_IDS",
)  # fmt: skip
@pytest.mark.parametrize("case", list(CONFLICTS))
def test_conflicts_match_delta_spark(
    spark: SparkSession, engines: dict[str, Engine], case: str, tmp_path: Path
) -> None:
    expected, winner = CONFLICTS[case]
    outcomes = {}
    for key, engine in engines.items():
        root = str(tmp_path / key)
        rows = [(1, "a", "x"), (2, "b", "y")]
        engine.partitioned(engine.write(_df(spark, rows)).mode("append"), "p").save(root)

        def win(engine: Engine = engine, root: str = root) -> None:
            winner(spark, engine, root)

        if key == "delta":
            read = None if case == "same app id" else ["p = 'a'", "id = 1"]
            app = "q" if case == "same app id" else None
            outcomes[key] = delta_spark_loser(spark, root, win, read=read, app_id=app)
        else:
            outcomes[key] = our_loser(spark, root, win, case)
    assert outcomes == {"delta": expected, "ours": expected}
