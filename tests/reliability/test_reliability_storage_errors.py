"""Storage that refuses: a table root that is a file, a ``_delta_log`` that cannot be listed, a
file system that refuses writes during VACUUM and checkpoint writing, a read-only file system under
commits, checkpoints, log cleanup, VACUUM and deletion vectors. Each is a typed error naming the
table (TableNotFoundError for a root that is no directory, LogAccessError for the rest), never a
raw OSError or PermissionError; nothing is written outside what the operation owns and nothing
committed is damaged.

Refused writes are real: ``chmod 0o555`` for a user, and for root (whom permissions do not stop)
the immutable attribute (``chattr +i``), which root's writes and deletions respect too; a
read-only file system is a tmpfs remounted read-only where this process may mount, else the
audit hook of support.read_only.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from support import append_rows, create_reliability_table, reliability_metadata, tree_state
from support.read_only import MODES, ReadOnlyDirectory, read_only_directory

from deltaspec.impl.actions import Protocol, RemoveFile
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.deletion_vectors import write_deletion_vectors
from deltaspec.impl.errors import LogAccessError, TableNotFoundError
from deltaspec.impl.log.names import LOG_DIR, commit_name
from deltaspec.impl.retention.log_cleanup import cleanup_expired_logs
from deltaspec.impl.retention.vacuum import vacuum
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

AS_ROOT = os.geteuid() == 0


def _chattr(flag: str, directory: Path) -> None:
    subprocess.run(["chattr", flag, str(directory)], check=True, capture_output=True)


@contextmanager
def unwritable(directory: Path) -> Iterator[None]:
    """``directory`` refuses new entries and deletions, for root as for any user."""
    if not AS_ROOT:
        mode = directory.stat().st_mode
        directory.chmod(0o555)
        try:
            yield
        finally:
            directory.chmod(mode)
        return
    if shutil.which("chattr") is None:
        pytest.skip("root ignores permissions and chattr (e2fsprogs) is not installed")
    try:
        _chattr("+i", directory)
    except subprocess.CalledProcessError as refused:
        pytest.skip(f"root ignores permissions and chattr +i is refused here: {refused.stderr}")
    try:
        yield
    finally:
        _chattr("-i", directory)


def table_with_garbage(root: Path) -> tuple[DeltaLog, str]:
    """Versions 0-3: two appends, then the first file removed (VACUUM's to delete)."""
    log = create_reliability_table(root, **{"delta.checkpointInterval": "100"})
    _, _, gone = append_rows(log, "a", [1])
    append_rows(log, "a", [2])
    remove = RemoveFile(gone, deletion_timestamp=0, data_change=True)
    OptimisticTransaction(log).commit([remove], Operation("DELETE"))
    return DeltaLog(str(root)), gone


def test_a_table_root_that_is_a_file_is_no_table_and_stays_untouched(tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.write_bytes(b"not a table")
    with pytest.raises(TableNotFoundError, match="not a directory") as read:
        DeltaLog(str(root)).snapshot()
    assert read.value.table == str(root)
    with pytest.raises(LogAccessError) as written:
        OptimisticTransaction(DeltaLog(str(root))).commit([reliability_metadata()])
    assert (written.value.table, written.value.version) == (str(root), 0)
    assert written.value.file == commit_name(0)
    assert root.read_bytes() == b"not a table" and os.listdir(tmp_path) == ["t"]


def _log_is_a_file(log: Path) -> None:
    log.write_bytes(b"x")


UNLISTABLE = {"regular file": _log_is_a_file, "FIFO": os.mkfifo}


@pytest.mark.parametrize("make", UNLISTABLE.values(), ids=UNLISTABLE.keys())
def test_a_delta_log_that_is_no_directory_is_a_log_access_error(tmp_path: Path, make) -> None:
    root = tmp_path / "t"
    append_rows(create_reliability_table(root), "a", [1])
    shutil.rmtree(root / LOG_DIR)
    make(root / LOG_DIR)
    before = tree_state(tmp_path)
    for attempt in (
        lambda: DeltaLog(str(root)).snapshot(),
        lambda: OptimisticTransaction(DeltaLog(str(root))).commit([reliability_metadata()]),
    ):
        with pytest.raises(LogAccessError) as refused:
            attempt()
        assert (refused.value.table, refused.value.file) == (str(root), LOG_DIR)
    assert tree_state(tmp_path) == before


def test_a_delta_log_without_read_permission_is_a_log_access_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "t"
    append_rows(create_reliability_table(root), "a", [1])
    log_dir = root / LOG_DIR
    if AS_ROOT:  # root reads any directory: the listing is refused as the kernel would refuse it
        real = os.scandir

        def denied(path: str | os.PathLike[str] = ".") -> object:
            if os.fspath(path) == str(log_dir):
                raise PermissionError(13, os.strerror(13), os.fspath(path))
            return real(path)

        monkeypatch.setattr(os, "scandir", denied)
    else:
        log_dir.chmod(0o300)
    try:
        with pytest.raises(LogAccessError, match="Permission denied") as refused:
            DeltaLog(str(root)).snapshot()
    finally:
        log_dir.chmod(0o755)
    assert (refused.value.table, refused.value.file) == (str(root), LOG_DIR)


def test_vacuum_on_a_read_only_table_is_a_log_access_error(tmp_path: Path) -> None:
    log, gone = table_with_garbage(tmp_path / "t")
    before = tree_state(tmp_path)
    with unwritable(tmp_path / "t" / "p=a"), pytest.raises(LogAccessError) as refused:
        vacuum(log, retention_ms=0, enforce_retention=False)
    assert (refused.value.table, refused.value.version) == (log.table_path, 3)
    assert refused.value.file == gone
    assert tree_state(tmp_path) == before
    assert DeltaLog(log.table_path).snapshot().version == 3


def test_a_checkpoint_on_a_read_only_log_is_a_log_access_error(tmp_path: Path) -> None:
    log, _ = table_with_garbage(tmp_path / "t")
    before = tree_state(tmp_path)
    with unwritable(tmp_path / "t" / LOG_DIR), pytest.raises(LogAccessError) as refused:
        write_checkpoint(log, log.snapshot(), now_ms=1)
    assert (refused.value.table, refused.value.version) == (log.table_path, 3)
    assert refused.value.file == "00000000000000000003.checkpoint.parquet"
    assert tree_state(tmp_path) == before  # no checkpoint, no hint, no temporary file
    assert DeltaLog(log.table_path).snapshot().version == 3


# --- a read-only file system (EROFS) -------------------------------------------------------------

FAR = 4_000_000_000_000  # year 2096: every log file is past its retention


@pytest.fixture(params=MODES)
def read_only_table(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ReadOnlyDirectory]:
    """A directory holding the table ``t`` (versions 0-3), whose file system can be made
    read-only: a tmpfs remounted read-only, or the audit hook's refusals (support.read_only)."""
    with read_only_directory(tmp_path / "ro", request.param) as directory:
        table_with_garbage(directory.path / "t")
        yield directory


def _refused_on_read_only(directory: ReadOnlyDirectory, attempt: Any) -> LogAccessError:
    before = tree_state(directory.path)
    with directory.read_only(), pytest.raises(LogAccessError) as refused:
        attempt()
    assert tree_state(directory.path) == before
    assert refused.value.table == str(directory.path / "t")
    return refused.value


@pytest.mark.rules("PATH.REGULAR_FILES")
def test_a_checkpoint_on_a_read_only_file_system_is_a_log_access_error(
    read_only_table: ReadOnlyDirectory,
) -> None:
    """The removal of the temporary file that was never created fails too (EROFS, not ENOENT):
    it no longer hides the refusal behind a raw OSError."""
    log = DeltaLog(str(read_only_table.path / "t"))
    snapshot = log.snapshot()
    for parts in (None, 2):
        refused = _refused_on_read_only(
            read_only_table, partial(write_checkpoint, log, snapshot, parts=parts, now_ms=1)
        )
        assert refused.version == 3
        assert refused.file.startswith("00000000000000000003.checkpoint.")  # type: ignore[union-attr]
    assert DeltaLog(log.table_path).snapshot().version == 3


@pytest.mark.rules("PATH.REGULAR_FILES")
def test_a_commit_on_a_read_only_file_system_is_refused_at_once(
    read_only_table: ReadOnlyDirectory,
) -> None:
    """Refused, not retried ten times and reported as DELTA_COMMIT_FAILED."""
    log = DeltaLog(str(read_only_table.path / "t"))
    txn = OptimisticTransaction(log)
    refused = _refused_on_read_only(read_only_table, lambda: txn.commit([], Operation("WRITE")))
    assert (refused.version, refused.file) == (4, commit_name(4))


@pytest.mark.rules("PATH.REGULAR_FILES", "RETENTION.LOG")
def test_log_cleanup_and_vacuum_on_a_read_only_file_system_are_log_access_errors(
    read_only_table: ReadOnlyDirectory,
) -> None:
    log = DeltaLog(str(read_only_table.path / "t"))
    write_checkpoint(log, log.snapshot(), now_ms=1)
    metadata = log.snapshot().metadata
    refused = _refused_on_read_only(
        read_only_table, lambda: cleanup_expired_logs(log, 3, FAR, metadata)
    )
    assert refused.version == 0 and refused.file.startswith("00000000000000000000.")  # type: ignore[union-attr]
    refused = _refused_on_read_only(
        read_only_table,
        lambda: vacuum(log, retention_ms=0, enforce_retention=False, now_ms=FAR),
    )
    assert refused.version == 3
    assert DeltaLog(log.table_path).snapshot().version == 3


@pytest.mark.rules("PATH.REGULAR_FILES")
def test_writing_a_deletion_vector_on_a_read_only_file_system_is_a_log_access_error(
    read_only_table: ReadOnlyDirectory,
) -> None:
    root = str(read_only_table.path / "t")
    refused = _refused_on_read_only(read_only_table, lambda: write_deletion_vectors(root, [{1}]))
    assert refused.file.startswith("deletion_vector_")  # type: ignore[union-attr]


@pytest.mark.rules("PATH.REGULAR_FILES")
def test_a_directory_in_place_of_last_checkpoint_or_sidecars_is_a_log_access_error(
    tmp_path: Path,
) -> None:
    """The checkpoint files are written; the hint that cannot replace a directory, or the
    sidecar that cannot be put under a ``_sidecars`` that is a file, is a typed refusal."""
    log, _ = table_with_garbage(tmp_path / "t")
    (tmp_path / "t" / LOG_DIR / "_last_checkpoint").mkdir()
    with pytest.raises(LogAccessError) as refused:
        write_checkpoint(log, log.snapshot(), now_ms=1)
    assert (refused.value.table, refused.value.file) == (log.table_path, "_last_checkpoint")
    v2 = create_reliability_table(tmp_path / "v2", **{"delta.checkpointPolicy": "v2"})
    OptimisticTransaction(v2).commit(
        [Protocol(3, 7, ("v2Checkpoint",), ("v2Checkpoint", "appendOnly", "invariants"))]
    )
    (tmp_path / "v2" / LOG_DIR / "_sidecars").write_bytes(b"not a directory")
    with pytest.raises(LogAccessError) as refused:
        write_checkpoint(v2, v2.snapshot(), now_ms=1)
    assert refused.value.version == 1
    assert refused.value.file.startswith("_sidecars/")  # type: ignore[union-attr]
