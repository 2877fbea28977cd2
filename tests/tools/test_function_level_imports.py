"""The contract on imports inside functions (deltaspec/import_contracts.py): ``lint-imports``
breaks it on an import inside a function that gives no reason and on more marked imports than
allowed, each named path:line; the tree keeps it (test_import_contracts runs the whole config)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from subprocess import CompletedProcess

from deltaspec.import_contracts import function_imports

REPO = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"

CONFIG = """\
[tool.importlinter]
root_package = "lazyfixture"
contract_types = ["function_level_imports: deltaspec.import_contracts.FunctionLevelImportsContract"]

[[tool.importlinter.contracts]]
name = "imports at the top"
type = "function_level_imports"
containers = ["lazyfixture"]
max_marked = {max_marked}
"""


def lint(tmp_path: Path, modules: dict[str, str], max_marked: int) -> CompletedProcess[str]:
    """``lint-imports`` on a package ``lazyfixture`` made of ``modules`` (name -> source)."""
    package = tmp_path / "lazyfixture"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    for name, source in modules.items():
        (package / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(max_marked=max_marked), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "COLUMNS": "200"}
    command = [str(LINT_IMPORTS), "--config", str(config), "--no-cache"]
    return subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )


UNMARKED = """\
    import json


    def load(text):
        import csv
        return json.loads(text), csv
"""

MARKED = """\
    def first():
        import csv  # lazy: a reason
        return csv


    def second():
        from email import message  # lazy: another reason
        return message
"""


def test_an_import_inside_a_function_without_a_reason_breaks_it(tmp_path: Path) -> None:
    done = lint(tmp_path, {"loader": UNMARKED}, max_marked=5)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "BROKEN" in done.stdout
    assert "lazyfixture/loader.py:5: import csv" in done.stdout
    assert "loader.py:1" not in done.stdout  # the module-level import is none of its business


def test_more_marked_imports_than_allowed_break_it(tmp_path: Path) -> None:
    done = lint(tmp_path, {"marked": MARKED}, max_marked=1)
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "2 imports inside functions marked lazy, more than the 1 allowed" in done.stdout
    assert "lazyfixture/marked.py:2: import csv  # lazy: a reason" in done.stdout


def test_marked_imports_within_the_maximum_keep_it(tmp_path: Path) -> None:
    done = lint(tmp_path, {"marked": MARKED}, max_marked=2)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Contracts: 1 kept, 0 broken." in done.stdout


def test_what_counts_as_an_import_inside_a_function() -> None:
    source = textwrap.dedent("""\
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            import csv


        class Holder:
            import json

            def method(self):
                if TYPE_CHECKING:
                    import email
                else:
                    import glob
                def inner():
                    from os import (  # lazy: the marker on the first line
                        path,
                    )
                    from sys import (
                        argv,  # lazy: not on the first line
                    )
                return inner
    """)
    found = function_imports(source, "m.py")
    assert [(f.line, f.marked) for f in found] == [(14, False), (16, True), (19, False)]
    assert str(found[0]) == "m.py:14: import glob"


def test_the_tree_is_held_to_both_contracts() -> None:
    """Conformance as a whole at most 40 marked, the rest too; lint-imports checks them on every
    run of test_import_contracts (all contracts kept)."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    mine = {c["id"]: c for c in data["tool"]["importlinter"]["contracts"]
            if c["type"] == "function_level_imports"}  # fmt: skip
    conformance = mine["conformance-imports-at-the-top"]
    assert conformance["containers"] == ["deltaspec.conformance"]
    assert conformance["max_marked"] <= 40
    assert mine["the-rest-imports-at-the-top"]["containers"] == ["deltaspec"]
