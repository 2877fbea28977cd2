"""The conformance CI gate (conformance/harness/gate.py, selection.py, reporting.py, transcript.py):
coverage is part of the verdict, cases can be chosen and rerun, failures are structured, graded
by root cause, traced as bridge messages and written as JUnit XML."""

from __future__ import annotations

import copy
import json
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from deltaspec.cli import main
from deltaspec.conformance.harness.gate import not_for_release, parse_release
from deltaspec.conformance.harness.scenarios import RunResult, Scenario, load_scenarios
from deltaspec.conformance.harness.selection import Selection, SelectionError, keyword_matches
from deltaspec.conformance.harness.verdicts import Verdict, classify
from deltaspec.rules import covers, load_rules

DECLINER = """\
import json, sys
for line in sys.stdin:
    request = json.loads(line)
    if request["method"] == "hello":
        result = {"protocol": "deltaspec-bridge/1", "name": "decliner",
                  "capabilities": ["actions", "checkpoint", "time_travel", "commit_steps"]}
        print(json.dumps({"id": request["id"], "result": result}), flush=True)
    elif request["method"] == "close":
        print(json.dumps({"id": request["id"], "result": None}), flush=True)
    else:
        error = {"kind": "UNSUPPORTED", "message": "declined: " + request["method"]}
        print(json.dumps({"id": request["id"], "error": error}), flush=True)
"""


def _bad_vector(directory: Path) -> Path:
    """A copy of a spec vector whose expectations are wrong for every correct engine."""
    vector = copy.deepcopy(
        next(s for s in load_scenarios() if s.id == "conflict/app-txn/duplicate-stream").data
    )
    vector["id"] = "mine/wrong-version"
    vector["expect"] = {"winner": {"committed": 7}}
    directory.mkdir(exist_ok=True)
    path = directory / "wrong-version.json"
    path.write_text(json.dumps(vector))
    return path


@pytest.fixture
def decliner(tmp_path: Path) -> str:
    program = tmp_path / "decliner.py"
    program.write_text(DECLINER)
    return f"cmd:{shlex.quote(sys.executable)} {program}"


def test_a_bridge_that_declines_everything_fails_the_gate(decliner, tmp_path, capsys):
    report = tmp_path / "r.json"
    code = main(["conformance", "--adapter", decliner, "--suite", "scenarios",
                 "--json", str(report)])  # fmt: skip
    assert code == 3  # not 0, even without --strict
    data = json.loads(report.read_text())
    assert not data["passed"] and data["coverage"]["ran"] == 0
    assert "only 0 case(s) ran" in data["coverage"]["problems"][0]
    out = capsys.readouterr().out
    assert "COVERAGE NOT MET" in out
    assert "declined: create" in out  # the skip summary groups by reason


def test_min_cases_and_required_capabilities(tmp_path):
    vectors = ["--suite", "scenarios", "--case", "conflict/app-txn/*"]
    assert main(["conformance", "--adapter", "model", *vectors]) == 0
    assert main(["conformance", "--adapter", "model", *vectors, "--min-cases", "4"]) == 3
    assert main(["conformance", "--adapter", "model", *vectors, "--require", "actions"]) == 0
    assert main(["conformance", "--adapter", "model", *vectors,
                 "--require", "actions,write_append"]) == 3  # fmt: skip


def test_a_bridge_program_that_does_not_start_is_one_clear_error(tmp_path, capsys):
    assert (
        main(["conformance", "--adapter", f"cmd:{tmp_path}/missing", "--suite", "scenarios"]) == 2
    )
    assert main(["conformance", "--adapter", f"cmd:{sys.executable} -c pass",
                 "--suite", "scenarios"]) == 2  # fmt: skip
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all("did not start" in line for line in err)
    assert "exited (code 0) during hello" in err[1]


def test_case_and_keyword_select_and_only_drops_the_built_in_corpus(tmp_path):
    report = tmp_path / "r.json"
    main(["conformance", "--adapter", "model", "--suite", "scenarios", "--case",
          "conflict/app-txn/*", "-k", "not duplicate", "--json", str(report)])  # fmt: skip
    cases = {c["case"] for c in json.loads(report.read_text())["suites"]["scenarios"]}
    assert cases == {"conflict/app-txn/different-app-id", "conflict/app-txn/written-not-read"}
    _bad_vector(tmp_path / "mine")
    main(["conformance", "--adapter", "model", "--suite", "scenarios",
          "--only", str(tmp_path / "mine"), "--json", str(report)])  # fmt: skip
    cases = {c["case"] for c in json.loads(report.read_text())["suites"]["scenarios"]}
    assert cases == {"mine/wrong-version"}


def test_keyword_expressions():
    assert keyword_matches("APPEND and not retry", ["conflict/x", "CONFLICT.APPEND_MATCH"])
    assert not keyword_matches("append and (retry or txn)", ["conflict/append-match/a"])
    assert keyword_matches("(retry or app-txn)", ["conflict/app-txn/a"])
    for bad in ("a and", "(a", "a b", "or"):
        with pytest.raises(SelectionError):
            Selection(keyword=bad)
    assert main(["conformance", "--adapter", "model", "--suite", "scenarios", "-k", "(x"]) == 2


TABLES = ("golden-basic-merge", "golden-basic-update", "dat-multi-partitioned", "dat-nested")


@pytest.mark.parametrize(
    ("patterns", "skipped"),
    [((), set()),
     (("fixtures/golden-basic-merge/*",), set(TABLES) - {"golden-basic-merge"}),
     (("fixtures/golden-*",), {"dat-multi-partitioned", "dat-nested"}),
     (("*/latest",), set()),
     (("fixtures/golden-basic-merge/latest", "conflict/*"), set(TABLES) - {"golden-basic-merge"}),
     (("fixtures/dat-[mn]*/v1",), {"golden-basic-merge", "golden-basic-update"})],
)  # fmt: skip
def test_a_suite_skips_only_the_tables_no_case_glob_can_select(patterns, skipped):
    """The prefilter a suite runs before reading a table drops only tables none of whose cases
    --case keeps (and does drop those a literal head rules out)."""
    selection = Selection(cases=patterns)
    for table in TABLES:
        cases = [f"fixtures/{table}/{what}" for what in ("latest", "v1", "rows@latest")]
        kept = [case for case in cases if selection.matches(case, ())]
        may = selection.may_select_under(f"fixtures/{table}/")
        assert may or not kept, (table, kept)
        assert may == (table not in skipped), table


def test_a_failure_is_structured_traced_rerunnable_and_in_junit(tmp_path, capsys):
    _bad_vector(tmp_path / "mine")
    report, junit, trace = tmp_path / "r.json", tmp_path / "j.xml", tmp_path / "trace"
    code = main(["conformance", "--adapter", "impl", "--suite", "scenarios",
                 "--only", str(tmp_path / "mine"), "--json", str(report), "--junit", str(junit),
                 "--trace", str(trace)])  # fmt: skip
    assert code == 1
    (case,) = json.loads(report.read_text())["suites"]["scenarios"]
    (failure,) = case["failures"]
    assert failure["writer"] == "winner" and failure["verdict"] == "wrong"
    assert failure["expected"] == {"committed": 7} and failure["got"]["committed"] == 1
    assert failure["step"] == 2  # the winner's commit step
    assert case["broken_rule"]["id"] == "CONFLICT.APP_TXN" and case["broken_rule"]["title"]
    out = capsys.readouterr().out
    assert "rule: CONFLICT.APP_TXN — " in out
    rerun = next(line for line in out.splitlines() if "rerun:" in line).split("rerun: ")[1]
    assert shlex.split(rerun)[:2] == ["deltaspec", "conformance"]
    assert main(shlex.split(rerun)[1:]) == 1
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("failures") == "1"
    lines = [json.loads(x) for x in (trace / "mine__wrong-version.jsonl").read_text().splitlines()]
    methods = [x["method"] for x in lines if "method" in x]
    assert methods[:2] == ["hello", "create"] and "commit" in methods
    commit = next(x for x in lines if x.get("method") == "commit")
    answer = next(x for x in lines if "result" in x and x["id"] == commit["id"])
    assert answer["result"]["committed"] == 1


def test_a_spurious_conflict_knock_on_is_not_also_wrong():
    data = {"id": "x", "rules": ["CONFLICT.APPEND_MATCH"], "steps": [],
            "expect": {"A": {"committed": 1}},
            "expect_snapshot": {"version": 1, "files": ["a", "b"]}}  # fmt: skip
    vector = Scenario.of(data, "memory")
    result = classify(vector, RunResult.of({"A": {"conflict": "CONCURRENT_APPEND"}},
                                        {"version": 0, "files": ["a"]}))  # fmt: skip
    assert result.verdict is Verdict.SPURIOUS and not result.fails(strict=False)
    assert [f.get("knock_on", False) for f in result.failures] == [False, True, True]
    lone = classify(
        vector, RunResult.of({"A": {"committed": 1}}, {"version": 0, "files": ["a", "b"]})
    )
    assert lone.verdict is Verdict.WRONG  # without a writer's divergence it is its own cause


def test_release_lines_and_profiles():
    assert covers("all", (0, 1, 0)) and covers("v3.0.0+", (4, 4, 0))
    assert not covers("v3.0.0+", (2, 4, 0))
    assert covers("v0.5.0–v1.1.x", (1, 1, 3)) and not covers("v0.5.0–v1.1.x", (1, 2, 0))
    assert covers("v0.1.0–v0.1.x, v3.2.0+", (3, 3, 0))
    rules = {rule.id: rule for rule in load_rules()}
    by_id = {s.id: s for s in load_scenarios()}
    old = next(s for s in by_id.values() if s.profile == "0.3.0")
    assert not_for_release(old, parse_release("0.3.0"), rules) is None
    assert "written for release 0.3.0" in str(not_for_release(old, (4, 4, 0), rules))
    shortcut = next(s for s in by_id.values() if "CONFLICT.APPEND_SHORTCUTS" in s.rules
                    and s.profile is None)  # fmt: skip
    assert "does not hold at 3.0.0" in str(not_for_release(shortcut, (3, 0, 0), rules))


def test_profile_runs_only_the_vectors_of_that_release(tmp_path):
    report = tmp_path / "r.json"
    code = main(["conformance", "--adapter", "model", "--suite", "scenarios", "--profile",
                 "0.3.0", "--json", str(report)])  # fmt: skip
    assert code == 0
    cases = json.loads(report.read_text())["suites"]["scenarios"]
    ran = [c for c in cases if c["verdict"] != "skipped"]
    skipped = [c for c in cases if c["verdict"] == "skipped"]
    assert ran and all(c["verdict"] == "pass" for c in ran)
    assert all(c["details"][0].startswith("not for 0.3.0") for c in skipped)
    assert main(["conformance", "--adapter", "model", "--profile", "3.x"]) == 2


def test_spec_prints_one_rule_and_names_near_misses(capsys):
    assert main(["spec", "CONFLICT.APP_TXN"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("### CONFLICT.APP_TXN — ") and "Releases: v0.2.0+" in out
    assert "### " not in out.split("\n", 1)[1]  # the next rule is not printed
    assert main(["spec", "CONFLICT.APP_TX"]) == 2
    assert "did you mean CONFLICT.APP_TXN" in capsys.readouterr().err


def test_unknown_ids_are_friendly_errors(capsys):
    assert main(["mutants", "checkpoint-at-version-zer"]) == 2
    assert "did you mean checkpoint-at-version-zero?" in capsys.readouterr().err
    assert main(["conformance", "--adapter", "nope"]) == 2
    assert "unknown adapter 'nope'" in capsys.readouterr().err


def test_a_vector_for_the_newest_release_skips_a_release_where_its_rule_behaves_otherwise():
    """TXN.EMPTY_COMMIT holds at every release, but commitIfNeeded skips an empty commit only
    from 2.3.0 (spec/data/releases.json, empty_commit_skip): delta-spark 2.1.1 and 2.2.0 record
    it (seen live, deltaspark@2.1.1), so the 4.4 vector does not judge them."""
    rules = {rule.id: rule for rule in load_rules()}
    (vector,) = load_scenarios_by_id("txn/empty-commit/skipped")
    why = not_for_release(vector, parse_release("2.2.0"), rules)
    assert why is not None and "empty_commit_skip" in why
    assert not_for_release(vector, parse_release("2.3.0"), rules) is None


def load_scenarios_by_id(*ids: str) -> list[Scenario]:
    return [s for s in load_scenarios() if s.id in ids]
