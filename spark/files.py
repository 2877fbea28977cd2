"""Data files: Spark's native Parquet writer on the executors, then AddFile actions on the driver.

Each write goes to its own staging directory under the table root (``_delta_staging/<uuid>``,
invisible to readers: Delta reads only the files its log names). Spark writes Hive-style
partition directories there; like delta-spark's DelayedCommitProtocol, the driver learns each new
file's partition values from the directory Spark made for it — checked to round-trip through
delta-spark's escaping — and records them in the log, which is where every reader takes them
from. The files then move to their final place beside the table's other files, and their
statistics come from their Parquet footers.

On S3 (``s3://``/``s3a://`` roots) nothing is staged: Spark writes each file at its final name
(final_names.py) and the footers are read from the bucket (object_files.py).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

import pyarrow.parquet as pq
from pyspark.sql import DataFrame

from ..impl import codec
from ..impl.actions import AddFile, PartitionValues
from ..impl.errors import LogAccessError
from . import final_names, object_files, s3a, stats
from .errors import (
    NotNullViolationError,
    UnexpectedPartitionDirectoryError,
    UnsafeWritePathError,
)

STAGING_DIR = "_delta_staging"


def table_directory(root: str) -> None:
    """Create the local table root ``root`` where it is missing. A root that is a regular file
    (or lies below one) holds no table and can hold none: LogAccessError naming it, before any
    data is written, as the core impl's commit refuses it (PATH.REGULAR_FILES). An S3 root
    has no directories to create."""
    if object_files.is_s3(root):
        return
    try:
        os.makedirs(root, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as refused:
        reason = os.strerror(errno.ENOTDIR)
        raise LogAccessError(
            f"the table path is not a directory ({reason}: {refused.filename})", table=root
        ) from None


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


@dataclass(frozen=True)
class _Written:
    """A file Spark wrote: where it is now (``source``), its partition values, its path in the
    table (``final``), its size and modification time (ms)."""

    source: str
    values: PartitionValues
    final: str
    size: int
    modification_time: int


def _staged(staging: str, root: str, partition_columns: Sequence[str]) -> list[_Written]:
    """The data files Spark wrote under ``staging`` (not its ``.``/``_`` marker files)."""
    found: list[_Written] = []
    for directory, _, names in os.walk(staging):
        relative = os.path.relpath(directory, staging)
        fragments = [] if relative == "." else relative.split(os.sep)
        for name in sorted(names):
            if name.startswith((".", "_")):
                continue
            values = _partition_values(root, fragments, partition_columns)
            source = os.path.join(directory, name)
            info = os.stat(source)
            final = "/".join([*fragments, name])
            found.append(_Written(source, values, final, info.st_size, int(info.st_mtime * 1000)))
    return found


def _adds(
    found: Sequence[_Written],
    partition_columns: Sequence[str],
    leaves: list[tuple[tuple[str, ...], Any]],
    data_change: bool,
    footer: Callable[[str], pq.FileMetaData] = pq.read_metadata,
    tight: bool | None = None,
) -> tuple[list[AddFile], dict[str, int]]:
    """The AddFile of each written file (statistics from its footer, read from ``source`` by
    ``footer``) and the nulls per column (partition columns counted from the values)."""
    adds, nulls = [], dict.fromkeys(partition_columns, 0)
    for file in found:
        text, counts = stats.file_stats(footer(file.source), leaves, tight)
        for column, count in counts.items():
            nulls[column] = nulls.get(column, 0) + count
        for column, partition_value in file.values.items():
            nulls[column] += partition_value is None
        adds.append(
            AddFile(
                path=codec.encode_path(file.final),
                partition_values=file.values,
                size=file.size,
                modification_time=file.modification_time,
                data_change=data_change,
                stats=text,
            )
        )
    return adds, nulls


def _check_not_null(nulls: Mapping[str, int], not_null: Sequence[str], root: str) -> None:
    violated = [c for c in not_null if nulls.get(c, 0)]
    if violated:
        raise NotNullViolationError(
            f"NOT NULL constraint violated for column: {violated[0]}", table=root
        )


def _write_s3(
    df: DataFrame,
    root: str,
    partition_columns: Sequence[str],
    leaves: list[tuple[tuple[str, ...], Any]],
    data_change: bool,
    not_null: Sequence[str],
    writer_options: Mapping[str, str] | None,
    tight: bool | None,
) -> WrittenFiles:
    """The S3 write: each file at its final name, footers read from the bucket; files of a write
    refused for a NOT NULL violation are deleted again."""
    parts = urlsplit(root)
    spark_root = parts._replace(scheme="s3a").geturl()  # Hadoop's S3 client; the same objects
    made = final_names.write_at_final_names(df, spark_root, partition_columns, writer_options)
    storage_options = s3a.storage_options_of(df.sparkSession)
    found = [
        _Written(
            f.relative,
            _partition_values(root, f.relative.split("/")[:-1], partition_columns),
            f.relative,
            f.size,
            f.modification_time,
        )
        for f in made
    ]
    s3 = object_files.filesystem(storage_options)
    adds, nulls = _adds(
        found,
        partition_columns,
        leaves,
        data_change,
        lambda relative: pq.read_metadata(object_files.object_path(root, relative), filesystem=s3),
        tight,
    )
    try:
        _check_not_null(nulls, not_null, root)
    except NotNullViolationError:
        object_files.delete(root, [f.relative for f in made], storage_options)
        raise
    return WrittenFiles(tuple(adds))


def write_files(
    df: DataFrame,
    root: str,
    partition_columns: Sequence[str],
    leaves: list[tuple[tuple[str, ...], Any]],
    *,
    data_change: bool = True,
    not_null: Sequence[str] = (),
    writer_options: Mapping[str, str] | None = None,
    tight: bool | None = None,
) -> WrittenFiles:
    """Write ``df`` (already in table column order) as data files of the table at ``root`` (a
    local directory, or an S3 URL the session's S3A settings reach); ``tight``: the files'
    tightBounds (stats.tight_bounds).

    Raises NotNullViolationError, before any file reaches the table, when a ``not_null`` column
    received a null."""
    if object_files.is_s3(root):
        return _write_s3(df, root, partition_columns, leaves, data_change, not_null,
                         writer_options, tight)  # fmt: skip
    table_directory(root)
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
        adds, nulls = _adds(found, partition_columns, leaves, data_change, tight=tight)
        _check_not_null(nulls, not_null, root)
        for file in found:
            *directories, name = file.final.split("/")
            os.rename(file.source, os.path.join(safe_directory(root, directories), name))
        return WrittenFiles(tuple(adds))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
