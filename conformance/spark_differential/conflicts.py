"""Interleaved operations: our operation raced with ``withCommitHook`` against delta-spark's
through a hand-driven transaction recording the same reads; the outcomes must be the same."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from deltaspec.conformance.spark_differential.engines import Engine
from deltaspec.conformance.spark_differential.engines import frame as _df
from deltaspec.impl.spark.tables import DeltaTable as OurDeltaTable


def _seq(spark: SparkSession, items: list[Any]) -> Any:
    jvm: Any = spark._jvm
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
    winner: Callable[[], None],
    read: list[str] | None = None,
    app_id: str | None = None,
) -> str:
    """delta-spark's outcome for a transaction that read what our operation reads (the files
    matching the conjuncts ``read``, which it removes, or the version of ``app_id``, which it
    sets), begun before ``winner`` committed: delta-spark has no commit hook, so the loser is
    driven by hand through its public OptimisticTransaction."""
    jvm: Any = spark._jvm
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


def our_loser(spark: SparkSession, root: str, winner: Callable[[], None], case: str) -> str:
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


def run_conflict(
    spark: SparkSession, engines: dict[str, Engine], case: str, workdir: Path
) -> dict[str, str]:
    """Each engine's outcome for ``case``: a table with one file per partition, then the
    loser reading partition ``a`` (or app id ``q``) while the winner commits."""
    _, winner = CONFLICTS[case]
    outcomes = {}
    for key, engine in engines.items():
        root = str(workdir / key)
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
    return outcomes


def conflict_differences(outcomes: dict[str, str], case: str) -> list[str]:
    """What is wrong with ``outcomes``: both engines must give the expected outcome."""
    expected = CONFLICTS[case][0]
    if outcomes == {"delta": expected, "ours": expected}:
        return []
    return [
        f"expected {expected}; ours {outcomes.get('ours')}, delta-spark {outcomes.get('delta')}"
    ]
