"""A run that stops at its first failing case (RunOptions.stop_at_first_failure), as a seeded
bug's run does: the rest of the suite and the later suites are not run; known issues do not
stop it."""

from __future__ import annotations

import json
from pathlib import Path

from deltaspec.conformance.corpus_run import Corpus, RunOptions, run_suites
from deltaspec.conformance.harness.selection import Selection
from deltaspec.rules import spec_root

VECTOR = "checkpoint/interval-of-committed-versions"


def broken_copies(directory: Path, count: int) -> None:
    """``count`` copies of VECTOR whose expectation no engine meets (a wrong version)."""
    data = json.loads((spec_root() / "scenarios" / f"{VECTOR}.json").read_text())
    for i in range(count):
        data["id"] = f"broken/copy-{i}"
        data["expect"]["w1"] = {"committed": 9}
        (directory / f"copy-{i}.json").write_text(json.dumps(data))


def run(directory: Path, stop: bool, known: Path | None = None) -> dict[str, list[str]]:
    """The cases run per suite: the broken copies, and the spec's log vectors of one family."""
    corpus = Corpus([directory], None, None, True, known)
    chosen = Selection(cases=("broken/*", "action/line-format/*"))
    options = RunOptions(selection=chosen, stop_at_first_failure=stop)
    report = run_suites("impl", ["scenarios", "logs"], corpus, options)
    return {suite: [r.case for r in results] for suite, results in report.suites.items()}


def test_the_run_ends_at_the_first_failing_case(tmp_path: Path) -> None:
    broken_copies(tmp_path, 3)
    everything = run(tmp_path, stop=False)
    assert everything["scenarios"] == ["broken/copy-0", "broken/copy-1", "broken/copy-2"]
    assert everything["logs"]  # the later suite ran
    assert run(tmp_path, stop=True) == {"scenarios": ["broken/copy-0"]}


def test_a_known_issue_does_not_stop_the_run(tmp_path: Path) -> None:
    broken_copies(tmp_path, 2)
    known = tmp_path.parent / "known.json"
    reason = {"verdict": "wrong", "rule": "CHECKPOINT.INTERVAL", "reason": "pinned here"}
    known.write_text(json.dumps([{"case": "broken/copy-0", **reason}]))
    assert run(tmp_path, stop=True, known=known) == {
        "scenarios": ["broken/copy-0", "broken/copy-1"]
    }
