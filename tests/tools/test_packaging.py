"""Packaging: one import root, the console script, the wheel (imports: test_import_contracts)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import deltaspec

REPO = Path(__file__).resolve().parents[2]


def test_console_script_reports_version_and_lists_rules() -> None:
    script = Path(sys.executable).parent / "deltaspec"
    version = subprocess.run([script, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"deltaspec {deltaspec.__version__}"
    listing = subprocess.run([script, "spec"], capture_output=True, text=True, check=True)
    rule_lines = [line for line in listing.stdout.splitlines() if "." in line.split(" ")[0]]
    assert len(rule_lines) >= 40
    assert listing.stdout.strip().splitlines()[-1].startswith(f"{len(rule_lines)} rules")


def test_the_wheel_has_one_import_root_and_ships_the_spec(tmp_path: Path) -> None:
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "-w", str(tmp_path), str(REPO)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = tmp_path.glob("deltaspec-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    roots = {name.split("/")[0] for name in names}
    assert roots == {"deltaspec", wheel.name.split("-py3")[0] + ".dist-info"}
    for expected in (
        "deltaspec/model/machine.py",
        "deltaspec/impl/__init__.py",
        "deltaspec/conformance/adapters/model.py",
        "deltaspec/spec/scenario.schema.json",
        "deltaspec/spec/data/conflict_matrix.json",
        "deltaspec/spec/conflicts.md",
    ):
        assert expected in names
    assert any(n.startswith("deltaspec/spec/scenarios/matrix/") for n in names)
