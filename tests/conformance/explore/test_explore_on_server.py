"""``deltaspec explore --no-put-if-absent --on s3``: the lost write the explorer finds in the
model, replayed on a real S3-compatible server by one driver process per writer (a fresh
process, as a user runs it)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from deltaspec.conformance.harness.scenarios import load_scenarios
from deltaspec.conformance.oracle.stages import RACED_VECTOR


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_the_lost_write_is_shown_on_the_server_and_the_conditional_store_loses_nothing(
    tmp_path: Path,
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "deltaspec", "explore", "--no-put-if-absent", "--writers", "2",
         "--ops", "1", "--alphabet", "append", "--on", "s3", "--rounds", "5", "--quiet",
         "--regressions", str(tmp_path)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    out = done.stdout
    assert done.returncode == 1, out[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in out + done.stderr
    assert "VIOLATION of LOG.PUT_IF_ABSENT (lost write)" in out
    lost = re.search(r"checks, then writes: (\d+) of 5 rounds lost a commit: (\S+) was told", out)
    assert lost is not None and int(lost.group(1)) > 0, out
    assert "conditional store (create-only PUT): 0 of 5 rounds lost a commit" in out


def test_the_explored_lost_write_is_the_schedule_of_the_raced_vector(tmp_path: Path) -> None:
    """The vector the explorer writes for the lost write (the correct rules' outcomes) has the
    schedule and outcomes of the corpus vector the race stage runs from two drivers."""
    subprocess.run(
        [sys.executable, "-m", "deltaspec", "explore", "--no-put-if-absent", "--writers", "2",
         "--ops", "1", "--alphabet", "append", "--partitions", "0", "--quiet",
         "--regressions", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    (written,) = tmp_path.rglob("*.json")
    explored = json.loads(written.read_text(encoding="utf-8"))
    (raced,) = [s.data for s in load_scenarios() if s.id == RACED_VECTOR]

    def schedule(vector: dict[str, Any]) -> list[tuple[str, int, object]]:
        """Steps as (kind, the writer's order of first appearance, its expected outcome)."""
        names = list(dict.fromkeys(name for step in vector["steps"] for name in step.values()))
        return [
            (kind, names.index(name), vector["expect"][name]["committed"])
            for step in vector["steps"]
            for kind, name in step.items()
        ]

    assert schedule(explored) == schedule(raced)
    assert schedule(raced) == [("begin", 0, 1), ("begin", 1, 2), ("commit", 0, 1), ("commit", 1, 2)]
