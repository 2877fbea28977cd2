"""DELETE, UPDATE, MERGE and compaction on Spark: results, files rewritten, what is recorded as
read, commitInfo, and the concurrency outcomes of reference §5.5 with real threads."""

from __future__ import annotations

import datetime as dt
import json
import threading
from collections.abc import Callable

import pytest

from deltaspec.impl.actions import CommitInfo
from deltaspec.impl.errors import (
    AppendOnlyViolationError,
    ConcurrentAppendException,
    ConcurrentDeleteReadException,
)
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.spark import (
    MergeClause,
    TableFailure,
    compact,
    compact_tables,
    delete,
    merge,
    read_table,
    update,
    write_delta,
)
from deltaspec.spark.errors import MultipleSourceRowMatchError, UpdateValueError

pytestmark = pytest.mark.spark


def _rows(spark, root):
    return sorted(tuple(r) for r in read_table(spark, root).collect())


def _info(root, version) -> dict:
    return next(
        a for a in DeltaLog(str(root)).read_commit(version) if isinstance(a, CommitInfo)
    ).fields


def _table(spark, root, rows, partition_by=("p",), files_per_partition=1):
    df = spark.createDataFrame(rows, "id long, p string, v string")
    write_delta(df.repartition(files_per_partition), root, partition_by=list(partition_by))


def test_delete_rewrites_only_files_with_matching_rows(spark, tmp_path):
    root = tmp_path / "t"
    _table(spark, root, [(i, "a" if i < 5 else "b", "x") for i in range(10)])
    live = {a.path for a in DeltaLog(str(root)).snapshot().files.values()}
    result = delete(spark, root, "id = 7")
    assert [r.path for r in result.removes] == [p for p in live if p.startswith("p=b/")]
    assert _rows(spark, root) == [(i, "a" if i < 5 else "b", "x") for i in range(10) if i != 7]
    info = _info(root, 1)
    assert info["operation"] == "DELETE"
    assert info["operationParameters"] == {"predicate": '["(id = 7)"]'}
    assert info["operationMetrics"]["numDeletedRows"] == "1"
    assert info["operationMetrics"]["numCopiedRows"] == "4"


def test_partition_delete_removes_whole_files_and_unconditional_delete_empties(spark, tmp_path):
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x"), (2, "b", "y")])
    result = delete(spark, root, "p = 'a'")
    assert not result.adds and len(result.removes) == 1
    assert _rows(spark, root) == [(2, "b", "y")]
    nothing = delete(spark, root, "id = 99")
    assert nothing.version is None  # commitIfNeeded skips the empty DELETE
    delete(spark, root)
    assert _rows(spark, root) == []
    assert _info(root, 2)["operationParameters"] == {"predicate": "[]"}


def test_update_sets_values_and_moves_partitions(spark, tmp_path):
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x"), (2, "a", "y"), (3, "b", "z")])
    update(spark, root, {"v": "upper(v)", "p": "'c'"}, "id <= 2")
    assert _rows(spark, root) == [(1, "c", "X"), (2, "c", "Y"), (3, "b", "z")]
    assert _info(root, 1)["operationParameters"] == {"predicate": '["(id <= 2)"]'}
    update(spark, root, {"v": "'all'"})
    assert {r[2] for r in _rows(spark, root)} == {"all"}
    assert _info(root, 2)["operationParameters"] == {"predicate": "[]"}


@pytest.mark.parametrize(
    ("assignments", "refusal"),
    [({"id": "'abc'"}, "CAST_INVALID_INPUT"), ({"id": "99999999999999999999"}, "CAST_OVERFLOW"),
     ({"id": "CAST(2 AS BIGINT) * 9223372036854775807"}, "ARITHMETIC_OVERFLOW")],
)  # fmt: skip
def test_an_update_value_that_does_not_fit_its_column_is_refused_before_writing(
    spark, tmp_path, assignments, refusal
):
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x"), (2, "b", "y")])
    files = sorted(p.name for p in root.rglob("*.parquet"))
    with pytest.raises(UpdateValueError, match=refusal) as refused:
        update(spark, root, assignments, "id = 1")
    assert refused.value.kind == "UPDATE_VALUE_DOES_NOT_FIT" and refused.value.version == 0
    assert DeltaLog(str(root)).snapshot().version == 0
    assert sorted(p.name for p in root.rglob("*.parquet")) == files


def test_merge_updates_deletes_and_inserts(spark, tmp_path):
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x"), (2, "a", "y"), (3, "b", "z")])
    source = spark.createDataFrame([(1, "a", "new"), (3, "b", "gone"), (4, "b", "ins")],
                                   "id long, p string, v string")  # fmt: skip
    merge(
        spark,
        root,
        source,
        "t.id = s.id AND t.p = s.p",
        [
            MergeClause("delete", condition="s.v = 'gone'"),
            MergeClause("update", assignments={"v": "s.v"}),
            MergeClause("insert", assignments="*"),
        ],
    )
    assert _rows(spark, root) == [(1, "a", "new"), (2, "a", "y"), (4, "b", "ins")]
    params = _info(root, 1)["operationParameters"]
    assert json.loads(params["matchedPredicates"]) == [
        {"predicate": "(s.v = 'gone')", "actionType": "delete"},
        {"actionType": "update"},
    ]
    assert json.loads(params["notMatchedPredicates"]) == [{"actionType": "insert"}]
    duplicated = spark.createDataFrame(
        [(2, "a", "1"), (2, "a", "2")], "id long, p string, v string"
    )
    with pytest.raises(MultipleSourceRowMatchError):
        merge(spark, root, duplicated, "t.id = s.id",
              [MergeClause("update", assignments={"v": "s.v"})])  # fmt: skip
    assert DeltaLog(str(root)).latest_version() == 1


def test_merge_rewrites_only_touched_files_and_inserts_in_the_same_join(spark, tmp_path):
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x"), (2, "a", "y"), (3, "b", "z")])
    live = {a.path for a in DeltaLog(str(root)).snapshot().files.values()}
    source = spark.createDataFrame(
        [(3, "b", "upd"), (5, "c", "one"), (6, "c", "two"), (7, "c", "none")],
        "id long, p string, v string",
    )
    clauses = [
        MergeClause("update", assignments={"v": "s.v"}),
        MergeClause("insert", condition="s.v = 'one'", assignments="*"),
        MergeClause("insert", condition="s.id >= 5", assignments={"id": "s.id", "p": "s.p"}),
    ]
    result = merge(spark, root, source, "t.id = s.id", clauses)
    assert [r.path for r in result.removes] == [p for p in live if p.startswith("p=b/")]
    assert _rows(spark, root) == [
        (1, "a", "x"), (2, "a", "y"), (3, "b", "upd"), (5, "c", "one"), (6, "c", None),
        (7, "c", None),
    ]  # fmt: skip
    unmatched = spark.createDataFrame([(9, "d", "new")], "id long, p string, v string")
    result = merge(
        spark,
        root,
        unmatched,
        "t.id = s.id",
        [*clauses[:1], MergeClause("insert", assignments="*")],
    )
    assert result.removes == ()
    assert _rows(spark, root)[-1] == (9, "d", "new")
    assert len(_rows(spark, root)) == 7


def test_append_only_refuses_dml(spark, tmp_path):
    root = tmp_path / "t"
    df = spark.createDataFrame([(1, "a", "x")], "id long, p string, v string")
    write_delta(df, root, **{"delta.appendOnly": "true"})
    with pytest.raises(AppendOnlyViolationError):
        delete(spark, root, "id = 1")
    with pytest.raises(AppendOnlyViolationError):
        update(spark, root, {"v": "'y'"})


def _date_table(spark, root, days=3, files_per_day=3):
    rows = [
        (i, (dt.date(2024, 1, 1) + dt.timedelta(days=i % days)), f"v{i}")
        for i in range(days * files_per_day * 4)
    ]
    df = spark.createDataFrame(rows, "id long, day date, v string")
    for chunk in range(files_per_day):
        chosen = df.where(f"cast(id / {days} as int) % {files_per_day} = {chunk}")
        write_delta(chosen.coalesce(1), root,
                    mode="append", partition_by=["day"])  # fmt: skip


def test_compaction_of_a_date_range(spark, tmp_path):
    root = tmp_path / "t"
    _date_table(spark, root)
    before = _rows(spark, root)
    result = compact(spark, root, date_column="day", start=dt.date(2024, 1, 2),
                     end=dt.date(2024, 1, 3), target_files=1)  # fmt: skip
    assert (result.removed, result.added) == (6, 2)
    snapshot = DeltaLog(str(root)).snapshot()
    per_day: dict[str | None, int] = {}
    for add in snapshot.files.values():
        per_day[add.partition_values["day"]] = per_day.get(add.partition_values["day"], 0) + 1
    assert per_day == {"2024-01-01": 3, "2024-01-02": 1, "2024-01-03": 1}
    assert _rows(spark, root) == before
    info = _info(root, result.version)
    assert info["operation"] == "OPTIMIZE" and info["isolationLevel"] == "SnapshotIsolation"
    assert compact(spark, root, date_column="day", start=dt.date(2024, 1, 2)).version is None


def test_compaction_over_many_tables_reports_failures(spark, tmp_path):
    good = tmp_path / "good"
    _table(spark, good, [(1, "a", "x")], partition_by=())
    write_delta(
        spark.createDataFrame([(2, "a", "y")], "id long, p string, v string"), good, mode="append"
    )
    outcomes = compact_tables(spark, [tmp_path / "missing", good])
    assert isinstance(outcomes[0], TableFailure)
    assert not isinstance(outcomes[1], TableFailure) and outcomes[1].removed == 2
    assert _rows(spark, good) == [(1, "a", "x"), (2, "a", "y")]


# --- concurrency: two writers on one table, interleaved with real threads ---------------------


def _race(first: Callable[..., object], second: Callable[[], object]) -> object:
    """Run ``first`` up to its commit, run ``second`` to completion, then let ``first`` commit;
    returns ``first``'s result or the exception it raised."""
    ready, go = threading.Event(), threading.Event()
    outcome: list[object] = []

    def pause() -> None:
        ready.set()
        assert go.wait(120)

    def run() -> None:
        try:
            outcome.append(first(before_commit=pause))
        except Exception as error:  # the outcome under test
            outcome.append(error)
        finally:
            ready.set()

    thread = threading.Thread(target=run)
    thread.start()
    assert ready.wait(300)
    try:
        second()
    finally:
        go.set()
        thread.join(300)
    return outcome[0]


def test_compaction_commits_over_concurrent_appends(spark, tmp_path):
    root = tmp_path / "t"
    _date_table(spark, root, days=1)
    extra = spark.createDataFrame(
        [(1000, dt.date(2024, 1, 1), "late")], "id long, day date, v string"
    )
    result = _race(
        lambda before_commit: compact(spark, root, target_files=1, before_commit=before_commit),
        lambda: write_delta(extra, root, mode="append"),
    )
    assert not isinstance(result, Exception), result
    rows = _rows(spark, root)
    assert len(rows) == 13 and len({r[0] for r in rows}) == 13  # nothing lost or duplicated


def test_compaction_fails_when_an_update_rewrote_its_files(spark, tmp_path):
    root = tmp_path / "t"
    _date_table(spark, root, days=1)
    result = _race(
        lambda before_commit: compact(spark, root, target_files=1, before_commit=before_commit),
        lambda: update(spark, root, {"v": "'changed'"}, "id = 0"),
    )
    assert isinstance(result, ConcurrentDeleteReadException)
    retried = _race(
        lambda before_commit: compact(
            spark, root, target_files=1, retry=True, before_commit=before_commit
        ),
        lambda: update(spark, root, {"v": "'again'"}, "id = 0"),
    )
    assert isinstance(retried, ConcurrentDeleteReadException)  # compacted files are gone
    assert len(_rows(spark, root)) == 12


def test_two_deletes_on_one_partition_conflict(spark, tmp_path):
    root = tmp_path / "t"
    _table(spark, root, [(i, "a", "x") for i in range(4)] + [(9, "b", "y")])
    result = _race(
        lambda before_commit: delete(
            spark, root, "p = 'a' AND id = 1", before_commit=before_commit
        ),
        lambda: delete(spark, root, "p = 'a' AND id = 2"),
    )
    # the winner re-added a file in 'a', which the loser's predicate covers: checked first
    assert isinstance(result, ConcurrentAppendException)
    assert sorted(r[0] for r in _rows(spark, root)) == [0, 1, 3, 9]


def test_whole_file_deletes_of_one_partition_conflict_as_delete_delete(spark, tmp_path):
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x"), (2, "b", "y")])
    result = _race(
        lambda before_commit: delete(spark, root, "p = 'a'", before_commit=before_commit),
        lambda: delete(spark, root, "p = 'a'"),
    )
    assert isinstance(result, ConcurrentDeleteReadException)


def test_deletes_on_disjoint_partitions_both_commit(spark, tmp_path):
    root = tmp_path / "t"
    _table(spark, root, [(1, "a", "x"), (2, "a", "x"), (3, "b", "y"), (4, "b", "y")])
    result = _race(
        lambda before_commit: delete(
            spark, root, "p = 'a' AND id = 1", before_commit=before_commit
        ),
        lambda: delete(spark, root, "p = 'b' AND id = 3"),
    )
    assert not isinstance(result, Exception), result
    assert sorted(r[0] for r in _rows(spark, root)) == [2, 4]


def test_dml_on_a_table_with_deletion_vectors_keeps_them_applied(spark, tmp_path, fixtures_dir):
    import shutil

    from deltaspec.impl.scan import scan

    root = tmp_path / "dv"
    shutil.copytree(fixtures_dir / "kernel-dv-many-versions", root)
    delete(spark, root, "id < 20")
    expected = [i for i in range(20, 500) if i % 11]
    assert sorted(r[0] for r in read_table(spark, root).select("id").collect()) == expected
    ours = scan(DeltaLog(str(root)).snapshot(), root).column("id").to_pylist()
    assert sorted(ours) == expected
