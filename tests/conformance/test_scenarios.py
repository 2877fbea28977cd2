"""Every scenario vector in spec/scenarios/ passes against the model."""

from __future__ import annotations

import copy

import pytest

from deltaspec.conformance.adapters.model import run
from deltaspec.conformance.harness.scenarios import Scenario, judge, load_scenarios

SCENARIOS = load_scenarios()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario_passes_on_the_model(scenario: Scenario) -> None:
    verdict = judge(scenario, run(scenario))
    assert verdict.passed, "\n".join(verdict.failures)


def test_a_wrong_expectation_fails() -> None:
    """The judge is not vacuous: flipping an expected outcome makes the vector fail."""
    scenario = next(s for s in SCENARIOS if s.data.get("matrix_cell", {}).get("loser") == "UPDATE")
    data = copy.deepcopy(scenario.data)
    loser = data["expect"]["loser"]
    data["expect"]["loser"] = (
        {"committed": 2} if "conflict" in loser else {"conflict": "CONCURRENT_APPEND"}
    )
    assert not judge(Scenario(scenario.source, data), run(scenario)).passed


def test_one_of_accepts_any_listed_outcome() -> None:
    scenario = SCENARIOS[0]
    result = run(scenario)
    data = copy.deepcopy(scenario.data)
    writer = next(iter(data["expect"]))
    data["expect"][writer] = {
        "one_of": [{"error": "METADATA_ABSENT"}, dict(result.outcomes[writer])]
    }
    data["expect"][writer]["one_of"][1].pop("commit_info", None)
    data["expect"][writer]["one_of"][1].pop("winner", None)
    assert judge(Scenario(scenario.source, data), result).passed


def test_a_null_commit_info_field_demands_absence() -> None:
    scenario = next(s for s in SCENARIOS if s.id == "isolation/recorded/serializable-table")
    result = run(scenario)
    data = copy.deepcopy(scenario.data)
    data["expect"]["upd"]["commit_info"] = {"readVersion": None}
    assert not judge(Scenario(scenario.source, data), result).passed
    data["expect"]["upd"]["commit_info"] = {"userMetadata": None}
    assert judge(Scenario(scenario.source, data), result).passed
