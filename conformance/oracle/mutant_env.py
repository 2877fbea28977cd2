"""A mutant in every Python process of a run, not only the oracle's own.

Our Spark path runs mostly in Spark's Python workers: processes the JVM starts, which import
``deltaspec`` afresh. A mutant applied in the oracle's process alone would leave them correct and
the ``spark`` stage would measure nothing. So the oracle also names the mutant in the environment
(``DELTASPEC_MUTANT=<id>@<module:qualname>``) and puts a ``sitecustomize`` module of its own first
on ``PYTHONPATH`` (:func:`worker_environment`); the JVM and its workers inherit both, Python runs
``sitecustomize`` at every start, and it calls :func:`install_from_environment`: the mutant is
applied as soon as its module has been executed there. Nothing on the package's own import path
knows of mutants.
"""

from __future__ import annotations

import atexit
import importlib.abc
import importlib.machinery
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from .catalog import by_id
from .mutation import apply

MUTANT_ENV = "DELTASPEC_MUTANT"


SITECUSTOMIZE = (
    '"""Written by deltaspec\'s oracle: apply the mutant $DELTASPEC_MUTANT names."""\n'
    "from deltaspec.conformance.oracle.mutant_env import install_from_environment\n\n"
    "install_from_environment()\n"
)


def environment_value(mutant_id: str, target: str) -> str:
    return f"{mutant_id}@{target}"


def worker_environment(mutant_id: str, target: str) -> dict[str, str]:
    """The variables that carry a mutant into every Python process started from this one: its
    name, and ``PYTHONPATH`` led by a folder (removed when this process exits) holding the
    ``sitecustomize`` that applies it."""
    folder = Path(tempfile.mkdtemp(prefix="deltaspec-mutant-"))
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    atexit.register(shutil.rmtree, folder, True)
    path = os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH", "")) if p)
    return {MUTANT_ENV: environment_value(mutant_id, target), "PYTHONPATH": path}


class _ApplyAfterImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the real loader of one module so that the mutant is applied
    right after that module's code has run."""

    def __init__(self, mutant_id: str, target: str) -> None:
        self.mutant_id = mutant_id
        self.target = target
        self.module_name = target.split(":")[0]

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.module_name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        run_module = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run_module(module)
            _apply(self.mutant_id, self.target)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def _apply(mutant_id: str, target: str) -> None:
    apply(by_id(mutant_id), target)


def install_from_environment() -> None:
    """Apply the mutant the environment names in this process: now if its module is loaded,
    otherwise right after it is imported. Without the variable, nothing happens."""
    value = os.environ.get(MUTANT_ENV)
    if not value or "@" not in value:
        return
    mutant_id, target = value.split("@", 1)
    if target.split(":")[0] in sys.modules:
        _apply(mutant_id, target)
    else:
        sys.meta_path.insert(0, _ApplyAfterImport(mutant_id, target))
