"""deltaspec matrix: the compatibility matrix from the committed reports only (no engine runs)."""

from __future__ import annotations

import json
import shutil

import pytest

from deltaspec.cli import main
from deltaspec.conformance.tools import matrix
from deltaspec.conformance.tools.matrix_record import suite_run, take, unsafe_findings

ENGINE_KEYS = {"engine", "implementation", "version", "adapter", "source", "suites", "findings",
               "reports", "unavailable"}  # fmt: skip
RUN_KEYS = {"date", "command", "seconds", "counts", "stale", "unjudged"}


def _json(capsys) -> dict:
    assert main(["matrix", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_matrix_lists_every_engine_with_its_suites(capsys):
    data = _json(capsys)
    assert data["format"] == matrix.FORMAT == 1
    engines = {e["engine"]: e for e in data["engines"]}
    assert len(engines) >= 8
    for name in ("impl", "model", "deltars", "polars-deltalake", "daft", "delta-spark 4.4.0",
                 "delta-kernel-rs"):  # fmt: skip
        assert engines[name]["suites"], name
    assert set(engines["impl"]["suites"]) == {"scenarios", "logs", "fixtures"}
    assert set(engines["polars-deltalake"]["suites"]) == {"logs", "fixtures"}
    assert engines["duckdb"]["unavailable"] and not engines["duckdb"]["suites"]
    assert sum(1 for name in engines if name.startswith("delta-spark ")) >= 13


def test_the_json_schema_is_stable(capsys):
    for engine in _json(capsys)["engines"]:
        assert set(engine) == ENGINE_KEYS
        for run in engine["suites"].values():
            assert set(run) == RUN_KEYS
            assert run["date"] and run["command"].startswith("deltaspec conformance")
            assert all(isinstance(n, int) for n in run["counts"].values())
        for item in engine["findings"]:
            assert {"suite", "case", "label", "what", "rule", "requires", "engine_did"} <= set(item)


def test_every_committed_report_judges_todays_corpus(fixtures_dir):
    """A report whose case ids are gone from the corpus is stale: refresh it with
    matrix_record; fixture case ids name tables of the pinned fixtures."""
    tables = {p.name for p in fixtures_dir.iterdir() if p.is_dir()}
    for path in sorted(matrix.REPORTS.glob("*.json")):
        engine = matrix.load_report(path)
        assert not any(run.stale for run in engine.suites.values()), (path, engine.suites)
        data = json.loads(path.read_text())
        fixture_cases = data["suites"].get("fixtures", {}).get("cases", {})
        assert {case.split("/")[1] for case in fixture_cases} <= tables, path


def test_a_report_judging_a_vector_that_is_gone_is_flagged_stale(tmp_path, capsys):
    shutil.copy(matrix.REPORTS / "model.json", tmp_path / "model.json")
    data = json.loads((tmp_path / "model.json").read_text())
    data["suites"]["logs"]["cases"]["log/no-such/vector"] = "pass"
    (tmp_path / "model.json").write_text(json.dumps(data))
    (engine,) = [e for e in matrix.engines(tmp_path) if e.engine == "model"]
    assert engine.suites["logs"].stale == ["no longer in the corpus: log/no-such/vector"]
    assert "STALE: no longer in the corpus: log/no-such/vector" in "\n".join(matrix.text([engine]))


def test_an_unsafe_case_becomes_an_upstream_style_finding():
    report = {"adapter": "cmd:engine", "counts": {"logs": {"unsafe": 1}}, "suites": {"logs": [{
        "case": "snapshot/data-path/parent-segment", "verdict": "unsafe", "label": "unsafe",
        "rules": ["PATH.DATA_FILE"], "failures": [{"version": 1, "verdict": "unsafe",
        "expected": {"error": "UNSAFE_PATH"}, "got": {"version": 1}}]}]}}  # fmt: skip
    (item,) = unsafe_findings("logs", report)
    assert item["rule"] == "PATH.DATA_FILE" and "../outside.parquet" in item["what"]
    assert item["expected"] == 'version 1: {"error": "UNSAFE_PATH"}'
    assert item["engine_did"] == "version 1: read it without an error (version 1)"
    assert item["rerun"].endswith("--suite logs --case snapshot/data-path/parent-segment")
    data = {"suites": {}, "findings": [{"suite": "logs", "case": "old"}]}
    run = suite_run("logs", report, "deltaspec conformance …", 1.0, 1, "2026-11-29")
    recorded = take(data, "logs", report, run)
    assert [f["case"] for f in recorded["findings"]] == ["snapshot/data-path/parent-segment"]
    assert recorded["suites"]["logs"]["cases"] == {"snapshot/data-path/parent-segment": "unsafe"}


@pytest.mark.parametrize("engine", ["polars-deltalake", "daft", "deltars"])
def test_the_readers_unsafe_findings_name_the_path_and_symlink_rules(engine):
    findings = json.loads((matrix.REPORTS / f"{engine}.json").read_text())["findings"]
    rules = {f["rule"] for f in findings}
    assert {"PATH.DATA_FILE", "PATH.NO_SYMLINKS", "ACTION.LINE_FORMAT"} <= rules


def test_the_docs_page_renders_the_matrix_and_the_findings():
    page = matrix.markdown(matrix.engines())
    assert page.count("\n| ") >= 8 + 2
    assert "## Unsafe findings" in page and "`PATH.NO_SYMLINKS`" in page
    assert "delta-spark 4.4.0, delta-spark 4.3.1" in page  # one finding, every release it holds
