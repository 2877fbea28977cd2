"""Import rules of the conformance folders that judge or describe both sides: the isolation
checker and the operation alphabet import neither the model nor the impl (issue 15)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SIDES = ("deltaspec.model", "deltaspec.impl")


def imports(path: Path, package: str) -> set[str]:
    """Absolute names of the modules a file imports (relative imports resolved in ``package``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{module}" if module else base
            names.add(module)
    return names


def side_imports(folder: str) -> dict[str, set[str]]:
    """File name -> the model or impl modules it imports, for every file of the folder."""
    package = f"deltaspec.conformance.{folder}"
    found = {}
    for path in sorted((REPO / "conformance" / folder).glob("*.py")):
        bad = {
            m for m in imports(path, package) if m.split(".")[:2] in (s.split(".") for s in SIDES)
        }
        if bad:
            found[path.name] = bad
    return found


def test_the_isolation_checker_imports_neither_side() -> None:
    assert side_imports("isolation") == {}


PINNED_WORKLOAD = {"engine.py": {"deltaspec.impl"}}
"""workload/engine.py evaluates and renders scenario predicates with ``deltaspec.impl.predicates``
(``expr``, ``matching``, ``typed``): its callers are the operation-level adapters, which run on
the impl already, and its ``predicate_sql`` takes the impl's ``Expr`` (deltaspark_ops and the
delta-rs adapter tests pass one). Moving it onto the neutral evaluator of
``isolation/predicates.py`` changes that signature; until then the pin only shrinks."""


def test_the_workload_alphabet_imports_neither_side() -> None:
    assert side_imports("workload") == PINNED_WORKLOAD


def test_the_rule_sees_absolute_and_relative_imports(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from deltaspec.model.snapshot import Snapshot\n")
    (tmp_path / "b.py").write_text("from ...impl import predicates\n")
    (tmp_path / "c.py").write_text("import deltaspec.modelling\n")
    found = {p.name: imports(p, "deltaspec.conformance.workload") for p in tmp_path.glob("*.py")}
    assert "deltaspec.model.snapshot" in found["a.py"]
    assert "deltaspec.impl" in found["b.py"]
    assert found["c.py"] == {"deltaspec.modelling"}
