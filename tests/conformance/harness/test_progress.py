"""The one progress helper of the long runs (conformance/harness/progress.py): lines on stderr
when due, what runs and how many of how many with the time so far; ``--quiet`` silences them."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest

from deltaspec.cli import main
from deltaspec.conformance.harness.progress import QUIET_ENV, Progress, quiet, silenced

LINE = re.compile(r"spark: (\d+)/3 script (\w+): same in 1\.0 s \((\d+) s elapsed\)")


@pytest.fixture(autouse=True)
def _loud(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(QUIET_ENV, raising=False)


def test_a_line_per_step_when_every_step_is_due(capsys: pytest.CaptureFixture[str]) -> None:
    progress = Progress("spark", 3, every=0)
    for name in ("quickstart", "restore", "merge"):
        progress.step(f"script {name}", "same in 1.0 s")
    out, err = capsys.readouterr()
    assert out == ""
    found = [LINE.fullmatch(line) for line in err.splitlines()]
    assert all(found) and [(m[1], m[2]) for m in found if m] == [
        ("1", "quickstart"), ("2", "restore"), ("3", "merge"),
    ]  # fmt: skip


def test_a_short_run_prints_nothing_and_a_long_one_a_line_when_due(
    capsys: pytest.CaptureFixture[str],
) -> None:
    short = Progress("impl scenarios", 500)
    for case in range(500):
        short(f"case {case}")
    short.finish()
    assert capsys.readouterr().err == ""
    long = Progress("impl scenarios", 500, started=time.perf_counter() - 11)
    for case in range(500):
        long(f"case {case}")
    long.finish()
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["impl scenarios: 1/500 case 0 (11 s elapsed)",
                     "impl scenarios: done, 500/500 (11 s elapsed)"]  # fmt: skip


def test_quiet_silences_every_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["check", "--stage", "race", "--quiet", "--report", str(tmp_path / "r")]) == 0
    assert not quiet()  # main restores the setting: an in-process caller is not left silent
    capsys.readouterr()
    progress = Progress("check", 1, every=0)
    with silenced():
        assert os.environ[QUIET_ENV] == "1"  # what the processes it starts inherit
        progress.step("stage race", "PASS")
        progress.say("anything")
        assert capsys.readouterr().err == ""
    progress.say("loud again")
    assert "check: loud again" in capsys.readouterr().err
