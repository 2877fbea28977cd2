"""Idempotent Structured Streaming writes: ``foreachBatch`` with txnAppId/txnVersion.

``query = stream.writeStream.foreachBatch(idempotent_writer(path)).option("checkpointLocation",
ckpt).start()``: each micro-batch is written with ``txnAppId`` = the query's id (kept in its
checkpoint, so the same across restarts) and ``txnVersion`` = the batch id, committed with a
SetTransaction in the same commit as the data, the app id looked up first (TXN.READ_APP_IDS). A
restarted query that replays a batch it had already written (it died after the commit and before
marking the batch done) finds the version applied and skips it: no batch is ever written twice.
Two queries running on one checkpoint write the same (appId, version): the second to commit fails
with ConcurrentTransactionException (CONFLICT.APP_TXN), as in delta-spark.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from pyspark.sql import DataFrame

from .errors import InvalidOptionError
from .write import WriteResult, write_delta

QUERY_ID_PROPERTY = "sql.streaming.queryId"


def idempotent_writer(
    path: str | os.PathLike[str],
    *,
    app_id: str | None = None,
    partition_by: Sequence[str] | None = None,
    before_commit: Callable[[], None] | None = None,
    **options: Any,
) -> Callable[[DataFrame, int], WriteResult]:
    """A ``foreachBatch`` function appending each batch once (``app_id`` defaults to the
    running query's id)."""

    def write_batch(batch: DataFrame, batch_id: int) -> WriteResult:
        app = app_id or batch.sparkSession.sparkContext.getLocalProperty(QUERY_ID_PROPERTY)
        if not app:
            raise InvalidOptionError(
                "no streaming query id: call from foreachBatch or pass app_id", table=str(path)
            )
        return write_delta(
            batch,
            path,
            mode="append",
            partition_by=partition_by,
            before_commit=before_commit,
            txnAppId=app,
            txnVersion=batch_id,
            **options,
        )

    return write_batch
