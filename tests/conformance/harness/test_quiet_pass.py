"""A passing run prints its verdicts on stdout and, on stderr, progress lines alone: what the
impl logs while a vector runs (a post-commit warning the vector sets up) is kept with the
vector's run, not printed (conformance/harness/suites.kept_logs)."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deltaspec.conformance.engines.impl.adapter import ImplAdapter
from deltaspec.conformance.harness.scenarios import load_scenarios
from deltaspec.conformance.harness.suites import kept_logs, run_scenario_suite
from deltaspec.conformance.harness.verdicts import CaseResult, Verdict

DELTASPEC = Path(sys.executable).parent / "deltaspec"
WARNED = (
    "txn/committed-is-final/unusable-checkpoint-interval",  # no checkpoint at interval 0
    "txn/table-properties/invalid-checkpoint-interval",
)
VERDICT_LINES = re.compile(
    r"== vectors: .*"  # the stage's heading
    r"|\|.*\|"  # a verdict table's row
    r"|skipped \d+ cases:|\s+\d+  .+"  # the skipped cases, counted by reason
    r"|impl: PASS; 0 unsafe"
    r"|vectors: PASS in [\d.]+ s; impl: .*"
    r"|judged at: \d+ release profiles \(.*\); the log on: .*"  # what the run judged
    r"|deltaspec check: PASS(?: \(fixtures skipped: .*\))? in \d+ s \(report: .*\)"
)

PROGRESS = re.compile(r"[\w -]+: .* \(\d+ s elapsed\)")
"""A progress line on stderr (conformance/harness/progress.py)."""


def test_the_vectors_stage_prints_only_its_verdicts(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(DELTASPEC), "check", "--stage", "vectors", "--report", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stdout + done.stderr
    assert [line for line in done.stderr.splitlines() if not PROGRESS.fullmatch(line)] == []
    stray = [line for line in done.stdout.splitlines() if not VERDICT_LINES.fullmatch(line)]
    assert stray == []


def test_vectors_the_impl_warns_on_pass_silently(caplog: pytest.LogCaptureFixture) -> None:
    vectors = [v for v in load_scenarios() if v.id in WARNED]
    assert len(vectors) == len(WARNED)
    results = run_scenario_suite(ImplAdapter, vectors)
    assert [r.verdict for r in results] == [Verdict.PASS] * len(WARNED)
    assert all(not any(d.startswith("logged") for d in r.details) for r in results)
    assert caplog.records == []


def test_what_is_logged_is_kept_not_printed(caplog: pytest.LogCaptureFixture) -> None:
    """Inside, the records reach no handler above ``deltaspec`` (where pytest's, or Python's
    last-resort printer on stderr, would take them); after, they do again."""
    logger = logging.getLogger("deltaspec.impl.txn.post_commit")
    with kept_logs() as logged:
        logger.warning("no checkpoint of %s", "t")
    logger.warning("after: printed again")
    assert logged == ["logged warning: no checkpoint of t"]
    assert [r.getMessage() for r in caplog.records] == ["after: printed again"]


def test_a_failing_case_shows_what_was_logged() -> None:
    from deltaspec.conformance.harness.suites import _with_logs

    failed = CaseResult("v", Verdict.WRONG, ("version 2, expected 1",))
    shown = _with_logs(failed, ["logged warning: no checksum"])
    assert shown.details == ("version 2, expected 1", "logged warning: no checksum")
    passed = CaseResult("v", Verdict.PASS)
    assert _with_logs(passed, ["logged warning: no checksum"]) == passed
