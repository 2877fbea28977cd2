"""VACUUM (deltaspec.impl.retention.vacuum): what it deletes, and everything it must never delete.

The table's history is laid out over days with an injected clock; commit files and data files get
matching modification times, so that "within the retention window" means what it says.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from support import create_reliability_table, tree_state, write_data_file

from deltaspec.impl import codec
from deltaspec.impl.actions import AddFile, DeletionVector, RemoveFile
from deltaspec.impl.codec.z85 import z85_encode
from deltaspec.impl.errors import VacuumRetentionNegativeError, VacuumRetentionTooShortError
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.retention.vacuum import deletion_vector_path, hidden_name, vacuum
from deltaspec.impl.snapshot.delta_log import DeltaLog, wall_clock_ms
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

DAY = 24 * 3600 * 1000
START = wall_clock_ms() - 30 * DAY  # day 0 of every history below


class History:
    """A table whose clock is set day by day; every file written gets that day's mtime."""

    def __init__(self, root: Path, **configuration: str) -> None:
        self.root = root
        self.now = START
        create_reliability_table(root, **configuration)
        self.stamp(root / "_delta_log" / commit_name(0))
        self.log = DeltaLog(str(root), clock=lambda: self.now)

    def day(self, n: float) -> None:
        self.now = START + int(n * DAY)

    def stamp(self, path: Path) -> None:
        seconds = (START if not hasattr(self, "now") else self.now) / 1000
        os.utime(path, (seconds, seconds), follow_symlinks=False)

    def data_file(self, part: str = "a") -> AddFile:
        add = write_data_file(self.root, part, [1])
        self.stamp(self.root / add.path)
        return add

    def commit(self, *actions: AddFile | RemoveFile, op: str = "WRITE") -> int:
        txn = OptimisticTransaction(self.log, clock=lambda: self.now)
        version = txn.commit(list(actions), Operation(op))
        self.stamp(self.root / "_delta_log" / commit_name(version))
        return version

    def remove(self, add: AddFile, stamp: int | None = None) -> RemoveFile:
        when = self.now if stamp is None else stamp
        return RemoveFile(add.path, when, True, True, add.partition_values, add.size)


def files_of_versions_within(log: DeltaLog, cutoff: int) -> set[str]:
    """The files of every version a reader may travel to: committed after the cutoff, and the
    version current at the cutoff."""
    listing = log.list_log(None)
    versions = sorted(listing.commits)
    after = [v for v in versions if listing.commits[v].modification_time > cutoff]
    at_cutoff = [v for v in versions if listing.commits[v].modification_time <= cutoff][-1:]
    return {p for v in at_cutoff + after for p, _ in log.snapshot(v).files}


@pytest.mark.rules("RETENTION.TOMBSTONES", "SNAPSHOT.TIME_TRAVEL")
def test_vacuum_deletes_expired_files_and_keeps_every_version_within_retention(
    tmp_path: Path,
) -> None:
    h = History(tmp_path)
    a, b, c = h.data_file("a"), h.data_file("b"), h.data_file("c")
    h.commit(a, b, c)
    h.day(2)
    h.commit(h.remove(a), op="DELETE")  # expired by day 12
    h.day(10)
    d = h.data_file("a")
    h.commit(h.remove(b), d, op="UPDATE")  # b's tombstone is within retention
    h.day(11)
    # a writer with a skewed clock: the remove commits on day 11 but says day 1
    h.commit(h.remove(c, stamp=START + 1 * DAY), op="DELETE")
    h.day(12)
    orphan_old = h.data_file("z")  # never committed, written on day 12... made old below
    os.utime(tmp_path / orphan_old.path, ((START + DAY) / 1000,) * 2)
    orphan_new = write_data_file(tmp_path, "z", [2])  # an in-flight writer's file, written now
    h.day(12)
    cutoff = h.now - 7 * DAY
    needed = files_of_versions_within(h.log, cutoff)

    dry = vacuum(h.log, dry_run=True)
    assert dry.deleted == tuple(sorted([a.path, orphan_old.path]))
    assert (tmp_path / a.path).exists()  # a dry run deletes nothing
    result = vacuum(h.log)
    assert result.deleted == dry.deleted and result.cutoff_ms == cutoff
    assert not (tmp_path / a.path).exists() and not (tmp_path / orphan_old.path).exists()
    for path in needed | {b.path, c.path, d.path, orphan_new.path}:
        assert (tmp_path / path).exists(), path
    assert result.too_recent >= 1  # the in-flight file
    assert vacuum(h.log).deleted == ()  # nothing left to do


@pytest.mark.rules("RETENTION.TOMBSTONES")
def test_retention_below_the_table_setting_is_refused_unless_overridden(tmp_path: Path) -> None:
    h = History(tmp_path, **{"delta.deletedFileRetentionDuration": "interval 2 days"})
    a = h.data_file()
    h.commit(a)
    h.day(1)
    h.commit(h.remove(a), op="DELETE")
    h.day(3.5)
    with pytest.raises(VacuumRetentionTooShortError) as raised:
        vacuum(h.log, retention_ms=DAY)
    assert raised.value.table == str(tmp_path) and raised.value.version == 2
    assert "24 hours" in str(raised.value) and "48 hours" in str(raised.value)
    assert (tmp_path / a.path).exists()
    assert vacuum(h.log, retention_ms=3 * DAY).deleted == ()  # day 1 is within 3 days
    assert vacuum(h.log).deleted == (a.path,)  # the table's 2 days
    with pytest.raises(VacuumRetentionNegativeError):
        vacuum(h.log, retention_ms=-1, enforce_retention=False)
    b = h.data_file()
    h.commit(b)
    h.commit(h.remove(b), op="DELETE")
    h.day(4)
    assert vacuum(h.log, retention_ms=0, enforce_retention=False).deleted == (b.path,)


@pytest.mark.rules("RETENTION.TOMBSTONES")
def test_vacuum_never_leaves_the_table_root_or_touches_the_log(tmp_path: Path) -> None:
    root, outside = tmp_path / "t", tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.parquet").write_bytes(b"keep me")
    (outside / "dir").mkdir()
    (outside / "dir" / "also.parquet").write_bytes(b"keep me too")
    h = History(root)
    a = h.data_file()
    h.commit(a)
    inside_abs = h.data_file("b")
    h.commit(AddFile(str(root / inside_abs.path), {"p": "b"}, inside_abs.size, 0, True))
    os.symlink(outside / "precious.parquet", root / "p=a" / "link.parquet")
    os.symlink(outside / "dir", root / "p=y")
    (root / "_hidden").mkdir()
    (root / "_hidden" / "x.parquet").write_bytes(b"hidden")
    (root / ".secret.parquet").write_bytes(b"hidden")
    (root / "_delta_log" / "junk.json").write_bytes(b"{}")
    old = (START / 1000, START / 1000)
    for path in root.rglob("*"):
        os.utime(path, old, follow_symlinks=False)
    for path in outside.rglob("*"):
        os.utime(path, old)
    before_outside = tree_state(outside)
    before_log = tree_state(root / "_delta_log")
    h.day(30)
    result = vacuum(h.log, retention_ms=0, enforce_retention=False)
    assert result.deleted == ()
    assert result.symlinks == ("p=a/link.parquet", "p=y")
    assert tree_state(outside) == before_outside
    assert tree_state(root / "_delta_log") == before_log
    assert (root / "_hidden" / "x.parquet").exists() and (root / ".secret.parquet").exists()
    assert (root / inside_abs.path).exists()  # referenced by an absolute path inside the root
    assert os.path.islink(root / "p=a" / "link.parquet")


@pytest.mark.rules("SNAPSHOT.FILE_KEY")
def test_deletion_vector_files_of_live_files_are_kept(tmp_path: Path) -> None:
    h = History(tmp_path)
    used, unused = uuid.uuid4(), uuid.uuid4()
    dv = DeletionVector("u", "ab" + z85_encode(used.bytes), 40, 1, 1)
    assert deletion_vector_path(str(tmp_path), dv) == f"ab/deletion_vector_{used}.bin"
    for name in (f"ab/deletion_vector_{used}.bin", f"deletion_vector_{unused}.bin"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(b"dv")
        os.utime(tmp_path / name, (START / 1000,) * 2)
    add = h.data_file()
    # written as another engine would: this table does not enable deletion vectors for writes
    # (DV.ADD_CHECKS); VACUUM must keep the DV files of whatever the log holds
    with_dv = AddFile(add.path, add.partition_values, add.size, 0, True, deletion_vector=dv)
    line = codec.encode_commit([with_dv])
    (tmp_path / "_delta_log" / commit_name(1)).write_bytes(line)
    h.stamp(tmp_path / "_delta_log" / commit_name(1))
    h.day(30)
    result = vacuum(h.log, retention_ms=0, enforce_retention=False)
    assert result.deleted == (f"deletion_vector_{unused}.bin",)
    assert (tmp_path / "ab" / f"deletion_vector_{used}.bin").exists()


def test_hidden_names_are_delta_sparks(tmp_path: Path) -> None:
    """Names starting with ``_`` or ``.`` are hidden at any depth, except ``_delta_index``,
    ``_change_data`` and the directories of the table's own partition columns: a ``_x=1``
    directory no partition column names is kept, old unreferenced change data is cleaned."""
    root = tmp_path / "t"
    h = History(root)
    h.commit(h.data_file())
    planted = {
        "_x=1/f.parquet": "kept",
        "p=a/_tmp.parquet": "kept",
        ".p=a/f.parquet": "kept",
        "_hidden/p=a/f.parquet": "kept",
        "_change_data/cdc-00000.parquet": "deleted",
        "_delta_index/i.parquet": "deleted",
        "p=a/orphan.parquet": "deleted",
        "q=1/f.parquet": "deleted",
    }
    for relative in planted:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_bytes(b"x")
        h.stamp(root / relative)
    h.day(30)
    result = vacuum(h.log, retention_ms=0, enforce_retention=False)
    assert result.deleted == tuple(sorted(p for p, fate in planted.items() if fate == "deleted"))
    assert all((root / p).exists() for p, fate in planted.items() if fate == "kept")


@pytest.mark.parametrize(
    ("name", "columns", "hidden"),
    [
        ("_x", (), True),
        (".x", (), True),
        ("x", (), False),
        ("p=1", ("p",), False),
        ("_p=1", ("_p",), False),
        ("_x=1", ("p",), True),
        ("_p=1", ("p",), True),
        ("_change_data", (), False),
        ("_delta_index", (), False),
        ("_delta_log", (), True),
    ],
)
def test_hidden_name(name: str, columns: tuple[str, ...], hidden: bool) -> None:
    assert hidden_name(name, columns) is hidden
