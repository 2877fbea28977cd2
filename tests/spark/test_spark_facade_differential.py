"""The same PySpark user scripts against live delta-spark and against deltaspec's Spark path, on
one session (conformance/spark_differential: the scripts, the comparison, the conflict cases; the
``spark`` stage of ``deltaspec check`` runs the same code).

``KNOWN_DIFFERENCES`` lists what still differs with the reason; a listed difference that no
longer shows fails the test, so the list only shrinks.

Each script and case runs both engines (one to six minutes each on 2 cores): the suite runs a
pinned sample, one of each kind of write and conflict, and ``deltaspec check`` (its ``spark``
stage) runs them all. ``DELTASPEC_FULL_DIFFERENTIAL=1`` runs them all here too.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from deltaspec.conformance.spark_differential.compare import differences, run_both
from deltaspec.conformance.spark_differential.conflicts import (
    CONFLICTS,
    conflict_differences,
    run_conflict,
)
from deltaspec.conformance.spark_differential.engines import Engine, make_engines
from deltaspec.conformance.spark_differential.scripts import SCRIPTS
from deltaspec.conformance.spark_differential.suite import script_failures

pytestmark = pytest.mark.spark


FULL = os.environ.get("DELTASPEC_FULL_DIFFERENTIAL") == "1"

#: The suite's sample: a write of each kind (append, replaceWhere, dynamic overwrite), each DML
#: command without deletion vectors, OPTIMIZE, and a conflict of each rule (app id, a read
#: partition, a blind append beside a replaceWhere, a compaction's rewritten file).
SCRIPT_SAMPLE = (
    "create_append", "replace_where", "dynamic_partition_overwrite", "delete", "update", "merge",
    "optimize",
)  # fmt: skip
CONFLICT_SAMPLE = (
    "same app id", "delete vs append to its partition",
    "replaceWhere vs append to another partition", "compaction vs delete of a file it rewrites",
)  # fmt: skip
#: Run only by ``deltaspec check``'s spark stage (and with DELTASPEC_FULL_DIFFERENTIAL=1), as
#: the slowest: deletion vectors, data skipping, RESTORE, history, time travel, streaming.
CHECK_ONLY = sorted(set(SCRIPTS) - set(SCRIPT_SAMPLE)) + sorted(
    set(CONFLICTS) - set(CONFLICT_SAMPLE)
)


def test_the_sample_names_existing_scripts_and_cases_and_the_check_runs_them_all() -> None:
    from deltaspec.conformance.spark_differential import suite

    assert set(SCRIPT_SAMPLE) < set(SCRIPTS) and set(CONFLICT_SAMPLE) < set(CONFLICTS)
    assert CHECK_ONLY == [
        "data_skipping", "dv_delete", "dv_merge", "dv_update", "history", "merge_schema",
        "overwrite", "restore", "streaming", "time_travel",
        "delete of every row vs append", "delete vs append to another partition",
        "delete vs delete of its partition", "dynamic overwrite vs append to its partition",
    ]  # fmt: skip
    # the check's stage iterates the whole SCRIPTS and CONFLICTS tables, not the sample
    assert "for name in SCRIPTS:" in inspect.getsource(suite.run_differential)
    assert "for case in CONFLICTS:" in inspect.getsource(suite.run_differential)


@pytest.fixture(scope="module")
def engines(spark: SparkSession) -> dict[str, Engine]:
    return make_engines(spark)


@pytest.mark.rules("SNAPSHOT.TIME_TRAVEL", "SNAPSHOT.APP_TXN", "ACTION.TXN")
@pytest.mark.parametrize("name", list(SCRIPTS) if FULL else SCRIPT_SAMPLE)
def test_script_matches_delta_spark(
    spark: SparkSession, engines: dict[str, Engine], name: str, tmp_path: Path
) -> None:
    found = script_failures(name, differences(run_both(spark, engines, name, tmp_path)))
    assert not found, "\n".join(found)


@pytest.mark.rules(
    "CONFLICT.APPEND_MATCH", "CONFLICT.DELETE_READ", "CONFLICT.APP_TXN", "TXN.READ_PREDICATES",
    "TXN.READ_APP_IDS",
)  # fmt: skip
@pytest.mark.parametrize("case", list(CONFLICTS) if FULL else CONFLICT_SAMPLE)
def test_conflicts_match_delta_spark(
    spark: SparkSession, engines: dict[str, Engine], case: str, tmp_path: Path
) -> None:
    found = conflict_differences(run_conflict(spark, engines, case, tmp_path), case)
    assert not found, found[0]
