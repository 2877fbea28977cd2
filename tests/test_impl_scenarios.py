"""Every scenario vector in spec/scenarios/ on the production implementation, on real files."""

from __future__ import annotations

from pathlib import Path

import pytest

from deltaspec.conformance.adapters.impl import Unsupported, run_in
from deltaspec.conformance.scenarios import Scenario, judge, load_scenarios

SCENARIOS = load_scenarios()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario_passes_on_the_impl(scenario: Scenario, tmp_path: Path) -> None:
    try:
        result = run_in(tmp_path, scenario)
    except Unsupported as reason:
        pytest.skip(f"impl adapter: {reason}")
    verdict = judge(scenario, result)
    assert verdict.passed, "\n".join(verdict.failures)
