"""What the Spark differential compares of a commit (conformance/spark_differential/commits.py):
everything it leaves, but what legitimately differs between two writers of the same table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deltaspec.conformance.spark_differential.commits import (
    commit,
    comparable,
    differing,
    log_shape,
    tables,
)


def _add(path: str, stats: dict[str, Any] | None, **more: Any) -> dict[str, Any]:
    add = {"path": path, "partitionValues": {"p": "a"}, "size": 900, "modificationTime": 1,
           "dataChange": True, **more}  # fmt: skip
    if stats is not None:
        add["stats"] = json.dumps(stats)
    return {"add": add}


def _remove(path: str, stats: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    remove = {"path": path, "deletionTimestamp": 5, "dataChange": True, "size": 900,
              "extendedFileMetadata": True, "partitionValues": {"p": "a"}, **more}  # fmt: skip
    if stats is not None:
        remove["stats"] = json.dumps(stats)
    return {"remove": remove}


def _info(operation: str = "DELETE", **metrics: str) -> dict[str, Any]:
    return {"commitInfo": {"timestamp": 7, "operation": operation, "operationParameters": {},
                           "isolationLevel": "Serializable", "isBlindAppend": False,
                           "operationMetrics": metrics, "txnId": "x"}}  # fmt: skip


STATS = {"numRecords": 2, "minValues": {"id": 1}, "maxValues": {"id": 2}, "nullCount": {"id": 0}}


def test_names_sizes_and_times_are_not_compared() -> None:
    mine = commit([_info(numRemovedBytes="900", executionTimeMs="3"),
                   _remove("p=a/part-1.parquet", size=1, deletionTimestamp=9),
                   _add("p=a/part-2.parquet", STATS, size=2, modificationTime=8)])  # fmt: skip
    theirs = commit([_info(numRemovedBytes="940", executionTimeMs="4"),
                     _remove("p=a/other.parquet"), _add("p=a/x.parquet", STATS)])  # fmt: skip
    assert mine == theirs


def test_a_tombstone_is_compared_with_its_stats_and_what_it_carries() -> None:
    whole = commit([_info(), _remove("p=a/f.parquet", {"numRecords": 2})])
    assert commit([_info(), _remove("p=a/f.parquet")]) != whole  # no stats
    assert commit([_info(), _remove("p=a/f.parquet", STATS)]) != whole  # all of them
    without_size = _remove("p=a/f.parquet", {"numRecords": 2})
    del without_size["remove"]["size"]
    assert commit([_info(), without_size]) != whole
    assert commit([_info(), _remove("p=a/f.parquet", {"numRecords": 2},
                                    extendedFileMetadata=False)]) != whole  # fmt: skip


def test_an_add_is_compared_with_its_stats_and_its_deletion_vector() -> None:
    vector = {"storageType": "u", "pathOrInlineDv": "ab", "offset": 1, "sizeInBytes": 34,
              "cardinality": 2}  # fmt: skip
    tight = commit([_info(), _add("p=a/f.parquet", {**STATS, "tightBounds": False},
                                  deletionVector=vector)])  # fmt: skip
    loose = commit([_info(), _add("p=a/f.parquet", {**STATS, "tightBounds": True},
                                  deletionVector=vector)])  # fmt: skip
    assert tight != loose
    moved = {**vector, "pathOrInlineDv": "cd", "offset": 9}
    assert commit([_info(), _add("p=a/g.parquet", {**STATS, "tightBounds": False},
                                 deletionVector=moved)]) == tight  # fmt: skip
    more = {**vector, "cardinality": 3}
    assert commit([_info(), _add("p=a/f.parquet", {**STATS, "tightBounds": False},
                                 deletionVector=more)]) != tight  # fmt: skip


def test_a_partition_s_rows_in_more_files_compare_as_one_file() -> None:
    one = commit([_info(), _add("p=a/f.parquet", {"numRecords": 2, "minValues": {"id": 1},
                                                  "maxValues": {"id": 4},
                                                  "nullCount": {"id": 0}})])  # fmt: skip
    first = {"numRecords": 1, "minValues": {"id": 1}, "maxValues": {"id": 1},
             "nullCount": {"id": 0}}  # fmt: skip
    second = {**first, "minValues": {"id": 4}, "maxValues": {"id": 4}}
    two = commit([_info(), _add("p=a/f.parquet", first), _add("p=a/g.parquet", second)])
    assert two["files"] == one["files"] and two["file counts"] != one["file counts"]
    wider = commit([_info(), _add("p=a/f.parquet", {"numRecords": 2, "minValues": {"id": 0},
                                                    "maxValues": {"id": 4},
                                                    "nullCount": {"id": 0}})])  # fmt: skip
    assert two["files"] != wider["files"]


def test_metric_values_are_compared_but_timings_bytes_and_names_we_leave_out() -> None:
    mine = commit([_info(numDeletedRows="1", numRemovedFiles="1")])
    assert comparable(mine, commit([_info(numDeletedRows="1", numRemovedFiles="1",
                                          numDeletionVectorsAdded="0")])) == mine  # fmt: skip
    assert comparable(mine, commit([_info(numDeletedRows="2", numRemovedFiles="1")])) != mine
    assert comparable(mine, commit([_info(numDeletedRows="1")])) != mine  # ours has more


def test_file_counting_metrics_follow_the_layout_only_where_it_differs() -> None:
    stats = {"numRecords": 1, "minValues": {"id": 1}, "maxValues": {"id": 1},
             "nullCount": {"id": 0}}  # fmt: skip
    two_files = commit([_info("MERGE", numTargetFilesAdded="2"), _add("p=a/f.parquet", stats),
                        _add("p=a/g.parquet", stats)])  # fmt: skip
    one_file = commit([_info("MERGE", numTargetFilesAdded="1"),
                       _add("p=a/h.parquet", {**stats, "numRecords": 2})])  # fmt: skip
    assert comparable(two_files, one_file) == two_files
    same_layout = commit([_info("MERGE", numTargetFilesAdded="3"), _add("p=a/f.parquet", stats),
                          _add("p=a/g.parquet", stats)])  # fmt: skip
    assert comparable(two_files, same_layout) != two_files
    assert set(differing(two_files, comparable(two_files, same_layout))) == {"commitInfo"}


def test_every_table_a_script_leaves_is_found(tmp_path: Path) -> None:
    for name in ("table", "unpartitioned", "stream/checkpoint"):
        (tmp_path / name).mkdir(parents=True)
    for name in ("table", "unpartitioned"):
        (tmp_path / name / "_delta_log").mkdir()
        lines = [json.dumps(a) for a in (_info("WRITE"), _add("f.parquet", STATS))]
        (tmp_path / name / "_delta_log" / f"{0:020}.json").write_text("\n".join(lines) + "\n")
    found = tables(str(tmp_path))
    assert sorted(found) == ["table", "unpartitioned"]
    assert [c["version"] for c in log_shape(found["table"])] == [0]
