"""The front doors: `deltaspec.impl` and `deltaspec.spark` export the public Python API, and the
documentation imports from them alone, never from a module inside (but for the two modules that
mirror delta-spark's, so that code written against it changes one import)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
IMPORT = re.compile(r"^\s*from (deltaspec\.(?:impl|spark)(?:\.[\w.]+)?) import (.+)$", re.MULTILINE)
FRONT_DOORS = ("deltaspec.impl", "deltaspec.spark")
DELTA_SPARK_MIRRORS = ("deltaspec.spark.tables", "deltaspec.spark.exceptions")
"""``delta.tables`` and ``delta.exceptions`` under our name."""


def documented_imports() -> list[tuple[str, str, str]]:
    """(document, module, names) of every `from deltaspec.impl|spark… import …` line in the docs."""
    return [
        (doc.relative_to(ROOT).as_posix(), match[1], match[2])
        for doc in DOCUMENTS
        for match in IMPORT.finditer(doc.read_text(encoding="utf-8"))
    ]


def test_the_documents_import_the_api_through_a_front_door() -> None:
    imports = documented_imports()
    assert imports, "no document imports deltaspec.impl or deltaspec.spark: the scan is broken"
    deep = [
        f"{doc}: from {module} import {names}"
        for doc, module, names in imports
        if module not in FRONT_DOORS + DELTA_SPARK_MIRRORS
    ]
    assert deep == []


@pytest.mark.parametrize("front_door", FRONT_DOORS + DELTA_SPARK_MIRRORS)
def test_every_exported_name_resolves(front_door: str) -> None:
    module = importlib.import_module(front_door)
    exported = list(module.__all__)
    assert len(exported) == len(set(exported))
    missing = [name for name in exported if not hasattr(module, name)]
    assert missing == []


def test_every_documented_name_is_exported() -> None:
    unexported = [
        f"{doc}: {module}.{name}"
        for doc, module, names in documented_imports()
        if module in FRONT_DOORS + DELTA_SPARK_MIRRORS
        for name in re.findall(r"\w+", names.split("#")[0])
        if name not in importlib.import_module(module).__all__
    ]
    assert unexported == []
