"""Every file or directory a command writes (``--dot``, ``--json``, ``--junit``, ``--report``,
``--trace DIR``…) that cannot be written is a one-line set-up error, exit code 2, before the
command runs: ``deltaspec inspect --dot <a missing directory>/x.dot`` printed a
FileNotFoundError traceback after the inspection (issue 48). The options are found in the parser
itself (those declared with ``deltaspec.cli.outputs.add_output``), so a new one is tested too."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support import append_rows, create_reliability_table, tree_state
from support.read_only import read_only_directory

from deltaspec.cli import SETUP_ERROR, build_parser, main
from deltaspec.cli.outputs import unwritable

SCRIPT = Path(sys.executable).parent / "deltaspec"
POSITIONALS = {"inspect": ["TABLE"]}
"""The positional arguments a command needs before its options (TABLE: the test's table)."""


def _output_options() -> list[tuple[str, str, bool]]:
    """(command, flag, is a directory) of every output option of every command."""
    parser = build_parser()
    (commands,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = []
    for name, sub in commands.choices.items():
        for _, flag, directory in sub.get_default("_outputs") or ():
            found.append((name, flag, directory))
    return found


OUTPUTS = _output_options()
BAD_FILES = {
    "into a missing directory": lambda base: base / "missing" / "out",
    "below a regular file": lambda base: base / "a-file" / "out",
}
BAD_DIRECTORIES = {
    "a regular file": lambda base: base / "a-file",
    "below a regular file": lambda base: base / "a-file" / "out",
}
CASES = [
    (command, flag, bad, make)
    for command, flag, directory in OUTPUTS
    for bad, make in (BAD_DIRECTORIES if directory else BAD_FILES).items()
]


def _argv(command: str, flag: str, path: Path, table: Path) -> list[str]:
    positionals = [str(table) if p == "TABLE" else p for p in POSITIONALS.get(command, [])]
    return [command, *positionals, flag, str(path)]


@pytest.fixture
def table(tmp_path: Path) -> Path:
    root = tmp_path / "table"
    append_rows(create_reliability_table(root), "a", [1])
    return root


def test_every_command_that_writes_declares_its_outputs() -> None:
    assert {(c, f) for c, f, _ in OUTPUTS} >= {
        ("inspect", "--dot"), ("check", "--report"), ("check", "--regressions"),
        ("conformance", "--json"), ("conformance", "--markdown"), ("conformance", "--junit"),
        ("conformance", "--trace"), ("oracle", "--json"), ("oracle", "--regressions"),
        ("mutants", "--json"), ("explore", "--json"), ("explore", "--export"),
        ("explore", "--regressions"),
    }  # fmt: skip


@pytest.mark.parametrize(("command", "flag", "bad", "make"), CASES,
                         ids=[f"{c} {f} {b}" for c, f, b, _ in CASES])  # fmt: skip
def test_an_output_that_cannot_be_written_is_a_set_up_error_before_the_run(
    command: str, flag: str, bad: str, make: Callable[[Path], Path], table: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    (tmp_path / "a-file").write_bytes(b"")
    path = make(tmp_path)
    before = tree_state(tmp_path)
    argv = _argv(command, flag, path, table)
    assert unwritable(build_parser().parse_args(argv)) is not None  # else main would run it
    assert main(argv) == SETUP_ERROR
    err = capsys.readouterr().err
    assert err.startswith(f"deltaspec {command}: {flag} {path}: ") and err.count("\n") == 1
    assert tree_state(tmp_path) == before  # the command did not run


@pytest.mark.parametrize(("command", "flag"), [(c, f) for c, f, d in OUTPUTS if not d])
def test_a_directory_given_as_an_output_file_is_a_set_up_error(
    command: str, flag: str, table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_argv(command, flag, tmp_path, table)) == SETUP_ERROR
    assert capsys.readouterr().err == f"deltaspec {command}: {flag} {tmp_path}: is a directory\n"


def test_the_command_line_prints_one_line_and_no_traceback(table: Path, tmp_path: Path) -> None:
    target = tmp_path / "missing" / "graph.dot"
    done = subprocess.run(
        [str(SCRIPT), "inspect", str(table), "--dot", str(target)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == SETUP_ERROR, done.stderr
    assert done.stderr == (
        f"deltaspec inspect: --dot {target}: no such directory: {target.parent}\n"
    )
    assert done.stdout == ""


def test_a_write_refused_after_the_check_is_the_same_one_line_error(
    table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The directory passes the check and then refuses the write (a read-only file system):
    the failed write is reported like a failed check, not as a traceback."""
    with read_only_directory(tmp_path / "ro", "audit") as out:
        target = out.path / "graph.dot"
        with out.read_only():
            assert main(["inspect", str(table), "--dot", str(target)]) == SETUP_ERROR
    err = capsys.readouterr().err
    assert err == f"deltaspec inspect: --dot {target}: Read-only file system\n"


def test_a_writable_output_is_written(table: Path, tmp_path: Path) -> None:
    target = tmp_path / "graph.dot"
    assert main(["inspect", str(table), "--dot", str(target)]) == 0
    assert target.read_text().startswith("digraph")
