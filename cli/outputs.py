"""The options naming what a command writes (``--json``, ``--junit``, ``--dot``, ``--report``,
``--trace DIR``…), declared with :func:`add_output`. :func:`main <deltaspec.cli.main>` checks
them before the command runs, so a path into a missing directory is a one-line set-up error
(exit 2) rather than a traceback after a run of minutes, and turns a write that fails anyway
(a directory removed meanwhile, a full disk) into the same one-line error."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

__all__ = ["add_output", "failed_output", "unwritable"]

_OUTPUTS = "_outputs"
"""The parser default listing a command's output options: (dest, flag, is a directory)."""


def add_output(
    parser: argparse.ArgumentParser, flag: str, *, directory: bool = False, **kwargs: Any
) -> None:
    """``parser.add_argument(flag, type=Path, **kwargs)`` for a file the command writes (or, with
    ``directory``, a directory it creates and writes into), checked before the command runs."""
    action = parser.add_argument(flag, type=Path, **kwargs)
    known = parser.get_default(_OUTPUTS) or ()
    parser.set_defaults(**{_OUTPUTS: (*known, (action.dest, flag, directory))})


def _outputs(args: argparse.Namespace) -> list[tuple[str, Path, bool]]:
    chosen = [(flag, getattr(args, dest), is_dir) for dest, flag, is_dir in vars(args).get(
        _OUTPUTS, ())]  # fmt: skip
    return [(flag, Path(path), is_dir) for flag, path, is_dir in chosen if path is not None]


def _existing_ancestor(path: Path) -> Path:
    current = path.absolute().parent
    while not os.path.lexists(current):
        current = current.parent
    return current


def _problem(path: Path, directory: bool) -> str | None:
    """Why ``path`` cannot be written as a file (or created as a directory), or None."""
    if path.is_dir() and not directory:
        return "is a directory"
    if path.exists() and directory and not path.is_dir():
        return "is not a directory"
    parent = path.absolute().parent
    if not directory and not parent.exists():
        return f"no such directory: {parent}"
    ancestor = parent if parent.exists() else _existing_ancestor(path)
    if not ancestor.is_dir():
        return f"{ancestor} is not a directory"
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return f"{ancestor} is not writable"
    if path.exists() and not os.access(path, os.W_OK):
        return "is not writable"
    return None


def unwritable(args: argparse.Namespace) -> str | None:
    """``--flag PATH: why`` for the first output option of ``args`` that cannot be written."""
    for flag, path, directory in _outputs(args):
        problem = _problem(path, directory)
        if problem is not None:
            return f"{flag} {path}: {problem}"
    return None


def failed_output(error: OSError, args: argparse.Namespace) -> str | None:
    """``--flag PATH: why`` when ``error`` is the failed write of an output of ``args`` (the file
    itself or, for a directory option, a file in it), else None."""
    if error.filename is None:
        return None
    failed = Path(os.fsdecode(error.filename)).absolute()
    for flag, path, directory in _outputs(args):
        target = path.absolute()
        if failed == target or (directory and target in failed.parents):
            return f"{flag} {path}: {error.strerror or error}"
    return None
