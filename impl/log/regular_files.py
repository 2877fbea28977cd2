"""Opening the table's files safely: regular files only, never through a symbolic link, read
up to a bound (PATH.REGULAR_FILES, PATH.NO_SYMLINKS).

:func:`open_regular` and :func:`read_regular` open a file without following a final symbolic
link and without blocking (``O_NONBLOCK``), then accept it only if it is a regular file, and read
at most a bound: a FIFO, a device or a directory at a log name is a typed error, never a hang.
:func:`check_real_dirs` refuses directories that are symbolic links. The log store opens every log
file through them; :mod:`deltaspec.impl.table.paths` opens data and deletion-vector files through
them once their paths are resolved.

OS errors other than "not found" become :class:`~deltaspec.impl.errors.LogAccessError` naming the
table, the version and the file (:func:`access_error`).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from typing import BinaryIO

from deltaspec.rules import rule

from ..errors import (
    LogAccessError,
    LogFileTooLargeError,
    NotRegularFileError,
    UnsafePathError,
)

__all__ = ["access_error", "check_real_dirs", "open_regular", "read_regular"]

_O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
_O_BINARY: int = getattr(os, "O_BINARY", 0)
_O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)


@rule("PATH.NO_SYMLINKS")
def check_real_dirs(
    table_root: str, parts: Sequence[str], *, version: int | None = None, file: str | None = None
) -> None:
    """UnsafePathError if any of ``root/parts[0]``, ``root/parts[0]/parts[1]``... is a symbolic
    link (PATH.NO_SYMLINKS); missing directories are fine (what lies below them is missing)."""
    directory = table_root
    for part in parts:
        directory = os.path.join(directory, part)
        if os.path.islink(directory):
            raise UnsafePathError(
                "a directory that is a symbolic link is never followed (it could point outside "
                "the table)",
                table=table_root,
                version=version,
                file=file or os.path.relpath(directory, table_root),
            )


# --- regular files, bounded reads (PATH.REGULAR_FILES) -------------------------------------------


def access_error(
    exc: OSError, *, table: str, version: int | None = None, file: str | None = None
) -> LogAccessError:
    """The typed error for an OSError that is not "not found" (permissions, read-only file
    system, I/O error)."""
    reason = os.strerror(exc.errno) if exc.errno else str(exc)
    return LogAccessError(
        f"the file system refused access: {reason}", table=table, version=version, file=file
    )


@rule("PATH.REGULAR_FILES")
def open_regular(
    path: str, *, table: str, version: int | None = None, file: str | None = None
) -> BinaryIO:
    """``path`` opened for reading, only if it is a regular file (PATH.REGULAR_FILES).

    A final symbolic link is never followed (UnsafePathError); a directory, FIFO, device or socket
    is NotRegularFileError (the open itself never blocks: ``O_NONBLOCK``); FileNotFoundError
    passes through; any other OSError is LogAccessError.
    """
    flags = os.O_RDONLY | _O_BINARY | _O_NOFOLLOW | _O_NONBLOCK | _O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsafePathError(
                "a symbolic link in the table is never followed (it could point outside it)",
                table=table,
                version=version,
                file=file,
            ) from None
        if exc.errno in (errno.EISDIR, errno.ENXIO):
            raise NotRegularFileError(
                "not a regular file", table=table, version=version, file=file
            ) from None
        raise access_error(exc, table=table, version=version, file=file) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(
                f"not a regular file ({_kind(mode)})", table=table, version=version, file=file
            )
        if _O_NONBLOCK:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(
    path: str,
    *,
    table: str,
    version: int | None = None,
    file: str | None = None,
    limit: int | None = None,
) -> bytes:
    """The whole content of the regular file ``path`` (:func:`open_regular`), at most ``limit``
    bytes: a longer (or sparse, or growing) file is LogFileTooLargeError, read no further."""
    with open_regular(path, table=table, version=version, file=file) as handle:
        try:
            data = handle.read() if limit is None else handle.read(limit + 1)
        except OSError as exc:
            raise access_error(exc, table=table, version=version, file=file) from None
    if limit is not None and len(data) > limit:
        raise LogFileTooLargeError(
            f"larger than {limit} bytes", table=table, version=version, file=file
        )
    return data


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a file"
