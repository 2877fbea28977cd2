"""The real-bug family (spec/scenarios.md, "Real bugs"): one vector per published bug of a Delta
engine, in the scenario and the log-vector corpora, each citing its bug."""

from __future__ import annotations

from typing import Any

import pytest

from deltaspec.conformance.harness.bugs import FAMILY
from deltaspec.conformance.harness.logvectors import load_log_vectors
from deltaspec.conformance.harness.scenarios import load_scenarios


@pytest.fixture(scope="module")
def vectors() -> list[Any]:
    return [*load_scenarios(), *load_log_vectors()]


def test_a_vector_cites_a_bug_exactly_when_it_is_of_the_family(vectors: list[Any]) -> None:
    cited = {v.id for v in vectors if v.bug is not None}
    family = {v.id for v in vectors if v.id.split("/")[0] == FAMILY}
    assert cited == family


def test_the_family_holds_twelve_bugs_or_more(vectors: list[Any]) -> None:
    """Issue 50's floor: twelve published bugs, each one vector, none cited twice."""
    bugs = [v.bug for v in vectors if v.bug is not None]
    assert len(bugs) >= 12
    links = [link for bug in bugs for link in bug.links]
    assert len(links) == len(set(links))


def test_each_bug_names_an_engine_release_and_the_rule_it_breaks(vectors: list[Any]) -> None:
    for vector in (v for v in vectors if v.bug is not None):
        assert vector.bug.breaks == vector.rules[0]
        assert all(a.engine and a.releases for a in vector.bug.affected), vector.id
        assert vector.bug.citation().startswith(vector.bug.references[0]), vector.id
