"""The one checked resolver: every table path the implementation opens, lists or deletes.

Two kinds of paths reach the file system, and each has one rule here, decided once:

- **Data paths** (``add.path``, ``remove.path``, deletion-vector locations):
  :func:`resolve_data_path`
  turns the URI the log holds into the one canonical location relative to the table root, or
  refuses it (PATH.DATA_FILE). Replay, VACUUM, scans and deletion-vector reads all call it, so a
  path the loader accepts is the same path VACUUM keeps and a scan opens; one that it refuses is
  never live. :func:`data_file` adds the file-system check: no component below the root is a
  symbolic link (PATH.NO_SYMLINKS).
- **Log files**: :func:`open_regular` and :func:`read_regular` open a file without following a
  final symbolic link and without blocking (``O_NONBLOCK``), then accept it only if it is a
  regular file, and read at most a bound (PATH.REGULAR_FILES): a FIFO, a device or a directory at
  a log name is a typed error, never a hang. :func:`check_real_dirs` refuses directories that are
  symbolic links.

OS errors other than "not found" become :class:`~deltaspec.impl.errors.LogAccessError` naming the
table, the version and the file (:func:`access_error`).

This module never imports ``deltaspec.model``.
"""

from __future__ import annotations

import errno
import os
import posixpath
import re
import stat
from collections.abc import Sequence
from typing import BinaryIO

from deltaspec.impl import codec
from deltaspec.impl.actions import AddFile, DeletionVector, RemoveFile
from deltaspec.impl.errors import (
    CorruptLogError,
    LogAccessError,
    LogFileTooLargeError,
    NotRegularFileError,
    UnsafePathError,
)
from deltaspec.rules import rule

__all__ = [
    "SUSPICIOUS_PATH",
    "access_error",
    "canonical_path",
    "check_deletion_vector",
    "check_file_action",
    "check_real_dirs",
    "data_file",
    "is_suspicious",
    "open_regular",
    "read_regular",
    "resolve_data_path",
]

_O_NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
_O_BINARY: int = getattr(os, "O_BINARY", 0)
_O_CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)

# --- data paths (PATH.DATA_FILE) -----------------------------------------------------------------

_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
SUSPICIOUS_PATH = (
    r"^$|^/|^[A-Za-z][A-Za-z0-9+.\-]*:|(?:^|/)\.\.?(?:/|$)|//|^_delta_log(?:/|$)|\x00"
    r"|%(?:2[eEfF]|5[cCfF]|00)|%(?:$|[^0-9A-Fa-f]|[0-9A-Fa-f](?:$|[^0-9A-Fa-f]))"
)
"""A raw path that :func:`resolve_data_path` must look at: empty, absolute, a URI, a ``.``/``..``
or empty segment, ``_delta_log``, NUL, an escape decoding to ``.``, ``/``, ``\\``, ``_`` or NUL,
or a ``%`` that is not an escape. Every other path is already canonical and safe (writers produce
``%20``, ``%25``, ``%3A``...), which lets replay check millions of paths with one regex."""
_SUSPICIOUS = re.compile(SUSPICIOUS_PATH)


def is_suspicious(path: str) -> bool:
    """Whether ``path`` needs :func:`resolve_data_path` (else it is its own canonical form)."""
    return _SUSPICIOUS.search(path) is not None


@rule("PATH.DATA_FILE")
def resolve_data_path(table_root: str, path: str) -> str:
    """The canonical location of a data file named by ``path``, relative to the table root,
    decoded, ``/``-separated; ValueError saying why for a path that is not safe (PATH.DATA_FILE).

    The protocol allows a relative URI or an absolute one (ACTION.ADD). Safe means: it decodes
    (no malformed escape such as a bare ``%``, no NUL), a relative one has no ``..`` segment, an
    absolute one (``/x`` or ``file:/x``) lies inside the table root, it is not the root itself,
    and it is not inside ``_delta_log``. Any other URI scheme (``s3:``, ``hdfs:``...) names a
    file outside a local table. ``.`` segments and repeated ``/`` are dropped, as
    ``java.net.URI.normalize`` drops them. Nothing here touches the file system, except that an
    absolute path is also compared with the root's real path (the root itself may be a link).
    """
    scheme = _URI_SCHEME.match(path)
    if scheme is not None:
        if scheme[0].lower() != "file:":
            raise ValueError(f"a {scheme[0]} URI names a file outside the table")
        rest = path[scheme.end() :]
        if rest.startswith("//"):
            authority, _, rest = rest[2:].partition("/")
            if authority not in ("", "localhost"):
                raise ValueError(f"a file URI on host {authority!r} is outside the table")
            rest = "/" + rest
        if not rest.startswith("/"):
            raise ValueError("a relative file: URI")
        path = rest
    decoded = codec.decode_path(path)
    if not decoded:
        raise ValueError("an empty path")
    if "\0" in decoded:
        raise ValueError("a NUL character in the path")
    if decoded.startswith("/"):
        target = posixpath.normpath(decoded)
        for root in {posixpath.normpath(table_root), os.path.realpath(table_root)}:
            if target.startswith(root.rstrip("/") + "/"):
                relative = target[len(root.rstrip("/")) + 1 :]
                break
        else:
            raise ValueError("an absolute path outside the table root")
    else:
        if ".." in decoded.split("/"):
            raise ValueError("a '..' segment leaves the table root")
        relative = posixpath.normpath(decoded)
    if relative in ("", ".") or relative.split("/", 1)[0] == "_delta_log":
        raise ValueError("a path into _delta_log or the table root itself")
    return relative


def data_file(table_root: str, relative: str, *, version: int | None = None) -> str:
    """The absolute location of the data file at canonical ``relative`` (a
    :func:`resolve_data_path` result), after checking that no directory between the root and it is
    a symbolic link (PATH.NO_SYMLINKS): UnsafePathError otherwise. The file itself is opened by the
    caller with ``O_NOFOLLOW`` (:func:`open_regular`) or deleted only if it is a regular file."""
    parts = relative.split("/")
    check_real_dirs(table_root, parts[:-1], version=version, file=relative)
    return os.path.join(table_root, *parts)


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


def canonical_path(path: str) -> str:
    """The key a relative ``add``/``remove`` path is known by (SNAPSHOT.CANONICAL_PATH):
    ``.`` segments and empty segments (``//``) dropped, as delta-spark's
    ``new Path(new URI(path))`` drops them, so ``p/x``, ``./p/x`` and ``p//x`` are one file.
    Absolute paths and URIs are returned as they are: delta-spark keys them apart from the
    relative spelling too (it qualifies them with the file system instead)."""
    if path.startswith("/") or _URI_SCHEME.match(path) is not None:
        return path
    segments = [segment for segment in path.split("/") if segment not in ("", ".")]
    return "/".join(segments) if segments else path


_INT64_MAX = 2**63 - 1


def check_file_action(
    action: AddFile | RemoveFile, table: str, version: int | None, file: str | None
) -> str:
    """Refuse an add/remove whose path is unsafe (PATH.DATA_FILE) or whose size or
    modification time is negative or beyond int64; returns its canonical path
    (SNAPSHOT.CANONICAL_PATH). The same check for a reader and for the write boundary."""
    kind = "add" if isinstance(action, AddFile) else "remove"
    path = action.path
    if is_suspicious(path):
        try:
            resolve_data_path(table, path)
        except ValueError as exc:
            raise UnsafePathError(
                f"{kind}.path {path[:200]!r}: {exc}", table=table, version=version, file=file
            ) from None
        path = canonical_path(path)
    dv = action.deletion_vector
    if dv is not None and dv.storage_type in ("u", "p"):
        check_deletion_vector(dv, table, version, file)
    numbers = [("size", action.size)]
    if isinstance(action, AddFile):
        numbers.append(("modificationTime", action.modification_time))
    for name, value in numbers:
        if value is not None and not 0 <= value <= _INT64_MAX:
            raise CorruptLogError(
                f"{kind}.{name} is out of range ({value}) for {action.path[:200]!r}",
                table=table,
                version=version,
                file=file,
            )
    return path


def open_data_file(table_root: str, path: str, *, version: int | None = None) -> BinaryIO:
    """The data or deletion-vector file a log ``path`` names, opened for reading through the
    whole resolver: PATH.DATA_FILE (UnsafePathError for a path the rule refuses),
    PATH.NO_SYMLINKS, PATH.REGULAR_FILES."""
    try:
        relative = resolve_data_path(table_root, path)
    except ValueError as exc:
        raise UnsafePathError(
            f"path {path[:200]!r}: {exc}", table=table_root, version=version, file=path[:200]
        ) from None
    location = data_file(table_root, relative, version=version)
    return open_regular(location, table=table_root, version=version, file=relative)


def check_deletion_vector(
    dv: DeletionVector, table: str, version: int | None, file: str | None
) -> None:
    """Refuse a deletion vector stored in a file (``u`` or ``p``) whose location the path rule
    refuses (PATH.DATA_FILE): a ``p`` path or a ``u`` prefix leaving the table, or a ``u`` id
    that is not Z85. Checked at load, so such a DV is never live, never opened, never kept."""
    from deltaspec.impl.deletion_vectors import deletion_vector_location  # it imports this module

    try:
        location = deletion_vector_location(dv)
        if location is not None:
            resolve_data_path(table, location)
    except ValueError as exc:
        raise UnsafePathError(
            f"deletionVector {dv.storage_type}:{dv.path_or_inline_dv[:200]!r}: {exc}",
            table=table,
            version=version,
            file=file,
        ) from None
