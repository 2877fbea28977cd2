"""The log store on a local POSIX file system (:class:`LocalLogStore`): the
:class:`~deltaspec.impl.log.store.LogStore` contract kept across threads and processes
(LOG.PUT_IF_ABSENT, LOG.ATOMIC_VISIBILITY, LOG.LISTING).

Writes go through a temporary file published atomically (:mod:`deltaspec.impl.log.atomic_files`);
reads open regular files only, never following a symbolic link
(:mod:`deltaspec.impl.log.regular_files`, PATH.REGULAR_FILES, PATH.NO_SYMLINKS).
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from collections.abc import Callable, Iterator
from typing import BinaryIO, TypeVar

from deltaspec.rules import rule

from ..errors import NotRegularFileError, UnsafePathError, UnsupportedLogStoreError
from . import crashpoints, regular_files
from .atomic_files import (
    NO_HARD_LINKS,
    NO_NOREPLACE_RENAME,
    fsync_dir,
    rename_noreplace,
    write_temp,
)
from .names import (
    LAST_CHECKPOINT,
    LOG_DIR,
    SIDECARS_DIR,
    is_checksum_name,
    is_temp_name,
    leading_version,
    parse_commit_name,
)
from .store import (
    LAST_CHECKPOINT_MAX_BYTES,
    FileInfo,
    LogStore,
    check_data,
    check_name,
    check_overwritable,
)

__all__ = ["LocalLogStore"]

_Listed = TypeVar("_Listed")
_REFUSED = frozenset({errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR, errno.EISDIR})
"""Errnos of a write the file system refuses for good (:meth:`LocalLogStore._refused_writes`):
permission denied, a read-only file system, a directory on the way that is no directory, a
directory where a file is to be replaced."""


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
        parts = check_name(name)
        self._check_dirs(parts)
        return os.path.join(self._log_dir, *parts)

    # --- reading -----------------------------------------------------------------------------

    def read(self, name: str) -> bytes:
        """The content of ``name``, a regular file (PATH.REGULAR_FILES): a symbolic link is
        UnsafePathError, a directory, FIFO or device NotRegularFileError, other OS errors
        LogAccessError; ``_last_checkpoint`` is read up to :data:`LAST_CHECKPOINT_MAX_BYTES`."""
        return regular_files.read_regular(
            self._path(name),
            table=self._table_path,
            version=_version_of(name),
            file=name,
            limit=LAST_CHECKPOINT_MAX_BYTES if name == LAST_CHECKPOINT else None,
        )

    def open_file(self, name: str) -> BinaryIO:
        """``name`` opened for reading, under the same checks as :meth:`read`: what pyarrow
        gets instead of a path, so it never opens anything itself."""
        return regular_files.open_regular(
            self._path(name), table=self._table_path, version=_version_of(name), file=name
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
            version=_version_of(name),
            file=name,
        )

    def _check_dirs(self, parts: list[str]) -> None:
        """Refuse a ``_delta_log`` (or ``_sidecars``) directory that is a symbolic link
        (PATH.NO_SYMLINKS)."""
        regular_files.check_real_dirs(self._table_path, [LOG_DIR, *(p for p in parts[:-1] if p)])

    @rule("LOG.LISTING")
    def list_from(self, start: str = "") -> list[FileInfo]:
        self._check_dirs([""])
        return self._listed(LOG_DIR, lambda: self._scan(self._log_dir, "", start))

    def _listed(self, directory: str, list_it: Callable[[], list[_Listed]]) -> list[_Listed]:
        """``list_it()``, listing ``directory`` (relative to the table root). A directory that
        does not exist lists empty (no table; a table root that is no directory holds none
        either); one that cannot be listed (permission denied, an I/O error, ``_delta_log`` not
        a directory) is LogAccessError naming the table and the directory, never a raw OSError.
        A ``_sidecars`` that is no directory holds no sidecar: empty."""
        try:
            return list_it()
        except FileNotFoundError:
            return []
        except OSError as exc:
            if not os.path.isdir(self._table_path):
                return []
            if isinstance(exc, NotADirectoryError) and directory != LOG_DIR:
                return []
            raise regular_files.access_error(exc, table=self._table_path, file=directory) from None

    def list_names(self) -> list[str]:
        if type(self).list_from is not LocalLogStore.list_from:
            return super().list_names()  # a subclass that shapes listings: keep its view
        self._check_dirs([""])
        return sorted(self._listed(LOG_DIR, self._log_names))

    def _log_names(self) -> list[str]:
        with os.scandir(self._log_dir) as iterator:
            return [
                e.name
                for e in iterator
                if not is_temp_name(e.name)
                and (
                    e.is_file(follow_symlinks=False)
                    or e.is_symlink()
                    or leading_version(e.name) is not None
                )
            ]

    def stat(self, name: str) -> FileInfo | None:
        if type(self).list_from is not LocalLogStore.list_from:
            return super().stat(name)
        try:
            stat = os.lstat(self._path(name))
        except (FileNotFoundError, NotADirectoryError):
            return None
        return FileInfo(name, stat.st_size, stat.st_mtime_ns // 1_000_000)

    def list_dir(self, subdir: str) -> list[FileInfo]:
        if len(check_name(subdir)) != 1:
            raise ValueError(f"not a subdirectory of {LOG_DIR}/: {subdir!r}")
        self._check_dirs([subdir, ""])
        directory = os.path.join(self._log_dir, subdir)
        return self._listed(f"{LOG_DIR}/{subdir}", lambda: self._scan(directory, subdir + "/"))

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
                    with self._refused_writes(prefix + entry.name):
                        os.unlink(entry.path)
                except FileNotFoundError:
                    continue  # its writer (or another sweeper) removed it
                swept.append(prefix + entry.name)
                crashpoints.reached("cleanup.mid_temp_sweep")
        return swept

    @staticmethod
    def _scan(directory: str, prefix: str, start: str = "") -> list[FileInfo]:
        """The regular files of ``directory`` except temporary files, sorted by name, from the
        name ``start`` on (names before it are not even stat'ed); OSError if it cannot be listed
        (:meth:`_listed` says what that means)."""
        infos: list[FileInfo] = []
        with os.scandir(directory) as iterator:
            entries = [e for e in iterator if prefix + e.name >= start]
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
        check_data(data)
        final = self._path(name)
        directory = os.path.dirname(final)
        with self._refused_writes(name):
            self._ensure_dir(directory)
        if os.path.lexists(final):
            # a lost race known before writing: no temporary file, no fsync (the link below
            # stays the one that decides when the name appears between this check and it)
            exists = FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), final)
            raise self._exists_error(name) from exists
        temp = os.path.join(directory, f".{os.path.basename(final)}.{uuid.uuid4().hex}.tmp")
        kind = crashpoints.file_kind(name)
        durable = self._durable and not is_checksum_name(name)
        try:
            with self._refused_writes(name):
                write_temp(temp, data, kind, durable)
            crashpoints.reached(f"{kind}.after_temp")
            self._publish(name, temp, final)
            crashpoints.reached(f"{kind}.after_link")
            if durable:
                fsync_dir(directory)
        finally:
            _discard(temp)

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
                if exc.errno not in NO_HARD_LINKS:
                    raise
                self._hard_links = False
        try:
            rename_noreplace(temp, final)
        except FileExistsError as exc:
            raise self._exists_error(name) from exc
        except OSError as exc:
            if exc.errno not in NO_NOREPLACE_RENAME:
                raise
            raise UnsupportedLogStoreError(
                "the file system has neither hard links nor renameat2(RENAME_NOREPLACE): no "
                f"atomic put-if-absent is possible here ({os.strerror(exc.errno or 0)})",
                table=self._table_path,
                version=parse_commit_name(name),
                file=name,
            ) from None

    def write_overwrite(self, name: str, data: bytes) -> None:
        check_overwritable(name)
        hint = name == LAST_CHECKPOINT
        check_data(data)
        final = self._path(name)
        with self._refused_writes(name):
            self._ensure_dir(self._log_dir)
        temp = os.path.join(self._log_dir, f".{name}.{uuid.uuid4().hex}.tmp")
        try:
            with self._refused_writes(name):
                write_temp(temp, data, "last_checkpoint" if hint else "checkpoint", self._durable)
            if hint:
                crashpoints.reached("last_checkpoint.after_temp")
            with self._refused_writes(name):
                os.replace(temp, final)
            if self._durable:
                fsync_dir(self._log_dir)
        finally:
            _discard(temp)

    def delete(self, name: str) -> None:
        """Delete ``name`` if it exists; a directory at the name is never deleted
        (NotRegularFileError, PATH.REGULAR_FILES), a deletion the file system refuses is
        LogAccessError, both naming the table, the version and the file."""
        path = self._path(name)
        with self._refused_writes(name):
            try:
                os.unlink(path)
            except FileNotFoundError:
                return
            except IsADirectoryError:
                raise NotRegularFileError(
                    "not a regular file (a directory): never deleted",
                    table=self._table_path,
                    version=_version_of(name),
                    file=name,
                ) from None

    # --- helpers -----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _refused_writes(self, name: str) -> Iterator[None]:
        """A write step that the file system refuses for good (permission denied, a read-only
        file system, a table root or ``_delta_log`` that is no directory) before ``name`` is
        visible: LogAccessError naming the table, the version and the file. Nothing was written,
        so it is no unknown outcome; other OSErrors (a full disk, an I/O error) pass through."""
        try:
            yield
        except OSError as exc:
            if exc.errno not in _REFUSED:
                raise
            raise regular_files.access_error(
                exc, table=self._table_path, version=_version_of(name), file=name
            ) from None

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
            if not os.path.isdir(directory):  # a file, FIFO or dangling link in the way
                raise NotADirectoryError(
                    errno.ENOTDIR, os.strerror(errno.ENOTDIR), directory
                ) from None
            return
        if self._durable:
            fsync_dir(parent)


def _version_of(name: str) -> int | None:
    """The version a log file's name starts with, a sidecar's (``_sidecars/<v>.checkpoint...``)
    included; None for a name that starts with none (``_last_checkpoint``)."""
    return leading_version(name.rpartition("/")[2])


def _discard(temp: str) -> None:
    """Remove a temporary file if it is there. A removal that fails never hides what happened
    before it: a read-only file system refuses even the removal of a file that was never created
    (EROFS, not ENOENT), and a temporary file left behind is hidden from listings and swept later
    (:meth:`LocalLogStore.sweep_temp_files`)."""
    with contextlib.suppress(OSError):
        os.unlink(temp)
