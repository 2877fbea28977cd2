"""Corrupt and hostile logs: a catalog of bad inputs, each with what must happen.

Every entry builds a bad table from the same good one (versions 0-3) and names its outcome: a
typed error naming the table, the version and the file, or ``RECOVERS`` where the Delta protocol
says a reader carries on (``_last_checkpoint`` is only a hint, an incomplete or unreadable
checkpoint is skipped when the commits it covers are still there, only 20-digit names are commits,
an absolute path inside the table is allowed...). For every entry, loading the snapshot writes
nothing (the whole directory tree, table and its surroundings, is byte-identical before and after)
and never opens, lists or deletes anything outside the table root (an audit hook watches every
file system call Python makes; a sibling directory holds the files that hostile paths and links
point at).
"""

from __future__ import annotations

import faulthandler
import json
import os
import shutil
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from support import append_rows, create_reliability_table, tree_state

from deltaspec.impl.checkpoint.contents import CHECKPOINT_SCHEMA, checkpoint_table
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.codec.roaring import DV_MAGIC, serialize_rows
from deltaspec.impl.codec.z85 import z85_encode
from deltaspec.impl.errors import (
    CorruptLogError,
    DeltaError,
    LogAccessError,
    MissingProtocolOrMetadataError,
    MissingVersionsError,
    NotRegularFileError,
    TableNotFoundError,
    UnsafePathError,
    UnsupportedProtocolError,
)
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.snapshot.delta_log import DeltaLog

NOW = 1_800_000_000_000
RECOVERS: Literal["recovers"] = "recovers"
CP2 = "00000000000000000002.checkpoint.parquet"
HUGE = 16 * 1024 * 1024


@dataclass(frozen=True)
class BadInput:
    """One hostile input: how to build it, and what loading the latest snapshot must give."""

    name: str
    build: Callable[[Path, Path], None]
    """Makes the table at ``root`` bad; ``outside`` is a sibling directory to point at."""
    expect: type[DeltaError] | Literal["recovers"]
    version: int | None
    """The error's version, or the version of the recovered snapshot."""
    file: str | None = None
    """The error's file, relative to ``_delta_log``."""
    why: str = ""
    live_files: int = 3
    """For a recovery: the live files of the recovered snapshot (the good table has 3)."""
    group: str = ""
    """The defect class of issue 16 the input belongs to (:data:`GROUPS`); empty: derived from
    ``expect`` (:func:`group_of`)."""


# --- building blocks -----------------------------------------------------------------------------


def log_dir(root: Path) -> Path:
    return root / "_delta_log"


def commit_path(root: Path, version: int) -> Path:
    return log_dir(root) / commit_name(version)


def put_commit(root: Path, version: int, *actions: Any, raw: bytes | None = None) -> None:
    """(Over)write commit ``version``: a commitInfo then ``actions`` (dicts), or ``raw`` bytes."""
    if raw is None:
        lines = [{"commitInfo": {"operation": "WRITE"}}, *actions]
        raw = "".join(json.dumps(line) + "\n" for line in lines).encode()
    commit_path(root, version).write_bytes(raw)


def add(path: str, size: int = 10) -> dict[str, Any]:
    return {
        "add": {
            "path": path,
            "partitionValues": {"p": "a"},
            "size": size,
            "modificationTime": 1,
            "dataChange": True,
        }
    }


def checkpoint(root: Path, version: int = 2, parts: int | None = None) -> None:
    log = DeltaLog(str(root))
    write_checkpoint(log, log.snapshot(version), parts=parts, now_ms=NOW)


def drop_commits(root: Path, upto: int) -> None:
    for version in range(upto + 1):
        commit_path(root, version).unlink()


def write_checkpoint_rows(root: Path, rows: list[dict[str, Any]], schema: pa.Schema) -> None:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), log_dir(root) / CP2)
    (log_dir(root) / "_last_checkpoint").write_text(f'{{"version":2,"size":{len(rows)}}}')


def checkpoint_rows(root: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = checkpoint_table(DeltaLog(str(root)).snapshot(2), now_ms=NOW)
    return rows.to_pylist()  # type: ignore[attr-defined]


def edit(fn: Callable[[Path], None]) -> Callable[[Path, Path], None]:
    return lambda root, outside: fn(root)


# --- builders that need more than a line ---------------------------------------------------------


def truncate_last_line(root: Path) -> None:
    data = commit_path(root, 3).read_bytes().rstrip(b"\n")
    commit_path(root, 3).write_bytes(data[: len(data) - 25])


def invalid_utf8(root: Path) -> None:
    data = commit_path(root, 2).read_bytes()
    commit_path(root, 2).write_bytes(data.replace(b'"WRITE"', b'"WR\xff\xfeTE"', 1))


def wrong_schema_checkpoint(root: Path) -> None:
    schema = pa.schema([("add", pa.string()), ("protocol", pa.string()), ("metaData", pa.string())])
    write_checkpoint_rows(root, [{"add": "x", "protocol": "y", "metaData": "z"}], schema)


def garbage_checkpoint(root: Path) -> None:
    (log_dir(root) / CP2).write_bytes(b"PAR1 not really parquet" * 10)
    (log_dir(root) / "_last_checkpoint").write_text('{"version":2,"size":3}')


def part_missing(root: Path) -> None:
    checkpoint(root, 2, parts=3)
    (log_dir(root) / "00000000000000000002.checkpoint.0000000002.0000000003.parquet").unlink()


def checkpoint_without_protocol(root: Path) -> None:
    rows = [r for r in checkpoint_rows(root) if r["protocol"] is None]
    write_checkpoint_rows(root, rows, CHECKPOINT_SCHEMA)


def checkpoint_with_path(path: str) -> Callable[[Path, Path], None]:
    def build(root: Path, outside: Path) -> None:
        rows = checkpoint_rows(root)
        first_add = next(r for r in rows if r["add"] is not None)
        first_add["add"]["path"] = path
        write_checkpoint_rows(root, rows, CHECKPOINT_SCHEMA)
        drop_commits(root, 2)

    return build


def symlink_commit(root: Path, outside: Path) -> None:
    evil = outside / "evil.json"
    evil.write_bytes(commit_path(root, 3).read_bytes())
    commit_path(root, 3).unlink()
    commit_path(root, 3).symlink_to(evil)


def symlink_checkpoint(root: Path, outside: Path) -> None:
    checkpoint(root)
    target = outside / "cp.parquet"
    shutil.move(log_dir(root) / CP2, target)
    (log_dir(root) / CP2).symlink_to(target)
    drop_commits(root, 2)


def symlink_last_checkpoint(root: Path, outside: Path) -> None:
    checkpoint(root)
    secret = outside / "hint.json"
    secret.write_text('{"version":2,"size":6}')
    (log_dir(root) / "_last_checkpoint").unlink()
    (log_dir(root) / "_last_checkpoint").symlink_to(secret)


def symlink_log_dir(root: Path, outside: Path) -> None:
    shutil.move(log_dir(root), outside / "log")
    log_dir(root).symlink_to(outside / "log")


def huge_line(complete: bool) -> Callable[[Path, Path], None]:
    def build(root: Path, outside: Path) -> None:
        line = json.dumps({"commitInfo": {"operation": "WRITE", "blob": "x" * HUGE}})
        if not complete:
            line = line[:-3]
        body = commit_path(root, 3).read_text().splitlines()[1:]
        put_commit(root, 3, raw=("\n".join([line, *body]) + "\n").encode())

    return build


def deeply_nested(root: Path) -> None:
    depth = 200_000
    line = '{"commitInfo":{"x":' + "[" * depth + "]" * depth + "}}"
    put_commit(root, 3, raw=(line + "\n").encode())


def protocol_downgrade(root: Path) -> None:
    features = ["deletionVectors"]
    upgrade = {"minReaderVersion": 3, "minWriterVersion": 7}
    put_commit(
        root, 4, {"protocol": {**upgrade, "readerFeatures": features, "writerFeatures": features}}
    )
    put_commit(root, 5, {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}})


def no_metadata(root: Path) -> None:
    lines = commit_path(root, 0).read_text().splitlines()
    put_commit(root, 0, raw="".join(f"{x}\n" for x in lines if "metaData" not in x).encode())


def stray_temp(root: Path) -> None:
    good = commit_path(root, 3).read_bytes()
    (log_dir(root) / f".{commit_name(4)}.{'0' * 32}.tmp").write_bytes(good)


def hidden_gap(root: Path) -> None:
    shutil.move(commit_path(root, 2), log_dir(root) / "2.json")


# --- the catalog ---------------------------------------------------------------------------------

C3, C2, C0 = commit_name(3), commit_name(2), commit_name(0)
NO_SIZE = {"add": {k: v for k, v in add("x")["add"].items() if k != "size"}}
TEXT_SIZE = {"add": {**add("x")["add"], "size": "10"}}

CATALOG: tuple[BadInput, ...] = (
    # commit files
    BadInput("truncated JSON line", edit(truncate_last_line), CorruptLogError, 3, C3),
    BadInput("invalid UTF-8", edit(invalid_utf8), CorruptLogError, 2, C2),
    BadInput("a line that is not an object",
             edit(lambda r: put_commit(r, 3, raw=b"[1, 2, 3]\n")), CorruptLogError, 3, C3),
    BadInput("NaN is not JSON", edit(lambda r: put_commit(r, 3, raw=b'{"commitInfo": NaN}\n')),
             CorruptLogError, 3, C3),
    BadInput("add without size", edit(lambda r: put_commit(r, 3, NO_SIZE)), CorruptLogError, 3, C3),
    BadInput("add.size is a string", edit(lambda r: put_commit(r, 3, TEXT_SIZE)),
             CorruptLogError, 3, C3),
    BadInput("two actions on one line",
             edit(lambda r: put_commit(r, 3, {**add("x"), "remove": {"path": "y"}})),
             CorruptLogError, 3, C3),
    BadInput("empty commit file", edit(lambda r: put_commit(r, 3, raw=b"")), RECOVERS, 3,
             why="a commit without actions; blank lines are skipped (ACTION.LINE_FORMAT)",
             live_files=2),
    BadInput("huge line (16 MiB, valid)", huge_line(True), RECOVERS, 3,
             why="a big commitInfo is still a commit"),
    BadInput("huge line (16 MiB, truncated)", huge_line(False), CorruptLogError, 3, C3),
    BadInput("deeply nested JSON (200k levels)", edit(deeply_nested), CorruptLogError, 3, C3),
    # names and gaps
    BadInput("duplicate version, 21-digit name",
             edit(lambda r: (log_dir(r) / ("0" + C3)).write_text('{"add":{"path":"../x"}}\n')),
             RECOVERS, 3, why="only 20-digit names are commits (LOG.COMMIT_FILE_NAME); "
             "delta-spark's \\d+\\.json would see two version-3 files"),
    BadInput("version file named 4.json",
             edit(lambda r: (log_dir(r) / "4.json").write_bytes(commit_path(r, 3).read_bytes())),
             RECOVERS, 3, why="not a commit name (LOG.COMMIT_FILE_NAME)"),
    BadInput("version 2 only under a wrong name", edit(hidden_gap), MissingVersionsError, 2, C2),
    BadInput("gap", edit(lambda r: commit_path(r, 2).unlink()), MissingVersionsError, 2, C2),
    BadInput("no commit 0 and no checkpoint", edit(lambda r: commit_path(r, 0).unlink()),
             MissingVersionsError, 3, C0),
    BadInput("commit 0 without metadata", edit(no_metadata), MissingProtocolOrMetadataError, 3, C0),
    BadInput("temporary file holding a commit", edit(stray_temp), RECOVERS, 3,
             why="temporary files are never listed (LOG.LISTING)"),
    BadInput("garbage checksum file",
             edit(lambda r: (log_dir(r) / "00000000000000000003.crc").write_bytes(b"\xff{")),
             RECOVERS, 3, why="checksum files are optional and not read"),
    # checkpoints
    BadInput("checkpoint with wrong schema, commits kept", edit(wrong_schema_checkpoint),
             RECOVERS, 3, why="an unusable checkpoint is skipped: replay from commit 0"),
    BadInput("checkpoint with wrong schema, log truncated",
             edit(lambda r: (wrong_schema_checkpoint(r), drop_commits(r, 2))),
             CorruptLogError, 2, CP2),
    BadInput("checkpoint not Parquet, log truncated",
             edit(lambda r: (garbage_checkpoint(r), drop_commits(r, 2))), CorruptLogError, 2, CP2),
    BadInput("checkpoint part missing, commits kept", edit(part_missing), RECOVERS, 3,
             why="an incomplete multi-part checkpoint is ignored (CHECKPOINT.READ)"),
    BadInput("checkpoint part missing, log truncated",
             edit(lambda r: (part_missing(r), drop_commits(r, 2))), MissingVersionsError, 3, C0),
    BadInput("checkpoint without protocol, log truncated",
             edit(lambda r: (checkpoint_without_protocol(r), drop_commits(r, 2))),
             MissingProtocolOrMetadataError, 3, CP2),
    BadInput("zero-byte checkpoint",
             edit(lambda r: (log_dir(r) / "00000000000000000003.checkpoint.parquet").touch()),
             RECOVERS, 3, why="zero-length checkpoint files are ignored (CHECKPOINT.READ)"),
    BadInput("checkpoint add with ../ path", checkpoint_with_path("../outside/canary.parquet"),
             UnsafePathError, 2, CP2),
    # _last_checkpoint
    BadInput("_last_checkpoint bad JSON",
             edit(lambda r: (checkpoint(r), (log_dir(r) / "_last_checkpoint").write_text('{"ver'))),
             RECOVERS, 3, why="the hint is optional: list instead (CHECKPOINT.LAST_CHECKPOINT)"),
    BadInput("_last_checkpoint wrong size",
             edit(lambda r: (checkpoint(r), (log_dir(r) / "_last_checkpoint").write_text(
                 '{"version":2,"size":999999,"sizeInBytes":1}'))),
             RECOVERS, 3, why="size is informative only"),
    BadInput("_last_checkpoint wrong parts",
             edit(lambda r: (checkpoint(r), (log_dir(r) / "_last_checkpoint").write_text(
                 '{"version":2,"size":6,"parts":3}'))),
             RECOVERS, 3, why="the listing decides which checkpoint files exist"),
    BadInput("_last_checkpoint future version",
             edit(lambda r: (checkpoint(r), (log_dir(r) / "_last_checkpoint").write_text(
                 '{"version":99,"size":6}'))),
             RECOVERS, 3, why="a hint past the log falls back to a full listing"),
    BadInput("_last_checkpoint dangling",
             edit(lambda r: (log_dir(r) / "_last_checkpoint").write_text('{"version":1,"size":6}')),
             RECOVERS, 3, why="no checkpoint 1: a full listing, replay from commit 0"),
    BadInput("_last_checkpoint binary garbage",
             edit(lambda r: (log_dir(r) / "_last_checkpoint").write_bytes(b"\x00\xff" * 4096)),
             RECOVERS, 3, why="the hint is optional"),
    # symbolic links
    BadInput("commit is a symlink out of the table", symlink_commit, UnsafePathError, 3, C3),
    BadInput("checkpoint is a symlink out of the table", symlink_checkpoint,
             UnsafePathError, 2, CP2),
    BadInput("_last_checkpoint is a symlink out of the table", symlink_last_checkpoint,
             RECOVERS, 3, why="the link is not followed (not read at all); listing finds cp 2"),
    BadInput("_delta_log is a symlink out of the table", symlink_log_dir,
             UnsafePathError, None, "_delta_log"),
    # the table's directories
    BadInput("_delta_log is a regular file",
             edit(lambda r: (shutil.rmtree(log_dir(r)), log_dir(r).write_bytes(b"{}\n"))),
             LogAccessError, None, "_delta_log"),
    BadInput("_delta_log is a FIFO", edit(lambda r: (shutil.rmtree(log_dir(r)),
             os.mkfifo(log_dir(r)))), LogAccessError, None, "_delta_log"),
    BadInput("_delta_log is an empty directory",
             edit(lambda r: (shutil.rmtree(log_dir(r)), log_dir(r).mkdir())),
             TableNotFoundError, None),
    BadInput("the table root is a regular file",
             edit(lambda r: (shutil.rmtree(r), r.write_bytes(b"PAR1"))), TableNotFoundError, None),
    # file actions
    BadInput("add with absolute path outside the root",
             lambda r, o: put_commit(r, 4, add(str(o / "canary.parquet"))),
             UnsafePathError, 4, commit_name(4)),
    BadInput("add with absolute path inside the root",
             lambda r, o: put_commit(r, 4, add(str(r / "p=a" / "inside.parquet"))),
             RECOVERS, 4, why="the protocol allows absolute paths; this one stays in the table",
             live_files=4),
    BadInput("add with file:// URI outside the root",
             edit(lambda r: put_commit(r, 4, add("file:///etc/passwd"))),
             UnsafePathError, 4, commit_name(4)),
    BadInput("add with s3:// URI", edit(lambda r: put_commit(r, 4, add("s3://bucket/x.parquet"))),
             UnsafePathError, 4, commit_name(4)),
    BadInput("add with ../ path", edit(lambda r: put_commit(r, 4, add("../outside/c.parquet"))),
             UnsafePathError, 4, commit_name(4)),
    BadInput("add with encoded %2E%2E/ path",
             edit(lambda r: put_commit(r, 4, add("p=a/%2E%2E/%2E%2E/outside/canary.parquet"))),
             UnsafePathError, 4, commit_name(4)),
    BadInput("add pointing into _delta_log",
             edit(lambda r: put_commit(r, 4, add("_delta_log/" + commit_name(0)))),
             UnsafePathError, 4, commit_name(4)),
    BadInput("add pointing into %5Fdelta_log",
             edit(lambda r: put_commit(r, 4, add("%5Fdelta_log/" + commit_name(0)))),
             UnsafePathError, 4, commit_name(4)),
    BadInput("add with empty path", edit(lambda r: put_commit(r, 4, add(""))),
             UnsafePathError, 4, commit_name(4)),
    BadInput("add with NUL in path", edit(lambda r: put_commit(r, 4, add("p=a/x%00.parquet"))),
             UnsafePathError, 4, commit_name(4)),
    BadInput("remove with ../ path",
             edit(lambda r: put_commit(r, 4, {"remove": {"path": "../../etc/passwd"}})),
             UnsafePathError, 4, commit_name(4)),
    BadInput("add with negative size", edit(lambda r: put_commit(r, 4, add("p=a/n.parquet", -5))),
             CorruptLogError, 4, commit_name(4)),
    # protocol
    BadInput("unknown reader feature",
             edit(lambda r: put_commit(r, 4, {"protocol": {
                 "minReaderVersion": 3, "minWriterVersion": 7,
                 "readerFeatures": ["fromTheFuture"], "writerFeatures": ["fromTheFuture"]}})),
             UnsupportedProtocolError, 4, commit_name(4)),
    BadInput("reader version 4",
             edit(lambda r: put_commit(r, 4, {"protocol": {"minReaderVersion": 4,
                                                            "minWriterVersion": 7}})),
             UnsupportedProtocolError, 4, commit_name(4)),
    BadInput("protocol downgrade in a commit", edit(protocol_downgrade), RECOVERS, 5,
             why="readers take the latest protocol (SNAPSHOT.PROTOCOL_METADATA); only writers "
             "refuse downgrades (TXN.PROTOCOL_DOWNGRADE)"),
)  # fmt: skip


# --- the catalog, continued: issue 16's classes ----------------------------------------------

GROUPS = ("data loss", "escapes", "hangs", "malformed", "recoveries")
C4 = commit_name(4)
CP2_PART = CP2


def group_of(bad: BadInput) -> str:
    if bad.group:
        return bad.group
    if bad.expect == RECOVERS:
        return "recoveries"
    if bad.expect is UnsafePathError:
        return "escapes"
    return "malformed"


def live_path(root: Path) -> str:
    return sorted(DeltaLog(str(root)).snapshot().files)[0][0]


def respell(spelling: Callable[[str], str], action: str = "add") -> Callable[[Path, Path], None]:
    """Commit 4 re-adds (or removes) a live file under another spelling of its path."""

    def build(root: Path, outside: Path) -> None:
        path = spelling(live_path(root))
        if action == "add":
            put_commit(root, 4, add(path))
        else:
            put_commit(root, 4, {"remove": {"path": path, "deletionTimestamp": 1}})

    return build


def dv_escape(kind: str, where: str) -> BadInput:
    vector = {"storageType": kind, "pathOrInlineDv": where, "offset": 1, "sizeInBytes": 10,
              "cardinality": 1}  # fmt: skip
    body = add("p=a/dv.parquet")
    body["add"]["deletionVector"] = vector
    return BadInput(f"deletion vector {kind}:{where!r}", edit(lambda r: put_commit(r, 4, body)),
                    UnsafePathError, 4, C4, group="escapes")  # fmt: skip


_ROWS_1_2 = serialize_rows({1, 2})
_RUNS = struct.pack("<iQIII", DV_MAGIC, 1, 0, 12347, 0) + b"\x01" + struct.pack("<HHH", 0, 9, 9)


def inline_dv(name: str, text: str, size: int, cardinality: int, expect: Any = CorruptLogError
              ) -> BadInput:  # fmt: skip
    """Commit 4 adds a file with an inline (``i``) deletion vector of Z85 ``text``."""
    body = add("p=a/dv.parquet")
    body["add"]["deletionVector"] = {"storageType": "i", "pathOrInlineDv": text,
                                     "sizeInBytes": size, "cardinality": cardinality}  # fmt: skip
    return BadInput(f"inline deletion vector {name}", edit(lambda r: put_commit(r, 4, body)),
                    expect, 4, None if expect == RECOVERS else C4, group="malformed",
                    why="a well-formed inline vector" if expect == RECOVERS else "",
                    live_files=4)  # fmt: skip


INLINE_DVS: tuple[BadInput, ...] = (
    inline_dv("well formed", z85_encode(_ROWS_1_2), len(_ROWS_1_2), 2, RECOVERS),
    inline_dv("not Z85", "~~~~~" * 4, 16, 2),
    inline_dv("Z85 group past 2^32", "#####" * 4, 16, 2),
    inline_dv("length not a multiple of 5", z85_encode(_ROWS_1_2)[:-1], 16, 2),
    inline_dv("empty", "", 0, 0),
    inline_dv("shorter than sizeInBytes", z85_encode(_ROWS_1_2), 64, 2),
    inline_dv("negative sizeInBytes", z85_encode(_ROWS_1_2), -1, 2),
    inline_dv("bad magic", z85_encode(b"\0" * 12), 12, 0),
    inline_dv("bitmap cut short", z85_encode(_ROWS_1_2[:20]), 20, 2),
    inline_dv("cardinality not its rows", z85_encode(_ROWS_1_2), len(_ROWS_1_2), 3),
    inline_dv("2^64 buckets", z85_encode(struct.pack("<iQ", DV_MAGIC, 2**64 - 1)), 12, 1),
    inline_dv("run container holding other than its cardinality", z85_encode(_RUNS),
              len(_RUNS), 10),
)  # fmt: skip


def escaping(path: str, action: str) -> BadInput:
    body = add(path) if action == "add" else {"remove": {"path": path, "deletionTimestamp": 1}}
    return BadInput(f"{action} path {path!r}", edit(lambda r: put_commit(r, 4, body)),
                    UnsafePathError, 4, C4, group="escapes")  # fmt: skip


ESCAPING_PATHS = (
    "../x.parquet", "p=a/../../x.parquet", "./../x.parquet", "p=a/%2e%2e/%2e%2e/x.parquet",
    "%2E%2E/x.parquet", "p=a%2F..%2F..%2Fx.parquet", "/etc/passwd", "file:/etc/passwd",
    "file:///etc/passwd", "file://evilhost/x.parquet", "file://localhost/etc/passwd",
    "file:relative.parquet", "hdfs://nn/x.parquet", "s3a://bucket/x.parquet",
    "abfss://c@a.dfs.core.windows.net/x.parquet", "gs://bucket/x.parquet",
    "http://example.com/x.parquet", "C:/Windows/x.parquet", "_delta_log/x.parquet",
    "_delta_log", "%5Fdelta_log/x.parquet", "./_delta_log/x.parquet", "p=a/../_delta_log/x",
    ".", "./", "p=a/x%00.parquet", "%00",
)  # fmt: skip
UNDECODABLE_PATHS = ("p=a/x%zz.parquet", "p=a/x%", "p=a/x%4", "%", "p=a/100%.parquet")

ESCAPES: tuple[BadInput, ...] = (
    *(escaping(path, action) for path in ESCAPING_PATHS for action in ("add", "remove")),
    *(
        BadInput(f"{action} path {path!r} (not a URI)", bad.build, UnsafePathError, 4, C4,
                 why="data loss: VACUUM could not decode it and deleted the live file",
                 group="data loss")
        for path in UNDECODABLE_PATHS
        for action in ("add", "remove")
        for bad in (escaping(path, action),)
    ),
    BadInput("add with absolute path into a sibling named like the root",
             lambda r, o: put_commit(r, 4, add(str(r) + "-sibling/x.parquet")),
             UnsafePathError, 4, C4, group="escapes"),
    *(dv_escape(kind, where) for kind, where in (
        ("p", "/etc/passwd"), ("p", "file:///etc/passwd"), ("p", "../x.bin"),
        ("p", "s3://bucket/x.bin"), ("u", "../../" + "0" * 20), ("u", "/tmp/" + "0" * 20),
        ("u", "%2E%2E/" + "0" * 20), ("u", "_delta_log/" + "0" * 20), ("u", "short"),
    )),
)  # fmt: skip


def field(kind: str, name: str, value: Any) -> BadInput:
    if kind == "add":
        body: dict[str, Any] = add("p=a/f.parquet")
    elif kind == "remove":
        body = {"remove": {"path": "p=a/f.parquet", "deletionTimestamp": 1, "size": 1}}
    else:
        body = {kind: {}}
    inner = body[kind]
    if value is _DROP:
        inner.pop(name, None)
    else:
        inner[name] = value
    return BadInput(f"{kind}.{name} = {value!r}"[:160], edit(lambda r: put_commit(r, 4, body)),
                    CorruptLogError, 4, C4, group="malformed")  # fmt: skip


class _Drop:
    """The field is left out (a stable repr: test ids must be the same in every worker)."""

    def __repr__(self) -> str:
        return "<missing>"


_DROP = _Drop()
_DV = {"storageType": "i", "pathOrInlineDv": "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
       "sizeInBytes": 40, "cardinality": 6}  # fmt: skip

MALFORMED: tuple[BadInput, ...] = (
    *(field("add", "size", v) for v in (-1, 2**63, 2**64, True, 1.5, "1", None)),
    *(field("add", "modificationTime", v) for v in (None, -1, 2**63, "1", True, 1.5, _DROP)),
    *(field("add", "dataChange", v) for v in ("true", 1, None, _DROP)),
    *(field("add", "partitionValues", v) for v in ([], "p=a", {"p": 1}, {"p": {"x": 1}},
                                                    {"p": True}, _DROP)),
    *(field("add", "stats", v) for v in (1, {}, [])),
    *(field("add", "tags", v) for v in ([], {"a": 1}, "t")),
    *(field("add", "path", v) for v in (1, None, [], _DROP)),
    *(field("add", "deletionVector", v) for v in (
        "i", [], {**_DV, "sizeInBytes": "40"}, {k: v for k, v in _DV.items() if k != "cardinality"},
        {**_DV, "storageType": 1})),
    *(field("remove", "size", v) for v in (-1, "1", 2**64)),
    *(field("remove", "deletionTimestamp", v) for v in ("x", 1.5, 2**64, -(2**63) - 1)),
    *(field("txn", name, v) for name, v in (("version", 2**64), ("lastUpdated", 2**70))),
    *(field("remove", "dataChange", v) for v in ("no", 0)),
    *(field("remove", "path", v) for v in (5, None, _DROP)),
    BadInput("protocol minReaderVersion 0",
             edit(lambda r: put_commit(r, 4, {"protocol": {"minReaderVersion": 0,
                                                           "minWriterVersion": 2}})),
             UnsupportedProtocolError, 4, C4),
    *(
        BadInput(f"protocol {proto}"[:80], edit(lambda r, proto=proto: put_commit(
            r, 4, {"protocol": proto})), error, 4, C4, group="malformed")
        for proto, error in (
            ({"minReaderVersion": -1, "minWriterVersion": 2}, UnsupportedProtocolError),
            ({"minReaderVersion": 99, "minWriterVersion": 2}, UnsupportedProtocolError),
            ({"minReaderVersion": "1", "minWriterVersion": 2}, CorruptLogError),
            ({"minReaderVersion": None, "minWriterVersion": 2}, CorruptLogError),
            ({"minReaderVersion": 2.0, "minWriterVersion": 5}, CorruptLogError),
            ({"minReaderVersion": 1}, CorruptLogError),
            ({"minReaderVersion": 1, "minWriterVersion": 2**40}, CorruptLogError),
            ({"minReaderVersion": 2**70, "minWriterVersion": 2}, CorruptLogError),
            ({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": "deletionVectors",
              "writerFeatures": []}, CorruptLogError),
            ({"minReaderVersion": 3, "minWriterVersion": 7,
              "readerFeatures": ["unknownReaderFeature-dev"],
              "writerFeatures": ["unknownReaderFeature-dev"]}, UnsupportedProtocolError),
            ({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["catalogManaged"],
              "writerFeatures": ["catalogManaged"]}, UnsupportedProtocolError),
            ({"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": [1],
              "writerFeatures": []}, CorruptLogError),
            ({"minReaderVersion": 2, "minWriterVersion": 5, "readerFeatures": ["columnMapping"]},
             CorruptLogError),
            ({"minReaderVersion": 1, "minWriterVersion": 2, "writerFeatures": []},
             CorruptLogError),
        )
    ),
    *(
        BadInput(f"metaData {name}",
                 edit(lambda r, meta=meta: put_commit(r, 4, {"metaData": meta})),
                 CorruptLogError, 4, C4, group="malformed")
        for name, meta in (
            ("without id", {"format": {"provider": "parquet"}, "partitionColumns": []}),
            ("id is a number", {"id": 5, "format": {"provider": "parquet"},
                                "partitionColumns": []}),
            ("without format", {"id": "x", "partitionColumns": []}),
            ("partitionColumns a string", {"id": "x", "format": {"provider": "parquet"},
                                           "partitionColumns": "p"}),
            ("configuration value not a string", {"id": "x", "format": {"provider": "parquet"},
                                                  "partitionColumns": [],
                                                  "configuration": {"a": 1}}),
        )
    ),
    BadInput("txn version is a string",
             edit(lambda r: put_commit(r, 4, {"txn": {"appId": "a", "version": "1"}})),
             CorruptLogError, 4, C4),
    BadInput("commit line is a JSON string", edit(lambda r: put_commit(r, 4, raw=b'"add"\n')),
             CorruptLogError, 4, C4),
    BadInput("lone surrogate escape in a path",
             edit(lambda r: put_commit(r, 4, raw=(
                 b'{"add":{"path":"p=a/\\udc80.parquet","partitionValues":{"p":"a"},"size":1,'
                 b'"modificationTime":1,"dataChange":true}}\n'))),
             CorruptLogError, 4, C4),
)  # fmt: skip


def fifo(name: str) -> Callable[[Path, Path], None]:
    def build(root: Path, outside: Path) -> None:
        target = log_dir(root) / name
        target.unlink(missing_ok=True)
        os.mkfifo(target)

    return build


def directory(name: str) -> Callable[[Path, Path], None]:
    def build(root: Path, outside: Path) -> None:
        target = log_dir(root) / name
        target.unlink(missing_ok=True)
        target.mkdir()
        (target / "inside.json").write_text("{}")

    return build


def sparse_hint(size: int) -> Callable[[Path, Path], None]:
    def build(root: Path, outside: Path) -> None:
        checkpoint(root)
        with open(log_dir(root) / "_last_checkpoint", "wb") as hint:
            hint.write(b'{"version":2,"size":6}')
            hint.truncate(size)

    return build


HANGS: tuple[BadInput, ...] = (
    BadInput("FIFO at _last_checkpoint", fifo("_last_checkpoint"), RECOVERS, 3, group="hangs",
             why="only regular files are read (PATH.REGULAR_FILES); the hint is optional"),
    BadInput("FIFO at _last_checkpoint, checkpoint 2 present",
             lambda r, o: (checkpoint(r), fifo("_last_checkpoint")(r, o)), RECOVERS, 3,
             group="hangs", why="listing finds checkpoint 2 without the hint"),
    BadInput("FIFO at commit 4", fifo(C4), NotRegularFileError, 4, C4, group="hangs"),
    BadInput("FIFO in place of commit 3", fifo(C3), NotRegularFileError, 3, C3, group="hangs"),
    BadInput("FIFO at a checkpoint name", fifo("00000000000000000003.checkpoint.parquet"),
             RECOVERS, 3, group="hangs",
             why="a FIFO lists with size 0: ignored like an empty checkpoint (CHECKPOINT.READ)"),
    BadInput("directory at commit 4", directory(C4), NotRegularFileError, 4, C4, group="hangs"),
    BadInput("directory in place of commit 3", directory(C3), NotRegularFileError, 3, C3,
             group="hangs"),
    BadInput("directory at _last_checkpoint", directory("_last_checkpoint"), RECOVERS, 3,
             group="hangs", why="an unusable hint: the log is listed instead"),
    BadInput("directory at a checkpoint name, commits kept", directory(CP2), RECOVERS, 3,
             group="hangs", why="an unusable checkpoint is skipped: replay from commit 0"),
    BadInput("directory at a checkpoint name, log truncated",
             edit(lambda r: (directory(CP2)(r, r), drop_commits(r, 2))), NotRegularFileError,
             2, CP2, group="hangs"),
    BadInput("20-digit stray version", edit(lambda r: (log_dir(r) / "99999999999999999999.json")
             .write_bytes(commit_path(r, 3).read_bytes())), MissingVersionsError, 4, C4,
             group="hangs"),
    BadInput("stray version 2^63", edit(lambda r: (log_dir(r) / f"{2**63:020d}.json")
             .write_text("{}\n")), MissingVersionsError, 4, C4, group="hangs"),
    BadInput("stray checkpoint at version 10^19", edit(lambda r: (
             log_dir(r) / "10000000000000000000.checkpoint.parquet").write_bytes(b"x")),
             MissingVersionsError, 4, C4, group="hangs"),
    BadInput("checkpoint part claiming 9999999999 parts", edit(lambda r: (
             log_dir(r) / "00000000000000000003.checkpoint.0000000001.9999999999.parquet")
             .write_bytes(b"x")), RECOVERS, 3, group="hangs",
             why="an incomplete multi-part checkpoint is ignored; parts are counted, not ranged"),
    BadInput("_last_checkpoint claiming 2^40 parts", lambda r, o: (checkpoint(r), (
             log_dir(r) / "_last_checkpoint").write_text('{"version":2,"size":6,"parts":'
             + str(2**40) + "}")), RECOVERS, 3, group="hangs",
             why="the listing decides which checkpoint files exist"),
    BadInput("sparse 64 GiB _last_checkpoint", sparse_hint(64 * 1024**3), RECOVERS, 3,
             group="hangs", why="the hint is read up to 1 MiB, then the log is listed"),
    BadInput("2 MiB _last_checkpoint of valid JSON", lambda r, o: (checkpoint(r), (
             log_dir(r) / "_last_checkpoint").write_text(
             '{"version":2,"size":6,"pad":"' + "x" * 2 * 1024 * 1024 + '"}')), RECOVERS, 3,
             group="hangs", why="an oversized hint is unusable; listing finds checkpoint 2"),
    BadInput("_sidecars is a symlink out of the table",
             lambda r, o: (log_dir(r) / "_sidecars").symlink_to(o), RECOVERS, 3,
             group="escapes", why="a classic table never lists _sidecars; nothing follows it"),
    BadInput("data directory is a symlink out of the table",
             lambda r, o: (shutil.move(r / "p=b", o / "p=b"), (r / "p=b").symlink_to(o / "p=b")),
             RECOVERS, 3, group="escapes", why="loading the log opens no data file"),
    BadInput("dangling symlink at commit 4",
             lambda r, o: commit_path(r, 4).symlink_to(o / "nowhere.json"),
             UnsafePathError, 4, C4, group="escapes"),
)  # fmt: skip


def checkpoint_edit(fn: Callable[[list[dict[str, Any]]], None], truncate: bool) -> Callable[
        [Path, Path], None]:  # fmt: skip
    def build(root: Path, outside: Path) -> None:
        rows = checkpoint_rows(root)
        fn(rows)
        write_checkpoint_rows(root, rows, CHECKPOINT_SCHEMA)
        if truncate:
            drop_commits(root, 2)

    return build


def first(rows: list[dict[str, Any]], column: str) -> dict[str, Any]:
    return next(r for r in rows if r[column] is not None)


ROW_EDITS: tuple[tuple[str, Callable[[list[dict[str, Any]]], None], type[DeltaError]], ...] = (
    ("live file twice", lambda rows: rows.append(first(rows, "add")), CorruptLogError),
    ("add without path", lambda rows: first(rows, "add")["add"].update(path=None),
     CorruptLogError),
    ("add without size", lambda rows: first(rows, "add")["add"].update(size=None),
     CorruptLogError),
    ("add with negative size", lambda rows: first(rows, "add")["add"].update(size=-3),
     CorruptLogError),
    ("two protocol rows", lambda rows: rows.append(first(rows, "protocol")), CorruptLogError),
    ("two metaData rows", lambda rows: rows.append(first(rows, "metaData")), CorruptLogError),
    ("null minReaderVersion",
     lambda rows: first(rows, "protocol")["protocol"].update(minReaderVersion=None),
     CorruptLogError),
    ("metaData without id", lambda rows: first(rows, "metaData")["metaData"].update(id=None),
     CorruptLogError),
    ("readerFeatures at reader version 2",
     lambda rows: first(rows, "protocol")["protocol"].update(
         minReaderVersion=2, minWriterVersion=5, readerFeatures=["columnMapping"]),
     CorruptLogError),
    ("writerFeatures at writer version 2",
     lambda rows: first(rows, "protocol")["protocol"].update(writerFeatures=[]), CorruptLogError),
    ("add with undecodable path",
     lambda rows: first(rows, "add")["add"].update(path="p=a/x%zz.parquet"), UnsafePathError),
    ("add with absolute path outside",
     lambda rows: first(rows, "add")["add"].update(path="/etc/passwd"), UnsafePathError),
    ("add with DV outside the root",
     lambda rows: first(rows, "add")["add"].update(deletionVector={
         "storageType": "p", "pathOrInlineDv": "/etc/passwd", "offset": 1, "sizeInBytes": 1,
         "cardinality": 1, "maxRowIndex": None}), UnsafePathError),
    ("add with an inline DV that is not Z85",
     lambda rows: first(rows, "add")["add"].update(deletionVector={
         "storageType": "i", "pathOrInlineDv": "~~~~~", "offset": None, "sizeInBytes": 4,
         "cardinality": 1, "maxRowIndex": None}), CorruptLogError),
    ("add with an inline DV of the wrong cardinality",
     lambda rows: first(rows, "add")["add"].update(deletionVector={
         "storageType": "i", "pathOrInlineDv": z85_encode(_ROWS_1_2), "offset": None,
         "sizeInBytes": len(_ROWS_1_2), "cardinality": 5, "maxRowIndex": None}), CorruptLogError),
    ("row holding an add and a remove", lambda rows: first(rows, "add").update(
        remove={"path": "p=a/other.parquet", "deletionTimestamp": 1, "dataChange": True}),
     CorruptLogError),
    ("row holding the protocol and the metaData", lambda rows: (
        first(rows, "protocol").update(metaData=first(rows, "metaData")["metaData"]),
        rows.remove(next(r for r in rows if r["metaData"] and not r["protocol"]))),
     CorruptLogError),
    ("add without partitionValues",
     lambda rows: first(rows, "add")["add"].update(partitionValues=None), CorruptLogError),
    ("add without modificationTime",
     lambda rows: first(rows, "add")["add"].update(modificationTime=None), CorruptLogError),
    ("add without dataChange",
     lambda rows: first(rows, "add")["add"].update(dataChange=None), CorruptLogError),
    ("add with a deletion vector of null fields",
     lambda rows: first(rows, "add")["add"].update(deletionVector={
         "storageType": None, "pathOrInlineDv": None, "offset": None, "sizeInBytes": None,
         "cardinality": None, "maxRowIndex": None}), CorruptLogError),
    ("a live file also a tombstone", lambda rows: rows.append({"remove": {
        "path": first(rows, "add")["add"]["path"], "deletionTimestamp": 1, "dataChange": True}}),
     CorruptLogError),
    ("metaData without format",
     lambda rows: first(rows, "metaData")["metaData"].update(format=None), CorruptLogError),
    ("metaData without partitionColumns",
     lambda rows: first(rows, "metaData")["metaData"].update(partitionColumns=None),
     CorruptLogError),
    ("txn without appId", lambda rows: rows.append(
        {"txn": {"appId": None, "version": 1, "lastUpdated": 1}}), CorruptLogError),
    ("two txn rows of one app id", lambda rows: rows.extend(
        [{"txn": {"appId": "a", "version": v, "lastUpdated": 1}} for v in (1, 2)]),
     CorruptLogError),
    ("domainMetadata without domain", lambda rows: rows.append(
        {"domainMetadata": {"domain": None, "configuration": "", "removed": False}}),
     CorruptLogError),
    ("two domainMetadata rows of one domain", lambda rows: rows.extend(
        [{"domainMetadata": {"domain": "d", "configuration": c, "removed": False}}
         for c in ("1", "2")]), CorruptLogError),
    ("add with DV u prefix ../",
     lambda rows: first(rows, "add")["add"].update(deletionVector={
         "storageType": "u", "pathOrInlineDv": "../" + "0" * 20, "offset": 1,
         "sizeInBytes": 1, "cardinality": 1, "maxRowIndex": None}), UnsafePathError),
)  # fmt: skip

CHECKPOINT_ROWS: tuple[BadInput, ...] = (
    *(
        BadInput(f"checkpoint {name}, log truncated", checkpoint_edit(fn, True), error, 2, CP2,
                 group="data loss")
        for name, fn, error in ROW_EDITS
    ),
    *(
        BadInput(f"checkpoint {name}, commits kept", checkpoint_edit(fn, False), RECOVERS, 3,
                 group="data loss",
                 why="an unusable checkpoint is skipped when the commits it covers remain")
        for name, fn, error in ROW_EDITS
        if error is CorruptLogError
    ),
    BadInput("torn checkpoint (half the bytes), commits kept", edit(lambda r: (
             checkpoint(r), (log_dir(r) / CP2).write_bytes((log_dir(r) / CP2).read_bytes()[:200]))),
             RECOVERS, 3, group="data loss",
             why="a torn checkpoint is unusable: replay from commit 0"),
)  # fmt: skip

SPELLINGS: tuple[BadInput, ...] = (
    BadInput("live file re-added as ./path", respell(lambda p: "./" + p), RECOVERS, 4,
             why="one file (SNAPSHOT.CANONICAL_PATH)", group="recoveries"),
    BadInput("live file re-added with //", respell(lambda p: p.replace("/", "//", 1)), RECOVERS,
             4, why="one file (SNAPSHOT.CANONICAL_PATH)", group="recoveries"),
    BadInput("live file re-added with /./", respell(lambda p: p.replace("/", "/./", 1)),
             RECOVERS, 4, why="one file (SNAPSHOT.CANONICAL_PATH)", group="recoveries"),
    BadInput("live file removed as ./path", respell(lambda p: "./" + p, "remove"), RECOVERS, 4,
             why="the remove names the same file (SNAPSHOT.CANONICAL_PATH)", live_files=2,
             group="recoveries"),
    BadInput("live file removed with //", respell(lambda p: p.replace("/", "//"), "remove"),
             RECOVERS, 4, why="the remove names the same file (SNAPSHOT.CANONICAL_PATH)",
             live_files=2, group="recoveries"),
)  # fmt: skip

CATALOG = (*CATALOG, *ESCAPES, *MALFORMED, *INLINE_DVS, *HANGS, *CHECKPOINT_ROWS, *SPELLINGS)


# --- watching the file system --------------------------------------------------------------------

_READS = {"open", "os.listdir", "os.scandir"}
_WRITES = {
    "os.remove", "os.rename", "os.link", "os.symlink", "os.mkdir", "os.rmdir", "os.truncate",
    "os.chmod", "os.utime", "shutil.rmtree", "shutil.copyfile", "shutil.move",
}  # fmt: skip
_watching: list[tuple[str, str]] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _watching is None or (event not in _READS and event not in _WRITES):
        return
    path = args[0] if args else None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if event == "open" and isinstance(path, str) and len(args) > 1:
        mode, flags = args[1], args[2] if len(args) > 2 else 0
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT)
        )
        if writing:
            event = "open for writing"
    _watching.append((event, path if isinstance(path, str) else ""))


sys.addaudithook(_audit)


WATCHDOG_S = 30
_given_to_pyarrow: list[Any] = []


class _WatchedParquetFile(pq.ParquetFile):
    """pyarrow's ParquetFile, recording what it is given: pyarrow opens files in C++, out of the
    audit hook's sight, so the loader must hand it files it opened itself, never a path."""

    def __init__(self, source: Any, *args: Any, **kwargs: Any) -> None:
        _given_to_pyarrow.append(source)
        super().__init__(source, *args, **kwargs)


def load_watched(root: Path) -> tuple[Any, list[tuple[str, str]]]:
    """Load the latest snapshot of ``root``: (snapshot or the DeltaError, file system events).

    Under a watchdog: a load that hangs (a FIFO opened for reading, a loop over version numbers)
    dumps every thread's stack and ends the test process after :data:`WATCHDOG_S` seconds, so a
    hang is a failure, never a stuck run. Whatever pyarrow is given is checked too."""
    global _watching
    _watching = []
    _given_to_pyarrow.clear()
    faulthandler.dump_traceback_later(WATCHDOG_S, exit=True)
    original, pq.ParquetFile = pq.ParquetFile, _WatchedParquetFile  # type: ignore[misc]
    try:
        try:
            result: Any = DeltaLog(str(root)).snapshot()
        except DeltaError as error:
            result = error
    finally:
        pq.ParquetFile = original  # type: ignore[misc]
        faulthandler.cancel_dump_traceback_later()
        events, _watching = _watching, None
    paths = [s for s in _given_to_pyarrow if isinstance(s, str | bytes | os.PathLike)]
    assert paths == [], f"pyarrow was given paths to open itself: {paths}"
    return result, events


def good_table(root: Path) -> None:
    log = create_reliability_table(root, **{"delta.checkpointInterval": "100"})
    for part in "abc":
        append_rows(log, part, [1, 2])


@pytest.mark.rules("LOG.COMMIT_FILE_NAME", "LOG.CONTIGUITY", "CHECKPOINT.READ",
                   "CHECKPOINT.LAST_CHECKPOINT", "SNAPSHOT.PROTOCOL_METADATA", "PATH.DATA_FILE",
                   "PATH.NO_SYMLINKS", "PATH.REGULAR_FILES", "SNAPSHOT.CANONICAL_PATH",
                   "CHECKPOINT.CONTENTS", "ACTION.PROTOCOL_FEATURE_LISTS")  # fmt: skip
@pytest.mark.parametrize("bad", CATALOG, ids=[f"{group_of(bad)}: {bad.name}" for bad in CATALOG])
def test_bad_input(tmp_path: Path, bad: BadInput) -> None:
    root, outside = tmp_path / "table", tmp_path / "outside"
    outside.mkdir()
    (outside / "canary.parquet").write_bytes(b"canary")
    good_table(root)
    bad.build(root, outside)
    before = tree_state(tmp_path)

    result, events = load_watched(root)

    assert tree_state(tmp_path) == before, "loading wrote or deleted something"
    changes = [e for e in events if e[0] in _WRITES or e[0] == "open for writing"]
    assert changes == []
    touched = [path for _, path in events if path.startswith(str(tmp_path))]
    assert all(p == str(root) or p.startswith(str(root) + os.sep) for p in touched), touched
    if bad.expect == RECOVERS:
        assert not isinstance(result, DeltaError), f"{bad.name}: {result}"
        assert result.version == bad.version
        assert touched, "the audit hook saw nothing"
        assert result.num_files == bad.live_files
        return
    assert type(result) is bad.expect, f"{bad.name}: {result!r}"
    assert result.table == str(root)
    assert result.version == bad.version
    assert result.file == bad.file


def test_the_catalog_has_at_least_150_bad_inputs_in_every_class() -> None:
    assert len(CATALOG) >= 150
    assert len({bad.name for bad in CATALOG}) == len(CATALOG)
    assert all(bad.why for bad in CATALOG if bad.expect == RECOVERS)
    counts = {group: sum(group_of(bad) == group for bad in CATALOG) for group in GROUPS}
    assert all(count >= 10 for count in counts.values()), counts
