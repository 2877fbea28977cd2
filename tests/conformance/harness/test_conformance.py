"""`deltaspec conformance`: verdict classification, known issues, the fixtures and scenarios
suites, reports, and the cmd: bridge end to end against the reference bridge program."""

from __future__ import annotations

import json
import shlex
import sys

import pytest

from deltaspec.cli import main
from deltaspec.conformance.engines.impl.adapter import ImplAdapter
from deltaspec.conformance.engines.registry import adapter_factory
from deltaspec.conformance.harness.scenarios import RunResult, load_scenarios
from deltaspec.conformance.harness.suites import Report, run_scenario_suite
from deltaspec.conformance.harness.verdicts import (
    CaseResult,
    KnownIssue,
    KnownIssueError,
    Verdict,
    apply_known,
    classify,
    load_known_issues,
)

REFERENCE_BRIDGE = f"cmd:{shlex.quote(sys.executable)} -m deltaspec.conformance.bridge.reference"


def _vector(expect, snapshot=None):
    from deltaspec.conformance.harness.scenarios import Scenario

    data = {"id": "x", "rules": ["CONFLICT.APPEND_MATCH"], "expect": expect}
    if snapshot is not None:
        data["expect_snapshot"] = snapshot
    return Scenario.of(data, "memory")


@pytest.mark.parametrize(
    ("expected", "actual", "verdict"),
    [
        ({"committed": 1}, {"committed": 1}, Verdict.PASS),
        ({"conflict": "CONCURRENT_APPEND"}, {"committed": 2}, Verdict.UNSAFE),
        ({"error": "APPEND_ONLY_VIOLATION"}, {"committed": 2}, Verdict.UNSAFE),
        ({"committed": 2}, {"conflict": "CONCURRENT_APPEND"}, Verdict.SPURIOUS),
        ({"conflict": "CONCURRENT_APPEND"}, {"conflict": "CONCURRENT_DELETE_READ"},
         Verdict.WRONG_KIND),
        ({"committed": 2}, {"committed": 3}, Verdict.WRONG),
        ({"one_of": [{"committed": 2}, {"conflict": "CONCURRENT_APPEND"}]},
         {"conflict": "CONCURRENT_DELETE_READ"}, Verdict.WRONG_KIND),
        ({"skipped": True}, {"committed": 2}, Verdict.WRONG),
    ],
)  # fmt: skip
def test_verdicts_are_asymmetric(expected, actual, verdict):
    result = classify(_vector({"A": expected}), RunResult.of({"A": actual}))
    assert result.verdict is verdict
    assert result.fails(strict=False) == (verdict in {Verdict.UNSAFE, Verdict.WRONG})
    assert result.fails(strict=True) == (verdict is not Verdict.PASS)


def test_a_different_live_file_set_is_unsafe():
    vector = _vector({"A": {"committed": 1}}, {"files": ["a", "b"]})
    assert classify(vector, RunResult.of({"A": {"committed": 1}}, {"files": ["a"]})).verdict is (
        Verdict.UNSAFE
    )


def test_known_issues_excuse_but_never_hide_unsafe_and_go_stale():
    results = [
        CaseResult("s", Verdict.SPURIOUS),
        CaseResult("u", Verdict.UNSAFE),
        CaseResult("p", Verdict.PASS),
    ]
    known = {c: KnownIssue(c, "spurious", "delta-rs does X") for c in ("s", "u", "p")}
    spurious, unsafe, passing = apply_known(results, known)
    assert not spurious.fails(strict=True) and spurious.known == "delta-rs does X"
    assert unsafe.fails(strict=False)
    assert passing.stale and passing.fails(strict=True) and not passing.fails(strict=False)


def test_only_a_rule_stricter_on_purpose_excuses_an_unsafe_case(tmp_path):
    """An unsafe case listed as ``stricter`` is reported as ``spec stricter`` and does not fail,
    but only when its rule's text says so; a list claiming it for another rule is refused."""
    listed = tmp_path / "known.json"
    entry = {"case": "u", "verdict": "unsafe", "reason": "engine commits it", "stricter": True}
    listed.write_text(json.dumps([{**entry, "rule": "TXN.WRITE_BOUNDARY"}]))
    (unsafe,) = apply_known([CaseResult("u", Verdict.UNSAFE)], load_known_issues("x", listed))
    assert unsafe.label == "spec stricter" and not unsafe.fails(strict=True)
    report = Report("x", strict=True, suites={"scenarios": [unsafe]})
    assert report.unsafe() == [] and report.passed()
    listed.write_text(json.dumps([{**entry, "rule": "CONFLICT.APPEND_MATCH"}]))
    with pytest.raises(KnownIssueError, match=r"CONFLICT\.APPEND_MATCH"):
        load_known_issues("x", listed)


def test_a_known_issue_is_counted_as_known_whatever_its_verdict():
    results = [CaseResult("e", Verdict.ERROR), CaseResult("w", Verdict.WRONG)]
    known = {c: KnownIssue(c, "error", "engine X") for c in ("e", "w")}
    report = Report("x", strict=False, suites={"scenarios": apply_known(results, known)})
    assert report.counts() == {"scenarios": {"known": 2}} and report.passed()


def test_impl_passes_the_scenario_and_fixture_suites(tmp_path, fixtures_dir):
    report = tmp_path / "r.json"
    markdown = tmp_path / "r.md"
    code = main(["conformance", "--adapter", "impl", "--suite", "scenarios", "--json",
                 str(report), "--markdown", str(markdown)])  # fmt: skip
    assert code == 0
    data = json.loads(report.read_text())
    assert data["passed"] and data["counts"]["scenarios"]["pass"] > 300
    skipped = [c for c in data["suites"]["scenarios"] if c["verdict"] == "skipped"]
    assert skipped and all("try_write" in c["details"][0] for c in skipped)
    assert "| scenarios |" in markdown.read_text()
    code = main(["conformance", "--adapter", "impl", "--suite", "fixtures",
                 "--fixtures", str(fixtures_dir), "--json", str(report)])  # fmt: skip
    data = json.loads(report.read_text())
    assert code == 0 and data["counts"]["fixtures"]["pass"] > 300
    assert not [c for c in data["suites"]["fixtures"] if c["verdict"] in {"unsafe", "wrong"}]


def test_fixtures_are_pinned_by_manifest_checksum(tmp_path, fixtures_dir):
    copy = tmp_path / "fixtures"
    copy.mkdir()
    (copy / "MANIFEST.json").write_text((fixtures_dir / "MANIFEST.json").read_text() + " ")
    from deltaspec.conformance.harness.fixtures import ManifestMismatch, load_manifest

    with pytest.raises(ManifestMismatch):
        load_manifest(copy)


def test_a_reader_that_loses_a_file_is_unsafe(fixtures_dir):
    from deltaspec.conformance.engines.impl.reader import ImplReader
    from deltaspec.conformance.engines.model.reader import model_states
    from deltaspec.conformance.harness.fixtures import check_table, load_manifest

    class DropsAFile(ImplReader):
        def read(self, root, version):
            state = super().read(root, version)
            return {**state, "files": state["files"][1:]}

    table = next(t for t in load_manifest(fixtures_dir) if t.name == "golden-basic-update")
    verdicts = {r.verdict for r in check_table(DropsAFile(), fixtures_dir, table, model_states)}
    assert Verdict.UNSAFE in verdicts


def test_reference_bridge_passes_the_same_scenarios_as_impl():
    scenarios = load_scenarios()
    with adapter_factory("impl") as factory:
        direct = {r.case: r.verdict for r in run_scenario_suite(factory, scenarios)}
    with adapter_factory(REFERENCE_BRIDGE) as factory:
        bridged = {r.case: r.verdict for r in run_scenario_suite(factory, scenarios)}
    assert bridged == direct
    assert sum(v is Verdict.PASS for v in bridged.values()) > 300


def test_a_broken_bridge_program_fails_its_vectors_without_hanging(tmp_path):
    program = tmp_path / "broken.py"
    program.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    request = json.loads(line)\n"
        "    if request['method'] == 'hello':\n"
        "        print(json.dumps({'id': request['id'], 'result': {'protocol': "
        "'deltaspec-bridge/1', 'name': 'broken', 'capabilities': ['actions']}}), flush=True)\n"
        "    elif request['method'] == 'commit':\n"
        "        print('not json', flush=True)\n"
        "    else:\n"
        "        print(json.dumps({'id': request['id'], 'result': None}), flush=True)\n"
    )
    scenarios = [s for s in load_scenarios() if s.id.startswith("conflict/")][:3]
    with adapter_factory(f"cmd:{sys.executable} {program}") as factory:
        results = run_scenario_suite(factory, scenarios)
    assert {r.verdict for r in results} == {Verdict.ERROR}
    assert "not JSON" in results[0].details[0]


def test_the_impl_adapter_factory_gives_fresh_tables(tmp_path):
    with adapter_factory("impl") as factory:
        assert isinstance(factory(tmp_path), ImplAdapter)
    with pytest.raises(ValueError, match="unknown adapter"), adapter_factory("nope"):
        pass


@pytest.mark.slow  # 18-21 s; the quick tier runs check's stages in test_check_stages.py
def test_check_quick_writes_its_report(tmp_path):
    report = tmp_path / "check.json"
    assert main(["check", "--quick", "--report", str(report)]) == 0
    data = json.loads(report.read_text())
    assert data["passed"] and data["reports"]["model"]["counts"]["scenarios"]["pass"] > 300


def test_a_missing_file_after_a_spurious_conflict_is_not_unsafe():
    vector = _vector({"A": {"committed": 1}}, {"files": ["a", "b"]})
    result = classify(
        vector, RunResult.of({"A": {"conflict": "CONCURRENT_APPEND"}}, {"files": ["a"]})
    )
    assert result.verdict is Verdict.SPURIOUS and len(result.details) == 2
