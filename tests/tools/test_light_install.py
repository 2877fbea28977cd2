"""The core install (no extras): ``deltaspec conformance`` on the built-in corpus works with
pyspark, py4j and deltalake unimportable, and a missing extra is one friendly message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deltaspec.extras import install_hint, missing_extra

BLOCK_EXTRAS = """
import sys
class Block:
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("pyspark", "py4j", "deltalake"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
"""
"""The extras made unimportable, as a ``sitecustomize`` on PYTHONPATH: in the command's process
and in every Python process it starts (the check's Spark stage runs in one of its own)."""

WITHOUT_EXTRAS = """
import sys
from deltaspec.cli import main
code = main(sys.argv[1:])
assert not [m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j", "deltalake")]
sys.exit(code)
"""


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    site = tmp_path / "light-install-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(BLOCK_EXTRAS, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
    }
    return subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS, *args], capture_output=True,
                          text=True, cwd=tmp_path, timeout=600, env=env)  # fmt: skip


@pytest.mark.parametrize("adapter", ["model", "impl"])
def test_conformance_runs_without_the_optional_packages(tmp_path, adapter):
    report = tmp_path / "r.json"
    run = _run(tmp_path, "conformance", "--adapter", adapter, "--fixtures", str(tmp_path / "none"),
               "--json", str(report))  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    data = json.loads(report.read_text())
    assert data["counts"]["scenarios"]["pass"] > 300 and data["counts"]["logs"]["pass"] >= 25
    writes = data["suites"]["writes"][0]["details"][0]
    assert "DELTASPEC_FIXTURES" in writes or install_hint("spark") in writes


def test_a_missing_extra_is_one_friendly_message(tmp_path):
    run = _run(tmp_path, "conformance", "--adapter", "deltars", "--suite", "scenarios")
    assert run.returncode == 2
    assert run.stderr.strip() == (
        "deltaspec conformance: this needs deltalake, which is not installed: "
        "pip install 'path/to/deltaspec[deltars]' (from a clone of the repository)"
    )  # there is no deltaspec on PyPI: never `pip install 'deltaspec[...]'`
    assert missing_extra(ModuleNotFoundError("x", name="jsonschema")) is None


def test_check_without_fixtures_says_where_to_find_them(tmp_path):
    """The two stages that need what this install lacks: the fixtures (vectors) and pyspark."""
    report = tmp_path / "check.json"
    run = _run(tmp_path, "check", "--stage", "vectors", "--stage", "spark",
               "--fixtures", str(tmp_path / "none"), "--report", str(report))  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "fixtures suite skipped: no delta-spark fixtures at" in run.stdout
    data = json.loads(report.read_text())
    assert "DELTASPEC_FIXTURES" in data["reports"]["vectors"]["fixtures_skipped"]
    spark = data["stages"][-1]  # skipped, with what to install, not silently
    assert spark["name"] == "spark" and install_hint("spark") in spark["skipped"]
    assert "spark: SKIPPED" in run.stdout
    assert list(data["skipped"]) == ["fixtures", "spark"]
    verdict = run.stdout.strip().splitlines()[-1]  # a pass that names what did not run
    assert verdict.startswith("deltaspec check: PASS (fixtures skipped: no delta-spark fixtures")
    assert "; spark skipped: " in verdict


def test_check_required_to_run_every_stage_fails_on_a_skipped_one(tmp_path):
    report = tmp_path / "check.json"
    run = _run(tmp_path, "check", "--quick", "--stage", "vectors", "--require-stages",
               "--fixtures", str(tmp_path / "none"), "--report", str(report))  # fmt: skip
    assert run.returncode == 1, run.stdout[-2000:] + run.stderr[-2000:]
    assert run.stdout.strip().splitlines()[-1].startswith("deltaspec check: FAIL: fixtures skipped")
    assert not json.loads(report.read_text())["passed"]
