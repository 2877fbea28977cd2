"""A battery of hostile inputs on local files (issue 48), beyond the loads of
test_reliability_corrupt.py: multi-part and v2 checkpoints, data and deletion-vector files under a
scan, writers (a commit, a checkpoint, log cleanup, VACUUM) meeting something planted at the names
they write or delete, table roots that are no directory, and the CLI over such tables.

Every input ends in the typed error its neighbours end in (a DeltaError subclass, never a raw
OSError or Arrow error), naming the table, the version and the file where they apply, or where the
protocol says so in a success. Nothing outside the table root is touched: the directory around it
(which holds the files that planted links point at) is compared before and after. Nothing hangs:
a watchdog dumps every thread's stack and ends the test process after :data:`WATCHDOG_S` seconds.
"""

from __future__ import annotations

import dataclasses
import faulthandler
import json
import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import append_rows, create_reliability_table, reliability_metadata, tree_state

from deltaspec.cli import SETUP_ERROR, main
from deltaspec.impl.actions import Protocol, RemoveFile
from deltaspec.impl.checkpoint.contents import CHECKPOINT_SCHEMA, checkpoint_table
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.deletion_vectors import write_deletion_vectors
from deltaspec.impl.errors import (
    CorruptDataFileError,
    CorruptLogError,
    DataFileNotFoundError,
    DeltaError,
    InvalidArgumentError,
    LogAccessError,
    NotRegularFileError,
    TableNotFoundError,
    UnsafePathError,
)
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.retention.log_cleanup import cleanup_expired_logs
from deltaspec.impl.retention.vacuum import vacuum
from deltaspec.impl.scan import scan
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

WATCHDOG_S = 60
FAR = 4_000_000_000_000  # year 2096: past every retention
NOW = 1_800_000_000_000
C0, C4 = commit_name(0), commit_name(4)
CP2 = "00000000000000000002.checkpoint.parquet"
CP3 = "00000000000000000003.checkpoint.parquet"
PART1 = "00000000000000000002.checkpoint.0000000001.0000000002.parquet"
PART2 = "00000000000000000002.checkpoint.0000000002.0000000002.parquet"
SIDECARS = "_sidecars/"
V2_TOP = "00000000000000000004.checkpoint."
DATA = "p=a/"
DV_FILE = "deletion_vector_"
V2_FEATURES = Protocol(3, 7, ("v2Checkpoint",), ("v2Checkpoint", "appendOnly", "invariants"))
DV_FEATURES = Protocol(3, 7, ("deletionVectors",), ("deletionVectors", "appendOnly", "invariants"))
V2_PROTOCOL = {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                            "readerFeatures": ["v2Checkpoint"],
                            "writerFeatures": ["v2Checkpoint"]}}  # fmt: skip


@dataclass(frozen=True)
class Hostile:
    """One hostile input: the table it starts from, how it is made hostile, what meets it."""

    name: str
    table: str
    """``classic`` (versions 0-3), ``v2`` (v2 checkpoint policy, versions 0-4) or ``dv``
    (deletion vectors, versions 0-2, one vector in a file)."""
    build: Callable[[Path, Path], Any]
    """Makes the table at ``root`` hostile; ``outside`` is a sibling to point links at."""
    act: Callable[[Path], Any]
    expect: type[DeltaError] | None
    """The error, or None: the protocol says the act succeeds."""
    version: int | None = None
    file: str | None = None
    """The error's file (relative to ``_delta_log`` for a log file, to the root for a data
    file)."""
    file_prefix: str | None = None
    """Instead of ``file``: how the error's file begins (a name holding a UUID)."""


# --- the tables ----------------------------------------------------------------------------------


def log_dir(root: Path) -> Path:
    return root / "_delta_log"


def _classic(root: Path) -> None:
    log = create_reliability_table(root, **{"delta.checkpointInterval": "100"})
    for part in "abc":
        append_rows(log, part, [1, 2])


def _v2(root: Path) -> None:
    config = {"delta.checkpointInterval": "100", "delta.checkpointPolicy": "v2"}
    log = create_reliability_table(root, **config)
    OptimisticTransaction(log).commit([V2_FEATURES], Operation("SET TBLPROPERTIES"))
    for part in "abc":
        append_rows(log, part, [1, 2])


def _dv(root: Path) -> None:
    log = create_reliability_table(root, **{"delta.enableDeletionVectors": "true"})
    OptimisticTransaction(log).commit([DV_FEATURES], Operation("SET TBLPROPERTIES"))
    append_rows(log, "a", [1, 2, 3])
    (live,) = DeltaLog(str(root)).snapshot().files.values()
    (vector,) = write_deletion_vectors(str(root), [{0}])
    gone = RemoveFile(
        path=live.path,
        deletion_timestamp=1,
        data_change=True,
        partition_values=live.partition_values,
        size=live.size,
    )
    marked = dataclasses.replace(live, deletion_vector=vector)
    OptimisticTransaction(log).commit([gone, marked], Operation("DELETE"))


TABLES = {"classic": _classic, "v2": _v2, "dv": _dv}


# --- what meets the input ------------------------------------------------------------------------


def load(root: Path) -> Any:
    return DeltaLog(str(root)).snapshot()


def scan_rows(root: Path) -> Any:
    return scan(DeltaLog(str(root)).snapshot(), root)


def commit(root: Path) -> Any:
    return OptimisticTransaction(DeltaLog(str(root))).commit([], Operation("WRITE"))


def create(root: Path) -> Any:
    return OptimisticTransaction(DeltaLog(str(root))).commit([reliability_metadata()])


def checkpoint(root: Path) -> Any:
    log = DeltaLog(str(root))
    return write_checkpoint(log, log.snapshot(), now_ms=NOW)


def clean_up(root: Path) -> Any:
    log = DeltaLog(str(root))
    return cleanup_expired_logs(log, 3, FAR, log.snapshot().metadata)


def vacuum_all(root: Path) -> Any:
    return vacuum(DeltaLog(str(root)), retention_ms=0, enforce_retention=False, now_ms=FAR)


# --- building blocks -----------------------------------------------------------------------------


def drop_commits(root: Path, upto: int) -> None:
    for version in range(upto + 1):
        (log_dir(root) / commit_name(version)).unlink()


def checkpoint_rows(root: Path, version: int = 2) -> list[dict[str, Any]]:
    table = checkpoint_table(DeltaLog(str(root)).snapshot(version), now_ms=NOW)
    return table.to_pylist()  # type: ignore[no-any-return]


def first(rows: list[dict[str, Any]], column: str) -> dict[str, Any]:
    return next(r for r in rows if r.get(column) is not None)


def put_rows(path: Path, rows: list[dict[str, Any]], schema: pa.Schema = CHECKPOINT_SCHEMA) -> None:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def retyped(field: str, kind: pa.DataType, value: Any) -> Callable[[Path, Path], None]:
    """Checkpoint 2 with the ``action.field`` column stored as ``kind`` (``value`` in the row
    that has the action), commits 0-2 gone."""
    action, child = field.split(".")

    def build(root: Path, outside: Path) -> None:
        rows = checkpoint_rows(root)
        struct = CHECKPOINT_SCHEMA.field(action).type
        children = [pa.field(child, kind) if f.name == child else f for f in struct]
        schema = CHECKPOINT_SCHEMA.set(
            CHECKPOINT_SCHEMA.get_field_index(action), pa.field(action, pa.struct(children))
        )
        for row in rows:
            if row[action] is not None:
                row[action][child] = value
        put_rows(log_dir(root) / CP2, rows, schema)
        drop_commits(root, 2)

    return build


def two_parts(edit: Callable[[list[dict[str, Any]], list[dict[str, Any]]], None]) -> Callable[
        [Path, Path], None]:  # fmt: skip
    """A two-part checkpoint of version 2 (non-file rows in part 1, files in part 2) after
    ``edit(part1, part2)``, commits 0-2 gone."""

    def build(root: Path, outside: Path) -> None:
        rows = checkpoint_rows(root)
        files = [r for r in rows if r["add"] is not None or r["remove"] is not None]
        others = [r for r in rows if r not in files]
        edit(others, files)
        put_rows(log_dir(root) / PART1, others)
        put_rows(log_dir(root) / PART2, files)
        drop_commits(root, 2)

    return build


def classic_with_marker(root: Path, outside: Path) -> None:
    """Checkpoint 2 holding a checkpointMetadata of version 7 (a v2 marker of another
    checkpoint)."""
    marker = pa.struct([("version", pa.int64()), ("tags", pa.map_(pa.string(), pa.string()))])
    schema = CHECKPOINT_SCHEMA.append(pa.field("checkpointMetadata", marker))
    rows = [*checkpoint_rows(root), {"checkpointMetadata": {"version": 7, "tags": None}}]
    put_rows(log_dir(root) / CP2, rows, schema)
    drop_commits(root, 2)


def v2_checkpoint(edit: Callable[[Path, Path, Path], None]) -> Callable[[Path, Path], None]:
    """The v2 checkpoint of version 4 (a top-level JSON file and a sidecar) after
    ``edit(top, sidecar, outside)``, commits 0-4 gone."""

    def build(root: Path, outside: Path) -> None:
        written = checkpoint(root)
        top, sidecar = (log_dir(root) / name for name in written.files)
        edit(top, sidecar, outside)
        drop_commits(root, 4)

    return build


def top_lines(edit: Callable[[list[dict[str, Any]]], None]) -> Callable[[Path, Path, Path], None]:
    """The top-level JSON file's actions after ``edit``."""

    def change(top: Path, sidecar: Path, outside: Path) -> None:
        lines = [json.loads(line) for line in top.read_text().splitlines() if line]
        edit(lines)
        top.write_text("".join(json.dumps(line) + "\n" for line in lines))

    return change


def marker(lines: list[dict[str, Any]]) -> dict[str, Any]:
    return next(line["checkpointMetadata"] for line in lines if "checkpointMetadata" in line)


def replace_with(kind: str) -> Callable[[Path, Path], None]:
    """``path`` replaced by a directory, a FIFO, an empty file or a link out of the table."""

    def make(path: Path, outside: Path) -> None:
        if path.exists() or path.is_symlink():
            path.unlink()
        if kind == "directory":
            path.mkdir()
        elif kind == "FIFO":
            os.mkfifo(path)
        elif kind == "link":
            (outside / path.name).write_bytes(b"outside")
            path.symlink_to(outside / path.name)

    return make


def sidecar_as(kind: str) -> Callable[[Path, Path], None]:
    return v2_checkpoint(lambda top, sidecar, outside: replace_with(kind)(sidecar, outside))


def data_file(edit: Callable[[Path, Path], None]) -> Callable[[Path, Path], None]:
    """The first live data file of the table after ``edit(file, outside)``."""

    def build(root: Path, outside: Path) -> None:
        path = sorted(DeltaLog(str(root)).snapshot().files)[0][0]
        edit(root / path, outside)

    return build


def dv_file(edit: Callable[[Path, Path], None]) -> Callable[[Path, Path], None]:
    def build(root: Path, outside: Path) -> None:
        (path,) = root.glob("deletion_vector_*.bin")
        edit(path, outside)

    return build


def truncate(path: Path, outside: Path) -> None:
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def flip_last_byte(path: Path, outside: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))


def ids_as_strings(path: Path, outside: Path) -> None:
    pq.write_table(pa.table({"id": pa.array(["one", "two"])}), path)


def at_log_name(name: str, kind: str) -> Callable[[Path, Path], None]:
    return lambda root, outside: replace_with(kind)(log_dir(root) / name, outside)


def checkpointed_then(edit: Callable[[Path, Path], None]) -> Callable[[Path, Path], None]:
    """A checkpoint of version 3 written (so commits 0-2 may expire), then ``edit``."""

    def build(root: Path, outside: Path) -> None:
        checkpoint(root)
        edit(root, outside)

    return build


def root_as(kind: str) -> Callable[[Path, Path], None]:
    def build(root: Path, outside: Path) -> None:
        shutil.rmtree(root)
        if kind == "FIFO":
            os.mkfifo(root)
        elif kind == "dangling link":
            root.symlink_to(outside / "nowhere")
        elif kind == "file":
            root.write_bytes(b"not a table")

    return build


# --- the battery ---------------------------------------------------------------------------------

CHECKPOINTS: tuple[Hostile, ...] = (
    Hostile("add.size stored as a string", "classic", retyped("add.size", pa.string(), "10"),
            load, CorruptLogError, 2, CP2),
    Hostile("add.path stored as a number", "classic", retyped("add.path", pa.int64(), 7), load,
            CorruptLogError, 2, CP2),
    Hostile("protocol.minReaderVersion stored as a string", "classic",
            retyped("protocol.minReaderVersion", pa.string(), "1"), load, CorruptLogError, 2, CP2),
    Hostile("txn.version stored as a string", "classic",
            retyped("txn.version", pa.string(), "1"), load, CorruptLogError, 2, CP2),
    Hostile("multi-part: the protocol in both parts", "classic",
            two_parts(lambda one, two: two.append(first(one, "protocol"))), load,
            CorruptLogError, 2, PART1),
    Hostile("multi-part: the metaData in both parts", "classic",
            two_parts(lambda one, two: two.append(first(one, "metaData"))), load,
            CorruptLogError, 2, PART1),
    Hostile("multi-part: one live file in both parts", "classic",
            two_parts(lambda one, two: one.append(first(two, "add"))), load,
            CorruptLogError, 2, PART1),
    Hostile("multi-part: a row holding an add and a remove", "classic",
            two_parts(lambda one, two: first(two, "add").update(
                remove={"path": "p=a/x.parquet", "deletionTimestamp": 1, "dataChange": True})),
            load, CorruptLogError, 2, PART2),
    Hostile("classic checkpoint holding a checkpointMetadata of another version", "classic",
            classic_with_marker, load, CorruptLogError, 2, CP2),
    Hostile("v2: sidecar missing", "v2", sidecar_as("missing"), load, CorruptLogError, 4,
            file_prefix=SIDECARS),
    Hostile("v2: sidecar truncated", "v2", v2_checkpoint(lambda t, s, o: truncate(s, o)), load,
            CorruptLogError, 4, file_prefix=SIDECARS),
    Hostile("v2: sidecar is a directory", "v2", sidecar_as("directory"), load,
            NotRegularFileError, 4, file_prefix=SIDECARS),
    Hostile("v2: sidecar is a FIFO", "v2", sidecar_as("FIFO"), load, NotRegularFileError, 4,
            file_prefix=SIDECARS),
    Hostile("v2: sidecar is a link out of the table", "v2", sidecar_as("link"), load,
            UnsafePathError, 4, file_prefix=SIDECARS),
    Hostile("v2: two checkpointMetadata", "v2",
            v2_checkpoint(top_lines(lambda lines: lines.append({"checkpointMetadata": marker(
                lines)}))), load, CorruptLogError, 4, file_prefix=V2_TOP),
    Hostile("v2: checkpointMetadata of another version", "v2",
            v2_checkpoint(top_lines(lambda lines: marker(lines).update(version=3))), load,
            CorruptLogError, 4, file_prefix=V2_TOP),
    Hostile("v2: the protocol twice", "v2",
            v2_checkpoint(top_lines(lambda lines: lines.append(V2_PROTOCOL))), load,
            CorruptLogError, 4, file_prefix=V2_TOP),
    Hostile("v2: a sidecar named by a ../ path", "v2",
            v2_checkpoint(top_lines(lambda lines: next(
                line["sidecar"] for line in lines if "sidecar" in line).update(
                path="../../" + C0))), load, CorruptLogError, 4, file_prefix=SIDECARS),
)  # fmt: skip

DATA_FILES: tuple[Hostile, ...] = (
    Hostile("data file missing", "classic", data_file(replace_with("missing")), scan_rows,
            DataFileNotFoundError, file_prefix=DATA),
    Hostile("data file truncated", "classic", data_file(truncate), scan_rows,
            CorruptDataFileError, file_prefix=DATA),
    Hostile("data file empty", "classic", data_file(lambda p, o: p.write_bytes(b"")), scan_rows,
            CorruptDataFileError, file_prefix=DATA),
    Hostile("data file is a directory", "classic", data_file(replace_with("directory")),
            scan_rows, NotRegularFileError, file_prefix=DATA),
    Hostile("data file is a FIFO", "classic", data_file(replace_with("FIFO")), scan_rows,
            NotRegularFileError, file_prefix=DATA),
    Hostile("data file is a link out of the table", "classic", data_file(replace_with("link")),
            scan_rows, UnsafePathError, file_prefix=DATA),
    Hostile("data file with ids as strings", "classic", data_file(ids_as_strings), scan_rows,
            CorruptDataFileError, file_prefix=DATA),
    Hostile("deletion-vector file missing", "dv", dv_file(replace_with("missing")), scan_rows,
            DataFileNotFoundError, file_prefix=DV_FILE),
    Hostile("deletion-vector file truncated", "dv", dv_file(truncate), scan_rows,
            CorruptLogError, file_prefix=DV_FILE),
    Hostile("deletion-vector file with a bad CRC", "dv", dv_file(flip_last_byte), scan_rows,
            CorruptLogError, file_prefix=DV_FILE),
    Hostile("deletion-vector file is a FIFO", "dv", dv_file(replace_with("FIFO")), scan_rows,
            NotRegularFileError, file_prefix=DV_FILE),
)  # fmt: skip

WRITERS: tuple[Hostile, ...] = (
    Hostile("commit: a directory at the next commit's name", "classic",
            at_log_name(C4, "directory"), commit, NotRegularFileError, 4, C4),
    Hostile("commit: a FIFO at the next commit's name", "classic", at_log_name(C4, "FIFO"),
            commit, NotRegularFileError, 4, C4),
    Hostile("commit: a link out of the table at the next commit's name", "classic",
            at_log_name(C4, "link"), commit, UnsafePathError, 4, C4),
    Hostile("checkpoint: a directory at its name", "classic", at_log_name(CP3, "directory"),
            checkpoint, NotRegularFileError, 3, CP3),
    Hostile("checkpoint: a link out of the table at its name", "classic",
            at_log_name(CP3, "link"), checkpoint, UnsafePathError, 3, CP3),
    Hostile("checkpoint: a FIFO at its name is replaced", "classic", at_log_name(CP3, "FIFO"),
            checkpoint, None),
    Hostile("checkpoint: a link at _last_checkpoint is replaced, never followed", "classic",
            at_log_name("_last_checkpoint", "link"), checkpoint, None),
    Hostile("checkpoint: a directory at _last_checkpoint", "classic",
            at_log_name("_last_checkpoint", "directory"), checkpoint, LogAccessError, None,
            "_last_checkpoint"),
    Hostile("checkpoint: _sidecars is a regular file", "v2",
            lambda r, o: (log_dir(r) / "_sidecars").write_bytes(b"x"), checkpoint,
            LogAccessError, 4, file_prefix=SIDECARS),
    Hostile("checkpoint: _sidecars is a link out of the table", "v2",
            lambda r, o: (log_dir(r) / "_sidecars").symlink_to(o), checkpoint, UnsafePathError,
            None, "_delta_log/_sidecars"),
    Hostile("log cleanup: a directory at an expired commit's name", "classic",
            checkpointed_then(lambda r, o: replace_with("directory")(log_dir(r) / C0, o)),
            clean_up, NotRegularFileError, 0, C0),
    Hostile("log cleanup: an expired commit is a link out of the table", "classic",
            checkpointed_then(lambda r, o: replace_with("link")(log_dir(r) / C0, o)), clean_up,
            None),
    Hostile("VACUUM: a data directory is a link out of the table", "classic",
            lambda r, o: ((o / "p=d").mkdir(), (o / "p=d" / "old.parquet").write_bytes(b"k"),
                          (r / "p=d").symlink_to(o / "p=d")), vacuum_all, None),
    Hostile("VACUUM: a FIFO named like a data file", "classic",
            lambda r, o: os.mkfifo(r / "p=a" / "stray.parquet"), vacuum_all, None),
)  # fmt: skip

ROOTS: tuple[Hostile, ...] = (
    Hostile("the root is a FIFO: read", "classic", root_as("FIFO"), load, TableNotFoundError),
    Hostile("the root is a FIFO: create", "classic", root_as("FIFO"), create, LogAccessError, 0,
            C0),
    Hostile("the root is a dangling link: read", "classic", root_as("dangling link"), load,
            TableNotFoundError),
    Hostile("the root lies below a regular file: create", "classic", root_as("file"),
            lambda r: create(r / "below"), LogAccessError, 0, C0),
)  # fmt: skip

BATTERY = (*CHECKPOINTS, *DATA_FILES, *WRITERS, *ROOTS)


def _outside(base: Path, root: Path) -> dict[str, Any]:
    """Everything under ``base`` but what lies inside the table root (the root itself kept)."""
    inside = os.path.relpath(root, base) + os.sep
    return {path: entry for path, entry in tree_state(base).items() if not path.startswith(inside)}


def _met(act: Callable[[Path], Any], root: Path) -> Any:
    """What ``act`` returned or raised, under the watchdog."""
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True, file=sys.__stderr__)
    try:
        return act(root)
    except Exception as raised:  # a raw error is a finding: the assertions name it
        return raised
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture
def hostile(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    """The table of the battery entry (``request.param``) at ``tmp_path/t``, made hostile."""
    bad: Hostile = request.param
    root, outside = tmp_path / "t", tmp_path / "outside"
    outside.mkdir()
    (outside / "canary.parquet").write_bytes(b"canary")
    TABLES[bad.table](root)
    bad.build(root, outside)
    return root, outside


@pytest.mark.rules("CHECKPOINT.CONTENTS", "CHECKPOINT.READ", "PATH.REGULAR_FILES",
                   "PATH.NO_SYMLINKS", "PATH.DATA_FILE", "RETENTION.LOG")  # fmt: skip
@pytest.mark.parametrize(("bad", "hostile"), [(b, b) for b in BATTERY],
                         ids=[b.name for b in BATTERY], indirect=["hostile"])  # fmt: skip
def test_hostile_input(bad: Hostile, hostile: tuple[Path, Path], tmp_path: Path) -> None:
    root, _ = hostile
    before = _outside(tmp_path, root)

    result = _met(bad.act, root)

    assert _outside(tmp_path, root) == before, "something outside the table root changed"
    if bad.expect is None:
        assert not isinstance(result, Exception), f"{bad.name}: {result!r}"
        return
    assert type(result) is bad.expect, f"{bad.name}: {result!r}"
    assert result.table in (str(root), str(root / "below"))
    assert result.version == bad.version, result
    if bad.file_prefix is None:
        assert result.file == bad.file, result
    else:
        assert (result.file or "").startswith(bad.file_prefix), result


@pytest.mark.rules("PATH.REGULAR_FILES")
@pytest.mark.parametrize("root", ["nul\x00in-the-name", ""])
def test_a_table_root_no_file_system_takes_is_an_invalid_argument(root: str) -> None:
    """A NUL made every os call raise a raw ValueError; the empty path would name the current
    directory."""
    with pytest.raises(InvalidArgumentError):
        DeltaLog(root)


CLI_TABLES = {
    "a FIFO at the next commit": at_log_name(C4, "FIFO"),
    "a truncated commit": lambda r, o: (log_dir(r) / commit_name(3)).write_bytes(b'{"add":'),
    "a link out of the table at a commit": at_log_name(commit_name(3), "link"),
}


@pytest.mark.parametrize("command", ["describe", "inspect"])
@pytest.mark.parametrize("make", CLI_TABLES.values(), ids=list(CLI_TABLES))
def test_the_cli_over_a_hostile_table_reports_and_ends(
    command: str, make: Callable[[Path, Path], None], tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """No traceback and no hang: ``describe`` fails with the error class on one line (exit 2),
    ``inspect`` reports the problem (exit 1)."""
    root, outside = tmp_path / "t", tmp_path / "outside"
    outside.mkdir()
    _classic(root)
    make(root, outside)
    before = _outside(tmp_path, root)
    code = _met(lambda r: main([command, str(r)]), root)
    out, err = capsys.readouterr()
    assert _outside(tmp_path, root) == before
    if command == "describe":
        assert code == SETUP_ERROR and err.count("\n") == 1 and err.startswith("DELTA_"), err
    else:
        assert code == 1 and "Traceback" not in err and "PROBLEMS" in out, (code, err)


def test_the_battery_covers_every_layer() -> None:
    assert len(BATTERY) >= 40 and len({b.name for b in BATTERY}) == len(BATTERY)
    acts = {b.act for b in BATTERY}
    assert {load, scan_rows, commit, checkpoint, clean_up, vacuum_all} <= acts
    assert {b.table for b in BATTERY} == set(TABLES)
