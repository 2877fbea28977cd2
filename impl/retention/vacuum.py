"""VACUUM: delete the data files a table no longer needs, and nothing else.

A file under the table root is deleted only when all of these hold:

1. no version within the retention window references it: it is not live in the latest snapshot,
   it has no unexpired tombstone (``deletionTimestamp`` after the cutoff), no commit made after
   the cutoff removes it (a time-travel read of the version current at the cutoff needs it, even
   if a writer's clock put an old ``deletionTimestamp`` on the remove), and it is not a
   deletion-vector file of any of those;
2. it was last modified before the cutoff ``now − retention``: files of transactions still being
   written (not committed yet) are newer and are never deleted;
3. it is a regular file inside the table root, outside ``_delta_log``, with no hidden name on
   its path (:func:`hidden_name`: a ``_``/``.`` name, except ``_delta_index``, ``_change_data``
   and the directories of the table's partition columns, as delta-spark's
   ``isHiddenDirectory``; so unreferenced change-data files past retention are deleted, and a
   ``_x=1`` directory that no partition column names is kept); symbolic
   links are never followed and never deleted, and a file whose real path leaves the root is
   never touched. On an object store (the log's store is an
   :class:`~deltaspec.impl.log.object_store.ObjectLogStore`) the files are the objects listed
   under the table's prefix, deleted through the same store.

The retention defaults to the table's ``delta.deletedFileRetentionDuration`` (one week); a shorter
one raises :class:`~deltaspec.impl.errors.VacuumRetentionTooShortError` unless
``enforce_retention=False`` (delta-spark's ``retentionDurationCheck.enabled = false``), and a
negative one always raises. ``dry_run`` reports what would be deleted and deletes nothing.
This function writes no commit: the Spark path's VACUUM
(``deltaspec.spark.operations.vacuum``) records the run as delta-spark does, in
``VACUUM START``/``VACUUM END`` commits around it. Unlike delta-spark, it leaves empty
directories in place.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pyarrow.compute as pc

from ..actions import DeletionVector, RemoveFile
from ..errors import (
    UnsafePathError,
    VacuumRetentionInvalidError,
    VacuumRetentionNegativeError,
    VacuumRetentionTooShortError,
)
from ..log import crashpoints
from ..log.names import LOG_DIR
from ..log.object_store import ObjectLogStore
from ..log.regular_files import access_error
from ..snapshot.delta_log import DeltaLog
from ..snapshot.state import Snapshot
from ..table import paths
from ..table.paths import deletion_vector_location, resolve_data_path

__all__ = ["VacuumResult", "deletion_vector_path", "hidden_name", "vacuum"]

_HOUR_MS = 60 * 60 * 1000


@dataclass(frozen=True, slots=True)
class VacuumResult:
    """What :func:`vacuum` deleted (or, in a dry run, would delete)."""

    version: int
    """The snapshot version the references were taken from."""
    cutoff_ms: int
    dry_run: bool
    deleted: tuple[str, ...]
    """Paths relative to the table root, ``/``-separated, sorted."""
    referenced: int
    """How many distinct files versions within the retention window reference."""
    too_recent: int
    """Unreferenced files kept because they are newer than the cutoff."""
    symlinks: tuple[str, ...]
    """Symbolic links found under the root: never followed, never deleted."""
    deleted_bytes: int = 0
    """The size of the files in ``deleted``, as the walk found them."""
    directories: int = 1
    """The directories the walk listed: the root and every one under it outside ``_delta_log``
    and hidden names (delta-spark's ``numVacuumedDirectories``)."""
    table_retention_ms: int = 0
    """The table's ``delta.deletedFileRetentionDuration``, whatever retention was used."""


def deletion_vector_path(table_root: str, dv: DeletionVector) -> str | None:
    """The file of a deletion vector relative to the table root (None: inline, or a location
    the path rule refuses, PATH.DATA_FILE): ``paths.deletion_vector_location``
    resolved with ``paths.resolve_data_path``, the same resolution a read uses."""
    try:
        location = deletion_vector_location(dv)
        return None if location is None else resolve_data_path(table_root, location)
    except ValueError:
        return None


def _referenced(log: DeltaLog, snapshot: Snapshot, cutoff: int) -> set[str]:
    """Every file a version within the retention window references (rule 1 above)."""
    root = log.table_path
    out: set[str] = set()

    def keep(path: str, dv: DeletionVector | None, version: int | None = None) -> None:
        # the loader's rule (PATH.DATA_FILE): a reference VACUUM cannot resolve stops VACUUM,
        # since the file it names could be one that must be kept
        try:
            out.add(resolve_data_path(root, path))
        except ValueError as exc:
            raise UnsafePathError(
                f"VACUUM cannot resolve {path[:200]!r}: {exc}", table=root, version=version
            ) from None
        if dv is not None and (dv_path := deletion_vector_path(root, dv)) is not None:
            out.add(dv_path)

    for add in snapshot.files.values():
        keep(add.path, add.deletion_vector)
    tombstones = snapshot.all_tombstones
    if tombstones.num_rows:
        stamps = pc.fill_null(tombstones.column("deletion_timestamp"), 0)
        recent = tombstones.filter(pc.greater(stamps, cutoff))
        paths = recent.column("path").to_pylist()
        dvs = recent.column("deletion_vector").to_pylist()
        for path, dv in zip(paths, dvs, strict=True):
            keep(path, None if dv is None else _dv(dv))
    listing = log.list_log(None)
    for version, info in sorted(listing.commits.items()):
        if version > snapshot.version or info.modification_time <= cutoff:
            continue
        for action in log.read_commit(version):
            if isinstance(action, RemoveFile):
                keep(action.path, action.deletion_vector, version)
    return out


def _dv(row: dict[str, object]) -> DeletionVector:
    return DeletionVector(
        storage_type=str(row["storage_type"]),
        path_or_inline_dv=str(row["path_or_inline_dv"]),
        size_in_bytes=0,
        cardinality=0,
        offset=None,
    )


_NEVER_HIDDEN = ("_delta_index", "_change_data")
"""Prefixes of ``_`` names VACUUM still cleans: indexes and change data (CDC) files tied to the
data they describe."""


def hidden_name(name: str, partition_columns: Sequence[str]) -> bool:
    """delta-spark's hidden names (``DeltaTableUtils.isHiddenDirectory``, applied to every
    directory and file name at any depth): names starting with ``_`` or ``.``, except those
    starting with :data:`_NEVER_HIDDEN` or with a partition column's ``col=`` (a partition
    directory). Any other ``col=value`` name of that form is hidden: only the table's own
    partition columns make a directory a partition directory."""
    return (
        name.startswith((".", "_"))
        and not name.startswith(_NEVER_HIDDEN)
        and not any(name.startswith(f"{column}=") for column in partition_columns)
    )


def _inside(real: str, root: str) -> bool:
    return real.startswith(root.rstrip(os.sep) + os.sep)


def vacuum(
    log: DeltaLog,
    *,
    retention_ms: int | None = None,
    dry_run: bool = False,
    enforce_retention: bool = True,
    now_ms: int | None = None,
    before_delete: Callable[[VacuumResult], None] | None = None,
) -> VacuumResult:
    """Delete the files of the table that no version within retention needs (see the module).

    ``now_ms`` defaults to the log's clock; ``retention_ms`` to the table's
    ``delta.deletedFileRetentionDuration``. ``before_delete`` is given what will be deleted once
    it is known and before anything is (the Spark path records it,
    deltaspec.spark.operations.vacuum).
    """
    snapshot = log.snapshot()
    now = log.clock() if now_ms is None else now_ms
    retention = _retention(log.table_path, snapshot, retention_ms, enforce_retention)
    cutoff = now - retention
    referenced = _referenced(log, snapshot, cutoff)
    store = log.store
    objects = store if isinstance(store, ObjectLogStore) else None
    columns = snapshot.partition_columns
    walk = (
        _walk(log.table_path, referenced, cutoff, columns)
        if objects is None
        else _list_objects(objects, referenced, cutoff, columns)
    )
    result = VacuumResult(
        version=snapshot.version,
        cutoff_ms=cutoff,
        dry_run=dry_run,
        deleted=tuple(relative for relative, _ in walk.doomed),
        referenced=len(referenced),
        too_recent=walk.too_recent,
        symlinks=tuple(sorted(walk.symlinks)),
        deleted_bytes=walk.doomed_bytes,
        directories=walk.directories,
        table_retention_ms=snapshot.deleted_file_retention_ms,
    )
    if before_delete is not None:
        before_delete(result)
    if dry_run:
        return result
    if objects is None:
        _delete(log.table_path, snapshot.version, walk.doomed)
    else:
        for relative, _ in walk.doomed:
            objects.delete_table_file(relative)
            crashpoints.reached("vacuum.mid_delete")
    return result


def _retention(
    table: str, snapshot: Snapshot, retention_ms: int | None, enforce_retention: bool
) -> int:
    """The retention to use: the table's unless ``retention_ms`` is given, which must be a
    finite, non-negative number and (with ``enforce_retention``) no shorter than the table's."""
    configured = snapshot.deleted_file_retention_ms
    retention = configured if retention_ms is None else retention_ms
    if (
        isinstance(retention, bool)
        or not isinstance(retention, int | float)
        or not math.isfinite(retention)
    ):
        raise VacuumRetentionInvalidError(
            f"retention {retention!r} is not a finite number of milliseconds",
            table=table,
            version=snapshot.version,
        )
    if retention < 0:
        raise VacuumRetentionNegativeError(
            f"retention {retention} ms is negative", table=table, version=snapshot.version
        )
    if enforce_retention and retention < configured:
        raise VacuumRetentionTooShortError(
            f"retention {math.ceil(retention / _HOUR_MS)} hours is shorter than the table's "
            f"delta.deletedFileRetentionDuration ({math.ceil(configured / _HOUR_MS)} hours): "
            "pass enforce_retention=False if no reader or writer needs older files",
            table=table,
            version=snapshot.version,
        )
    return retention


@dataclass
class _Walk:
    """What walking the table found: the files to delete, as ``(relative, full)`` sorted."""

    doomed: list[tuple[str, str]] = field(default_factory=list)
    doomed_bytes: int = 0
    symlinks: list[str] = field(default_factory=list)
    too_recent: int = 0
    directories: int = 1
    """The root and the directories listed under it, hidden ones left out."""


def _walk(table: str, referenced: set[str], cutoff: int, partition_columns: Sequence[str]) -> _Walk:
    """The files under ``table`` that rules 2 and 3 above let VACUUM delete."""
    real_root = os.path.realpath(table)
    found = _Walk()
    for directory, dirnames, filenames in os.walk(table, followlinks=False):
        relative_dir = os.path.relpath(directory, table)
        at_root = relative_dir == "."
        found.directories += sum(1 for name in dirnames if not hidden_name(name, partition_columns))
        for name in list(dirnames):
            full = os.path.join(directory, name)
            if os.path.islink(full):
                found.symlinks.append(_relative(relative_dir, name))
                dirnames.remove(name)
            elif (at_root and name == LOG_DIR) or hidden_name(name, partition_columns):
                dirnames.remove(name)
        for name in filenames:
            if not hidden_name(name, partition_columns):
                _consider(directory, relative_dir, name, referenced, cutoff, real_root, found)
    found.doomed.sort()
    return found


def _list_objects(
    store: ObjectLogStore, referenced: set[str], cutoff: int, partition_columns: Sequence[str]
) -> _Walk:
    """Rules 2 and 3 above on an object store, from one listing of the table's objects: every
    key is an object of this table (no links, nothing outside the root), hidden names are left
    out at any depth, and each distinct prefix of a kept name counts as a directory."""
    found = _Walk()
    directories: set[str] = set()
    for info in store.list_table_files():
        parts = info.name.split("/")
        if any(hidden_name(part, partition_columns) for part in parts):
            continue
        directories.update("/".join(parts[:depth]) for depth in range(1, len(parts)))
        if info.name in referenced:
            continue
        if info.modification_time >= cutoff:
            found.too_recent += 1
            continue
        found.doomed.append((info.name, info.name))
        found.doomed_bytes += info.size
    found.directories += len(directories)
    found.doomed.sort()
    return found


def _consider(
    directory: str,
    relative_dir: str,
    name: str,
    referenced: set[str],
    cutoff: int,
    real_root: str,
    found: _Walk,
) -> None:
    full = os.path.join(directory, name)
    relative = _relative(relative_dir, name)
    info = os.lstat(full)
    if stat.S_ISLNK(info.st_mode):
        found.symlinks.append(relative)
        return
    if not stat.S_ISREG(info.st_mode) or relative in referenced:
        return
    if info.st_mtime_ns // 1_000_000 >= cutoff:
        found.too_recent += 1
        return
    real = os.path.realpath(full)
    if not _inside(real, real_root) or _inside(real, os.path.join(real_root, LOG_DIR)):
        return
    found.doomed.append((relative, full))
    found.doomed_bytes += info.st_size


def _delete(table: str, version: int, doomed: list[tuple[str, str]]) -> None:
    """Delete ``doomed``; a deletion the file system refuses (permission denied, a read-only
    file system) is LogAccessError naming the file: the files already deleted were not needed,
    and no log file is ever touched."""
    for relative, full in doomed:
        try:
            # through the resolver again: a directory swapped for a link since the walk is
            # never followed (PATH.NO_SYMLINKS)
            full = paths.data_file(table, relative)
            if not stat.S_ISREG(os.lstat(full).st_mode):
                continue  # replaced by a link or directory since the walk: left alone
            os.unlink(full)
        except (FileNotFoundError, UnsafePathError):
            continue  # deleted meanwhile (another VACUUM), or now behind a link
        except OSError as exc:
            raise access_error(exc, table=table, version=version, file=relative) from None
        crashpoints.reached("vacuum.mid_delete")


def _relative(directory: str, name: str) -> str:
    joined = name if directory == "." else os.path.join(directory, name)
    return joined.replace(os.sep, "/")
