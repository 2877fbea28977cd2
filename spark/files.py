"""Data files: Spark's native Parquet writer on the executors, then AddFile actions on the driver.

Each write goes to its own staging directory under the table root (``_delta_staging/<uuid>``,
invisible to readers: Delta reads only the files its log names). Spark writes Hive-style
partition directories there; like delta-spark's DelayedCommitProtocol, the driver learns each new
file's partition values from the directory Spark made for it — checked to round-trip through
delta-spark's escaping — and records them in the log, which is where every reader takes them
from. The files then move to their final place beside the table's other files, and their
statistics come from their Parquet footers.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import pyarrow.parquet as pq
from pyspark.sql import DataFrame

from deltaspec.impl import codec
from deltaspec.impl.actions import AddFile, PartitionValues

from . import stats
from .errors import (
    NotNullViolationError,
    UnexpectedPartitionDirectoryError,
    UnsafeWritePathError,
)

STAGING_DIR = "_delta_staging"


def safe_directory(root: str, parts: Sequence[str]) -> str:
    """``root/parts...`` as a real directory inside ``root``, created where missing, every
    component checked with lstat: a symlink (or anything not a directory) on the way is refused
    before a file is moved through it, so a write never lands outside the table root."""
    current = root
    for part in parts:
        if part in {"", ".", ".."} or os.sep in part:
            raise UnsafeWritePathError(f"unsafe path component {part!r}", table=root)
        current = os.path.join(current, part)
        with contextlib.suppress(FileExistsError):
            os.mkdir(current)
        info = os.lstat(current)
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            raise UnsafeWritePathError(
                f"{os.path.relpath(current, root)!r} is a symlink or not a directory: "
                "Spark writes never follow it",
                table=root,
                file=current,
            )
    return current


def reclaim_staging(root: str, retention_ms: int, now_ms: int) -> list[str]:
    """Delete the staging directories (``_delta_staging/<uuid>``) of writes killed before they
    cleaned up, with VACUUM's safety rules: only directories whose every entry is older than
    ``now_ms - retention_ms`` (a live write keeps touching its own), never following a symlink
    (a symlinked ``_delta_staging`` or entry is left alone), never outside the root. Staged files
    are never live: a committed file has already moved to its final place. Returns the names
    deleted."""
    if retention_ms < 0 or retention_ms != retention_ms:
        raise ValueError(f"retention must be a non-negative number of ms: {retention_ms!r}")
    staging = os.path.join(root, STAGING_DIR)
    try:
        info = os.lstat(staging)
    except FileNotFoundError:
        return []
    if not stat.S_ISDIR(info.st_mode):
        return []  # a symlink or a file: not ours to follow
    cutoff = now_ms - retention_ms
    deleted = []
    for entry in sorted(os.scandir(staging), key=lambda e: e.name):
        if entry.is_symlink() or not entry.is_dir(follow_symlinks=False):
            continue
        if _newest_ms(entry.path) >= cutoff:
            continue
        shutil.rmtree(entry.path)  # rmtree never follows symlinks inside the tree
        deleted.append(entry.name)
    return deleted


def _newest_ms(directory: str) -> int:
    newest = os.lstat(directory).st_mtime_ns
    for folder, dirnames, filenames in os.walk(directory, followlinks=False):
        for name in [*dirnames, *filenames]:
            newest = max(newest, os.lstat(os.path.join(folder, name)).st_mtime_ns)
    return newest // 1_000_000


@dataclass(frozen=True)
class WrittenFiles:
    adds: tuple[AddFile, ...]

    @property
    def num_records(self) -> int:
        return sum(stats.num_records(a.stats) or 0 for a in self.adds)


def _partition_values(
    table: str, fragments: Sequence[str], partition_columns: Sequence[str]
) -> PartitionValues:
    if len(fragments) != len(partition_columns):
        raise UnexpectedPartitionDirectoryError(
            f"{'/'.join(fragments)!r} is not a partition directory of {list(partition_columns)}",
            table=table,
        )
    values: PartitionValues = {}
    for fragment, column in zip(fragments, partition_columns, strict=True):
        name, _, escaped = fragment.partition("=")
        value = None if escaped == codec.HIVE_DEFAULT_PARTITION else unquote(escaped)
        if unquote(name) != column or codec.partition_directory([(column, value)]) != fragment:
            raise UnexpectedPartitionDirectoryError(
                f"directory {fragment!r} does not round-trip to a value of {column!r}",
                table=table,
            )
        values[column] = value
    return values


_Staged = tuple[str, PartitionValues, str]
"""A file Spark wrote: its staged path, its partition values and its path in the table."""


def _staged(staging: str, root: str, partition_columns: Sequence[str]) -> list[_Staged]:
    """The data files Spark wrote under ``staging`` (not its ``.``/``_`` marker files)."""
    found: list[_Staged] = []
    for directory, _, names in os.walk(staging):
        relative = os.path.relpath(directory, staging)
        fragments = [] if relative == "." else relative.split(os.sep)
        for name in sorted(names):
            if name.startswith((".", "_")):
                continue
            values = _partition_values(root, fragments, partition_columns)
            final = "/".join([*fragments, name])
            found.append((os.path.join(directory, name), values, final))
    return found


def _adds(
    found: Sequence[_Staged],
    partition_columns: Sequence[str],
    leaves: list[tuple[tuple[str, ...], Any]],
    data_change: bool,
) -> tuple[list[AddFile], dict[str, int]]:
    """The AddFile of each staged file (statistics from its footer) and the nulls per column
    (partition columns counted from the values)."""
    adds, nulls = [], dict.fromkeys(partition_columns, 0)
    for source, values, final in found:
        text, counts = stats.file_stats(pq.read_metadata(source), leaves)
        for column, count in counts.items():
            nulls[column] = nulls.get(column, 0) + count
        for column, partition_value in values.items():
            nulls[column] += partition_value is None
        info = os.stat(source)
        adds.append(
            AddFile(
                path=codec.encode_path(final),
                partition_values=values,
                size=info.st_size,
                modification_time=int(info.st_mtime * 1000),
                data_change=data_change,
                stats=text,
            )
        )
    return adds, nulls


def write_files(
    df: DataFrame,
    root: str,
    partition_columns: Sequence[str],
    leaves: list[tuple[tuple[str, ...], Any]],
    *,
    data_change: bool = True,
    not_null: Sequence[str] = (),
    writer_options: Mapping[str, str] | None = None,
) -> WrittenFiles:
    """Write ``df`` (already in table column order) as data files of the table at ``root``.

    Raises NotNullViolationError, before any file reaches the table, when a ``not_null`` column
    received a null."""
    os.makedirs(root, exist_ok=True)
    safe_directory(root, [STAGING_DIR])
    staging = os.path.join(root, STAGING_DIR, str(uuid.uuid4()))
    writer = df.write.format("parquet").mode("errorifexists")
    if partition_columns:
        writer = writer.partitionBy(*partition_columns)
    for key, value in (writer_options or {}).items():
        writer = writer.option(key, value)
    try:
        writer.save(staging)
        found = _staged(staging, root, partition_columns)
        adds, nulls = _adds(found, partition_columns, leaves, data_change)
        violated = [c for c in not_null if nulls.get(c, 0)]
        if violated:
            raise NotNullViolationError(
                f"NOT NULL constraint violated for column: {violated[0]}", table=root
            )
        for source, _, final in found:
            *directories, name = final.split("/")
            os.rename(source, os.path.join(safe_directory(root, directories), name))
        return WrittenFiles(tuple(adds))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
