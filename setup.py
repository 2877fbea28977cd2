"""The wheel's package list, computed; pyproject.toml says everything else.

Every folder under the roots that pyproject's ``package-dir`` maps is a package of the wheel, the
data folders included (spec/vectors/<family>/..., the example bridges): setuptools then ships
them without a "package would be ignored" warning per folder, and a folder added later cannot be
left out of the wheel by a list nobody updated. spec/generators (the vector generators, run from
a clone) is not shipped.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).resolve().parent
NOT_SHIPPED = ("spec/generators",)


def packages() -> list[str]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    mapping: dict[str, str] = pyproject["tool"]["setuptools"]["package-dir"]
    found = set(mapping)
    for name, folder in mapping.items():
        for path in (ROOT / folder).rglob("*"):
            relative = path.relative_to(ROOT).as_posix()
            if not path.is_dir() or "__pycache__" in path.parts:
                continue
            if any(relative == skip or relative.startswith(f"{skip}/") for skip in NOT_SHIPPED):
                continue
            found.add(".".join((name, *path.relative_to(ROOT / folder).parts)))
    return sorted(found)


setup(packages=packages())
