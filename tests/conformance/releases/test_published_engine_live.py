"""A published delta-spark 3.x release, live beside the reference engine (issue 30).

CI fetches one pinned 3.x release from Maven Central and PyPI (``deltaspec engines fetch``) and
runs it through the spec-only bridge (``--adapter deltaspark@R``) on the vectors that judge what
changes between that release and 4.4: those citing a rule whose ``Releases:`` line covers one of
the two and not the other, and those written for the release's own line, plus one vector of every
family that applies to it. Each must get the verdict spec/data/verified_live.json records for it
from the release's full run; the full matrix runs with ``python -m
deltaspec.conformance.tools.verified_live record --release R --full`` for each pinned release.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deltaspec.cli import main
from deltaspec.conformance.harness.gate import NEWEST, not_for_release, parse_release
from deltaspec.conformance.harness.scenarios import load_scenarios
from deltaspec.conformance.releases.fetch import Status, fetch
from deltaspec.conformance.releases.pins import load_pins
from deltaspec.conformance.tools import verified_live as record
from deltaspec.rules import covers, load_rules

CI_RELEASE = "3.0.0"
"""The 3.x release CI runs: the one whose line has the most vectors of its own and of rules that
change before 4.x (append shortcuts before 3.1, the check order before 3.2)."""


def changing_vectors(release: str) -> list[str]:
    """The vectors that apply to ``release`` and judge what differs from the newest release,
    and the first applicable vector of every family."""
    rules = {rule.id: rule for rule in load_rules()}
    at, newest = parse_release(release), parse_release(NEWEST)
    changing = {i for i, r in rules.items() if covers(r.releases, at) != covers(r.releases, newest)}
    chosen: set[str] = set()
    families: dict[str, str] = {}
    for scenario in sorted(load_scenarios(), key=lambda s: s.id):
        if not_for_release(scenario, at, rules) is not None:
            continue
        own = parse_release(scenario.profile or NEWEST)[:2] == at[:2]
        if own or set(scenario.rules) & changing:
            chosen.add(scenario.id)
        families.setdefault(scenario.id.split("/")[0], scenario.id)
    return sorted(chosen | set(families.values()))


def test_ci_runs_vectors_of_what_changes_before_4x() -> None:
    chosen = changing_vectors(CI_RELEASE)
    assert any(vector.endswith("-v30") for vector in chosen), chosen
    judged = record.load()["releases"][CI_RELEASE]["scenarios"]
    assert set(chosen) <= set(judged), "the release's full run is not recorded"


@pytest.mark.slow
def test_a_published_3x_release_keeps_its_recorded_verdicts(tmp_path: Path) -> None:
    fetched = fetch(load_pins().by_release[CI_RELEASE])
    assert fetched.status is Status.OK, fetched.detail
    report = tmp_path / "report.json"
    cases = [arg for vector in changing_vectors(CI_RELEASE) for arg in ("--case", vector)]
    main(["conformance", "--adapter", f"deltaspark@{CI_RELEASE}", "--suite", "scenarios",
          "--json", str(report), *cases])  # fmt: skip
    results = json.loads(report.read_text())["suites"]["scenarios"]
    judged = record.load()["releases"][CI_RELEASE]["scenarios"]
    differ = {
        case["case"]: (judged[case["case"]]["label"], case["label"], case.get("details"))
        for case in results
        if case["label"] != judged[case["case"]]["label"]
    }
    assert len(results) == len(changing_vectors(CI_RELEASE))
    assert not differ, f"delta-spark {CI_RELEASE} now differs from its record: {differ}"
