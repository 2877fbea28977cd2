"""Helpers shared by the test modules."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import settings


def cited_by_tests(root: Path, pattern: str = "*.py") -> set[str]:
    """Rule IDs named in ``pytest.mark.rules(...)`` in files under ``root`` matching ``pattern``."""
    cited: set[str] = set()
    for path in root.rglob(pattern):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "rules"
            ):
                cited |= {a.value for a in node.args if isinstance(a, ast.Constant)}
    return cited


def examples(fraction: float) -> settings:
    """A share of the active profile's example budget (``ci`` stays fast, ``deep`` goes deep)."""
    return settings(max_examples=max(10, int(settings.default.max_examples * fraction)))
