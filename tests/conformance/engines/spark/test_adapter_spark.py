"""The Spark adapter: our Spark write path driven through scenario vectors, writers interleaved by
pausing each operation in its own thread at ``before_commit``."""

from __future__ import annotations

import json
import threading

import pytest

from deltaspec.conformance.engines.spark.adapter import SparkAdapter
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
    "matrix/update-vs-insert/serializable/same",  # a conflict (ConcurrentAppend)
    "matrix/merge-vs-delete/writeserializable/disjoint",  # MERGE and DELETE both commit
    "deltars/stats-read-predicate",  # the read predicate is the partition part only
    "deltars/overwrite-vs-blind-append",  # a whole-table overwrite conflicts with an append
    "deltars/concurrent-compactions",  # OPTIMIZE against OPTIMIZE
]


@pytest.mark.parametrize("scenario_id", VECTORS)
def test_vectors_pass_on_the_spark_path(scenario_id, spark, tmp_path):
    scenario = SCENARIOS[scenario_id]
    result = classify(scenario, run_scenario(SparkAdapter(tmp_path / "t", spark), scenario))
    assert result.verdict is Verdict.PASS, result.details


KNOWN = json.loads((KNOWN_ISSUES / "spark.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("entry", KNOWN, ids=[e["scenario"] for e in KNOWN])
def test_every_known_divergence_still_reproduces(entry, spark, tmp_path):
    scenario = SCENARIOS[entry["scenario"]]
    result = classify(scenario, run_scenario(SparkAdapter(tmp_path / "t", spark), scenario))
    assert result.verdict.value == entry["verdict"], result.details


@pytest.mark.rules("TXN.EMPTY_COMMIT")
def test_a_writer_that_never_commits_is_aborted_and_its_thread_joined(spark, tmp_path):
    adapter = SparkAdapter(tmp_path / "t", spark)
    assert not {Capability.TIME_TRAVEL, Capability.ACTIONS} & adapter.capabilities
    adapter.create(TableSetup(table=TABLE))
    before = set(threading.enumerate())
    adapter.begin("w", WriterSpec(), None, 0)
    adapter.stage("w", [Add(path="p=a/w.parquet", partition_values={"p": "a"})], 0)
    run = adapter.writers["w"].run
    assert run is not None and run.paused.is_set() and run.thread in set(threading.enumerate())
    adapter.close()
    assert not run.thread.is_alive() and set(threading.enumerate()) <= before
    assert adapter.snapshot().version == 0
    with pytest.raises(Unsupported, match="latest snapshot"):
        adapter.begin("old", WriterSpec(), -1, 0)
