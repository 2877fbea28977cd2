"""The deltaspark-ops adapter: live delta-spark 4.4.0 driven through scenario vectors at operation
level, writers interleaved by delta-spark's own transaction observer held before the commit."""

from __future__ import annotations

import json
import threading

import pytest

from deltaspec.conformance.engines.deltaspark.ops import DeltaSparkOpsAdapter, engine_outcome
from deltaspec.conformance.harness.actions import Add
from deltaspec.conformance.harness.adapter import Capability, TableSetup, Unsupported, WriterSpec
from deltaspec.conformance.harness.runner import run_scenario
from deltaspec.conformance.harness.scenarios import load_scenarios
from deltaspec.conformance.harness.verdicts import KNOWN_ISSUES, Verdict, classify

pytestmark = pytest.mark.spark

SCENARIOS = {s.id: s for s in load_scenarios()}
TABLE = {
    "schema": [{"name": "p", "type": "string"}, {"name": "x", "type": "long"}],
    "partition_columns": ["p"],
    "files": [{"path": "p=a/a1.parquet", "partition": {"p": "a"}}],
}
VECTORS = [
    "matrix/update-vs-insert/serializable/same",  # ConcurrentAppend from a paused UPDATE
    "matrix/merge-vs-delete/writeserializable/disjoint",  # MERGE and DELETE both commit
    "deltars/concurrent-compactions",  # OPTIMIZE against OPTIMIZE (its retry runs unobserved)
]


@pytest.mark.parametrize("scenario_id", VECTORS)
def test_vectors_pass_on_live_delta_spark(scenario_id, spark, tmp_path):
    scenario = SCENARIOS[scenario_id]
    adapter = DeltaSparkOpsAdapter(tmp_path / "t", spark)
    result = classify(scenario, run_scenario(adapter, scenario))
    assert result.verdict is Verdict.PASS, result.details


KNOWN = json.loads((KNOWN_ISSUES / "deltaspark-ops.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("entry", KNOWN, ids=[e["scenario"] for e in KNOWN])
def test_every_known_divergence_still_reproduces(entry, spark, tmp_path):
    scenario = SCENARIOS[entry["scenario"]]
    result = classify(scenario, run_scenario(DeltaSparkOpsAdapter(tmp_path / "t", spark), scenario))
    assert result.verdict.value == entry["verdict"], result.details


@pytest.mark.rules("TXN.EMPTY_COMMIT")
def test_a_paused_writer_is_held_before_its_commit_and_aborted_on_close(spark, tmp_path):
    adapter = DeltaSparkOpsAdapter(tmp_path / "t", spark)
    assert Capability.PROPERTY_CHANGE in adapter.capabilities
    adapter.create(TableSetup(table=TABLE))
    before = set(threading.enumerate())
    adapter.begin("w", WriterSpec(), None, 0)
    adapter.stage("w", [Add(path="p=a/w.parquet", partition_values={"p": "a"})], 0)
    run = adapter.writers["w"].run
    assert run is not None and run.paused and run.thread.is_alive()
    written = list((tmp_path / "t" / "p=a").glob("part-*.parquet"))
    assert written, "the command wrote its data file before pausing"
    assert adapter.snapshot().version == 0  # nothing committed while paused
    adapter.close()
    assert not run.thread.is_alive() and set(threading.enumerate()) <= before
    assert adapter.snapshot().version == 0
    spark.range(1).write.format("delta").save(str(tmp_path / "after"))  # no observer left over
    with pytest.raises(Unsupported, match="latest snapshot"):
        adapter.begin("old", WriterSpec(), -1, 0)


def test_engine_errors_map_to_scenario_kinds_by_error_class():
    class Captured(Exception):
        def __init__(self, condition: str, message: str) -> None:
            super().__init__(message)
            self.condition = condition

        def getCondition(self) -> str:
            return self.condition

    conflict = Captured("DELTA_CONCURRENT_APPEND.WITH_PARTITION_HINT",
                        "a concurrent WRITE added data ... committed at version 3.")  # fmt: skip
    assert engine_outcome(conflict) == {"conflict": "CONCURRENT_APPEND", "winner": 3}
    streaming = Captured(
        "DELTA_CONCURRENT_TRANSACTION",
        "same checkpoint?\nConflicting commit: "
        '{"timestamp":1,"operation":"STREAMING UPDATE","version":4}\nRefer to',
    )
    assert engine_outcome(streaming) == {"conflict": "CONCURRENT_TRANSACTION", "winner": 4}
    refused = Captured("DELTA_CANNOT_MODIFY_APPEND_ONLY", "append-only")
    assert engine_outcome(refused) == {"error": "APPEND_ONLY_VIOLATION"}
    assert engine_outcome(Captured("SOMETHING_ELSE", "x"))["error"] == "ENGINE_ERROR"
