"""``deltaspec describe``: a snapshot summary for people (text) and scripts (--json)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "deltaspec"


def describe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCRIPT, "describe", *args], capture_output=True, text=True)


@pytest.mark.rules("SNAPSHOT.TIME_TRAVEL", "CHECKPOINT.READ")
def test_json_description_of_a_checkpointed_table(fixtures_dir: Path) -> None:
    table = fixtures_dir / "golden-basic-inserts-deletes-checkpoint"
    done = describe(str(table), "--json")
    assert done.returncode == 0, done.stderr
    described = json.loads(done.stdout)
    assert {"version", "protocol", "metadata", "num_files", "files", "app_transactions",
            "checkpoint_version"} <= set(described)  # fmt: skip
    assert described["version"] == 13 and described["checkpoint_version"] == 10
    assert described["num_files"] == len(described["files"]) > 0
    older = json.loads(describe(str(table), "--version", "5", "--json").stdout)
    assert older["version"] == 5 and older["checkpoint_version"] is None
    text = describe(str(table))
    assert text.returncode == 0 and "version      13 (from checkpoint 10)" in text.stdout


@pytest.mark.rules("LOG.CONTIGUITY")
def test_a_broken_table_names_the_error_class_and_exits_non_zero(fixtures_dir: Path) -> None:
    done = describe(str(fixtures_dir / "golden-versions-not-contiguous"))
    assert done.returncode == 2
    assert done.stderr.startswith("DELTA_VERSIONS_NOT_CONTIGUOUS")
    missing = describe(str(fixtures_dir / "no-such-table"))
    assert missing.returncode == 2 and missing.stderr.startswith("DELTA_TABLE_NOT_FOUND")
