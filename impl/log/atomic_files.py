"""Atomic file creation on a local POSIX file system: the primitives
:class:`~deltaspec.impl.log.local_store.LocalLogStore` publishes log files with
(LOG.PUT_IF_ABSENT, LOG.ATOMIC_VISIBILITY).

A file is first written whole to a temporary file (:func:`write_temp`, fsynced unless the store
is not durable), then published under its final name by ``link(2)`` or, where the file system has
no hard links (:data:`NO_HARD_LINKS`), by ``renameat2(RENAME_NOREPLACE)``
(:func:`rename_noreplace`); both fail with EEXIST when the name exists. :func:`fsync_dir` makes
the new directory entry durable.
"""

from __future__ import annotations

import ctypes
import errno
import os

from . import crashpoints

__all__ = [
    "NO_HARD_LINKS",
    "NO_NOREPLACE_RENAME",
    "fsync_dir",
    "rename_noreplace",
    "write_file",
    "write_temp",
]

# errno values with which os.link says "this file system has no hard links" rather than
# "this particular link failed"; on them LocalLogStore falls back to O_CREAT | O_EXCL.
NO_HARD_LINKS = frozenset(
    code
    for code in (
        getattr(errno, "EPERM", None),
        getattr(errno, "ENOTSUP", None),
        getattr(errno, "EOPNOTSUPP", None),
        getattr(errno, "ENOSYS", None),
        getattr(errno, "EMLINK", None),
        getattr(errno, "EXDEV", None),
    )
    if code is not None
)
# errno values with which renameat2(RENAME_NOREPLACE) says "not on this file system / kernel".
NO_NOREPLACE_RENAME = frozenset(
    code
    for code in (
        getattr(errno, "EINVAL", None),
        getattr(errno, "ENOSYS", None),
        getattr(errno, "ENOTSUP", None),
        getattr(errno, "EOPNOTSUPP", None),
    )
    if code is not None
)
_AT_FDCWD = -100
_RENAME_NOREPLACE = 1


def _load_renameat2() -> object | None:
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), "renameat2", None)
    except OSError:
        return None


_RENAMEAT2 = _load_renameat2()


def rename_noreplace(source: str, target: str) -> None:
    """``renameat2(source, target, RENAME_NOREPLACE)``: atomic, and FileExistsError if
    ``target`` exists; OSError(ENOSYS) where libc has no renameat2."""
    if _RENAMEAT2 is None:
        raise OSError(errno.ENOSYS, "renameat2 is not available", target)
    result = _RENAMEAT2(  # type: ignore[operator]
        _AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), _RENAME_NOREPLACE
    )
    if result != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), target)


# errno values with which fsync of a directory says "not supported here"; durability of the
# directory entry is then whatever the file system gives, and is not reported as a failure.
_DIR_FSYNC_UNSUPPORTED = frozenset(
    code
    for code in (
        getattr(errno, "EINVAL", None),
        getattr(errno, "ENOTSUP", None),
        getattr(errno, "EOPNOTSUPP", None),
        getattr(errno, "EBADF", None),
        getattr(errno, "EISDIR", None),
        getattr(errno, "EACCES", None),
        getattr(errno, "EPERM", None),
    )
    if code is not None
)


def write_temp(path: str, data: bytes, kind: str, durable: bool = True) -> None:
    """:func:`write_file` (fsynced only if ``durable``), or, when crash points are active, the
    same in two halves with the crash point ``<kind>.temp_partial`` between them."""
    if not crashpoints.active():
        if durable:
            write_file(path, data)
        else:
            with open(path, "xb") as file:
                file.write(data)
        return
    with open(path, "xb") as file:
        half = len(data) // 2
        file.write(data[:half])
        file.flush()
        crashpoints.reached(f"{kind}.temp_partial")
        file.write(data[half:])
        file.flush()
        os.fsync(file.fileno())


def write_file(path: str, data: bytes) -> None:
    """Create ``path`` exclusively with ``data``, flushed and fsynced."""
    with open(path, "xb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def fsync_dir(directory: str) -> None:
    """fsync a directory so that entries created in it survive a crash (POSIX only)."""
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError as exc:
        if exc.errno in _DIR_FSYNC_UNSUPPORTED:
            return
        raise
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _DIR_FSYNC_UNSUPPORTED:
            raise
    finally:
        os.close(fd)
