"""The log store: the storage under ``_delta_log/`` and the three guarantees the log rests on.

Everything about concurrency in Delta rests on three properties of the storage (spec/log.md):

- LOG.PUT_IF_ABSENT — creating a version file is exclusive: of several concurrent writers of one
  name exactly one succeeds, the others are told that the file exists;
- LOG.ATOMIC_VISIBILITY — a file is seen whole or not at all;
- LOG.LISTING — a listing is sorted by name and shows every file whose creation completed before
  the listing started.

:class:`LogStore` states them as the contract every store must keep; :class:`LocalLogStore` keeps
them on a local POSIX file system, across threads and processes. Names passed to a store are
relative to the ``_delta_log`` directory (``00000000000000000000.json``, ``_last_checkpoint``,
``_sidecars/<uuid>.parquet``); the store knows nothing about what the names mean beyond
LOG.COMMIT_FILE_NAME (to put the version into a :class:`VersionExistsError`) — recognising
commits, checkpoints and checksums among the listed names is :mod:`deltaspec.impl.log.names`'
job.
"""

from __future__ import annotations

import abc
import contextlib
import ctypes
import errno
import io
import os
import uuid
from dataclasses import dataclass
from typing import BinaryIO

from deltaspec.impl.errors import UnsafePathError, UnsupportedLogStoreError, VersionExistsError
from deltaspec.impl.log import crashpoints
from deltaspec.impl.log.names import (
    LAST_CHECKPOINT,
    LOG_DIR,
    SIDECARS_DIR,
    is_checksum_name,
    is_temp_name,
    leading_version,
    parse_commit_name,
)
from deltaspec.impl.table import paths
from deltaspec.rules import rule

__all__ = [
    "LAST_CHECKPOINT_MAX_BYTES",
    "TEMP_FILE_SAFETY_MS",
    "FileInfo",
    "LocalLogStore",
    "LogStore",
]

LAST_CHECKPOINT_MAX_BYTES = 1024 * 1024
"""The most of ``_last_checkpoint`` ever read: the hint is a few hundred bytes of JSON (even with
a v2 checkpoint's inlined metadata), so a bigger (or sparse, or endless) file is not read whole."""

# errno values with which os.link says "this file system has no hard links" rather than
# "this particular link failed"; on them LocalLogStore falls back to O_CREAT | O_EXCL.
_NO_HARD_LINKS = frozenset(
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
_NO_NOREPLACE_RENAME = frozenset(
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


def _rename_noreplace(source: str, target: str) -> None:
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


_O_BINARY: int = getattr(os, "O_BINARY", 0)

TEMP_FILE_SAFETY_MS = 60 * 60 * 1000
"""A temporary file younger than this (one hour) may belong to a live writer and is never swept."""


def _check_name(name: str) -> list[str]:
    """The components of a valid log file name; ValueError for anything else.

    A valid name is one file name, or one subdirectory and a file name (``_sidecars/x.parquet``),
    separated by ``/``; no component is empty, ``.`` or ``..``; no backslash or NUL; not a
    temporary-file name (it could never be listed).
    """
    if not isinstance(name, str):
        raise ValueError(f"a log file name is a str, not {name!r}")
    parts = name.split("/")
    if (
        not 1 <= len(parts) <= 2
        or any(part in ("", ".", "..") for part in parts)
        or "\\" in name
        or "\0" in name
    ):
        raise ValueError(f"not a file name relative to {LOG_DIR}/: {name!r}")
    if is_temp_name(name):
        raise ValueError(f"{name!r} is reserved for the store's temporary files")
    return parts


@dataclass(frozen=True, slots=True)
class FileInfo:
    """A file in the log as a listing reports it (LOG.LISTING).

    ``name`` is relative to the ``_delta_log`` directory and may contain one subdirectory
    (``_sidecars/x.parquet``); ``size`` is in bytes; ``modification_time`` is in milliseconds
    since the epoch, as Delta's ``modificationTime`` fields are.
    """

    name: str
    size: int
    modification_time: int


class LogStore(abc.ABC):
    """The storage of one table's ``_delta_log`` directory.

    Every implementation guarantees, across all threads and processes that use the same table
    (this is what the rest of deltaspec.impl relies on and what
    tests/impl/test_impl_storage.py checks):

    1. Atomic visibility (LOG.ATOMIC_VISIBILITY). A reader never sees a partial file: from the
       moment a name written by :meth:`write_new` or :meth:`write_overwrite` can be read or
       listed, its content is complete and final (for ``_last_checkpoint``: the complete old or
       the complete new content).
    2. Mutual exclusion (LOG.PUT_IF_ABSENT). :meth:`write_new` creates a name for exactly one
       writer: when several threads or processes write the same name concurrently, exactly one
       returns and every other one raises :class:`VersionExistsError`; an existing file is never
       overwritten.
    3. Consistent listing (LOG.LISTING). :meth:`list_from` returns names in ascending
       lexicographic order, never the store's temporary files, and includes every file whose
       :meth:`write_new` returned (or raised :class:`VersionExistsError`, which proves that the
       file exists) before the listing started.

    Names are relative to ``_delta_log``: a file name, or ``<subdir>/<file name>`` for the one
    level of subdirectories the log uses (``_sidecars``). Invalid names raise ValueError.
    """

    @property
    @abc.abstractmethod
    def table_path(self) -> str:
        """The table root (the directory that contains ``_delta_log``), as errors report it."""

    @abc.abstractmethod
    def read(self, name: str) -> bytes:
        """The whole content of ``name``; FileNotFoundError if it does not exist.
        ``_last_checkpoint`` is read only up to :data:`LAST_CHECKPOINT_MAX_BYTES`
        (LogFileTooLargeError past it, PATH.REGULAR_FILES)."""

    def open_file(self, name: str) -> BinaryIO:
        """``name`` as a binary file object (for pyarrow); default: its bytes in memory."""
        return io.BytesIO(self.read(name))

    @abc.abstractmethod
    def write_new(self, name: str, data: bytes) -> None:
        """Create ``name`` with content ``data`` only if no file of that name exists.

        Put-if-absent (LOG.PUT_IF_ABSENT) with atomic visibility (LOG.ATOMIC_VISIBILITY): if the
        name exists, raise :class:`VersionExistsError` carrying the table path, the file name and,
        for a commit file name (LOG.COMMIT_FILE_NAME), its version. Any other exception means the
        outcome is unknown: the file may or may not have been created.
        """

    @abc.abstractmethod
    def write_overwrite(self, name: str, data: bytes) -> None:
        """Replace the content of ``name`` atomically (readers see the old or the new content).

        Allowed only for ``_last_checkpoint``: a commit file is never overwritten
        (LOG.PUT_IF_ABSENT), so any other name raises ValueError.
        """

    @abc.abstractmethod
    def list_from(self, start: str = "") -> list[FileInfo]:
        """The files directly in ``_delta_log`` whose names are ``>= start``, sorted (LOG.LISTING).

        Does not recurse: files in subdirectories (``_sidecars/``) are listed only by
        :meth:`list_dir`. An absent ``_delta_log`` lists as empty (LOG.NEW_TABLE).
        """

    def list_names(self) -> list[str]:
        """The names :meth:`list_from` lists from the start, without sizes or times: a listing
        that costs no ``stat`` per file where the store can tell (log cleanup, RETENTION.LOG)."""
        return [info.name for info in self.list_from("")]

    def stat(self, name: str) -> FileInfo | None:
        """``name`` as :meth:`list_from` would list it, or None when it is not there."""
        return next((info for info in self.list_from(name) if info.name == name), None)

    @abc.abstractmethod
    def list_dir(self, subdir: str) -> list[FileInfo]:
        """The files in ``_delta_log/<subdir>`` (for ``_sidecars``), sorted, named ``<subdir>/<f>``.

        Same guarantees as :meth:`list_from` (LOG.LISTING); an absent subdirectory lists as empty.
        """

    @abc.abstractmethod
    def delete(self, name: str) -> None:
        """Delete ``name`` (log cleanup, RETENTION.LOG); a missing file is not an error."""

    @abc.abstractmethod
    def exists(self, name: str) -> bool:
        """Whether ``name`` exists in the log."""

    @abc.abstractmethod
    def local_path(self, name: str) -> str | None:
        """A file-system path that pyarrow can open for ``name``, or None for non-local stores."""

    def sweep_temp_files(self, older_than_ms: int) -> list[str]:
        """Delete the temporary files left by killed writers, last modified before
        ``older_than_ms`` (ms since the epoch); returns their names. Stores without temporary
        files keep this default, which does nothing."""
        return []


class LocalLogStore(LogStore):
    """A :class:`LogStore` on a local (POSIX) file system, safe across threads and processes.

    :meth:`write_new` writes the data to a temporary file ``.<name>.<uuid4 hex>.tmp`` in the same
    directory, flushes and fsyncs it, then hard-links it to the final name. ``link(2)`` fails with
    EEXIST if the final name exists, so the link is an atomic create-if-absent
    (LOG.PUT_IF_ABSENT), and the final name appears with its complete content
    (LOG.ATOMIC_VISIBILITY). The directory is fsynced so the new entry survives a crash, and the
    temporary file is always removed, whether the write succeeded or not. Version checksum files
    (``<v>.crc``) are the exception: advisory (CHECKSUM.WRITE, CHECKSUM.VERIFY), they are
    published the same way but fsynced neither as a file nor as a directory entry. A crash can
    lose one, or leave a prefix of its JSON, which no reader accepts as a checksum (an absent or
    unreadable ``.crc`` is ignored); the commit it describes was made durable before it.
    Temporary files are never listed (LOG.LISTING); a process killed between creating and
    removing one leaves it behind, hidden from listings.

    File systems without hard links (link fails with EPERM, ENOTSUP, ...) publish the temporary
    file with ``renameat2(RENAME_NOREPLACE)`` instead, which is just as atomic and exclusive; one
    that has neither is refused with :class:`UnsupportedLogStoreError` rather than written in place,
    where a writer killed mid-write would leave a torn commit that blocks every reader and writer.

    Listings come straight from the directory (``scandir``), which on a local file system is
    read-after-write consistent: a file whose link returned is in every later listing.

    ``durable=False`` skips every fsync, as delta-rs's local object store and Hadoop's local file
    system (delta-spark's default log store on ``file:``) do: put-if-absent and atomic
    visibility are unchanged, only a machine crash (not a killed process) may then lose a commit
    that was reported. The default is durable.
    """

    def __init__(self, table_root: str | os.PathLike[str], *, durable: bool = True) -> None:
        self._table_path = os.path.abspath(os.fspath(table_root))
        self._log_dir = os.path.join(self._table_path, LOG_DIR)
        self._hard_links = True
        self._durable = durable

    @property
    def durable(self) -> bool:
        """Whether writes are fsynced (file and directory entry) before they return."""
        return self._durable

    def __repr__(self) -> str:
        return f"LocalLogStore({self._table_path!r})"

    @property
    def table_path(self) -> str:
        return self._table_path

    @property
    def log_dir(self) -> str:
        """The absolute path of the ``_delta_log`` directory."""
        return self._log_dir

    def _path(self, name: str) -> str:
        parts = _check_name(name)
        self._check_dirs(parts)
        return os.path.join(self._log_dir, *parts)

    # --- reading -----------------------------------------------------------------------------

    def read(self, name: str) -> bytes:
        """The content of ``name``, a regular file (PATH.REGULAR_FILES): a symbolic link is
        UnsafePathError, a directory, FIFO or device NotRegularFileError, other OS errors
        LogAccessError; ``_last_checkpoint`` is read up to :data:`LAST_CHECKPOINT_MAX_BYTES`."""
        return paths.read_regular(
            self._path(name),
            table=self._table_path,
            version=leading_version(name),
            file=name,
            limit=LAST_CHECKPOINT_MAX_BYTES if name == LAST_CHECKPOINT else None,
        )

    def open_file(self, name: str) -> BinaryIO:
        """``name`` opened for reading, under the same checks as :meth:`read`: what pyarrow
        gets instead of a path, so it never opens anything itself."""
        return paths.open_regular(
            self._path(name), table=self._table_path, version=leading_version(name), file=name
        )

    def exists(self, name: str) -> bool:
        return os.path.lexists(self._path(name))  # a link is an entry, never followed

    def local_path(self, name: str) -> str | None:
        path = self._path(name)
        if os.path.islink(path):
            raise self._symlink_error(name)
        return path

    def _symlink_error(self, name: str) -> UnsafePathError:
        return UnsafePathError(
            "a symbolic link in the log is never followed (it could point outside the table)",
            table=self._table_path,
            version=leading_version(name),
            file=name,
        )

    def _check_dirs(self, parts: list[str]) -> None:
        """Refuse a ``_delta_log`` (or ``_sidecars``) directory that is a symbolic link
        (PATH.NO_SYMLINKS)."""
        paths.check_real_dirs(self._table_path, [LOG_DIR, *(p for p in parts[:-1] if p)])

    @rule("LOG.LISTING")
    def list_from(self, start: str = "") -> list[FileInfo]:
        self._check_dirs([""])
        return self._scan(self._log_dir, "", start)

    def list_names(self) -> list[str]:
        if type(self).list_from is not LocalLogStore.list_from:
            return super().list_names()  # a subclass that shapes listings: keep its view
        self._check_dirs([""])
        try:
            with os.scandir(self._log_dir) as iterator:
                names = [
                    e.name
                    for e in iterator
                    if not is_temp_name(e.name)
                    and (
                        e.is_file(follow_symlinks=False)
                        or e.is_symlink()
                        or leading_version(e.name) is not None
                    )
                ]
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(names)

    def stat(self, name: str) -> FileInfo | None:
        if type(self).list_from is not LocalLogStore.list_from:
            return super().stat(name)
        try:
            stat = os.lstat(self._path(name))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return FileInfo(name, stat.st_size, stat.st_mtime_ns // 1_000_000)

    def list_dir(self, subdir: str) -> list[FileInfo]:
        if len(_check_name(subdir)) != 1:
            raise ValueError(f"not a subdirectory of {LOG_DIR}/: {subdir!r}")
        self._check_dirs([subdir, ""])
        return self._scan(os.path.join(self._log_dir, subdir), subdir + "/")

    def sweep_temp_files(self, older_than_ms: int) -> list[str]:
        """Delete ``.<name>.<uuid>.tmp`` files in ``_delta_log`` and ``_delta_log/_sidecars``
        last modified before ``older_than_ms``: the leftovers of writers killed between creating
        and removing them. A live writer's temporary file is younger than
        :data:`TEMP_FILE_SAFETY_MS`; callers pass ``now - TEMP_FILE_SAFETY_MS`` or earlier. Even
        a temporary file swept under a live writer only makes its write fail before the link,
        which the writer sees as an ordinary failure (the commit was not made)."""
        self._check_dirs([""])
        swept: list[str] = []
        sidecars = os.path.join(self._log_dir, SIDECARS_DIR)
        for directory, prefix in ((self._log_dir, ""), (sidecars, SIDECARS_DIR + "/")):
            if os.path.islink(directory):
                continue  # a symlinked _sidecars is never followed (PATH.NO_SYMLINKS)
            try:
                with os.scandir(directory) as iterator:
                    entries = [e for e in iterator if is_temp_name(e.name)]
            except (FileNotFoundError, NotADirectoryError):
                continue
            for entry in sorted(entries, key=lambda e: e.name):
                try:
                    if not entry.is_file(follow_symlinks=False):
                        continue
                    if entry.stat(follow_symlinks=False).st_mtime_ns // 1_000_000 >= older_than_ms:
                        continue
                    os.unlink(entry.path)
                except FileNotFoundError:
                    continue  # its writer (or another sweeper) removed it
                swept.append(prefix + entry.name)
                crashpoints.reached("cleanup.mid_temp_sweep")
        return swept

    @staticmethod
    def _scan(directory: str, prefix: str, start: str = "") -> list[FileInfo]:
        """The regular files of ``directory`` except temporary files, sorted by name, from the
        name ``start`` on (names before it are not even stat'ed)."""
        infos: list[FileInfo] = []
        try:
            with os.scandir(directory) as iterator:
                entries = [e for e in iterator if prefix + e.name >= start]
        except (FileNotFoundError, NotADirectoryError):
            return []
        for entry in entries:
            if is_temp_name(entry.name):
                continue
            try:
                # a symbolic link is listed as itself (lstat), never followed: reading it raises
                # UnsafePathError, so a planted link cannot pull in a file outside the table; a
                # directory, FIFO or device at a log file's name is listed too, and reading it
                # raises NotRegularFileError (PATH.REGULAR_FILES) instead of hiding a version
                if not (
                    entry.is_file(follow_symlinks=False)
                    or entry.is_symlink()
                    or leading_version(entry.name) is not None
                ):
                    continue
                stat = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # deleted (log cleanup) between readdir and stat
            infos.append(FileInfo(prefix + entry.name, stat.st_size, stat.st_mtime_ns // 1_000_000))
        infos.sort(key=lambda info: info.name)
        return infos

    # --- writing -----------------------------------------------------------------------------

    @rule("LOG.PUT_IF_ABSENT", "LOG.ATOMIC_VISIBILITY")
    def write_new(self, name: str, data: bytes) -> None:
        _check_data(data)
        final = self._path(name)
        directory = os.path.dirname(final)
        try:
            self._ensure_dir(directory)
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise
            # a read-only or unwritable table: nothing was written, so not an unknown outcome
            raise paths.access_error(exc, table=self._table_path, file=name) from None
        if os.path.lexists(final):
            # a lost race known before writing: no temporary file, no fsync (the link below
            # stays the one that decides when the name appears between this check and it)
            exists = FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), final)
            raise self._exists_error(name) from exists
        temp = os.path.join(directory, f".{os.path.basename(final)}.{uuid.uuid4().hex}.tmp")
        kind = crashpoints.file_kind(name)
        durable = self._durable and not is_checksum_name(name)
        try:
            _write_temp(temp, data, kind, durable)
            crashpoints.reached(f"{kind}.after_temp")
            self._publish(name, temp, final)
            crashpoints.reached(f"{kind}.after_link")
            if durable:
                _fsync_dir(directory)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)

    def _publish(self, name: str, temp: str, final: str) -> None:
        """Make the complete ``temp`` visible as ``final`` only if ``final`` does not exist:
        ``link(2)``, or where the file system has no hard links, ``renameat2`` with
        ``RENAME_NOREPLACE``; both are atomic and fail with EEXIST (LOG.PUT_IF_ABSENT,
        LOG.ATOMIC_VISIBILITY). A file system with neither is refused (UnsupportedLogStoreError):
        writing the final name in place would let a killed writer leave a torn commit."""
        if self._hard_links:
            try:
                os.link(temp, final)
                return
            except FileExistsError as exc:
                raise self._exists_error(name) from exc
            except OSError as exc:
                if exc.errno not in _NO_HARD_LINKS:
                    raise
                self._hard_links = False
        try:
            _rename_noreplace(temp, final)
        except FileExistsError as exc:
            raise self._exists_error(name) from exc
        except OSError as exc:
            if exc.errno not in _NO_NOREPLACE_RENAME:
                raise
            raise UnsupportedLogStoreError(
                "the file system has neither hard links nor renameat2(RENAME_NOREPLACE): no "
                f"atomic put-if-absent is possible here ({os.strerror(exc.errno or 0)})",
                table=self._table_path,
                version=parse_commit_name(name),
                file=name,
            ) from None

    def write_overwrite(self, name: str, data: bytes) -> None:
        if name != LAST_CHECKPOINT:
            raise ValueError(
                f"only {LAST_CHECKPOINT} may be overwritten, not {name!r} (LOG.PUT_IF_ABSENT)"
            )
        _check_data(data)
        final = self._path(name)
        self._ensure_dir(self._log_dir)
        temp = os.path.join(self._log_dir, f".{name}.{uuid.uuid4().hex}.tmp")
        try:
            _write_temp(temp, data, "last_checkpoint", self._durable)
            crashpoints.reached("last_checkpoint.after_temp")
            os.replace(temp, final)
            if self._durable:
                _fsync_dir(self._log_dir)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)

    def delete(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._path(name))

    # --- helpers -----------------------------------------------------------------------------

    def _exists_error(self, name: str) -> VersionExistsError:
        return VersionExistsError(
            "File already exists",
            table=self._table_path,
            version=parse_commit_name(name),
            file=name,
        )

    def _ensure_dir(self, directory: str) -> None:
        """Create ``directory`` (and ``_delta_log``) if needed, fsyncing each new entry's parent."""
        if os.path.isdir(directory):
            return
        parent = os.path.dirname(directory)
        if parent != directory:
            self._ensure_dir(parent)
        try:
            os.mkdir(directory)
        except FileExistsError:
            if not os.path.isdir(directory):
                raise
            return
        if self._durable:
            _fsync_dir(parent)


def _check_data(data: bytes) -> None:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"log file content is bytes, not {type(data).__name__}")


def _write_temp(path: str, data: bytes, kind: str, durable: bool = True) -> None:
    """:func:`_write_file` (fsynced only if ``durable``), or, when crash points are active, the
    same in two halves with the crash point ``<kind>.temp_partial`` between them."""
    if not crashpoints.active():
        if durable:
            _write_file(path, data)
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


def _write_file(path: str, data: bytes) -> None:
    """Create ``path`` exclusively with ``data``, flushed and fsynced."""
    with open(path, "xb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def _fsync_dir(directory: str) -> None:
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
