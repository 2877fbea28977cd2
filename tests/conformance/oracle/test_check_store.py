"""``deltaspec check --store``: the race and services stages on object-store servers the command
starts itself, as a user runs it (a fresh process, the JSON report read back)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deltaspec.cli import check
from deltaspec.conformance.oracle.object_store_stage import check_keys
from deltaspec.conformance.servers.serving import STORE_KINDS, serving


def test_the_store_choices_are_the_servers_there_are() -> None:
    assert ("local", *STORE_KINDS) == check.STORES


def _check(tmp_path: Path, store: str, *stages: str) -> dict[str, object]:
    report = tmp_path / "report.json"
    stage_args = [arg for stage in stages for arg in ("--stage", stage)]
    done = subprocess.run(
        [sys.executable, "-m", "deltaspec", "check", "--store", store, *stage_args,
         "--report", str(report)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    loaded: dict[str, object] = json.loads(report.read_text(encoding="utf-8"))
    return loaded


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
@pytest.mark.parametrize("store", STORE_KINDS)
def test_the_race_on_a_server_loses_nothing_and_shows_the_single_writer_loss(
    tmp_path: Path, store: str
) -> None:
    report = _check(tmp_path, store, "race")
    assert report["store"] == store and report["passed"] is True
    race = report["reports"]["race"]  # type: ignore[index]
    assert race["threads"] == 200
    assert (race["conditional"]["many_winners"], race["conditional"]["lost"]) == (0, 0)
    assert race["single_writer"]["lost"] > 0
    drivers = {r["store"]: r for r in race["drivers"]["stores"]}
    assert drivers["conditional"]["lost"] == 0 and drivers["single-writer"]["lost"] > 0


@pytest.mark.rules("RETENTION.LOG", "CHECKPOINT.LAST_CHECKPOINT")
def test_the_services_run_with_the_log_on_azure(tmp_path: Path) -> None:
    report = _check(tmp_path, "azure", "services")
    checks = report["reports"]["services"]["checks"]  # type: ignore[index]
    assert set(checks) == {
        "strays", "compaction reads", "checksums", "time travel", "retention", "checkpoints",
        "cleanup",
    }  # fmt: skip
    assert all(count > 0 for count in checks.values())


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "LOG.LISTING", "PATH.TABLE_LOCATION")
def test_the_store_stage_runs_on_its_own_s3_server_on_the_defaults(tmp_path: Path) -> None:
    report = _check(tmp_path, "local", "store")
    assert report["store"] == "local" and report["passed"] is True
    store = report["reports"]["store"]  # type: ignore[index]
    assert store["server"] == "s3" and store["threads"] > 0 and store["keys"] > 0
    assert (store["processes"]["many_winners"], store["processes"]["lost"]) == (0, 0)
    assert all(count > 0 for count in store["services"]["checks"].values())
    (row,) = report["stages"]  # type: ignore[misc]
    assert row["summary"].startswith("s3 server at http://127.0.0.1:")


@pytest.mark.rules("LOG.LISTING", "PATH.TABLE_LOCATION")
def test_the_keys_an_azure_store_lists_are_the_servers(tmp_path: Path) -> None:
    with serving("azure") as server:
        assert check_keys(server) > 0
