"""The main job's Spark stage gets its pinned engine itself (conformance/oracle/spark_stage.py):
fetched into the cache when it is missing and the registries answer, skipped with the reason
named where it cannot be (``--offline``, a registry that does not answer).

Each test runs ``deltaspec`` in a fresh process with ``DELTASPEC_CACHE`` pointing at an empty
directory: the engine's location is read from it when the package is imported."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deltaspec.conformance.engines.deltaspark.session import ENV as DELTA_SPARK_ENV
from deltaspec.rules import PRIMARY_LIVE_RELEASE

DELTASPEC = Path(sys.executable).parent / "deltaspec"


def _fresh_env(cache: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != DELTA_SPARK_ENV}
    return {**env, "DELTASPEC_CACHE": str(cache), **extra}


def _check_spark(
    tmp_path: Path, *args: str, **extra: str
) -> tuple[subprocess.CompletedProcess[str], dict]:
    report = tmp_path / "check.json"
    done = subprocess.run(
        [str(DELTASPEC), "check", "--stage", "spark", "--report", str(report), *args],
        env=_fresh_env(tmp_path / "cache", **extra), capture_output=True, text=True,
        timeout=120, cwd=tmp_path,
    )  # fmt: skip
    return done, json.loads(report.read_text())


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_offline_skips_the_spark_stage_naming_why_and_fetches_nothing(tmp_path: Path) -> None:
    done, report = _check_spark(tmp_path, "--offline")
    assert done.returncode == 0, done.stdout + done.stderr
    why = report["skipped"]["spark"]
    assert f"needs delta-spark {PRIMARY_LIVE_RELEASE}" in why and "--offline" in why
    assert f"deltaspec engines fetch {PRIMARY_LIVE_RELEASE}" in why
    assert f"PASS (spark skipped: {why})" in done.stdout
    assert not (tmp_path / "cache" / "delta-spark").exists()


def test_offline_fails_the_run_under_require_stages(tmp_path: Path) -> None:
    done, report = _check_spark(tmp_path, "--offline", "--require-stages")
    assert done.returncode == 1 and not report["passed"]
    assert "FAIL: spark skipped" in done.stdout


def test_an_unreachable_registry_skips_quickly_instead_of_hanging(tmp_path: Path) -> None:
    """pip's index on a loopback port nothing listens on: the probe says so in seconds."""
    index = f"http://127.0.0.1:{_closed_port()}/simple/"
    started = time.perf_counter()
    done, report = _check_spark(tmp_path, PIP_INDEX_URL=index)
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.perf_counter() - started < 60
    why = report["skipped"]["spark"]
    assert "cannot be fetched here" in why and "did not answer" in why, why
    assert not (tmp_path / "cache" / "delta-spark").exists()


@pytest.mark.slow
def test_a_missing_engine_is_fetched_with_a_progress_line(tmp_path: Path) -> None:
    """The stage's fetch into an empty cache (the code of ``deltaspec engines fetch``): the
    engine is then where the Spark stage's session looks for it."""
    env = _fresh_env(tmp_path / "cache")
    script = (
        "from deltaspec.conformance.oracle.spark_stage import ensure_engine\n"
        "from deltaspec.conformance.engines.deltaspark.session import locate\n"
        "ensure_engine()\n"
        "home = locate()\n"
        "print(home.python, *sorted(jar.name for jar in home.jars))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=1800)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"spark: fetching delta-spark {PRIMARY_LIVE_RELEASE}" in done.stderr
    assert f"delta-spark {PRIMARY_LIVE_RELEASE} fetched" in done.stderr
    python, *jars = done.stdout.split()
    assert Path(python).is_relative_to(tmp_path / "cache")
    assert f"delta-spark_2.13-{PRIMARY_LIVE_RELEASE}.jar" in jars
