"""Every scenario vector in spec/scenarios/ on the production implementation, on real files."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import cited_by_tests

from deltaspec.conformance.engines.impl.adapter import run_in
from deltaspec.conformance.harness.adapter import Unsupported
from deltaspec.conformance.harness.judge import judge
from deltaspec.conformance.harness.scenarios import Resolve, Scenario, TryWrite, load_scenarios
from deltaspec.rules import load_rules

SCENARIOS = load_scenarios()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario_passes_on_the_impl(scenario: Scenario, tmp_path: Path) -> None:
    try:
        result = run_in(tmp_path, scenario)
    except Unsupported as reason:
        pytest.skip(f"impl adapter: {reason}")
    verdict = judge(scenario, result)
    assert verdict.passed, "\n".join(verdict.failures)


def test_every_rule_is_checked_on_the_impl() -> None:
    """Each rule has an impl test (tests/test_impl_*.py, tests/test_reliability_*.py, which run
    the impl on real files) or a vector the impl runs."""
    run_on_impl = {
        rule
        for s in SCENARIOS
        if not any(isinstance(step, TryWrite | Resolve) for step in s.steps)
        for rule in s.rules
    }
    tests = Path(__file__).parents[1]
    cited = (
        cited_by_tests(tests, "test_impl_*.py")
        | cited_by_tests(tests, "test_reliability_*.py")
        | run_on_impl
    )
    assert not sorted({rule.id for rule in load_rules()} - cited)
