"""Every scenario vector on live delta-spark 4.4.0 (the deltaspark adapter), one test per vector.

A vector must pass, be a pinned known issue (conformance/harness/known_issues/deltaspark.json), or
be declined for a reason the vector itself implies (another release, stepped commits, a changesData
override): nothing else may be skipped. spec/data/verified_live.json must say exactly which vectors
pass. Runs on the ``spark`` fixture: one SparkSession with delta-spark per worker.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deltaspec.conformance.adapters.deltaspark import DeltaSparkAdapter, outcome_of, predicate_sql
from deltaspec.conformance.adapters.deltaspark_session import RELEASE
from deltaspec.conformance.harness.logvectors import load_log_vectors
from deltaspec.conformance.harness.scenarios import Scenario, load_scenarios
from deltaspec.conformance.harness.suites import run_scenario_suite
from deltaspec.conformance.harness.verdicts import Verdict, apply_known, load_known_issues
from deltaspec.rules import load_rules, verified_live

SCENARIOS = {scenario.id: scenario for scenario in load_scenarios()}
KNOWN = load_known_issues("deltaspark")
LIVE = verified_live()
LIVE_VECTORS = {vector for vectors in LIVE.values() for vector in vectors}


def expected_decline(scenario: Scenario) -> str | None:
    """Why the adapter must decline ``scenario``, from the vector alone (None: it must run)."""
    data = scenario.data
    if any("try_write" in step or "resolve" in step for step in data["steps"]):
        return "cannot take"  # the runner checks the steps before the adapter sees the vector
    if data.get("profile") not in (None, RELEASE):
        return f"this vector is for release {data['profile']}"
    if any("changes_data" in writer for writer in data["writers"].values()):
        return "no override"
    return None


@pytest.mark.spark
@pytest.mark.parametrize("vector", sorted(SCENARIOS))
def test_vector_on_live_delta_spark(vector: str, spark, tmp_path: Path) -> None:
    scenario = SCENARIOS[vector]
    (result,) = apply_known(
        run_scenario_suite(lambda root: DeltaSparkAdapter(root, spark), [scenario]), KNOWN
    )
    decline = expected_decline(scenario)
    if decline is not None:
        assert result.verdict is Verdict.SKIPPED, result.as_json()
        assert any(decline in detail for detail in result.details), result.details
        assert vector not in KNOWN
    elif vector in KNOWN:
        assert not result.stale, f"known issue {vector} passes now: drop it from the list"
        assert result.verdict.value == KNOWN[vector].verdict, result.as_json()
    else:
        assert result.verdict is Verdict.PASS, result.as_json()
    passed = result.verdict is Verdict.PASS and result.known is None
    assert passed == (vector in LIVE_VECTORS), "spec/data/verified_live.json is stale"


def test_verified_live_lists_rules_of_existing_vectors_only() -> None:
    rule_ids = {rule.id for rule in load_rules()}
    for rule, vectors in LIVE.items():
        assert rule in rule_ids
        for vector in vectors:
            assert rule in SCENARIOS[vector].rules, (rule, vector)
    for vector in LIVE_VECTORS:
        for rule in SCENARIOS[vector].rules:
            assert vector in LIVE[rule], (rule, vector)


#: Scenario vectors on which delta-spark 4.4.0 is unsafe where the spec's own text says it
#: differs (a documented disagreement, found with evidence; the verdict still fails the run).
DOCUMENTED_UNSAFE = {
    # TXN.WRITE_BOUNDARY: delta-spark writes commits its own reader then refuses or misreads
    "txn/write-boundary/add-parent-segment",
    "txn/write-boundary/add-inside-delta-log",
    "txn/write-boundary/add-negative-size",
}


def test_known_issues_name_existing_vectors_and_are_never_unsafe() -> None:
    """A scenario's known issue never excuses an unsafe outcome. A log vector's may record one
    (delta-spark lists a data path outside the table as live), and so may the scenarios of
    DOCUMENTED_UNSAFE: it documents the engine, and the verdict still fails the run, known or
    not."""
    log_vectors = {vector.id for vector in load_log_vectors()}
    for case, issue in KNOWN.items():
        assert case in SCENARIOS or case in log_vectors, case
        documented = case in log_vectors or case in DOCUMENTED_UNSAFE
        assert documented or issue.verdict != "unsafe", case


@pytest.mark.rules("PREDICATE.LANGUAGE", "PREDICATE.TYPING")
def test_predicates_render_as_spark_sql_typed_by_column() -> None:
    types = {"p": "string", "n": "integer", "d": "date", "t": "timestamp"}
    assert predicate_sql(["=", "p", "a'b"], types) == "(`p` = 'a\\'b')"
    assert predicate_sql(["in", "n", [1, 2]], types) == "(`n` IN (1, 2))"
    assert predicate_sql(["and", ["=", "d", "2024-01-31"], ["is_null", "t"]], types) == (
        "((`d` = DATE'2024-01-31') AND (`t` IS NULL))"
    )
    assert predicate_sql(["not", ["!=", "n", None]], types) == "(NOT (`n` <> NULL))"


@pytest.mark.spark
@pytest.mark.rules("CONFLICT.KINDS")
def test_conflict_exceptions_map_to_the_kinds_of_spec_data(spark) -> None:
    kinds = json.loads(
        (Path(__file__).resolve().parents[2] / "spec" / "data" / "conflict_kinds.json").read_text()
    )["conflicts"]
    from delta.exceptions import ConcurrentAppendException, ConcurrentDeleteReadException

    append = outcome_of(ConcurrentAppendException("x committed at version 7. y", "", None))
    assert append == {"conflict": "CONCURRENT_APPEND", "winner": 7}
    assert kinds["CONCURRENT_APPEND"]["exception"].endswith("ConcurrentAppendException")
    delete_read = outcome_of(ConcurrentDeleteReadException("no version here", "", None))
    # no version in the message: the adapter looks the winner up in the log (None: none quoted)
    assert delete_read == {
        "conflict": "CONCURRENT_DELETE_READ",
        "winning_commit": None,
        "winning_domain": None,
    }
    assert outcome_of(ValueError("not from the engine")) is None


@pytest.mark.spark
@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_the_oracle_drives_model_impl_and_live_delta_spark_in_lockstep(spark) -> None:
    """Three parties after every step of random interleavings: the model, our impl and the
    engine (the impl joins as a second adapter)."""
    from dataclasses import replace

    from deltaspec.conformance.adapters.impl import ImplAdapter
    from deltaspec.conformance.oracle.machine import ORACLE_PROFILES, run_oracle

    profile = replace(ORACLE_PROFILES["ci"], max_examples=2)
    report = run_oracle([ImplAdapter, lambda root: DeltaSparkAdapter(root, spark)], profile)
    assert report.steps > 0
    assert sum(report.outcomes.values()) > 0


def test_the_oracle_draws_only_the_release_a_live_engine_runs() -> None:
    from deltaspec.conformance.oracle.differential import supported_profile

    class Engine:
        releases = frozenset({"4.4.0"})

    assert supported_profile("3.2.0", [Engine()]) == "4.4.0"
    assert supported_profile("4.4.0", [Engine()]) == "4.4.0"
    assert supported_profile("3.2.0", [object()]) == "3.2.0"
