"""The log store: the storage under ``_delta_log/`` and the three guarantees the log rests on.

Everything about concurrency in Delta rests on three properties of the storage (spec/log.md):

- LOG.PUT_IF_ABSENT — creating a version file is exclusive: of several concurrent writers of one
  name exactly one succeeds, the others are told that the file exists;
- LOG.ATOMIC_VISIBILITY — a file is seen whole or not at all;
- LOG.LISTING — a listing is sorted by name and shows every file whose creation completed before
  the listing started.

:class:`LogStore` states them as the contract every store must keep;
:class:`~deltaspec.impl.log.local_store.LocalLogStore` keeps them on a local POSIX file system,
across threads and processes. Names passed to a store are
relative to the ``_delta_log`` directory (``00000000000000000000.json``, ``_last_checkpoint``,
``_sidecars/<uuid>.parquet``); the store knows nothing about what the names mean beyond
LOG.COMMIT_FILE_NAME (to put the version into a :class:`VersionExistsError`) — recognising
commits, checkpoints and checksums among the listed names is :mod:`deltaspec.impl.log.names`'
job.
"""

from __future__ import annotations

import abc
import io
from dataclasses import dataclass
from typing import BinaryIO

from ..errors import VersionExistsError
from .names import LAST_CHECKPOINT, LOG_DIR, is_checkpoint_name, is_temp_name, parse_commit_name

__all__ = [
    "LAST_CHECKPOINT_MAX_BYTES",
    "TEMP_FILE_SAFETY_MS",
    "FileInfo",
    "LogStore",
    "check_data",
    "check_name",
    "check_overwritable",
]

LAST_CHECKPOINT_MAX_BYTES = 1024 * 1024
"""The most of ``_last_checkpoint`` ever read: the hint is a few hundred bytes of JSON (even with
a v2 checkpoint's inlined metadata), so a bigger (or sparse, or endless) file is not read whole."""

TEMP_FILE_SAFETY_MS = 60 * 60 * 1000
"""A temporary file younger than this (one hour) may belong to a live writer and is never swept."""


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
    tests/impl/log/test_impl_storage.py checks):

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

        Allowed only for ``_last_checkpoint`` and checkpoint files (a torn checkpoint is
        replaced by a whole copy of the same checkpoint, RETENTION.VERIFIED_CHECKPOINT): a commit
        file is never overwritten (LOG.PUT_IF_ABSENT), so any other name raises ValueError.
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

    def _exists_error(self, name: str) -> VersionExistsError:
        """The error of a :meth:`write_new` whose name exists (LOG.PUT_IF_ABSENT): the table,
        the file and, for a commit, its version."""
        return VersionExistsError(
            "File already exists",
            table=self.table_path,
            version=parse_commit_name(name),
            file=name,
        )

    def sweep_temp_files(self, older_than_ms: int) -> list[str]:
        """Delete the temporary files left by killed writers, last modified before
        ``older_than_ms`` (ms since the epoch); returns their names. Stores without temporary
        files keep this default, which does nothing."""
        return []


def check_name(name: str) -> list[str]:
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


def check_data(data: bytes) -> None:
    """TypeError unless ``data`` is bytes (a log file's content)."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"log file content is bytes, not {type(data).__name__}")


def check_overwritable(name: str) -> None:
    """ValueError unless ``name`` may be overwritten (:meth:`LogStore.write_overwrite`): only
    ``_last_checkpoint`` and checkpoint files; a commit never is (LOG.PUT_IF_ABSENT)."""
    if name != LAST_CHECKPOINT and not is_checkpoint_name(name):
        raise ValueError(
            f"only {LAST_CHECKPOINT} and checkpoint files may be overwritten, not {name!r} "
            "(LOG.PUT_IF_ABSENT)"
        )
