"""The same PySpark user scripts against live delta-spark and against deltaspec's Spark path, on
one session (conformance/spark_differential: the scripts, the comparison, the conflict cases; the
``spark`` stage of ``deltaspec check`` runs the same code).

``KNOWN_DIFFERENCES`` lists what still differs with the reason; a listed difference that no
longer shows fails the test, so the list only shrinks.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from deltaspec.conformance.engines.registry import make_engines
from deltaspec.conformance.engines.spark_api import Engine
from deltaspec.conformance.spark_differential.compare import differences, run_both
from deltaspec.conformance.spark_differential.conflicts import (
    CONFLICTS,
    conflict_differences,
    run_conflict,
)
from deltaspec.conformance.spark_differential.scripts import SCRIPTS
from deltaspec.conformance.spark_differential.suite import script_failures

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def engines(spark: SparkSession) -> dict[str, Engine]:
    return make_engines(spark)


@pytest.mark.rules("SNAPSHOT.TIME_TRAVEL", "SNAPSHOT.APP_TXN", "ACTION.TXN")
@pytest.mark.parametrize("name", list(SCRIPTS))
def test_script_matches_delta_spark(
    spark: SparkSession, engines: dict[str, Engine], name: str, tmp_path: Path
) -> None:
    found = script_failures(name, differences(run_both(spark, engines, name, tmp_path)))
    assert not found, "\n".join(found)


@pytest.mark.rules(
    "CONFLICT.APPEND_MATCH", "CONFLICT.DELETE_READ", "CONFLICT.APP_TXN", "TXN.READ_PREDICATES",
    "TXN.READ_APP_IDS",
)  # fmt: skip
@pytest.mark.parametrize("case", list(CONFLICTS))
def test_conflicts_match_delta_spark(
    spark: SparkSession, engines: dict[str, Engine], case: str, tmp_path: Path
) -> None:
    found = conflict_differences(run_conflict(spark, engines, case, tmp_path), case)
    assert not found, found[0]
