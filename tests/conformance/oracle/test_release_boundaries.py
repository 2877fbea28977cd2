"""Every release boundary the spec states, judged on model and impl (the vectors stage)."""

from __future__ import annotations

from pathlib import Path

from deltaspec.conformance.engines.impl.adapter import ImplAdapter
from deltaspec.conformance.engines.model.adapter import ModelAdapter
from deltaspec.conformance.harness.outcomes import Committed
from deltaspec.conformance.harness.runner import run_scenario
from deltaspec.conformance.harness.scenarios import RunResult, Scenario, load_scenarios
from deltaspec.conformance.oracle.release_boundaries import (
    boundary_releases,
    boundary_runs,
    differences,
    judge_boundaries,
)
from deltaspec.releases_table import behaviours

UNWITNESSED = frozenset(
    {
        "checkpoint_protection_chunked_cleanup",  # a cleanup, judged by the services stage
        "more_resolvable_keys",  # no vector changes a key resolvable only from v4.3.0
        "row_tracking",  # row ids are not in a scenario's snapshot
        "stats_as_struct_by_default",  # checkpoint columns are not in a scenario's snapshot
    }
)
"""The behaviours no scenario vector shows across its boundary, pinned by name: a vector that
starts showing one moves it out, one that stops showing another fails here."""


def _vector(vector_id: str) -> Scenario:
    return next(v for v in load_scenarios() if v.id == vector_id)


def test_a_boundary_is_the_last_release_without_and_the_first_with_the_behaviour() -> None:
    commit_info_last = behaviours()["commit_info_last"]  # from v1.1.0 until v2.2.0
    assert boundary_releases(commit_info_last) == [(1, 0, 0), (1, 1, 0), (2, 1, 0), (2, 2, 0)]
    assert boundary_releases(behaviours()["retries"]) == [(0, 1, 0), (0, 2, 0)]


def test_every_vector_citing_a_behaviours_rule_runs_on_both_sides() -> None:
    runs = boundary_runs(load_scenarios())
    dedup = [r for r in runs if r.behaviour == "set_transaction_dedup"]
    assert {r.release for r in dedup} == {"2.0.0", "2.1.0"}
    assert all("TXN.SET_TRANSACTION_DEDUP" in r.vector.rules for r in dedup)
    assert all(r.vector.profile == r.release for r in runs)


def test_model_and_impl_agree_at_every_boundary_and_the_gaps_are_named() -> None:
    report = judge_boundaries(load_scenarios())
    assert report.disagreements == ()
    assert set(report.unwitnessed) == UNWITNESSED
    assert len(report.witnessed) + len(UNWITNESSED) == len(behaviours())
    assert report.runs >= 2 * len(report.witnessed)
    assert "release boundaries judged on model and impl" in report.line()


def test_a_commit_info_field_written_on_one_side_only_is_a_difference(tmp_path: Path) -> None:
    vector = next(
        v for v in load_scenarios() if v.id == "log/new-table/first-commit-has-no-read-version"
    )
    model = run_scenario(ModelAdapter(), vector)
    impl = run_scenario(ImplAdapter(tmp_path), vector)
    assert list(differences(model, impl)) == []
    writer, outcome = next(iter(model.outcomes.items()))
    assert isinstance(outcome, Committed) and outcome.commit_info is not None
    extra = Committed(outcome.version, {**outcome.commit_info, "inCommitTimestamp": 7})
    changed = RunResult({**model.outcomes, writer: extra}, model.snapshot)
    found = list(differences(model, changed))
    assert len(found) == 1 and "inCommitTimestamp" in found[0]


def test_a_different_outcome_is_a_difference() -> None:
    vector = next(
        v for v in load_scenarios() if v.id == "log/new-table/first-commit-has-no-read-version"
    )
    model = run_scenario(ModelAdapter(), vector)
    writer = next(iter(model.outcomes))
    other = RunResult({writer: Committed(99, {})}, model.snapshot)
    assert any(writer in line for line in differences(model, other))
