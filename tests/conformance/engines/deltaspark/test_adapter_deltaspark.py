"""Live delta-spark 4.4.0 (the in-process deltaspark adapter: the spec-only bridge's handlers hosted
in process) and spec/data/verified_live.json.

The record holds every vector's verdict on the engine, from a full run or from a run of the
vectors added or changed since (``python -m deltaspec.conformance.tools.verified_live record``).
Here: no vector lands without its live verdict (the fast test), and the engine is run on the
vectors recorded since the last full run plus one vector of every family, each of which must get
the verdict recorded for it. A vector must pass, be a pinned known issue
(conformance/harness/known_issues/deltaspark.json), or be declined for a reason the vector itself
implies (another release, stepped commits, a changesData override): nothing else may be skipped.
Runs on the ``spark`` fixture: one SparkSession with delta-spark per worker.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deltaspec.conformance.engines.deltaspark import bridge as driver
from deltaspec.conformance.engines.deltaspark.adapter import DeltaSparkAdapter
from deltaspec.conformance.engines.deltaspark.session import RELEASE
from deltaspec.conformance.harness.logvectors import load_log_vectors
from deltaspec.conformance.harness.scenarios import Resolve, Scenario, TryWrite, load_scenarios
from deltaspec.conformance.harness.suites import run_scenario_suite
from deltaspec.conformance.harness.verdicts import Verdict, apply_known, load_known_issues
from deltaspec.conformance.tools import verified_live as record
from deltaspec.model.transaction import CHANGES_DATA
from deltaspec.rules import load_rules, spec_root, verified_live

SCENARIOS = {scenario.id: scenario for scenario in load_scenarios()}
KNOWN = load_known_issues("deltaspark")
LIVE = verified_live()
LIVE_VECTORS = {vector for vectors in LIVE.values() for vector in vectors}
RECORD = record.load()
JUDGED = RECORD["releases"].get(RELEASE, {}).get("scenarios", {})


def rerun_on_the_engine() -> list[str]:
    """The vectors recorded since the last full run, and the first vector of every family."""
    since = {vector for vector, judged in JUDGED.items() if judged["run"] != "full"}
    families: dict[str, str] = {}
    for vector in sorted(SCENARIOS):
        families.setdefault(vector.split("/")[0], vector)
    return sorted(since | set(families.values()))


def expected_decline(scenario: Scenario) -> str | None:
    """Why the adapter must decline ``scenario``, from the vector alone (None: it must run)."""
    if any(isinstance(step, TryWrite | Resolve) for step in scenario.steps):
        return "cannot take"  # the runner checks the steps before the adapter sees the vector
    if scenario.profile not in (None, RELEASE):
        return f"this vector is for release {scenario.profile}"
    for writer in scenario.writers.values():
        implied = writer.operation in CHANGES_DATA
        if writer.changes_data not in (None, implied):
            return "no override"
    return None


@pytest.mark.parametrize("suite", record.SUITES)
def test_every_vector_has_its_live_verdict(suite: str) -> None:
    """A vector added or edited since the engine last judged it fails here until it is run live
    and recorded."""
    missing = record.unrecorded(RECORD, RELEASE, suite)
    assert not missing, (
        f"{len(missing)} {suite} vector(s) without a live verdict on delta-spark {RELEASE} "
        f"({', '.join(f'{v} ({why})' for v, why in sorted(missing.items()))}): run "
        f"python -m deltaspec.conformance.tools.verified_live record --suite {suite} --changed"
    )


def test_recorded_counts_are_the_recorded_verdicts() -> None:
    found = record.corpora()
    for release, entry in RECORD["releases"].items():
        for suite, run in entry.get("runs", {}).items():
            assert run["counts"] == record.tally(entry[suite]), (release, suite)
            assert {"date", "command", "seconds"} <= run.keys(), (release, suite)
        assert entry["rules"] == record.rules_verified(entry, found), release


@pytest.mark.spark
@pytest.mark.parametrize("vector", rerun_on_the_engine())
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
    assert result.label == JUDGED[vector]["label"], "spec/data/verified_live.json differs"
    passed = result.verdict is Verdict.PASS and result.known is None
    assert passed == (vector in LIVE_VECTORS), "spec/data/verified_live.json is stale"


@pytest.mark.spark
@pytest.mark.rules("ISOLATION.DOWNGRADE")
def test_a_changes_data_flag_is_declined_only_where_it_overrides_the_operation(spark) -> None:
    """``changes_data`` equal to what the operation implies is no override: the vector runs."""
    from dataclasses import replace

    base = SCENARIOS["isolation/levels/writeserializable-blind-append-ignored"]
    implied = {name: w.operation in CHANGES_DATA for name, w in base.writers.items()}
    same = {name: replace(w, changes_data=implied[name]) for name, w in base.writers.items()}
    other = {name: replace(w, changes_data=not implied[name]) for name, w in base.writers.items()}
    results = run_scenario_suite(
        lambda root: DeltaSparkAdapter(root, spark),
        [replace(base, writers=w) for w in (same, other)],
    )
    assert [r.verdict for r in results] == [Verdict.PASS, Verdict.SKIPPED], results
    assert any("no override" in detail for detail in results[1].details), results[1].details


def test_recorded_verdicts_follow_the_known_issues_and_declines() -> None:
    """What the record says of each vector is what the live test would demand of it."""
    for vector, judged in JUDGED.items():
        scenario, label = SCENARIOS[vector], judged["label"]
        if expected_decline(scenario) is not None:
            assert label == "skipped", vector
        elif vector in KNOWN:
            assert label == ("spec stricter" if KNOWN[vector].stricter else "known"), vector
        else:
            assert label == "pass", vector


def test_verified_live_lists_rules_of_existing_vectors_only() -> None:
    rule_ids = {rule.id for rule in load_rules()}
    log_vectors = {vector.id: vector for vector in load_log_vectors()}
    cited = {**{v: s.rules for v, s in SCENARIOS.items()},
             **{v: lv.rules for v, lv in log_vectors.items()}}  # fmt: skip
    for rule, vectors in LIVE.items():
        assert rule in rule_ids
        for vector in vectors:
            assert rule in cited[vector], (rule, vector)


def test_known_issues_name_existing_vectors_and_only_the_spec_excuses_unsafe() -> None:
    """A known issue never excuses an unsafe outcome, unless its rule's text says the spec is
    stricter than delta-spark on purpose (load_known_issues refuses a ``stricter`` entry whose
    rule does not say so)."""
    log_vectors = {vector.id for vector in load_log_vectors()}
    for case, issue in KNOWN.items():
        assert case in SCENARIOS or case in log_vectors, case
        assert issue.stricter or issue.verdict != "unsafe", case


@pytest.mark.rules("PREDICATE.LANGUAGE", "PREDICATE.TYPING")
def test_predicates_render_as_spark_sql_typed_by_column() -> None:
    types = {"p": "string", "n": "integer", "d": "date", "t": "timestamp"}
    sql = driver.predicate_sql
    assert sql(["=", "p", "a'b"], types) == "(`p` = CAST('a\\'b' AS STRING))"
    assert sql(["in", "n", [1, 2]], types) == "(`n` IN (CAST(1 AS INT), CAST(2 AS INT)))"
    assert sql(["and", ["=", "d", "2024-01-31"], ["is_null", "t"]], types) == (
        "((`d` = CAST('2024-01-31' AS DATE)) AND (`t` IS NULL))"
    )
    assert sql(["not", ["!=", "n", None]], types) == "(NOT (`n` <> NULL))"
    assert sql(["<", "x", 1], types) == "(`x` < 1)"  # no column type: the literal as written


@pytest.mark.rules("CONFLICT.KINDS")
def test_the_bridge_maps_conflicts_as_spec_data_names_them(tmp_path: Path) -> None:
    """The bridge is written from spec/ alone: its table of delta-spark's conflict exceptions is
    spec/data/conflict_kinds.json's, and a conflict's winner is the version the message states or,
    when it quotes the winning commitInfo instead, the commit in the log that has it."""
    kinds = json.loads((spec_root() / "data" / "conflict_kinds.json").read_text())["conflicts"]
    named = {entry["exception"].rsplit(".", 1)[-1]: kind for kind, entry in kinds.items()}
    assert named == driver.CONFLICTS
    log = tmp_path / "_delta_log"
    log.mkdir()
    for version, txn_id in ((1, "a"), (2, "b")):
        info = {"timestamp": version, "operation": "WRITE", "txnId": txn_id}
        (log / f"{version:020d}.json").write_text(json.dumps({"commitInfo": info}) + "\n")
    assert driver.winner_version("x committed at version 7. y", log, 0) == 7
    quoted = 'Conflicting commit: {"timestamp":2,"operation":"WRITE","txnId":"b"}'
    assert driver.winner_version(quoted, log, 0) == 2
    assert driver.winner_version("no version here", log, 0) == 1  # the first after the read


@pytest.mark.spark
@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_the_oracle_drives_model_impl_and_live_delta_spark_in_lockstep(spark) -> None:
    """Three parties after every step of random interleavings: the model, our impl and the
    engine (the impl joins as a second adapter)."""
    from dataclasses import replace

    from deltaspec.conformance.engines.impl.adapter import ImplAdapter
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
