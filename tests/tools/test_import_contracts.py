"""The import contracts: pyproject's ``[tool.importlinter]`` holds them, ``lint-imports`` checks
them on the installed package (lazy imports counted), ARCHITECTURE.md states exactly them."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def contracts() -> list[dict[str, Any]]:
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = data["tool"]["importlinter"]["contracts"]
    return found


def lint(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LINT_IMPORTS), str(config), "--no-cache"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)  # fmt: skip


def test_every_import_contract_holds() -> None:
    done = lint(REPO / "pyproject.toml")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert f"Contracts: {len(contracts())} kept, 0 broken." in done.stdout


def lint_broken(tmp_path: Path, contract: str) -> str:
    """``lint-imports`` on ``contract`` alone (with delta-spark's ``delta`` in the graph), which
    must be reported broken; its output."""
    config = tmp_path / "broken.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "deltaspec"\ninclude_external_packages = true\n\n'
        f"[[tool.importlinter.contracts]]\n{contract}",
        encoding="utf-8",
    )
    done = lint(config)
    assert done.returncode == 1 and "BROKEN" in done.stdout, done.stdout[-2000:]
    return done.stdout


def test_a_broken_contract_is_reported(tmp_path: Path) -> None:
    """The tool sees the package's imports: the impl's commit path does import its codec."""
    lint_broken(tmp_path,
                'name = "the impl without its codec"\ntype = "forbidden"\n'
                'source_modules = ["deltaspec.impl.txn"]\n'
                'forbidden_modules = ["deltaspec.impl.codec"]\n')  # fmt: skip


def test_an_import_of_delta_spark_outside_its_allowed_importers_is_reported(
    tmp_path: Path,
) -> None:
    """delta-spark's Python package is external: with only one module allowed to import it, the
    other modules' imports of it (inside functions) break the contract."""
    allowed = "deltaspec.conformance.engines.deltaspark.session"
    contract = (
        'name = "delta-spark from one module"\ntype = "protected"\n'
        f'protected_modules = ["delta"]\nallowed_importers = ["{allowed}"]\n'
    )
    found = lint_broken(tmp_path, contract)
    assert "deltaspec.conformance.engines.deltaspark.spark_api -> delta" in found


def test_at_least_five_contracts_none_with_an_ignored_import() -> None:
    assert len(contracts()) >= 5
    assert [c["id"] for c in contracts() if c.get("ignore_imports")] == []


def test_architecture_states_exactly_the_contracts() -> None:
    text = (REPO / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## Import rules", 1)[1].split("\n## ", 1)[0]
    stated = re.findall(r"^- \*\*(.+?)\*\* \(`([a-z-]+)`\)", section, flags=re.MULTILINE)
    assert sorted(stated) == sorted((c["name"], c["id"]) for c in contracts())
