"""MERGE INTO as copy-on-write (or by deletion vectors, DV.WRITE), in delta-rs's shape: this
entry runs the operation; ``clauses`` says what each WHEN clause does, ``frames`` the two sides
as Spark rows, ``filter`` what the conditions select (the files read, the files touched) and
``writer`` writes the new files and makes the actions and metrics of the one commit."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ....impl.actions import AddFile
from ... import conditions
from ... import deletion_vectors as dvs
from ...read import scan, table_schema
from ..command import DmlResult, check, column_names, commit, start
from .clauses import MergeClause, MergeClauses
from .filter import MERGE_ROW_COUNTS, files_read, touched_files
from .frames import SOURCE_FLAG, TARGET_ROW, MergeFrames
from .writer import file_actions, merge_metrics, write_rows

__all__ = ["MergeClause", "merge"]


def merge(
    spark: SparkSession,
    path: str | os.PathLike[str],
    source: DataFrame,
    on: str,
    clauses: Sequence[MergeClause],
    *,
    target_alias: str = "t",
    source_alias: str = "s",
    before_commit: Callable[[], None] | None = None,
    read_version: int | None = None,
) -> DmlResult:
    """MERGE INTO table AS t USING source AS s ON ... WHEN MATCHED ... WHEN NOT MATCHED ...
    WHEN NOT MATCHED BY SOURCE ..."""
    root, txn, snapshot = start(path, read_version)
    now = txn.clock()
    names = column_names(snapshot)
    t, s = target_alias, source_alias
    types = {f.name: f.dataType for f in table_schema(snapshot).fields}
    frame = spark.createDataFrame([], table_schema(snapshot)).alias(t).crossJoin(source.alias(s))
    for sql in [on, *(c.condition for c in clauses if c.condition is not None)]:
        check(spark, snapshot, sql, "MERGE", frame)
    parsed = conditions.parse(spark, on, names, table=root)
    kinds = MergeClauses.of(clauses)
    read = files_read(txn, parsed, t, kinds)
    by_vectors = dvs.enabled(snapshot)

    def target(files: Sequence[AddFile]) -> DataFrame:
        rows = scan(spark, root, snapshot, files, with_file=True, with_row_index=by_vectors)
        return rows.withColumn(TARGET_ROW, F.monotonically_increasing_id()).alias(t)

    flagged_source = source.withColumn(SOURCE_FLAG, F.lit(True)).alias(s)
    marked: dict[str, set[int]] | None = {} if by_vectors else None
    frames = MergeFrames(flagged_source, on, t, s, names, types, target, marked)
    hit: list[AddFile] = []
    counts = dict.fromkeys(MERGE_ROW_COUNTS, 0)
    if (kinds.matched or kinds.by_source) and read:
        hit, counts = touched_files(frames, kinds, read, root)
    written = write_rows(frames, kinds, read, hit, root, snapshot)
    metrics = merge_metrics(frames, hit, written, counts, source.count())
    removes, adds, metrics = file_actions(frames, hit, written, metrics, root, now)
    parameters = kinds.parameters(spark, parsed)
    return commit(txn, "MERGE", parameters, metrics, removes, adds, before_commit)
