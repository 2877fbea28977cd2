"""The wheel's package list, computed; pyproject.toml says everything else.

Every folder under the roots that pyproject's ``package-dir`` maps is a package of the wheel, the
data folders included (spec/vectors/<family>/..., the example bridges): setuptools then ships
them without a "package would be ignored" warning per folder, and a folder added later cannot be
left out of the wheel by a list nobody updated. The vector generators
(``deltaspec.spec.generators``) ship with the vectors they write.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent


def packages() -> list[str]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping: dict[str, str] = pyproject["tool"]["setuptools"]["package-dir"]
    found = set(mapping)
    for name, folder in mapping.items():
        for path in (ROOT / folder).rglob("*"):
            if not path.is_dir() or "__pycache__" in path.parts:
                continue
            found.add(".".join((name, *path.relative_to(ROOT / folder).parts)))
    return sorted(found)


setup(packages=packages())
