"""The writes suite: what our Spark path writes has delta-spark's shape, and a difference is
reported by field."""

from __future__ import annotations

import json

import pytest

from deltaspec.conformance.harness.verdicts import Verdict
from deltaspec.conformance.writes.suite import compare, reference_shapes, run_writes


def test_a_commit_with_a_foreign_field_or_a_missing_one_is_reported(tmp_path, fixtures_dir):
    reference = reference_shapes(fixtures_dir)
    commit = tmp_path / "00000000000000000001.json"
    lines = [
        {"commitInfo": {"timestamp": 1, "operation": "DELETE",
                        "operationParameters": {"predicate": ["x"], "bogus": "1"}}},
        {"remove": {"path": "a b.parquet", "deletionTimestamp": 1, "dataChange": True,
                    "extendedFileMetadata": True, "partitionValues": {}, "size": 1,
                    "madeUp": 1}},
    ]  # fmt: skip
    commit.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    cases = {r.case for r in compare([commit], reference) if r.verdict is Verdict.WRONG}
    assert "writes/DELETE/remove.madeUp" in cases
    assert "writes/DELETE/remove.path" in cases  # a space must be URI-encoded
    assert "writes/DELETE/operationParameters.bogus" in cases
    assert "writes/DELETE/operationParameters.predicate (type)" in cases
    assert "writes/DELETE/commitInfo.engineInfo (missing)" in cases


@pytest.mark.spark
def test_the_spark_path_writes_delta_sparks_shapes(spark, fixtures_dir):
    results = run_writes("impl", fixtures_dir)
    assert [r for r in results if r.fails(strict=False)] == []
    assert {r.case for r in results} >= {"writes/all", "writes/checkpoint"}
