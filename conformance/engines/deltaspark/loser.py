"""delta-spark's side of an interleaved operation: a transaction that read what our operation
reads, begun before a winner committed and committed after it. delta-spark has no commit hook,
so the loser is driven by hand through its public ``OptimisticTransaction``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pyspark.sql import SparkSession

from .jvm import delta_log, delta_package, scala_object, scala_seq
from .spark_api import DELTA_SPARK


def conflict_name(error: BaseException) -> str:
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
    """delta-spark's outcome (``committed`` or the conflict's class name) for a transaction that
    read the files matching the conjuncts ``read``, which it removes, or the version of
    ``app_id``, which it sets, begun before ``winner`` committed."""
    delta = delta_package(spark)
    txn = delta_log(spark, root).startTransaction()
    actions: list[Any] = []
    if read is not None:
        frame = DELTA_SPARK.read(spark, root)
        parts = [frame.where(c)._jdf.queryExecution().analyzed().condition() for c in read]
        files = txn.filterFiles(scala_seq(spark, parts), False)
        actions = [files.apply(i).remove() for i in range(files.size())]
    if app_id is not None:
        txn.txnVersion(app_id)
        line = json.dumps({"txn": {"appId": app_id, "version": 0, "lastUpdated": 0}})
        actions.append(delta.actions.Action.fromJson(line))
    winner()
    try:
        txn.commit(scala_seq(spark, actions), scala_object(delta, "DeltaOperations$ManualUpdate"))
    except Exception as error:
        return conflict_name(error)
    return "committed"
