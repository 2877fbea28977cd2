"""Interleaved operations: our operation raced with ``withCommitHook`` against delta-spark's
through a hand-driven transaction recording the same reads; the outcomes must be the same."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from ...spark import write_delta
from ...spark.tables import DeltaTable as OurDeltaTable
from ..engines.deltaspark.loser import conflict_name, delta_spark_loser
from ..engines.spark_api import Engine
from .reference import ReferenceCache
from .scripts import frame


def _delete(condition: str | None) -> Callable[[SparkSession, str, Callable[[], None]], None]:
    def run(spark: SparkSession, root: str, winner: Callable[[], None]) -> None:
        OurDeltaTable.forPath(spark, root).withCommitHook(winner).delete(condition)

    return run


def _write(**options: Any) -> Callable[[SparkSession, str, Callable[[], None]], None]:
    def run(spark: SparkSession, root: str, winner: Callable[[], None]) -> None:
        rows = [(7, "a", "q")] if "txnAppId" in options else [(5, "a", "new")]
        write_delta(frame(spark, rows), root, before_commit=winner, **options)

    return run


def _compact(spark: SparkSession, root: str, winner: Callable[[], None]) -> None:
    OurDeltaTable.forPath(spark, root).withCommitHook(winner).optimize().where(
        "p = 'a'"
    ).executeCompaction()


def _append(row: tuple[Any, ...], **options: Any) -> Callable[[SparkSession, Engine, str], None]:
    def run(spark: SparkSession, e: Engine, root: str) -> None:
        writer = e.write(frame(spark, [row])).mode("append")
        for key, value in options.items():
            writer = writer.option(key, value)
        writer.save(root)

    return run


def _delete_winner(condition: str) -> Callable[[SparkSession, Engine, str], None]:
    return lambda spark, e, root: e.table.forPath(spark, root).delete(condition)


@dataclass(frozen=True)
class Case:
    """A loser reading what ``read`` selects (or app id ``app_id``) raced by ``winner``, on a
    table with one file per partition (``second_file``: one more in partition ``a``)."""

    expected: str
    winner: Callable[[SparkSession, Engine, str], None]
    ours: Callable[[SparkSession, str, Callable[[], None]], None]
    """Our loser's operation, run with ``winner`` as its commit hook."""
    read: list[str] | None = None
    """The conjuncts delta-spark's hand-driven loser reads and removes the files of ([]: the
    whole table; None: no files)."""
    app_id: str | None = None
    second_file: bool = False


_DELETE_A = ["p = 'a'", "id = 1"]
_DELETE_A_SKIPPING = ["p = 'a'", "id = 1L"]
"""As ``_DELETE_A`` with a bigint literal: the loser's conjuncts are analyzed, not optimized, and
``id = 1`` analyzes to ``id = CAST(1 AS BIGINT)``, which data skipping does not use (a DELETE's
optimized condition folds the cast)."""

CONFLICTS: dict[str, Case] = {
    "delete vs append to its partition": Case(
        "ConcurrentAppendException", _append((3, "a", "w")), _delete("p = 'a' AND id = 1"),
        _DELETE_A,
    ),
    "delete vs append to another partition": Case(
        "committed", _append((3, "b", "w")), _delete("p = 'a' AND id = 1"), _DELETE_A
    ),
    "delete vs delete of its partition": Case(
        "ConcurrentDeleteReadException", _delete_winner("p = 'a'"),
        _delete("p = 'a' AND id = 1"), _DELETE_A,
    ),
    "delete of every row vs append": Case(
        "ConcurrentAppendException", _append((3, "b", "w")), _delete(None), []
    ),
    "same app id": Case(
        "ConcurrentTransactionException", _append((8, "b", "w"), txnAppId="q", txnVersion=0),
        _write(mode="append", txnAppId="q", txnVersion=0), app_id="q",
    ),
    "dynamic overwrite vs append to its partition": Case(
        "ConcurrentAppendException", _append((3, "a", "w")),
        _write(mode="overwrite", partitionOverwriteMode="dynamic"), ["p = 'a'"],
    ),
    "replaceWhere vs append to another partition": Case(
        "committed", _append((3, "b", "w")), _write(mode="overwrite", replaceWhere="p = 'a'"),
        ["p = 'a'"],
    ),
    "delete vs delete of a file its data skipping ruled out": Case(
        "committed", _delete_winner("id = 3"), _delete("p = 'a' AND id = 1"),
        _DELETE_A_SKIPPING, second_file=True,
    ),
    "compaction vs delete of a file it rewrites": Case(
        "ConcurrentDeleteReadException", _delete_winner("id = 3"), _compact, ["p = 'a'"],
        second_file=True,
    ),
}  # fmt: skip


def run_conflict(
    spark: SparkSession,
    engines: dict[str, Engine],
    case: str,
    workdir: Path,
    cache: ReferenceCache | None = None,
) -> dict[str, str]:
    """Each engine's outcome for ``case``: a table with one file per partition (and a second
    in partition ``a`` where the case asks), then the loser reading while the winner commits;
    delta-spark's replayed from ``cache`` where it holds one."""
    chosen = CONFLICTS[case]
    outcomes = {}
    for key, engine in engines.items():
        if key == "delta" and cache is not None:
            recorded = cache.load(f"conflict {case}")
            if recorded is not None:
                outcomes[key] = recorded
                continue
        root = str(workdir / key)
        rows = [(1, "a", "x"), (2, "b", "y")]
        engine.partitioned(engine.write(frame(spark, rows)).mode("append"), "p").save(root)
        if chosen.second_file:
            engine.write(frame(spark, [(3, "a", "z")])).mode("append").save(root)

        def win(engine: Engine = engine, root: str = root) -> None:
            chosen.winner(spark, engine, root)

        if key == "delta":
            outcome = delta_spark_loser(spark, root, win, read=chosen.read, app_id=chosen.app_id)
            outcomes[key] = outcome
            if cache is not None:
                cache.save(f"conflict {case}", outcome)
            continue
        try:
            chosen.ours(spark, root, win)
            outcomes[key] = "committed"
        except Exception as error:
            outcomes[key] = conflict_name(error)
    return outcomes


def conflict_differences(outcomes: dict[str, str], case: str) -> list[str]:
    """What is wrong with ``outcomes``: both engines must give the expected outcome."""
    expected = CONFLICTS[case].expected
    if outcomes == {"delta": expected, "ours": expected}:
        return []
    return [
        f"expected {expected}; ours {outcomes.get('ours')}, delta-spark {outcomes.get('delta')}"
    ]
