"""The house's own import-linter contract type: imports inside functions, each with its reason.

An import inside a function is a dependency the layer contracts count but a reader does not see
at the top of the module, and it can hide a loop between two modules that import each other
when they run. ``lint-imports`` loads this type from pyproject.toml's ``contract_types``::

    [[tool.importlinter.contracts]]
    type = "function_level_imports"
    containers = ["deltaspec.conformance"]
    max_marked = 40

The contract scans the source of every module under its containers (less the packages it names
``excluded``) with :mod:`ast`. It is broken by every import inside a function whose first line
does not end with ``# lazy: <reason>`` (an optional dependency, code that runs in a Spark worker
or a subprocess script, a measured start-up cost), and by more marked imports in the containers,
all together, than ``max_marked``.
An import under ``if TYPE_CHECKING:`` is none: it never runs. This module is a development tool:
only ``lint-imports`` (a development dependency) imports it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path

import grimp
from importlinter.application import output
from importlinter.domain import fields
from importlinter.domain.contract import Contract, ContractCheck

MARKER = re.compile(r"#\s*lazy:\s*\S")
"""The marker of a function-level import that must stay: ``# lazy: <reason>``."""

_Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass(frozen=True, order=True)
class FunctionImport:
    """One import statement inside a function: where it is and whether it gives its reason."""

    path: str
    line: int
    statement: str
    marked: bool

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.statement}"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(node: ast.AST, in_function: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements under ``node`` that run inside a function, type-only ones left out."""
    for child in ast.iter_child_nodes(node):
        yield from _visit(child, in_function)


def _visit(node: ast.AST, in_function: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        if in_function:
            yield node
    elif isinstance(node, ast.If) and _is_type_checking(node.test):
        for other in node.orelse:  # the body never runs
            yield from _visit(other, in_function)
    else:
        yield from _imports(node, in_function or isinstance(node, _Function))


def function_imports(source: str, path: str) -> list[FunctionImport]:
    """Every import inside a function in ``source`` (the module at ``path``), in line order."""
    lines = source.splitlines()
    found = [
        FunctionImport(path, node.lineno, lines[node.lineno - 1].strip(),
                       MARKER.search(lines[node.lineno - 1]) is not None)
        for node in _imports(ast.parse(source, filename=path), in_function=False)
    ]  # fmt: skip
    return sorted(found)


def package_files(package: str) -> list[Path]:
    """The source files of ``package`` and every package under it, by their real path (an
    editable install links each file from its own tree)."""
    spec = find_spec(package)
    if spec is None:
        raise ValueError(f"no such package: {package}")
    if spec.submodule_search_locations is None:
        return [Path(str(spec.origin)).resolve()]
    files: set[Path] = set()
    for location in spec.submodule_search_locations:
        files.update(path.resolve() for path in Path(location).rglob("*.py"))
    return sorted(files)


def _shown(path: Path) -> str:
    """``path`` relative to the working directory where it lies under it (the repository's
    root, where ``lint-imports`` runs), else whole."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


class FunctionLevelImportsContract(Contract):
    """Every import inside a function in ``containers`` carries ``# lazy: <reason>``, and at
    most ``max_marked`` of them do."""

    type_name = "function_level_imports"

    containers = fields.ListField(subfield=fields.StringField())
    excluded = fields.ListField(subfield=fields.StringField(), required=False)
    """Packages under the containers left to another contract of this type."""
    max_marked = fields.IntegerField(minimum=0)

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        containers: list[str] = self.containers  # type: ignore[assignment]
        excluded: list[str] = self.excluded or []  # type: ignore[assignment]
        left_out = {path for package in excluded for path in package_files(package)}
        found = [
            imported
            for container in containers
            for path in package_files(container)
            if path not in left_out
            for imported in function_imports(path.read_text(encoding="utf-8"), _shown(path))
        ]
        unmarked = [str(imported) for imported in found if not imported.marked]
        marked = [str(imported) for imported in found if imported.marked]
        maximum: int = self.max_marked  # type: ignore[assignment]
        return ContractCheck(
            kept=not unmarked and len(marked) <= maximum,
            metadata={"unmarked": unmarked, "marked": marked, "maximum": maximum},
        )

    def render_broken_contract(self, check: ContractCheck) -> None:
        unmarked: list[str] = check.metadata["unmarked"]
        marked: list[str] = check.metadata["marked"]
        maximum: int = check.metadata["maximum"]
        if unmarked:
            _offenders(
                f"{len(unmarked)} imports inside functions give no reason (end the line with "
                "`# lazy: <reason>`, or move the import to the module's top):",
                unmarked,
            )
        if len(marked) > maximum:
            _offenders(
                f"{len(marked)} imports inside functions marked lazy, more than the {maximum} "
                "allowed:",
                marked,
            )


def _offenders(heading: str, lines: list[str]) -> None:
    """A heading, then each offender, ``path:line: statement``, on one line whatever the
    terminal's width."""
    output.print_error(heading, bold=False)
    output.new_line()
    for line in lines:
        output.console.print(f"- {line}", markup=False, soft_wrap=True, style="red")
    output.new_line()
