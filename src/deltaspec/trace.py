"""From a rule ID to everything that states, implements or checks it: the spec heading, the
model and impl functions marked ``@rule(ID)``, the tests marked ``pytest.mark.rules(ID)`` and
the vectors citing it.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from functools import cache
from pathlib import Path
from types import ModuleType

import deltaspec
from deltaspec.conformance.harness.logvectors import load_log_vectors
from deltaspec.conformance.harness.scenarios import load_scenarios

from .rules import implementations, load_rules, spec_root

SIDES = ("model", "impl", "spark")
"""The model, the core impl, and the Spark path (deltaspec.spark, a client of the core impl
whose marked functions apply a rule to DataFrame operations)."""
PACKAGES = {
    "model": "deltaspec.model.",
    "impl": "deltaspec.impl.",
    "spark": "deltaspec.spark.",
}
OPTIONAL_MODULES = ("pyspark", "py4j", "deltalake", "delta")
TEST_MARK = re.compile(r"pytest\.mark\.rules\((?P<ids>[^)]*)\)", re.DOTALL)
TEST_FUNCTION = re.compile(r"^\s*(?:async\s+)?def (test_\w+)", re.MULTILINE)


@cache
def import_sides() -> None:
    """Import every module of deltaspec.model, deltaspec.impl and deltaspec.spark (on a light
    install, without pyspark, none of the last), so that every ``@rule`` marker is registered."""
    for name in ("deltaspec.model", "deltaspec.impl", "deltaspec.spark"):
        package = _imported(name)
        if package is None:
            continue
        for module in pkgutil.walk_packages(package.__path__, f"{name}."):
            _imported(module.name)


def _imported(name: str) -> ModuleType | None:
    """The module ``name``, imported; None when it needs an optional package not installed."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as missing:  # a light install has no Spark path
        if not (missing.name or "").startswith(OPTIONAL_MODULES):
            raise
        return None


def repository_root() -> Path:
    """The checkout the package was installed from (the folder holding ``src/deltaspec``)."""
    return Path(deltaspec.__file__).resolve().parents[2]


def _display(path: Path) -> str:
    root = repository_root()
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def locate(where: str) -> str:
    """``module:qualname`` → ``file:line`` of its definition."""
    module_name, qualname = where.split(":")
    target: object = importlib.import_module(module_name)
    for part in qualname.split("."):
        target = inspect.getattr_static(target, part)
    target = getattr(target, "fget", target)  # a property's getter
    target = getattr(target, "func", target)  # a cached_property's function
    source = inspect.getsourcefile(target)  # type: ignore[arg-type]
    _, line = inspect.getsourcelines(target)  # type: ignore[arg-type]
    return f"{_display(Path(source or '?').resolve())}:{line}"


def marked(rule_id: str, side: str) -> list[str]:
    """The ``module:qualname`` of every function of ``side`` marked ``@rule(rule_id)``."""
    import_sides()
    prefix, spark = PACKAGES[side], PACKAGES["spark"]
    return [
        where
        for where in implementations().get(rule_id, ())
        if where.startswith(prefix) and (side == "spark" or not where.startswith(spark))
    ]


def citing_tests(rule_id: str, tests: Path) -> list[str]:
    """``file:line test_name`` of every test marked ``pytest.mark.rules(..., rule_id, ...)``
    (a module-level mark names the file)."""
    quoted = (f'"{rule_id}"', f"'{rule_id}'")
    found: list[str] = []
    for path in sorted(tests.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for mark in TEST_MARK.finditer(text):
            if not any(q in mark["ids"] for q in quoted):
                continue
            line = text.count("\n", 0, mark.start()) + 1
            if text[: mark.start()].rstrip().endswith("pytestmark ="):
                found.append(f"{_display(path)}:{line} (every test in the module)")
                continue
            test = TEST_FUNCTION.search(text, mark.end())
            name = test[1] if test else "?"
            found.append(f"{_display(path)}:{line} {name}")
    return found


def citing_vectors(rule_id: str) -> list[str]:
    """The scenario vectors and log vectors whose ``rules`` cite ``rule_id``."""
    return [name for name, rules in _vectors() if rule_id in rules]


@cache
def _vectors() -> tuple[tuple[str, frozenset[str]], ...]:
    """Every vector's name and the rules it cites, loaded once."""
    scenarios = [(f"scenario {s.id}", frozenset(s.rules)) for s in load_scenarios()]
    log_vectors = [(f"log vector {v.id}", frozenset(v.rules)) for v in load_log_vectors()]
    return tuple(scenarios + log_vectors)


def _heading_line(source: str, rule_id: str) -> int:
    lines = (spec_root() / source).read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith(f"### {rule_id} — "))


def trace(rule_id: str) -> list[str]:
    """Lines from the spec heading of ``rule_id`` through the model and impl functions that
    implement it to the tests and vectors that check it. Raises KeyError for an unknown ID."""
    rule = {r.id: r for r in load_rules()}[rule_id]
    lines = [
        f"spec: spec/{rule.source}:{_heading_line(rule.source, rule_id)} "
        f"{rule.id} — {rule.title} (Releases: {rule.releases})"
    ]
    for side in SIDES:
        functions = marked(rule_id, side)
        lines += [f"{side}: {where} ({locate(where)})" for where in functions]
        if not functions and side != "spark":
            lines.append(f"{side}: no function marked @rule({rule_id!r})")
    tests = repository_root() / "tests"
    if tests.is_dir():
        lines += [f"test: {test}" for test in citing_tests(rule_id, tests)] or ["tests: none"]
    else:
        lines.append("tests: not shipped")
    lines += [f"vector: {vector}" for vector in citing_vectors(rule_id)] or ["vectors: none"]
    return lines
