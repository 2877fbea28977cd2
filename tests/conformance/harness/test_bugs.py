"""A vector's ``bug`` (conformance/harness/bugs.py): its citation, and the reports that carry it."""

from __future__ import annotations

import json

from deltaspec.cli import main
from deltaspec.conformance.harness.bugs import Affected, Bug
from deltaspec.conformance.harness.scenarios import load_scenarios


def test_a_citation_shortens_its_links_and_names_the_rule_broken():
    bug = Bug(
        ("https://github.com/delta-io/delta/pull/3981",
         "https://github.com/delta-io/delta/commit/0eb4c7eb7a84aa451fc8accd82bb771167ad137f"),
        (Affected("delta-spark", "2.4.0–3.2.x", "3.3.0"), Affected("Trino", "475")),
        "CONFLICT.DELETE_READ",
    )  # fmt: skip
    assert bug.citation() == (
        "delta-io/delta#3981, delta-io/delta@0eb4c7e (delta-spark 2.4.0–3.2.x, fixed in 3.3.0; "
        "Trino 475): breaks CONFLICT.DELETE_READ"
    )


def test_a_run_of_the_family_lists_each_bug_with_its_citation(tmp_path, capsys):
    report = tmp_path / "r.json"
    code = main(["conformance", "--adapter", "model", "--suite", "scenarios", "-k", "real-bugs",
                 "--json", str(report)])  # fmt: skip
    out = capsys.readouterr().out
    cases = json.loads(report.read_text())["suites"]["scenarios"]
    assert code == 0 and len(cases) >= 5
    assert f"real bugs: {len(cases)} vectors" in out
    cited = {s.id: s.bug for s in load_scenarios() if s.bug is not None}
    assert {case["case"] for case in cases} == set(cited)
    for case in cases:
        bug = cited[case["case"]]
        assert case["bug"] == bug.as_json() and bug.breaks == case["rules"][0]
        assert f"{case['case']}\n           {bug.citation()}\n" in out
