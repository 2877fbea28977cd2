"""Shared test configuration: Hypothesis profiles and the ``rules`` marker.

``@pytest.mark.rules("LOG.PUT_IF_ABSENT", ...)`` says which spec rules a test
checks; an unknown rule ID fails collection, and tests/spec/test_spec.py fails
when a rule is checked by no test and no scenario.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from deltaspec.rules import PRIMARY_LIVE_RELEASE, load_rules

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=200,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=100, deadline=None)
settings.register_profile(
    "deep", max_examples=20_000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

RULE_IDS = frozenset(rule.id for rule in load_rules())
REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(
    os.environ.get("DELTASPEC_FIXTURES", REPO.parent / "shared" / "fixtures" / "delta-spark")
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rules(*ids): the spec rule IDs this test checks")
    config.addinivalue_line("markers", "spark: runs on a local SparkSession")
    config.addinivalue_line(
        "markers", "slow: starts a SparkSession or another engine process (-m 'not slow' skips)"
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()) or item.get_closest_marker("spark"):
            item.add_marker(pytest.mark.slow)
        for marker in item.iter_markers("rules"):
            unknown = set(marker.args) - RULE_IDS
            if unknown:
                raise pytest.UsageError(f"{item.nodeid} cites unknown rules {sorted(unknown)}")


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    if not (FIXTURES / "MANIFEST.json").exists():
        pytest.fail(f"delta-spark fixtures not found at {FIXTURES} (set DELTASPEC_FIXTURES)")
    return FIXTURES


def pytest_sessionstart(session: pytest.Session) -> None:
    """The default live engine, published delta-spark PRIMARY_LIVE_RELEASE, fetched into the
    cache once (``deltaspec engines fetch``; reused when its checksums match) unless
    ``$DELTASPEC_DELTA_SPARK`` names another. Under xdist the controller does it before it starts
    the workers (its own hook runs last), so a worker does not check it again. A failed fetch
    says why here, and the tests that need the engine fail (``spark`` below)."""
    from deltaspec.conformance.engines.deltaspark.session import ENV

    if os.environ.get(ENV) or hasattr(session.config, "workerinput"):
        return
    from deltaspec.conformance.releases.fetch import Status, fetch
    from deltaspec.conformance.releases.pins import load_pins

    fetched = fetch(load_pins().by_release[PRIMARY_LIVE_RELEASE])
    if fetched.status is not Status.OK:
        print(f"delta-spark {PRIMARY_LIVE_RELEASE} not fetched: {fetched.detail}", file=sys.stderr)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local SparkSession (local[2]) per test worker, started on first use, with live
    delta-spark loaded (``$DELTASPEC_DELTA_SPARK``, default the published PRIMARY_LIVE_RELEASE
    in the engines cache): our Spark path and the reference engine share it, as Spark cannot add
    jars to a running session."""
    from deltaspec.conformance.engines.deltaspark.session import (
        DeltaSparkUnavailable,
        delta_session,
    )

    try:
        session = delta_session("local[2]", "deltaspec-tests")
    except DeltaSparkUnavailable as error:
        pytest.fail(str(error))
    yield session
    session.stop()
