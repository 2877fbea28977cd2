"""A directory whose file system refuses every write with EROFS, for the tests of what the impl
does on a read-only file system (PATH.REGULAR_FILES: DELTA_LOG_ACCESS_ERROR).

Two ways to get one, the same to the code under test:

- ``kernel``: a tmpfs mounted on the directory and remounted read-only, the kernel's own
  refusals. Only a process that may mount gets one (root with CAP_SYS_ADMIN, as the CI
  container runs); elsewhere it is skipped.
- ``audit``: Python's audit events for every file-system write (an open for writing, unlink,
  rename, link, mkdir, rmdir...) raise ``OSError(EROFS)`` for paths under the directory, as the
  kernel does: even the removal of a file that does not exist is refused with EROFS, not ENOENT.
  It runs everywhere; it cannot stop what C++ code writes (pyarrow), which the impl never does
  by a path.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

MODES = ("kernel", "audit")

_WRITE_EVENTS = frozenset(
    {"os.remove", "os.rename", "os.link", "os.symlink", "os.mkdir", "os.rmdir", "os.truncate",
     "os.chmod", "os.utime", "shutil.rmtree", "shutil.move"}
)  # fmt: skip
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_refusing: list[str] = []
"""The directories (with a trailing separator) under which the audit hook refuses writes."""


def _is_write(event: str, args: tuple[Any, ...]) -> bool:
    if event in _WRITE_EVENTS:
        return True
    if event != "open" or len(args) < 3:
        return False
    mode, flags = args[1], args[2]
    writing_mode = isinstance(mode, str) and any(c in mode for c in "wax+")
    return writing_mode or (isinstance(flags, int) and bool(flags & _WRITE_FLAGS))


def _paths(args: tuple[Any, ...]) -> list[str]:
    found = []
    for arg in args[:2]:
        if isinstance(arg, str | bytes | os.PathLike):
            found.append(os.path.abspath(os.fsdecode(arg)))
    return found


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _refusing or not _is_write(event, args):
        return
    for path in _paths(args):
        if any((path + os.sep).startswith(root) for root in _refusing):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)


sys.addaudithook(_audit)


def _run(*command: str) -> None:
    subprocess.run(command, check=True, capture_output=True, timeout=30)


class ReadOnlyDirectory:
    """``path``, writable until :meth:`read_only` makes its file system refuse every write."""

    def __init__(self, path: Path, mode: str) -> None:
        self.path, self.mode = path, mode

    @contextmanager
    def read_only(self) -> Iterator[None]:
        if self.mode == "kernel":
            _run("mount", "-o", "remount,ro", str(self.path))
            try:
                yield
            finally:
                _run("mount", "-o", "remount,rw", str(self.path))
            return
        _refusing.append(str(self.path) + os.sep)
        try:
            yield
        finally:
            _refusing.remove(str(self.path) + os.sep)


@contextmanager
def read_only_directory(path: Path, mode: str) -> Iterator[ReadOnlyDirectory]:
    """A new empty directory at ``path`` that can be made read-only (see the module); ``kernel``
    is skipped where this process may not mount."""
    path.mkdir()
    if mode == "audit":
        yield ReadOnlyDirectory(path, mode)
        return
    try:
        _run("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(path))
    except (OSError, subprocess.SubprocessError) as refused:
        pytest.skip(f"this process may not mount a tmpfs: {refused}")
    try:
        yield ReadOnlyDirectory(path, mode)
    finally:
        _run("umount", "-l", str(path))
