"""The oracle: the differential state machine, its replayable failures, the put-if-absent
race, and the mutant catalog it is scored on."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from deltaspec.conformance.engines.impl.adapter import ImplAdapter
from deltaspec.conformance.engines.model.adapter import ModelAdapter
from deltaspec.conformance.harness.judge import judge
from deltaspec.conformance.harness.reads import Read
from deltaspec.conformance.harness.runner import run_scenario
from deltaspec.conformance.harness.scenarios import parse_scenario
from deltaspec.conformance.oracle.catalog import BY_RULE, STAGE_NAMES
from deltaspec.conformance.oracle.differential import Divergence
from deltaspec.conformance.oracle.machine import ORACLE_PROFILES, race_put_if_absent, run_oracle
from deltaspec.conformance.oracle.mutants import (
    CATALOG,
    STAGES,
    Mutant,
    MutantError,
    by_id,
    mutated_source,
    run_isolated,
)
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.rules import load_rules

PROFILE = ORACLE_PROFILES["deep" if os.environ.get("HYPOTHESIS_PROFILE") == "deep" else "ci"]


def test_the_impl_agrees_with_the_model_on_every_interleaving_explored(tmp_path: Path) -> None:
    report = run_oracle([ImplAdapter], PROFILE, regressions=tmp_path)
    print(f"model + impl: {report.steps_per_second:.0f} steps/s, outcomes {report.outcomes}")
    assert report.steps > PROFILE.max_examples * 5
    assert report.outcomes["committed"] > 0
    conflicts = {k for k in report.outcomes if k.startswith(("CONCURRENT_", "METADATA", "PROTO"))}
    assert len(conflicts) >= 3, report.outcomes
    assert not list(tmp_path.iterdir())


def test_the_model_alone_keeps_its_isolation_promises() -> None:
    report = run_oracle([], replace(PROFILE, max_examples=PROFILE.max_examples * 4))
    print(f"model alone: {report.steps_per_second:.0f} steps/s")
    assert report.outcomes.get("CONCURRENT_APPEND", 0) > 0


class ForgetsFilteredScans(ImplAdapter):
    """An adapter with a bug: it does not record filtered scans, as a careless engine might."""

    name = "forgets-filtered-scans"

    def read(self, writer: str, read: Read) -> None:
        if read.filter is None:
            super().read(writer, read)


def test_a_divergence_shrinks_to_a_vector_that_replays(tmp_path: Path) -> None:
    with pytest.raises(Divergence) as caught:
        run_oracle([ForgetsFilteredScans], PROFILE, regressions=tmp_path)
    (written,) = tmp_path.iterdir()
    scenario = parse_scenario(written.read_text(), str(written))
    assert scenario.data == json.loads(json.dumps(caught.value.scenario))
    assert judge(scenario, run_scenario(ModelAdapter(), scenario)).passed
    replayed = judge(scenario, run_scenario(ForgetsFilteredScans(tmp_path / "t"), scenario))
    assert not replayed.passed
    assert len(scenario.steps) <= 12, "the trace should have shrunk"


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_put_if_absent_holds_under_a_real_race() -> None:
    assert race_put_if_absent(LocalLogStore, rounds=50) == 50


RECORDED_RUN = Path(__file__).resolve().parents[3] / "benchmarks" / "results" / "mutants.json"
IMPL_AREAS = {"log", "replay", "checkpoint", "snapshot", "retention", "codec", "table",
              "txn", "predicates", "spark"}  # fmt: skip


def test_the_catalog_has_sixty_distinct_mutants_that_all_still_apply() -> None:
    assert len(CATALOG) >= 60
    assert len({m.id for m in CATALOG}) == len(CATALOG)
    for mutant in CATALOG:
        assert mutant.description and mutant.killed_by in (*STAGE_NAMES, None), mutant.id
        if mutant.killed_by is None:  # a known survivor names the stage expected to kill it
            assert mutant.expected in STAGE_NAMES, mutant.id
        assert mutant.target.startswith(
            "deltaspec.spark." if mutant.side == "spark" else "deltaspec.impl."
        )
        assert mutant.new in mutated_source(mutant)


def test_every_mutant_applies_in_a_fresh_process() -> None:
    """A mutant runs in a spawned process where nothing of the Spark path is imported yet: its
    rule's marked function must still be found (trace.import_sides imports deltaspec.spark)."""
    import subprocess
    import sys

    # the mutants found through their rule's marker first: a helper's import would bring in
    # the whole Spark path before them
    probe = ("from deltaspec.conformance.oracle.catalog import CATALOG, mutated_source\n"
             "for m in sorted(CATALOG, key=lambda m: m.function is not None):\n"
             "    mutated_source(m)\n")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-1000:]


def test_the_catalog_covers_every_area_of_the_impl() -> None:
    assert {m.module.split(".")[0] for m in CATALOG} >= IMPL_AREAS
    assert len([m for m in CATALOG if m.side == "spark"]) >= 10
    assert len([m for m in CATALOG if m.function is None]) >= 55


def test_every_mutant_is_keyed_by_the_rule_it_breaks() -> None:
    rule_ids = {r.id for r in load_rules()}
    assert set(BY_RULE) <= rule_ids
    assert sorted(m.id for ms in BY_RULE.values() for m in ms) == sorted(m.id for m in CATALOG)
    for rule_id, mutants in BY_RULE.items():
        assert all(m.rule == rule_id for m in mutants)


def test_a_rule_keyed_mutant_follows_the_marker_and_fails_loudly() -> None:
    mutant = by_id("whole-table-read-ignored")
    assert mutant.rule == "CONFLICT.DELETE_READ_WHOLE_TABLE" and mutant.function is None
    assert mutant.target == "deltaspec.impl.txn.conflicts:check_deleted_vs_read"
    two_marked = by_id("overwrite-ignores-data-change")  # TXN.READ_PREDICATES: 2 Spark functions
    assert two_marked.target == "deltaspec.spark.overwrite:overwrite_removes"
    helper = by_id("null-partition-matches")
    assert helper.rule == "PREDICATE.NULLS"
    assert helper.target == "deltaspec.impl.predicates:matches"
    for broken in (
        replace(mutant, id="gone-snippet", old="no such line"),
        replace(mutant, id="no-such-rule", rule="CONFLICT.NO_SUCH_RULE"),
        replace(mutant, id="not-a-rule", rule="predicates:matches"),
        replace(mutant, id="no-spark-side", side="spark"),
        replace(helper, id="renamed-helper", function="predicates:no_such_function"),
        replace(helper, id="moved-helper", function="no_such_module:matches"),
        replace(helper, id="helper-of-no-rule", rule="PREDICATE.NO_SUCH_RULE"),
    ):
        with pytest.raises(MutantError):
            mutated_source(broken)


def test_a_reformatted_snippet_is_still_found_once() -> None:
    mutant = by_id("whole-table-read-ignored")
    reflowed = replace(mutant, id="reflowed", old=mutant.old.replace(" and ", "\n    and "))
    assert mutated_source(reflowed) == mutated_source(mutant)
    assert mutant.new in mutated_source(reflowed)


def test_the_recorded_full_run_agrees_with_the_catalog() -> None:
    """benchmarks/results/mutants.json (``deltaspec mutants --json``, every stage) is the full
    run: a mutant it killed names that stage as killed_by, one that survived it is a known
    survivor (killed_by None), one it did not run names a stage it did not have or none."""
    record = json.loads(RECORDED_RUN.read_text())
    assert isinstance(record.get("stages"), list), "re-run: deltaspec mutants --json (all stages)"
    ran = set(record["stages"])
    recorded = {entry["id"]: entry for entries in record["mutants"].values() for entry in entries}
    assert not record["baseline"]["killed"], record["baseline"]
    assert set(recorded) <= {m.id for m in CATALOG}
    for mutant in CATALOG:
        entry = recorded.get(mutant.id)
        if entry is None:
            assert mutant.killed_by not in ran, f"{mutant.id}: not in the recorded run"
        elif entry["killed"]:
            assert entry["stage"] == mutant.killed_by, f"{mutant.id}: killed by {entry['stage']}"
        else:
            assert mutant.killed_by is None, f"{mutant.id} survived the recorded run"


HANG_GUARD_SECONDS = 900
"""Only a guard against a hung oracle: kill times are measured in benchmarks/results/mutants.json
(``deltaspec mutants --json``, benchmarks/README.md), never asserted here."""


SPARK_OWN_STAGE_SAMPLE = ("path-escapes-lower-case", "dynamic-overwrite-null-partition")
"""The mutants killed by the spark stage that the suite re-kills (each starts a JVM and runs
both engines up to the first difference, one to four minutes): the fastest recorded kills of a
codec and a Spark-path module. The others are killed in the recorded run
(benchmarks/results/mutants.json) and by ``deltaspec mutants --stage spark``."""


QUICK_SAMPLE = (
    "app-txn-conflict-ignored", "data-predicates-for-appends", "dotdot-checked-only-leading",
    "multi-part-checkpoint-missing-part", "remove-keeps-earlier-add",
    "v2-checkpoint-names-no-sidecar", "cleanup-trusts-unread-checkpoint",
    "app-txn-without-last-updated-kept", "path-decoded-twice", "set-transaction-repeats-kept",
    "last-checkpoint-parts-out-of-order", "checkpoint-txn-loses-last-updated",
    "checkpoint-omits-domains", "vacuum-ignores-tombstones", "tombstone-expiry-inclusive",
    "reader-features-unchecked", "put-if-absent-by-exists-then-write",
    "checkpoint-at-version-zero", "object-store-create-overwrites", "histogram-bin-one-up",
)  # fmt: skip
"""The mutants the quick tier (``-m "not slow"``) re-kills: for each stage and impl area, the
fastest kill measured on 2026-11-28 (replay's machine kill became a vectors kill on 2026-11-29,
where remove-keeps-earlier-add already stands for it; the store stage's and the checksum's from
the fresh batch of 2026-12-02); the whole suite re-kills every mutant that runs here."""


def _own_stage(mutant: Mutant) -> object:
    slow = "spark" in (mutant.killed_by, mutant.expected) or mutant.id not in QUICK_SAMPLE
    return pytest.param(mutant.id, marks=[pytest.mark.slow] if slow else [], id=mutant.id)


def test_the_quick_sample_has_a_mutant_of_each_stage_and_area_that_runs_here() -> None:
    sample = [by_id(mutant_id) for mutant_id in QUICK_SAMPLE]
    pairs = {(m.killed_by, m.module.split(".")[0]) for m in CATALOG if _runs_here(m)}
    pairs -= {(stage, area) for stage, area in pairs if stage in ("spark", None)}
    assert {(m.killed_by, m.module.split(".")[0]) for m in sample} == pairs
    assert len(sample) == len(pairs)  # one each


def _runs_here(mutant: Mutant) -> bool:
    return mutant.killed_by != "spark" or mutant.id in SPARK_OWN_STAGE_SAMPLE


def test_the_spark_kills_left_to_the_recorded_run_are_recorded_as_kills() -> None:
    by_rule = json.loads(RECORDED_RUN.read_text())["mutants"]
    record = {entry["id"]: entry for entries in by_rule.values() for entry in entries}
    assert set(SPARK_OWN_STAGE_SAMPLE) <= {m.id for m in CATALOG if m.killed_by == "spark"}
    for mutant in CATALOG:
        if not _runs_here(mutant):
            assert record[mutant.id]["killed"] and record[mutant.id]["stage"] == "spark"


@pytest.mark.parametrize("mutant_id", [_own_stage(m) for m in CATALOG if _runs_here(m)])
def test_the_oracle_kills_the_mutant_on_its_own_stage(mutant_id: str) -> None:
    """Each mutant runs only the stage recorded as killing it (the whole run is
    ``deltaspec mutants``, recorded in benchmarks/results/mutants.json)."""
    mutant = by_id(mutant_id)
    if mutant.killed_by is None:
        pytest.skip(f"a known survivor (expected to be killed by {mutant.expected})")
    if mutant.killed_by not in STAGES:
        pytest.skip(f"the {mutant.killed_by} stage is not part of the oracle yet")
    result = run_isolated(mutant.id, timeout=HANG_GUARD_SECONDS, stages=(mutant.killed_by,))
    assert result.killed, result.detail
    assert result.stage == mutant.killed_by
