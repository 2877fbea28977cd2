"""UPDATE table SET column = expression, ... [WHERE condition] as copy-on-write, or by deletion
vectors (DV.WRITE)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ...impl.actions import AddFile, RemoveFile
from ...impl.snapshot.state import Snapshot
from .. import deletion_vectors as dvs
from .. import rewrite
from ..errors import UnresolvedColumnError, UpdateValueError
from ..read import scan, table_schema
from ..write import write_data
from .command import (
    DmlResult,
    check,
    column_names,
    commit,
    file_metrics,
    live_rows,
    read_condition,
    rows,
    start,
)


def _update_targets(
    snapshot: Snapshot, assignments: Mapping[str, str], root: str
) -> dict[str, str]:
    """``assignments`` keyed by the table's spelling of each column; unknown columns refused."""
    names = column_names(snapshot)
    resolve = {n.lower(): n for n in names}
    unknown = [c for c in assignments if c.lower() not in resolve]
    if unknown:
        raise UnresolvedColumnError(
            f"cannot update unknown column {unknown[0]!r}; the table's columns are {names}",
            table=root,
            version=snapshot.version,
        )
    return {resolve[c.lower()]: expr for c, expr in assignments.items()}


def _updated(
    rows: DataFrame, snapshot: Snapshot, targets: Mapping[str, str], matched: Column
) -> DataFrame:
    """``rows`` with each target column set to its expression where ``matched``."""
    types = {f.name: f.dataType for f in table_schema(snapshot).fields}
    return rows.select(
        *(
            F.when(matched, F.expr(targets[n]).cast(types[n])).otherwise(F.col(f"`{n}`")).alias(n)
            if n in targets
            else F.col(f"`{n}`")
            for n in column_names(snapshot)
        )
    )


def _check_constant_values(
    spark: SparkSession, snapshot: Snapshot, targets: Mapping[str, str]
) -> None:
    """Every assignment that names no column is cast to its column's type once, by Spark's ANSI
    cast, before any file is written: a value that does not fit is UpdateValueError (the write
    would have failed midway, or stored null)."""
    types = {f.name: f.dataType for f in table_schema(snapshot).fields}
    for column, expression in targets.items():
        try:
            constant = spark.sql(f"SELECT ({expression}) AS v")
        except AnalysisException:
            continue  # it reads a column: cast row by row as the rows are written
        try:
            constant.select(F.col("v").cast(types[column])).collect()
        except Exception as refused:  # py4j wraps Spark's SparkNumberFormatException & co.
            named = re.search(r"\[([A-Z_]+)", str(refused))
            raise UpdateValueError(
                f"UPDATE cannot set {column} ({types[column].simpleString()}) to {expression}: "
                f"{named.group(1) if named else type(refused).__name__}",
                table=snapshot.table_path,
                version=snapshot.version,
            ) from None


def update(
    spark: SparkSession,
    path: str | os.PathLike[str],
    assignments: Mapping[str, str],
    condition: str | None = None,
    *,
    before_commit: Callable[[], None] | None = None,
    read_version: int | None = None,
) -> DmlResult:
    """UPDATE table SET column = expression, ... [WHERE condition]: the files holding a matching
    row, rewritten with the new values."""
    root, txn, snapshot = start(path, read_version)
    now = txn.clock()
    targets = _update_targets(snapshot, assignments, root)
    if condition is not None:
        check(spark, snapshot, condition, "UPDATE")
    empty = spark.createDataFrame([], table_schema(snapshot))
    for expression in assignments.values():
        check(spark, snapshot, f"({expression}) IS NULL OR TRUE", "UPDATE", empty, False)
    _check_constant_values(spark, snapshot, targets)
    read = read_condition(spark, txn, condition)
    if condition is None:
        hit, matched, updated = read.files, F.lit(True), live_rows(read.files)
    else:
        counts = rewrite.matching_rows(spark, root, snapshot, read.files, condition)
        hit = [f for f in read.files if f.path in counts]
        matched, updated = rewrite.matches(condition), sum(counts.values())
    parameters = {"predicate": read.predicate}
    if dvs.enabled(snapshot) and hit:
        changed = _update_by_vectors(spark, root, snapshot, hit, targets, matched, now)
        return commit(txn, "UPDATE", parameters, changed[2], *changed[:2], before_commit)
    adds: list[AddFile] = []
    if hit:
        scanned = scan(spark, root, snapshot, hit)
        updated_rows = _updated(scanned, snapshot, targets, matched)
        adds = write_data(updated_rows, root, snapshot.metadata, protocol=snapshot.protocol)
    removes = [rewrite.remove(f, now) for f in hit]
    if updated is None:  # a file without numRecords: the rows counted
        updated = scan(spark, root, snapshot, hit).count() if hit else 0
    metrics = {
        **file_metrics(hit, adds),
        "numUpdatedRows": str(updated),
        "numCopiedRows": str(rows(adds) - updated),
    }
    return commit(txn, "UPDATE", parameters, metrics, removes, adds, before_commit)


def _update_by_vectors(
    spark: SparkSession,
    root: str,
    snapshot: Snapshot,
    hit: Sequence[AddFile],
    targets: Mapping[str, str],
    matched: Column,
    now: int,
) -> tuple[list[RemoveFile], list[AddFile], dict[str, str]]:
    """UPDATE with deletion vectors (DV.WRITE): the matched rows marked deleted in their files
    and written, updated, to new files."""
    matching = scan(spark, root, snapshot, hit).where(matched)
    written = write_data(
        _updated(matching, snapshot, targets, F.lit(True)),
        root,
        snapshot.metadata,
        protocol=snapshot.protocol,
    )
    changes = dvs.mark_deleted(root, hit, dvs.marked_rows(spark, root, snapshot, hit, matched), now)
    adds = [*changes.adds, *written]
    metrics = {
        "numRemovedFiles": str(len(hit)),
        "numRemovedBytes": "0",
        "numAddedFiles": str(len(written)),
        "numAddedBytes": str(sum(a.size for a in written)),
        "numCopiedRows": "0",
        "numUpdatedRows": str(changes.deleted_rows),
        **changes.metrics(),
    }
    return list(changes.removes), adds, metrics
