"""The oracle: the differential state machine, its replayable failures, the put-if-absent
race, and the mutant catalog it is scored on."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from deltaspec.conformance.adapters.base import Json
from deltaspec.conformance.adapters.impl import ImplAdapter
from deltaspec.conformance.adapters.model import ModelAdapter
from deltaspec.conformance.harness.runner import run_scenario
from deltaspec.conformance.harness.scenarios import judge, parse_scenario
from deltaspec.conformance.oracle.differential import Divergence
from deltaspec.conformance.oracle.machine import ORACLE_PROFILES, race_put_if_absent, run_oracle
from deltaspec.conformance.oracle.mutants import CATALOG, mutated_source, run_isolated
from deltaspec.impl.log.store import LocalLogStore

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

    def read(self, writer: str, read: Json) -> None:
        if "filter" not in read:
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
    assert len(scenario.data["steps"]) <= 12, "the trace should have shrunk"


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_put_if_absent_holds_under_a_real_race() -> None:
    assert race_put_if_absent(LocalLogStore, rounds=50) == 50


def test_the_catalog_has_twenty_distinct_mutants_that_all_still_apply() -> None:
    assert len(CATALOG) >= 20
    assert len({m.id for m in CATALOG}) == len(CATALOG)
    for mutant in CATALOG:
        assert mutant.new in mutated_source(mutant)


HANG_GUARD_SECONDS = 900
"""Only a guard against a hung oracle: kill times are measured in benchmarks/results/mutants.json
(``deltaspec mutants --json``, benchmarks/README.md), never asserted here."""


@pytest.mark.parametrize("mutant", [m.id for m in CATALOG])
def test_the_oracle_kills_the_mutant(mutant: str) -> None:
    result = run_isolated(mutant, timeout=HANG_GUARD_SECONDS)
    assert result.killed, result.detail
