"""Packaging: one import root, the model/impl independence rule, the console script, the wheel."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import deltaspec

REPO = Path(__file__).resolve().parents[2]


def imported_modules(path: Path, package: str) -> set[str]:
    """Absolute names of the modules a file imports (relative imports resolved in ``package``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            names.add(module)
            names |= {f"{module}.{alias.name}" for alias in node.names}
    return names


def violations(folder: Path, package: str, forbidden: str) -> list[str]:
    found = []
    for path in folder.rglob("*.py"):
        sub = ".".join((package, *path.relative_to(folder).parent.parts))
        bad = {
            m
            for m in imported_modules(path, sub)
            if m == forbidden or m.startswith(forbidden + ".")
        }
        found += [f"{path.relative_to(folder)} imports {m}" for m in sorted(bad)]
    return found


def test_impl_never_imports_model() -> None:
    assert violations(REPO / "impl", "deltaspec.impl", "deltaspec.model") == []


def test_model_imports_neither_impl_nor_conformance() -> None:
    assert violations(REPO / "model", "deltaspec.model", "deltaspec.impl") == []
    assert violations(REPO / "model", "deltaspec.model", "deltaspec.conformance") == []


def test_the_neutral_harness_imports_neither_side() -> None:
    harness = REPO / "conformance" / "harness"
    found = []
    for side in ("deltaspec.model", "deltaspec.impl", "deltaspec.conformance.adapters"):
        found += violations(harness, "deltaspec.conformance.harness", side)
    interface = "deltaspec.conformance.adapters.base"
    assert [line for line in found if not line.split()[-1].startswith(interface)] == []


def test_the_writes_suite_compares_engines_without_the_model() -> None:
    assert violations(REPO / "conformance" / "writes", "deltaspec.conformance.writes",
                      "deltaspec.model") == []  # fmt: skip


def test_adapters_base_imports_neither_side() -> None:
    path = REPO / "conformance" / "adapters" / "base.py"
    imports = imported_modules(path, "deltaspec.conformance.adapters")
    assert not {m for m in imports if m.startswith(("deltaspec.model", "deltaspec.impl"))}


def test_the_import_rule_catches_absolute_and_relative_imports(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from deltaspec.model.snapshot import Snapshot\n")
    (tmp_path / "b.py").write_text("from ..model import machine\n")
    (tmp_path / "c.py").write_text("import deltaspec.model\n")
    (tmp_path / "d.py").write_text("from deltaspec.modelling import x\n")
    found = violations(tmp_path, "deltaspec.impl", "deltaspec.model")
    assert sorted({line.split()[0] for line in found}) == ["a.py", "b.py", "c.py"]


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
