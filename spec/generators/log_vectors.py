"""Generates spec/vectors/ (spec/log-vectors.md): the log, action, snapshot, checkpoint and
retention families of log vectors.

    python spec/generators/log_vectors.py [OUT]   # default: spec/vectors next to this file

Deterministic: the same files every run (tests/spec/test_log_vectors.py checks the committed ones).
Every expectation below is reasoned from the rule the vector cites, by hand; none comes from
running an implementation.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from deltaspec.vector_files import spec_folder, write_tree

Json = dict[str, Any]
FUTURE = 4_102_444_800_000  # 2100-01-01: never expired while these vectors are used
SCHEMA = json.dumps(
    {"type": "struct", "fields": [
        {"name": "p", "type": "string", "nullable": True, "metadata": {}},
        {"name": "x", "type": "long", "nullable": True, "metadata": {}}]},
    separators=(",", ":"),
)  # fmt: skip
DV_X = {"storageType": "u", "pathOrInlineDv": "vBn[lx{q8@P<9BNH/isA", "offset": 1,
        "sizeInBytes": 36, "cardinality": 2}  # fmt: skip
DV_Y = {**DV_X, "pathOrInlineDv": "ab^-aqEH.-t@S}K{vb[*"}


def name(version: int) -> str:
    """LOG.COMMIT_FILE_NAME."""
    return f"{version:020d}.json"


def checkpoint_name(version: int, part: int | None = None, parts: int | None = None) -> str:
    if part is None:
        return f"{version:020d}.checkpoint.parquet"
    return f"{version:020d}.checkpoint.{part:010d}.{parts:010d}.parquet"


def info(operation: str = "WRITE", blind: bool = True) -> Json:
    return {"commitInfo": {"timestamp": 0, "operation": operation, "isBlindAppend": blind}}


def protocol(reader: int = 1, writer: int = 2, **features: list[str]) -> Json:
    return {"protocol": {"minReaderVersion": reader, "minWriterVersion": writer, **features}}


def metadata(configuration: Json | None = None, partitions: list[str] | None = None) -> Json:
    return {"metaData": {"id": "00000000-0000-0000-0000-00000000000a",
                         "format": {"provider": "parquet", "options": {}},
                         "schemaString": SCHEMA, "partitionColumns": partitions or [],
                         "configuration": configuration or {}, "createdTime": 0}}  # fmt: skip


def add(path: str, partition: Json | None = None, data_change: bool = True, **more: Any) -> Json:
    body = {"path": path, "partitionValues": partition or {}, "size": 1,
            "modificationTime": 0, "dataChange": data_change}  # fmt: skip
    return {"add": {**body, **more}}


def remove(
    path: str, timestamp: int | None = FUTURE, data_change: bool = True, **more: Any
) -> Json:
    body: Json = {"path": path, "dataChange": data_change}
    if timestamp is not None:
        body["deletionTimestamp"] = timestamp
    return {"remove": {**body, **more}}


def txn(app: str, version: int, last_updated: int | None = None) -> Json:
    body: Json = {"appId": app, "version": version}
    if last_updated is not None:
        body["lastUpdated"] = last_updated
    return {"txn": body}


def domain(name_: str, configuration: str, removed: bool = False) -> Json:
    return {"domainMetadata": {"domain": name_, "configuration": configuration, "removed": removed}}


def create(*actions: Json, configuration: Json | None = None, proto: Json | None = None,
           partitions: list[str] | None = None) -> list[Json]:  # fmt: skip
    return [info("CREATE TABLE", False), proto or protocol(), metadata(configuration, partitions),
            *actions]  # fmt: skip


def lines(actions: list[Json]) -> list[str]:
    return [json.dumps(a, separators=(",", ":")) for a in actions]


def vector(
    id_: str,
    description: str,
    rules: list[str],
    log: Json,
    reads: list[Json],
    bug: Json | None = None,
    **more: Any,
) -> Json:
    """A log vector; ``bug``: the published bug it reproduces (the real-bugs family); ``more``:
    ``file_times``, ``clean_up_expired_logs``, ``after_listing``."""
    cited = {} if bug is None else {"bug": bug}
    return {"id": id_, "description": description, "rules": rules, **cited, "log": log, **more,
            "reads": reads}  # fmt: skip


def snapshot(version: int, files: list[str], **more: Any) -> Json:
    return {"version": version, "expect": {"version": version, "files": files, **more}}


# --- the checkpoint family's table: versions 0-5 ------------------------------------------------
# v0 creates it with a; v1 adds b; v2 removes a (tombstone kept: FUTURE) and adds c; v3 adds d;
# v4 adds e; v5 adds f.
HISTORY = [
    create(add("a")),
    [info(), add("b")],
    [info("DELETE", False), remove("a"), add("c")],
    [info(), add("d")],
    [info(), add("e")],
    [info(), add("f")],
]
LIVE = {0: ["a"], 1: ["a", "b"], 2: ["b", "c"], 3: ["b", "c", "d"], 4: ["b", "c", "d", "e"],
        5: ["b", "c", "d", "e", "f"]}  # fmt: skip


def state_rows(version: int) -> list[Json]:
    """CHECKPOINT.CONTENTS of HISTORY at ``version`` (>= 2): protocol, metaData, live adds with
    dataChange false, the unexpired tombstone of a."""
    return [protocol(), metadata(), *(add(p, data_change=False) for p in LIVE[version]),
            remove("a", data_change=False)]  # fmt: skip


def commits(*versions: int) -> Json:
    return {name(v): HISTORY[v] for v in versions}


def hint(version: int, size: int, parts: int | None = None) -> Json:
    body: Json = {"version": version, "size": size}
    if parts is not None:
        body["parts"] = parts
    return {"_last_checkpoint": {"json": body}}


def log_family() -> list[Json]:
    return [
        vector(
            "log/commit-file-name/only-commit-names-are-versions",
            "Versions 0-2 are commits; a writer's temporary file holding a would-be version 3 "
            "is not a commit, so the latest version is 2 and version 3 does not exist.",
            ["LOG.COMMIT_FILE_NAME", "LOG.ATOMIC_VISIBILITY", "LOG.LISTING"],
            {**commits(0, 1), name(2): [info(), add("c")],
             "00000000000000000003.json.4f0c2a.tmp": {"text": "\n".join(lines(HISTORY[3]))}},
            [snapshot(2, ["a", "b", "c"]), snapshot(1, ["a", "b"]),
             {"version": None, "expect": {"version": 2, "files": ["a", "b", "c"]}},
             {"version": 3, "error": "VERSION_NOT_FOUND"}],
        ),
        vector(
            "log/contiguity/hole-after-start",
            "Version 2 is missing between versions 1 and 3: neither the latest snapshot nor "
            "version 2 itself (the last version of its range) can be built.",
            ["LOG.CONTIGUITY"],
            {**commits(0, 1), name(3): HISTORY[3]},
            [{"version": None, "error": "VERSIONS_NOT_CONTIGUOUS"},
             {"version": 2, "error": "VERSIONS_NOT_CONTIGUOUS"}],
        ),
        vector(
            "log/new-table/empty-log-directory",
            "An empty _delta_log holds no table: the latest snapshot is the empty one (version "
            "-1), and naming a version fails.",
            ["LOG.NEW_TABLE"],
            {},
            [{"version": None, "expect": {"version": -1, "files": []}},
             {"version": 0, "error": "TABLE_NOT_FOUND"}],
        ),
        *compaction_vectors(),
        *listing_vectors(),
    ]  # fmt: skip


def listing_vectors() -> list[Json]:
    """LOG.LISTING and LOG.COMMIT_FILE_NAME at the edges of a listing: files whose names carry
    a version, or nearly spell a commit, beside commits 0-2. None of them is a commit, so the
    latest version is 2 and version 3 does not exist."""
    would_be_3 = {"text": "\n".join(lines(HISTORY[3])) + "\n"}
    checksum_3 = {"json": {"tableSizeBytes": 4, "numFiles": 4, "numMetadata": 1,
                           "numProtocol": 1}}  # fmt: skip
    arabic_indic_3 = "\u0660" * 19 + "\u0663" + ".json"
    return [
        vector(
            "log/listing/versioned-files-that-are-not-commits",
            "Beside commits 0-2 the log holds files that name version 3 without being its "
            "commit: a checksum 3.crc, Hadoop's hidden checksum of a would-be commit 3, a "
            "backup copy 3.json.bak and a 3.json.copy holding commit 3's actions. The latest "
            "version is the newest commit's, 2, not the highest version a file name carries; "
            "version 3 does not exist.",
            ["LOG.LISTING", "LOG.COMMIT_FILE_NAME"],
            {**commits(0, 1), name(2): HISTORY[2], f"{3:020d}.crc": checksum_3,
             f".{name(3)}.crc": {"text": "crc"}, f"{name(3)}.bak": would_be_3,
             f"{3:020d}.json.copy": would_be_3},
            [{"version": None, "expect": {"version": 2, "files": LIVE[2],
                                          "tombstones": ["a"]}},
             {"version": 3, "error": "VERSION_NOT_FOUND"}],
        ),
        vector(
            "log/listing/digits-are-ascii",
            "Beside commits 0-2 the log holds a file named by twenty Arabic-Indic digits "
            "(U+0660..U+0669) spelling 3, then .json, holding commit 3's actions. Version digits "
            "are ASCII 0-9 only (LOG.COMMIT_FILE_NAME), so it is no commit: the latest version "
            "is 2 and version 3 does not exist.",
            ["LOG.COMMIT_FILE_NAME", "LOG.LISTING"],
            {**commits(0, 1), name(2): HISTORY[2], arabic_indic_3: would_be_3},
            [{"version": None, "expect": {"version": 2, "files": LIVE[2],
                                          "tombstones": ["a"]}},
             {"version": 3, "error": "VERSION_NOT_FOUND"}],
        ),
        vector(
            "log/listing/stray-names-are-ignored",
            "Beside commits 0-2 the log holds objects anyone who can write the directory could "
            "leave there, each holding commit 3's actions: 3.JSON in upper case, a name with a "
            "leading space, and notes.txt. None is a log file name, so none is a commit or a "
            "gap and none stops the read: the latest version is 2 and version 3 does not exist.",
            ["PATH.STRAY_KEYS", "LOG.LISTING"],
            {**commits(0, 1), name(2): HISTORY[2], f"{3:020d}.JSON": would_be_3,
             f" {name(3)}": would_be_3, "notes.txt": {"text": "stray"}},
            [{"version": None, "expect": {"version": 2, "files": LIVE[2],
                                          "tombstones": ["a"]}},
             {"version": 3, "error": "VERSION_NOT_FOUND"}],
        ),
        vector(
            "log/commit-file-name/twenty-digits-exactly",
            "Beside commits 0-2 the log holds two files naming version 3 with 19 and with 21 "
            "digits, each holding commit 3's actions. A commit's version is exactly 20 digits "
            "(LOG.COMMIT_FILE_NAME), so neither is a commit, a gap or a duplicate: the latest "
            "version is 2 and version 3 does not exist.",
            ["LOG.COMMIT_FILE_NAME", "PATH.STRAY_KEYS"],
            {**commits(0, 1), name(2): HISTORY[2], f"{3:019d}.json": would_be_3,
             f"{3:021d}.json": would_be_3},
            [{"version": None, "expect": {"version": 2, "files": LIVE[2],
                                          "tombstones": ["a"]}},
             {"version": 3, "error": "VERSION_NOT_FOUND"}],
        ),
    ]  # fmt: skip


def action_family() -> list[Json]:
    return action_format_vectors() + action_state_vectors()


def action_format_vectors() -> list[Json]:
    """How commit lines and actions are read: line format, unknown actions, latest wins."""
    return [
        vector(
            "action/line-format/blank-lines-and-no-final-newline",
            "Readers ignore empty lines, and the last line of a commit may lack its newline.",
            ["ACTION.LINE_FORMAT"],
            {name(0): {"text": "\n\n".join(lines(create(add("a")))) + "\n\n"},
             name(1): {"text": "\n" + "\n".join(lines([info(), add("b")]))}},
            [snapshot(1, ["a", "b"]), snapshot(0, ["a"])],
        ),
        vector(
            "action/line-format/two-actions-on-one-line",
            "A line whose object holds two actions (here an add and a remove) is a corrupt commit: "
            "keeping either one would silently resurrect or drop a file. Reading the version needs "
            "the commit and fails; the version before it does not and reads.",
            ["ACTION.LINE_FORMAT"],
            {name(0): create(add("a")),
             name(1): [info("DELETE", False), {**remove("a"), **add("b")}]},
            [{"version": None, "error": "CORRUPT_LOG_FILE"},
             {"version": 1, "error": "CORRUPT_LOG_FILE"}, snapshot(0, ["a"])],
        ),
        vector(
            "action/line-format/line-not-json",
            "A line of a commit that is not a JSON object (a torn write stored in place) is a "
            "corrupt commit, never an empty one.",
            ["ACTION.LINE_FORMAT"],
            {name(0): create(add("a")),
             name(1): {"text": "\n".join(lines([info(), add("b")]))[:-7] + "\n"}},
            [{"version": None, "error": "CORRUPT_LOG_FILE"}, snapshot(0, ["a"])],
        ),
        vector(
            "action/unknown/actions-and-fields-ignored",
            "An unknown action and an unknown field inside add are ignored on read.",
            ["ACTION.UNKNOWN"],
            {name(0): create(add("a", futureField={"x": 1})),
             name(1): [info(), {"futureAction": {"key": "value"}}, add("b")]},
            [snapshot(1, ["a", "b"])],
        ),
        vector(
            "action/protocol-metadata/latest-wins",
            "A later metaData replaces the whole metadata (not a patch) and a later protocol "
            "replaces the protocol.",
            ["ACTION.PROTOCOL", "ACTION.METADATA", "SNAPSHOT.PROTOCOL_METADATA"],
            {name(0): create(add("a"), configuration={"user.first": "1"}),
             name(1): [info("SET TBLPROPERTIES", False), protocol(1, 3),
                       metadata({"user.second": "2"})]},
            [snapshot(0, ["a"], properties={"user.first": "1"},
                      protocol={"minReaderVersion": 1, "minWriterVersion": 2}),
             snapshot(1, ["a"], properties={"user.second": "2"}, partition_columns=[],
                      protocol={"minReaderVersion": 1, "minWriterVersion": 3})],
        ),
        vector(
            "action/protocol-metadata/reader-features-below-reader-version-3",
            "readerFeatures in a protocol of reader version 2 (an empty list too) is a malformed "
            "protocol: the commit holding it is corrupt; the version before it reads.",
            ["ACTION.PROTOCOL_FEATURE_LISTS", "ACTION.PROTOCOL"],
            {name(0): create(add("a")),
             name(1): [info("SET TBLPROPERTIES", False), protocol(2, 5, readerFeatures=[])]},
            [{"version": None, "error": "CORRUPT_LOG_FILE"}, snapshot(0, ["a"])],
        ),
        vector(
            "action/protocol-metadata/writer-features-below-writer-version-7",
            "writerFeatures in a protocol of writer version 2 is a malformed protocol: the commit "
            "holding it is corrupt; the version before it reads.",
            ["ACTION.PROTOCOL_FEATURE_LISTS", "ACTION.PROTOCOL"],
            {name(0): create(add("a")),
             name(1): [info("SET TBLPROPERTIES", False),
                       protocol(1, 2, writerFeatures=["appendOnly", "invariants"])]},
            [{"version": None, "error": "CORRUPT_LOG_FILE"}, snapshot(0, ["a"])],
        ),
        vector(
            "action/add-remove/reconcile-and-re-add",
            "A remove ends a file's life and leaves a tombstone; adding the path again makes it "
            "live and drops the tombstone.",
            ["ACTION.ADD", "ACTION.REMOVE", "SNAPSHOT.RECONCILE", "SNAPSHOT.TOMBSTONES"],
            {name(0): create(add("a"), add("b")),
             name(1): [info("DELETE", False), remove("a"), add("c")],
             name(2): [info(), add("a")]},
            [snapshot(1, ["b", "c"], tombstones=["a"]),
             snapshot(2, ["a", "b", "c"], tombstones=[])],
        ),
    ]  # fmt: skip


def action_state_vectors() -> list[Json]:
    """What the other actions do to a snapshot: txn, domains, cdc, commitInfo, partitions."""
    return [
        vector(
            "action/txn/latest-per-app-wins",
            "The last txn per app id wins even when its version is lower.",
            ["ACTION.TXN", "SNAPSHOT.APP_TXN"],
            {name(0): create(add("a"), txn("app-1", 5), txn("app-2", 1)),
             name(1): [info("STREAMING UPDATE"), txn("app-1", 3)]},
            [snapshot(0, ["a"], app_txns={"app-1": 5, "app-2": 1}),
             snapshot(1, ["a"], app_txns={"app-1": 3, "app-2": 1})],
        ),
        vector(
            "action/domain-metadata/latest-wins-removed-absent",
            "The last domainMetadata per domain wins; removed: true deletes the domain.",
            ["ACTION.DOMAIN_METADATA", "SNAPSHOT.DOMAIN_METADATA"],
            {name(0): create(domain("user.one", "c1"), domain("user.two", "c2"),
                             proto=protocol(1, 7, writerFeatures=["domainMetadata"])),
             name(1): [info("WRITE", False), domain("user.two", "c2", removed=True),
                       domain("user.one", "c3")]},
            [snapshot(0, [], domains={"user.one": "c1", "user.two": "c2"}),
             snapshot(1, [], domains={"user.one": "c3"},
                      protocol={"minReaderVersion": 1, "minWriterVersion": 7,
                                "writerFeatures": ["domainMetadata"]})],
        ),
        vector(
            "action/cdc/never-a-live-file",
            "A cdc action does not change the table's files.",
            ["ACTION.CDC", "SNAPSHOT.RECONCILE"],
            {name(0): create(add("a")),
             name(1): [info("WRITE", False), add("b"),
                       {"cdc": {"path": "_change_data/cdc-1.parquet", "partitionValues": {},
                                "size": 1, "dataChange": False}}]},
            [snapshot(1, ["a", "b"], tombstones=[])],
        ),
        vector(
            "action/commit-info/no-state",
            "A commit holding only a commitInfo is a version that changes no state.",
            ["ACTION.COMMIT_INFO", "SNAPSHOT.REPLAY"],
            {name(0): create(add("a")), name(1): [info("OPTIMIZE", False)]},
            [snapshot(1, ["a"], tombstones=[], app_txns={}, domains={})],
        ),
        vector(
            "action/partition-values/strings-and-null",
            "Partition values are strings, or null for a null value.",
            ["ACTION.PARTITION_VALUES"],
            {name(0): create(add("p=a/f1.parquet", {"p": "a"}),
                             add("p=__HIVE_DEFAULT_PARTITION__/f2.parquet", {"p": None}),
                             partitions=["p"])},
            [snapshot(0, ["p=a/f1.parquet", "p=__HIVE_DEFAULT_PARTITION__/f2.parquet"],
                      partition_columns=["p"])],
        ),
    ]  # fmt: skip


def snapshot_family() -> list[Json]:
    dv = protocol(3, 7, readerFeatures=["deletionVectors"], writerFeatures=["deletionVectors"])
    return [
        vector(
            "snapshot/file-key/path-and-deletion-vector",
            "Files are keyed by path and deletion vector: an add of a with a vector followed "
            "by a remove of a without one leaves a live (the new key) and a tombstone (the old); "
            "a second vector on the same path is a second live file.",
            ["SNAPSHOT.FILE_KEY", "SNAPSHOT.RECONCILE"],
            {name(0): create(add("a"), proto=dv),
             name(1): [info("DELETE", False), add("a", deletionVector=DV_X), remove("a")],
             name(2): [info("WRITE", False), add("a", deletionVector=DV_Y)]},
            [snapshot(1, ["a"], tombstones=["a"]), snapshot(2, ["a", "a"], tombstones=["a"])],
        ),
        vector(
            "snapshot/protocol-metadata/missing-metadata",
            "A first commit without metaData leaves a snapshot without metadata: the table is "
            "corrupt.",
            ["SNAPSHOT.PROTOCOL_METADATA"],
            {name(0): [info("CREATE TABLE", False), protocol(), add("a")]},
            [{"version": None, "error": "MISSING_PROTOCOL_OR_METADATA"}],
        ),
        vector(
            "snapshot/time-travel/every-version",
            "Every version 0-3 can be read; version 4 does not exist.",
            ["SNAPSHOT.TIME_TRAVEL", "SNAPSHOT.REPLAY"],
            commits(0, 1, 2, 3),
            [snapshot(v, LIVE[v]) for v in range(4)]
            + [{"version": 4, "error": "VERSION_NOT_FOUND"}],
        ),
        ict_time_travel(),
        *path_vectors(),
        *special_file_vectors(),
        *checksum_vectors(),
        *relist_vectors(),
    ]  # fmt: skip


def ict_time_travel() -> Json:
    """ICT.TIME_TRAVEL on a table with in-commit timestamps from version 0: 1000, 2000, 3000."""
    ict = {"delta.enableInCommitTimestamps": "true"}
    proto = protocol(1, 7, writerFeatures=["inCommitTimestamp"])
    stamped = [{"commitInfo": {**info(op, blind)["commitInfo"], "inCommitTimestamp": ts}}
               for op, blind, ts in (("CREATE TABLE", False, 1000), ("WRITE", True, 2000),
                                     ("WRITE", True, 3000))]  # fmt: skip
    return vector(
        "snapshot/time-travel/by-in-commit-timestamp",
        "In-commit timestamps are on from version 0 (1000, 2000, 3000 ms): a timestamp reads the "
        "last version at or before it; one before version 0's or after the latest's fails.",
        ["ICT.TIME_TRAVEL", "SNAPSHOT.TIME_TRAVEL"],
        {name(0): [stamped[0], proto, metadata(ict), add("a")],
         name(1): [stamped[1], add("b")], name(2): [stamped[2], add("c")]},
        [{"timestamp": 1000, "expect": {"version": 0, "files": ["a"]}},
         {"timestamp": 2500, "expect": {"version": 1, "files": ["a", "b"]}},
         {"timestamp": 3000, "expect": {"version": 2, "files": ["a", "b", "c"]}},
         {"timestamp": 999, "error": "TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"},
         {"timestamp": 3001, "error": "TIMESTAMP_GREATER_THAN_COMMIT"}],
    )  # fmt: skip


def path_vectors() -> list[Json]:
    """PATH.DATA_FILE and SNAPSHOT.CANONICAL_PATH: which spellings name a file of the table."""
    bad = [
        ("undecodable-uri", "p/x%zz.parquet", "does not decode as a URI (%zz)"),
        ("parent-segment", "../outside.parquet", "leaves the table root (..)"),
        ("inner-parent-segment", "p/../x.parquet", "has a .. segment after its first one"),
        ("inside-delta-log", "_delta_log/x.parquet", "lies inside _delta_log"),
    ]
    return [
        vector(
            "snapshot/canonical-path/relative-spellings",
            "d/x.parquet, ./d/x.parquet and d//x.parquet are one logical file, reported as "
            "d/x.parquet: re-adding it by another spelling keeps one live file, and a remove "
            "spelled a third way removes it.",
            ["SNAPSHOT.CANONICAL_PATH", "SNAPSHOT.FILE_KEY"],
            {name(0): create(add("d/x.parquet")), name(1): [info(), add("./d/x.parquet")],
             name(2): [info("DELETE", False), remove("d//x.parquet")]},
            [snapshot(1, ["d/x.parquet"]), snapshot(2, [], tombstones=["d/x.parquet"])],
        ),
        *(vector(
            f"snapshot/data-path/{slug}",
            f"Version 1 adds {path!r}, which {why}: no file of the table, so a load of "
            "version 1 is refused; version 0 still reads.",
            ["PATH.DATA_FILE"],
            {name(0): create(add("a")), name(1): [info(), add(path)]},
            [{"version": 1, "error": "UNSAFE_PATH"}, snapshot(0, ["a"])],
        ) for slug, path, why in bad),
    ]  # fmt: skip


def special_file_vectors() -> list[Json]:
    """PATH.NO_SYMLINKS and PATH.REGULAR_FILES: log names that hold a symbolic link leading out
    of the table, or a directory (log-vectors.md, "Special files")."""
    return [
        vector(
            "snapshot/special-files/symlinked-commit",
            "Commit 1 is a symbolic link to a valid commit outside the table: it is never "
            "followed, so a load that needs version 1 is refused; version 0 still reads.",
            ["PATH.NO_SYMLINKS"],
            {name(0): create(add("a")), name(1): {"symlink": [info(), add("b")]}},
            [{"version": None, "error": "UNSAFE_PATH"}, {"version": 1, "error": "UNSAFE_PATH"},
             snapshot(0, ["a"])],
        ),
        vector(
            "snapshot/special-files/directory-at-commit-name",
            "The name of commit 2 holds a directory: it is listed like a file and refused, not "
            "skipped as a gap (which would read version 1 as the latest); version 1 still reads.",
            ["PATH.REGULAR_FILES"],
            {name(0): create(add("a")), name(1): [info(), add("b")],
             name(2): {"special": "directory"}},
            [{"version": None, "error": "NOT_REGULAR_FILE"},
             {"version": 2, "error": "NOT_REGULAR_FILE"}, snapshot(1, ["a", "b"])],
        ),
    ]  # fmt: skip


def checksum_vectors() -> list[Json]:
    """CHECKSUM.VERIFY: checksum files never decide what a read returns."""
    wrong = {
        "txnId": "00000000-0000-0000-0000-000000000001",
        "tableSizeBytes": 5,
        "numFiles": 99,
        "numMetadata": 1,
        "numProtocol": 1,
        "metadata": metadata()["metaData"],
        "protocol": protocol()["protocol"],
    }
    return [
        vector(
            "snapshot/checksum/corrupt-and-torn-ignored",
            "Version 0's checksum claims 99 files of 5 bytes and version 1's is torn: a reader "
            "that verifies reports a mismatch only on request, and a read returns the replayed "
            "state (2 and 3 files).",
            ["CHECKSUM.VERIFY"],
            {
                name(0): create(add("a"), add("b")),
                "00000000000000000000.crc": {"json": wrong},
                name(1): [info(), add("c")],
                "00000000000000000001.crc": {"text": '{"txnId":"00000000-0000-00'},
            },
            [
                snapshot(0, ["a", "b"]),
                snapshot(1, ["a", "b", "c"]),
                {"version": None, "expect": {"version": 1, "files": ["a", "b", "c"]}},
            ],
        ),
    ]


def checkpoint_family() -> list[Json]:
    return (
        checkpoint_hint_vectors()
        + checkpoint_parts_vectors()
        + multi_part_vectors()
        + checkpoint_v2_vectors()
        + checkpoint_replay_vectors()
    )


def checkpoint_hint_vectors() -> list[Json]:
    """Reading from a checkpoint found by listing, with a good, stale, torn or missing hint."""
    rows2 = state_rows(2)
    tomb = {"tombstones": ["a"]}
    return [
        vector(
            "checkpoint/read/cleaned-log-starts-at-checkpoint",
            "Commits 0-1 were cleaned up below the checkpoint of version 2: versions 2-4 are "
            "read from the checkpoint plus later commits; version 1 is gone.",
            ["CHECKPOINT.READ", "CHECKPOINT.CONTENTS", "CHECKPOINT.LAST_CHECKPOINT",
             "RETENTION.LOG", "SNAPSHOT.TIME_TRAVEL"],
            {checkpoint_name(2): {"checkpoint": rows2}, **commits(2, 3, 4),
             **hint(2, len(rows2))},
            [snapshot(4, LIVE[4], **tomb), snapshot(2, LIVE[2], **tomb),
             {"version": 1, "error": "VERSION_NOT_FOUND"}],
        ),
        vector(
            "checkpoint/read/stale-hint",
            "_last_checkpoint names version 2, but a newer checkpoint of version 4 exists and "
            "commit 3 is gone: the listing finds checkpoint 4 and reads from it.",
            ["CHECKPOINT.LAST_CHECKPOINT", "CHECKPOINT.READ", "LOG.LISTING"],
            {checkpoint_name(2): {"checkpoint": rows2},
             checkpoint_name(4): {"checkpoint": state_rows(4)}, **commits(4, 5),
             **hint(2, len(rows2))},
            [snapshot(5, LIVE[5], **tomb)],
        ),
        vector(
            "checkpoint/read/no-hint",
            "Without _last_checkpoint the listing finds the checkpoint.",
            ["CHECKPOINT.READ"],
            {checkpoint_name(2): {"checkpoint": rows2}, **commits(2, 3, 4)},
            [snapshot(4, LIVE[4], **tomb)],
        ),
        vector(
            "checkpoint/read/torn-hint",
            "A torn _last_checkpoint is only a hint: the reader lists the log and uses the "
            "checkpoint it finds.",
            ["CHECKPOINT.LAST_CHECKPOINT", "CHECKPOINT.READ"],
            {checkpoint_name(2): {"checkpoint": rows2}, **commits(2, 3, 4),
             "_last_checkpoint": {"text": '{"version":2,"si'}},
            [snapshot(4, LIVE[4], **tomb)],
        ),
    ]  # fmt: skip


def checkpoint_parts_vectors() -> list[Json]:
    """Dangling hints, multi-part checkpoints and time travel below a checkpoint."""
    rows2 = state_rows(2)
    tomb = {"tombstones": ["a"]}
    return [
        vector(
            "checkpoint/read/dangling-hint-falls-back",
            "_last_checkpoint names a checkpoint of version 4 that does not exist; the older "
            "complete checkpoint of version 2 and commits 3-5 are used.",
            ["CHECKPOINT.READ", "CHECKPOINT.LAST_CHECKPOINT"],
            {checkpoint_name(2): {"checkpoint": rows2}, **commits(2, 3, 4, 5),
             **hint(4, 6)},
            [snapshot(5, LIVE[5], **tomb)],
        ),
        vector(
            "checkpoint/read/partial-multi-part-ignored",
            "Only part 1 of 2 of a multi-part checkpoint of version 4 exists: it is ignored and "
            "the classic checkpoint of version 2 is used.",
            ["CHECKPOINT.READ"],
            {checkpoint_name(2): {"checkpoint": rows2},
             checkpoint_name(4, 1, 2): {"checkpoint": state_rows(4)[:3]},
             **commits(2, 3, 4, 5)},
            [snapshot(5, LIVE[5], **tomb)],
        ),
        vector(
            "checkpoint/read/complete-multi-part",
            "A checkpoint of version 2 in two parts, named by _last_checkpoint with parts: 2.",
            ["CHECKPOINT.READ", "CHECKPOINT.LAST_CHECKPOINT", "CHECKPOINT.CONTENTS"],
            {checkpoint_name(2, 1, 2): {"checkpoint": rows2[:3]},
             checkpoint_name(2, 2, 2): {"checkpoint": rows2[3:]}, **commits(2, 3, 4),
             **hint(2, len(rows2), parts=2)},
            [snapshot(4, LIVE[4], **tomb), snapshot(3, LIVE[3], **tomb)],
        ),
        vector(
            "checkpoint/read/time-travel-below-checkpoint",
            "With every commit kept, a version older than the checkpoint is replayed from the "
            "commits; a newer one from the checkpoint.",
            ["CHECKPOINT.READ", "SNAPSHOT.TIME_TRAVEL"],
            {**commits(0, 1, 2, 3, 4), checkpoint_name(2): {"checkpoint": rows2},
             **hint(2, len(rows2))},
            [snapshot(1, LIVE[1], tombstones=[]), snapshot(3, LIVE[3], **tomb)],
        ),
        vector(
            "checkpoint/read/cleanup-left-a-commit-below",
            "Commit 0 was cleaned up below the checkpoint of version 2 but commit 1 was not "
            "(a cleanup stopped midway): version 1 has no start to replay from, so it does not "
            "exist; versions 2-4 read.",
            ["SNAPSHOT.TIME_TRAVEL", "CHECKPOINT.READ", "RETENTION.LOG"],
            {checkpoint_name(2): {"checkpoint": rows2}, **commits(1, 2, 3, 4),
             **hint(2, len(rows2))},
            [{"version": 1, "error": "VERSION_NOT_FOUND"}, snapshot(2, LIVE[2], **tomb),
             snapshot(4, LIVE[4], **tomb)],
        ),
        vector(
            "checkpoint/read/empty-checkpoint-file-ignored",
            "The only checkpoint, of version 4, is a zero-length file (a torn write) and the "
            "commits before 4 are gone: an empty file is no checkpoint, so no start exists and "
            "the log has a hole from version 0.",
            ["CHECKPOINT.READ", "LOG.LISTING", "LOG.CONTIGUITY"],
            {checkpoint_name(4): {"text": ""}, **commits(4, 5)},
            [{"version": None, "error": "VERSIONS_NOT_CONTIGUOUS"}],
        ),
    ]  # fmt: skip


def multi_part_vectors() -> list[Json]:
    """CHECKPOINT.READ's completeness of a multi-part checkpoint: all parts of one part count,
    each non-empty. A checkpoint of version 4 that is not complete beside the classic one of
    version 2: readers start from 2 and replay commits 3-5."""
    rows2, rows4 = state_rows(2), state_rows(4)
    tomb = {"tombstones": ["a"]}
    base = {checkpoint_name(2): {"checkpoint": rows2}, **commits(2, 3, 4, 5)}
    return [
        vector(
            "checkpoint/read/multi-part-counts-do-not-mix",
            "Version 4 has part 1 of a two-part checkpoint (protocol, metadata, b, the "
            "tombstone of a; its part 2 would hold c, d and e) and parts 2 and 3 of a "
            "three-part one (c; e; its part 1 would hold the rest and d): two writers chose "
            "different part counts and both died. Parts complete only a checkpoint of their "
            "own count, and neither is complete: three files make neither a two-part nor a "
            "three-part checkpoint (together they lack d).",
            ["CHECKPOINT.READ"],
            {**base, checkpoint_name(4, 1, 2): {"checkpoint": [*rows4[:3], rows4[6]]},
             checkpoint_name(4, 2, 3): {"checkpoint": [rows4[3]]},
             checkpoint_name(4, 3, 3): {"checkpoint": [rows4[5]]}},
            [snapshot(5, LIVE[5], **tomb), snapshot(4, LIVE[4], **tomb)],
        ),
        vector(
            "checkpoint/read/multi-part-with-an-empty-part",
            "Version 4 has both parts of a two-part checkpoint, but part 2 is a zero-length "
            "file (its writer died before writing a byte): an empty file is no part, so the "
            "checkpoint is not complete.",
            ["CHECKPOINT.READ"],
            {**base, checkpoint_name(4, 1, 2): {"checkpoint": rows4},
             checkpoint_name(4, 2, 2): {"text": ""}},
            [snapshot(5, LIVE[5], **tomb)],
        ),
        vector(
            "checkpoint/read/hinted-multi-part-missing-its-first-part",
            "_last_checkpoint names a two-part checkpoint of version 4, and only its last part "
            "exists (written last does not mean all were written): the hint names a checkpoint "
            "that is not complete, so the reader falls back to the complete one of version 2.",
            ["CHECKPOINT.READ", "CHECKPOINT.LAST_CHECKPOINT"],
            {**base, checkpoint_name(4, 2, 2): {"checkpoint": rows4[3:]},
             **hint(4, len(rows4), parts=2)},
            [snapshot(5, LIVE[5], **tomb), snapshot(3, LIVE[3], **tomb)],
        ),
    ]  # fmt: skip


def checkpoint_replay_vectors() -> list[Json]:
    """Replay that starts at a checkpoint: a tombstone or a live file the checkpoint holds meets a
    later commit touching the same file key (SNAPSHOT.REPLAY, SNAPSHOT.RECONCILE)."""
    rows2 = state_rows(2)
    dv = protocol(3, 7, readerFeatures=["deletionVectors"], writerFeatures=["deletionVectors"])
    dv_rows = [dv, metadata(), add("b", data_change=False),
               add("c", data_change=False, deletionVector=DV_X),
               remove("a", data_change=False), remove("c", data_change=False)]  # fmt: skip
    return [
        vector(
            "checkpoint/replay/tombstone-then-re-add",
            "The checkpoint of version 2 (commits below it cleaned up) holds the tombstone of a; "
            "commit 3 adds a again. Replay "
            "from the checkpoint makes a live and drops its tombstone, as replay from the commits "
            "would; version 2 still has the tombstone.",
            ["SNAPSHOT.REPLAY", "SNAPSHOT.RECONCILE", "CHECKPOINT.READ"],
            {checkpoint_name(2): {"checkpoint": rows2}, **commits(2),
             name(3): [info(), add("a", size=7)], **hint(2, len(rows2))},
            [snapshot(3, ["a", "b", "c"], tombstones=[]),
             snapshot(2, ["b", "c"], tombstones=["a"])],
        ),
        vector(
            "checkpoint/replay/live-file-removed-then-re-added",
            "The checkpoint of version 2 holds b live; commit 3 removes b and commit 4 adds it "
            "again: b is live at 4 with no tombstone, and a tombstone at 3.",
            ["SNAPSHOT.REPLAY", "SNAPSHOT.RECONCILE", "CHECKPOINT.READ"],
            {checkpoint_name(2): {"checkpoint": rows2}, **commits(2),
             name(3): [info("DELETE", False), remove("b")],
             name(4): [info(), add("b", size=9)], **hint(2, len(rows2))},
            [snapshot(4, ["b", "c"], tombstones=["a"]),
             snapshot(3, ["c"], tombstones=["a", "b"])],
        ),
        vector(
            "checkpoint/replay/deletion-vector-keys-across-the-checkpoint",
            "The checkpoint of version 2 holds c live with a deletion vector and the tombstone of "
            "c without one (a DELETE gave c its vector). Commit 3 replaces c's vector by another "
            "(remove of c with the first, add with the second); commit 4 removes that and adds c "
            "without a vector, which re-adds the key the checkpoint's tombstone named. Keys are "
            "path and vector (SNAPSHOT.FILE_KEY): one live c throughout; the tombstones are those "
            "of the keys not live.",
            ["SNAPSHOT.FILE_KEY", "SNAPSHOT.RECONCILE", "CHECKPOINT.READ"],
            {checkpoint_name(2): {"checkpoint": dv_rows},
             name(2): [info("DELETE", False), remove("c"), add("c", deletionVector=DV_X)],
             name(3): [info("DELETE", False), remove("c", deletionVector=DV_X),
                       add("c", deletionVector=DV_Y)],
             name(4): [info("RESTORE", False), remove("c", deletionVector=DV_Y), add("c")],
             **hint(2, len(dv_rows))},
            [snapshot(2, ["b", "c"], tombstones=["a", "c"]),
             snapshot(3, ["b", "c"], tombstones=["a", "c", "c"]),
             snapshot(4, ["b", "c"], tombstones=["a", "c", "c"])],
        ),
    ]  # fmt: skip


TORN = {"text": "PAR1"}  # a Parquet file whose writer died after the magic bytes: no footer


def old(names: Iterable[str]) -> Json:
    """File times for expired files: the first seconds of 1970, one second apart in name order
    (the order log cleanup adjusts times in, RETENTION.LOG)."""
    return {n: 1000 * i for i, n in enumerate(sorted(names))}


def partial_multi_part_log() -> Json:
    """HISTORY's commits 0-5, a whole classic checkpoint of version 2, and only part 2 of a
    two-part checkpoint of version 4, which _last_checkpoint names."""
    rows4 = state_rows(4)
    return {
        checkpoint_name(2): {"checkpoint": state_rows(2)},
        checkpoint_name(4, 2, 2): {"checkpoint": rows4[3:]},
        **commits(0, 1, 2, 3, 4, 5),
        **hint(4, len(rows4), parts=2),
    }


def verified_checkpoint_vectors() -> list[Json]:
    """RETENTION.VERIFIED_CHECKPOINT: the engine's own log cleanup (RETENTION.LOG) meets a torn
    checkpoint that _last_checkpoint names. Every file but the newest commit was written in the
    first seconds of 1970 (expired under any retention), one second apart in name order (the
    order cleanup adjusts times in, RETENTION.LOG); the newest keeps the time it is written."""

    rows2, rows3, rows4 = state_rows(2), state_rows(3), state_rows(4)
    two = {
        checkpoint_name(2): {"checkpoint": rows2},
        checkpoint_name(4): TORN,
        **commits(0, 1, 2, 3, 4, 5),
        **hint(4, len(rows4)),
    }
    three = {checkpoint_name(3): TORN, **commits(0, 1, 2, 3), **hint(3, len(rows3))}
    whole = {
        checkpoint_name(2): {"checkpoint": rows2},
        **commits(0, 1, 2, 3, 4),
        **hint(2, len(rows2)),
    }
    empty = {checkpoint_name(3): {"text": ""}, **commits(0, 1, 2, 3)}
    partial = partial_multi_part_log()
    tomb = {"tombstones": ["a"]}
    return [
        vector(
            "retention/verified-checkpoint/cleanup-passes-over-torn-checkpoint",
            "Commits 0-4 and both checkpoints have expired; _last_checkpoint names the "
            "checkpoint of version 4, which is torn (no Parquet footer), and the one of "
            "version 2 is whole. The engine's own log cleanup must pass over the torn one and "
            "keep the log from checkpoint 2 on: commits 0-1 go (version 1 is gone), versions 2 "
            "and 3 still read. An engine that trusts the torn checkpoint deletes commits 2-3 "
            "and checkpoint 2, the only readable copy of those versions.",
            ["RETENTION.VERIFIED_CHECKPOINT", "RETENTION.LOG", "CHECKPOINT.READ"],
            two,
            [{"version": 1, "error": "VERSION_NOT_FOUND"}, snapshot(2, LIVE[2], **tomb),
             snapshot(3, LIVE[3], **tomb)],
            file_times=old(n for n in two if n not in {name(5), "_last_checkpoint"}),
            clean_up_expired_logs=True,
        ),
        vector(
            "retention/verified-checkpoint/torn-only-checkpoint-deletes-nothing",
            "Commits 0-3 have expired and the only checkpoint, of version 3 (named by "
            "_last_checkpoint), is torn: no checkpoint reads back whole, so the engine's own "
            "log cleanup deletes nothing and every version still reads from the commits. An "
            "engine that trusts the torn checkpoint deletes commits 0-2.",
            ["RETENTION.VERIFIED_CHECKPOINT", "RETENTION.LOG"],
            three,
            [snapshot(0, LIVE[0]), snapshot(2, LIVE[2], **tomb)],
            file_times=old(n for n in three if n != "_last_checkpoint"),
            clean_up_expired_logs=True,
        ),
        vector(
            "retention/verified-checkpoint/whole-checkpoint-bounds-cleanup",
            "Commits 0-3 and the checkpoint of version 2 have expired; the checkpoint is whole "
            "and _last_checkpoint names it. The engine's own log cleanup deletes the commits "
            "below it (0-1: version 1 is gone) and nothing at or above it: versions 2-4 read.",
            ["RETENTION.VERIFIED_CHECKPOINT", "RETENTION.LOG", "CHECKPOINT.READ"],
            whole,
            [{"version": 1, "error": "VERSION_NOT_FOUND"}, snapshot(2, LIVE[2], **tomb),
             snapshot(4, LIVE[4], **tomb)],
            file_times=old(n for n in whole if n not in {name(4), "_last_checkpoint"}),
            clean_up_expired_logs=True,
        ),
        vector(
            "retention/verified-checkpoint/empty-checkpoint-deletes-nothing",
            "Commits 0-3 have expired and the only checkpoint, of version 3, is a zero-length "
            "file (no _last_checkpoint): an empty file is no checkpoint, so the engine's own "
            "log cleanup deletes nothing and every version still reads from the commits.",
            ["RETENTION.VERIFIED_CHECKPOINT", "RETENTION.LOG"],
            empty,
            [snapshot(0, LIVE[0]), snapshot(2, LIVE[2], **tomb), snapshot(3, LIVE[3], **tomb)],
            file_times=old(n for n in empty if n != name(3)),
            clean_up_expired_logs=True,
        ),
        vector(
            "retention/verified-checkpoint/partial-multi-part-does-not-bound-cleanup",
            "Commits 0-4 and both checkpoints have expired; _last_checkpoint names a two-part "
            "checkpoint of version 4 of which only part 2 exists (it reads back whole, but it "
            "is not a complete checkpoint), and the classic one of version 2 is whole. The "
            "engine's own log cleanup keeps the log from checkpoint 2 on: commits 0-1 go, "
            "versions 2 and 3 still read. An engine that counts the lone part as a checkpoint "
            "deletes commits 2-3 and checkpoint 2, the only readable copy of those versions.",
            ["RETENTION.VERIFIED_CHECKPOINT", "RETENTION.LOG", "CHECKPOINT.READ"],
            partial,
            [{"version": 1, "error": "VERSION_NOT_FOUND"}, snapshot(2, LIVE[2], **tomb),
             snapshot(3, LIVE[3], **tomb), snapshot(5, LIVE[5], **tomb)],
            file_times=old(n for n in partial if n not in {name(5), "_last_checkpoint"}),
            clean_up_expired_logs=True,
        ),
    ]  # fmt: skip


def checkpoint_protection_vectors() -> list[Json]:
    """RETENTION.CHECKPOINT_PROTECTION: the engine's own log cleanup on a table that lists the
    writer feature checkpointProtection, the versions below 4 protected. The checkpoint family's
    table (HISTORY) with that protocol and property; every file but commit 4 expired (as in
    verified_checkpoint_vectors)."""
    proto = protocol(1, 7, writerFeatures=["appendOnly", "invariants", "checkpointProtection"])
    conf = {"delta.requireCheckpointProtectionBeforeVersion": "4"}
    history = [create(add("a"), configuration=conf, proto=proto), *HISTORY[1:5]]
    rows2 = [proto, metadata(conf), *(add(p, data_change=False) for p in LIVE[2]),
             remove("a", data_change=False)]  # fmt: skip
    log = {
        checkpoint_name(2): {"checkpoint": rows2},
        **{name(v): history[v] for v in range(5)},
        **hint(2, len(rows2)),
    }
    times = {n: 1000 * i for i, n in enumerate(sorted(n for n in log if n not in
                                                      {name(4), "_last_checkpoint"}))}  # fmt: skip
    tomb = {"tombstones": ["a"]}
    return [
        vector(
            "retention/checkpoint-protection/cleanup-below-the-protected-version",
            "The table lists checkpointProtection with versions below 4 protected; commits 0-3 "
            "and the whole checkpoint of version 2 (named by _last_checkpoint) have expired. "
            "The engine's own log cleanup creates no checkpoint, so it may truncate below 4 in "
            "a chunk, as on any table (commits 0-1 go), or delete nothing until it can reach 4 "
            "in one go: version 1 may read or be gone, so it is not read. Whichever it does, "
            "it keeps checkpoint 2 and commits 2-4: versions 2-4 read.",
            ["RETENTION.CHECKPOINT_PROTECTION", "RETENTION.LOG"],
            log,
            [snapshot(v, LIVE[v], **tomb) for v in (2, 3, 4)],
            file_times=times,
            clean_up_expired_logs=True,
        ),
    ]


def relist_vectors() -> list[Json]:
    """SNAPSHOT.RELIST: between the reader's listing and its reads, another writer checkpoints
    the table and cleans up the log (``after_listing``)."""
    tomb = {"tombstones": ["a"]}
    rows2, rows3, rows4 = state_rows(2), state_rows(3), state_rows(4)
    return [
        vector(
            "snapshot/relist/cleanup-between-listing-and-reads",
            "The reader lists commits 0-3 (no checkpoint, no _last_checkpoint); before it "
            "opens any of them another writer writes the checkpoint of version 3 and "
            "_last_checkpoint, and deletes commits 0-2. The reader finds the commits it "
            "listed gone, lists again and loads version 3 from the checkpoint.",
            ["SNAPSHOT.RELIST", "CHECKPOINT.READ"],
            commits(0, 1, 2, 3),
            [{"version": None, "expect": {"version": 3, "files": LIVE[3], **tomb}},
             {"version": 1, "error": "VERSION_NOT_FOUND"}],
            after_listing={checkpoint_name(3): {"checkpoint": rows3}, **hint(3, len(rows3)),
                           name(0): None, name(1): None, name(2): None},
        ),
        vector(
            "snapshot/relist/hinted-checkpoint-cleaned-up",
            "_last_checkpoint names the checkpoint of version 2 and the reader lists from it "
            "(checkpoint 2, commits 2-4); before it opens them another writer writes the "
            "checkpoint of version 4 and _last_checkpoint, and deletes checkpoint 2 and "
            "commits 2-3. The reader lists again and loads version 4 from checkpoint 4.",
            ["SNAPSHOT.RELIST", "CHECKPOINT.LAST_CHECKPOINT"],
            {checkpoint_name(2): {"checkpoint": rows2}, **commits(2, 3, 4),
             **hint(2, len(rows2))},
            [{"version": None, "expect": {"version": 4, "files": LIVE[4], **tomb}}],
            after_listing={checkpoint_name(4): {"checkpoint": rows4}, **hint(4, len(rows4)),
                           checkpoint_name(2): None, name(2): None, name(3): None},
        ),
    ]  # fmt: skip


def retention_family() -> list[Json]:
    week = {"delta.deletedFileRetentionDuration": "interval 1 week"}
    day = {"delta.setTransactionRetentionDuration": "interval 1 days"}
    return [
        vector(
            "retention/tombstones/expired-are-dropped",
            "Tombstones deleted at time 0, or without deletionTimestamp (counts as 0), are "
            "expired under a one-week retention; one deleted in 2100 is kept.",
            ["RETENTION.TOMBSTONES", "SNAPSHOT.TOMBSTONES"],
            {name(0): create(add("a"), add("b"), add("c"), configuration=week),
             name(1): [info("DELETE", False), remove("a", 0), remove("b"), remove("c", None)]},
            [snapshot(1, [], tombstones=["b"], properties=week)],
        ),
        vector(
            "retention/set-transaction/expired-are-dropped",
            "With a one-day setTransactionRetentionDuration, a txn last updated at time 0 or "
            "without lastUpdated has expired; one updated in 2100 is kept.",
            ["RETENTION.SET_TRANSACTION", "SNAPSHOT.APP_TXN"],
            {name(0): create(txn("kept", 1, FUTURE), txn("old", 2, 0), txn("undated", 3),
                             configuration=day)},
            [snapshot(0, [], app_txns={"kept": 1})],
        ),
        vector(
            "retention/set-transaction/no-retention-keeps-all",
            "Without setTransactionRetentionDuration application transactions never expire.",
            ["RETENTION.SET_TRANSACTION", "SNAPSHOT.APP_TXN"],
            {name(0): create(txn("old", 2, 0), txn("undated", 3))},
            [snapshot(0, [], app_txns={"old": 2, "undated": 3})],
        ),
        *verified_checkpoint_vectors(),
        *checkpoint_protection_vectors(),
    ]  # fmt: skip


def compaction_vectors() -> list[Json]:
    """LOG.COMPACTION: a compaction file of commits 1-3 of HISTORY (their reconciled actions,
    no commitInfo) is used only where it fits, and never stands in for a missing commit."""
    compacted = {f"{1:020d}.{3:020d}.compacted.json": [add("b"), remove("a"), add("c"), add("d")]}
    tomb = {"tombstones": ["a"]}
    return [
        vector(
            "log/compaction/used-only-where-it-fits",
            "Commits 0-5 and a compaction file of 1-3: versions 3 and 5 may replay it in place "
            "of commits 1-3; version 2 ends inside its range, so commits 1-2 are replayed and "
            "d (added by commit 3) is not live.",
            ["LOG.COMPACTION", "SNAPSHOT.TIME_TRAVEL"],
            {**commits(0, 1, 2, 3, 4, 5), **compacted},
            [snapshot(5, LIVE[5], **tomb), snapshot(3, LIVE[3], **tomb),
             snapshot(2, LIVE[2], **tomb),
             {"version": None, "expect": {"version": 5, "files": LIVE[5], **tomb}}],
        ),
        compaction_ending_at_the_target(),
        compaction_after_a_checkpoint(),
        vector(
            "log/compaction/never-replaces-a-missing-commit",
            "Commit 2 is missing although a compaction file covers 1-3: the commits after the "
            "start must all exist, so the latest snapshot cannot be built.",
            ["LOG.COMPACTION", "LOG.CONTIGUITY"],
            {**commits(0, 1, 3, 4), **compacted},
            [{"version": None, "error": "VERSIONS_NOT_CONTIGUOUS"}],
        ),
    ]  # fmt: skip


def compaction_ending_at_the_target() -> Json:
    """LOG.COMPACTION: a compaction file that ends at the version read, on a table with in-commit
    timestamps: its reconciled actions keep a file added and removed inside its range as a
    tombstone, the latest txn per app and a domain's removal; no commitInfo."""
    log = ict_table(1000, 2000, 3000, 4000)
    log[name(0)].append(domain("gone", "1"))
    log[name(1)] += [txn("app", 1), add("x")]
    log[name(2)] += [remove("x"), txn("app", 2), domain("kept", "2")]
    log[name(3)] += [domain("gone", "", removed=True)]
    compacted = [add("b"), txn("app", 2), remove("x"), add("c"), domain("kept", "2"),
                 domain("gone", "", removed=True), add("d")]  # fmt: skip
    log[f"{1:020d}.{3:020d}.compacted.json"] = compacted
    state = {"tombstones": ["x"], "app_txns": {"app": 2}, "domains": {"kept": "2"}}
    return vector(
        "log/compaction/ends-at-the-target",
        "In-commit timestamps from version 0 (1000-4000 ms) and a compaction file of commits "
        "1-3, the latest: it holds their reconciled actions (x, added by 1 and removed by 2, "
        "stays a tombstone; app's txn is 2's; domain gone is removed by 3), and no commitInfo. "
        "Version 3 may replay it in place of commits 1-3; a timestamp read still finds each "
        "version by its own commit's in-commit timestamp, inside the range too.",
        ["LOG.COMPACTION", "ICT.TIME_TRAVEL", "SNAPSHOT.RECONCILE"],
        log,
        [{"version": None, "expect": {"version": 3, "files": ["a", "b", "c", "d"], **state}},
         {"timestamp": 4000, "expect": {"version": 3, "files": ["a", "b", "c", "d"], **state}},
         {"timestamp": 3999, "expect": {"version": 2, "files": ["a", "b", "c"],
                                        "tombstones": ["x"], "app_txns": {"app": 2},
                                        "domains": {"gone": "1", "kept": "2"}}},
         snapshot(1, ["a", "b", "x"], app_txns={"app": 1}, domains={"gone": "1"})],
    )  # fmt: skip


def compaction_after_a_checkpoint() -> Json:
    """LOG.COMPACTION after a checkpoint: a compaction file starting after it is used, one
    starting at or below it is not."""
    compacted = {
        f"{3:020d}.{5:020d}.compacted.json": [add("d"), add("e"), add("f")],
        f"{1:020d}.{4:020d}.compacted.json": [add("b"), remove("a"), add("c"), add("d"),
                                              add("e")],
    }  # fmt: skip
    return vector(
        "log/compaction/starts-after-a-checkpoint",
        "A checkpoint of version 2, a compaction file of commits 3-5 and one of 1-4: reading 5 "
        "starts at the checkpoint and may replay 3-5 in place of those commits; reading 4 "
        "starts there too, where 1-4 starts below the start and 3-5 ends past the target, so "
        "commits 3 and 4 are replayed.",
        ["LOG.COMPACTION", "CHECKPOINT.READ"],
        {**commits(0, 1, 2, 3, 4, 5), checkpoint_name(2): {"checkpoint": state_rows(2)},
         **hint(2, 5), **compacted},
        [snapshot(5, LIVE[5], tombstones=["a"]), snapshot(4, LIVE[4], tombstones=["a"])],
    )  # fmt: skip


def checkpoint_v2_vectors() -> list[Json]:
    """CHECKPOINT.STATS_AS_STRUCT on read: a checkpoint without stats. CHECKPOINT.V2_WRITE on
    read: a v2 checkpoint's UUID-named JSON top-level file, with its
    checkpointMetadata first and, as the protocol allows, the file actions inline (a sidecar
    lives in _delta_log/_sidecars/, which log vectors do not hold)."""
    v2 = protocol(3, 7, readerFeatures=["v2Checkpoint"], writerFeatures=["v2Checkpoint"])
    conf = {"delta.checkpointPolicy": "v2"}
    no_json = {"delta.checkpoint.writeStatsAsJson": "false"}
    history = [create(add("a"), configuration=conf, proto=v2), [info(), add("b")],
               [info("DELETE", False), remove("a"), add("c")], [info(), add("d")]]  # fmt: skip
    top = [{"checkpointMetadata": {"version": 2, "tags": {}}}, v2, metadata(conf),
           add("b", data_change=False), add("c", data_change=False),
           remove("a", data_change=False)]  # fmt: skip
    return [
        vector(
            "checkpoint/read/v2-top-level-json",
            "A v2 checkpoint of version 2 named by a UUID, its actions in the JSON top-level "
            "file: read from it plus commit 3; readers without v2Checkpoint skip it.",
            ["CHECKPOINT.V2_WRITE", "CHECKPOINT.READ"],
            {**{name(v): history[v] for v in range(4)},
             f"{2:020d}.checkpoint.3a5d1b4e-8c1f-4a9e-9b7a-2f0e6d4c1a90.json": top},
            [snapshot(3, ["b", "c", "d"], tombstones=["a"]),
             snapshot(2, ["b", "c"], tombstones=["a"])],
        ),
        vector(
            "checkpoint/read/stats-left-out",
            "delta.checkpoint.writeStatsAsJson is false and writeStatsAsStruct unset, as a "
            "writer before v3.0.0 leaves them: the checkpoint's adds carry no statistics in "
            "either form, and are read all the same.",
            ["CHECKPOINT.STATS_AS_STRUCT", "CHECKPOINT.READ"],
            {checkpoint_name(1): {"checkpoint": [
                protocol(), metadata(no_json), add("a", data_change=False),
                add("b", data_change=False)]},
             name(1): [info(), add("b", stats='{"numRecords":1}')],
             name(2): [info(), add("c", stats='{"numRecords":2}')]},
            [snapshot(2, ["a", "b", "c"]), snapshot(1, ["a", "b"], properties=no_json)],
        ),
    ]  # fmt: skip


# --- real bugs: one published bug of a Delta engine each (scenarios.md, "Real bugs") ----------


def bug(links: list[str], *affected: Json) -> Json:
    return {"links": links, "affected": list(affected)}


def affected(engine: str, releases: str, fixed: str | None = None) -> Json:
    return {"engine": engine, "releases": releases, **({} if fixed is None else {"fixed": fixed})}


DELTA = "https://github.com/delta-io/delta/"
DELTA_RS = "https://github.com/delta-io/delta-rs/issues/"
TRINO = "https://github.com/trinodb/trino/issues/"
SECOND = 1_700_000_000_000  # 2023-11-14T22:13:20Z, a whole second


def real_bugs_family() -> list[Json]:
    return (
        real_bug_commit_vectors()
        + real_bug_checkpoint_vectors()
        + real_bug_timestamp_vectors()
        + real_bug_dv_vectors()
    )


def real_bug_commit_vectors() -> list[Json]:
    """A commit file as a torn write left it."""
    torn = '{"add":{"path":"b","partitionValues":{},"size":1,"modificationTime":0,"dataChange"'
    return [
        vector(
            "real-bugs/commit-line-that-does-not-parse",
            "The last line of commit 1 was cut off mid-action (a torn write stored in place). "
            "delta-spark parsed commits leniently, made that line a row of nulls and read "
            "version 1 as version 0 plus nothing: the add of b was silently lost. A line that "
            "is not a JSON object is a corrupt commit: reading the latest version fails.",
            ["ACTION.LINE_FORMAT"],
            {name(0): create(add("a")),
             name(1): {"text": "\n".join([*lines([info()]), torn]) + "\n"}},
            [{"version": None, "error": "CORRUPT_LOG_FILE"}],
            bug([DELTA + "commit/0eb4c7eb7a84aa451fc8accd82bb771167ad137f"],
                affected("delta-spark", "up to 2.1.x (observed live on 2.1.1)", "2.2.0")),
        ),
    ]  # fmt: skip


def real_bug_checkpoint_vectors() -> list[Json]:
    """Checkpoints and their hint as buggy writers left them, and a cleanup that lost history."""
    rows2, rows4 = state_rows(2), state_rows(4)
    tomb = {"tombstones": ["a"]}
    partial = partial_multi_part_log()
    return [
        vector(
            "real-bugs/torn-last-checkpoint",
            "delta-kernel-java overwrote _last_checkpoint in place, so on a file system that "
            "shows partial writes two concurrent checkpointers could leave it torn: here one "
            "complete hint followed by the start of another, which parses as no JSON. The hint "
            "is only a hint: a reader lists the log, finds the checkpoint of version 4 and "
            "reads versions 4 and 5 from it.",
            ["CHECKPOINT.LAST_CHECKPOINT", "CHECKPOINT.READ"],
            {checkpoint_name(4): {"checkpoint": rows4}, **commits(4, 5),
             "_last_checkpoint": {"text": '{"version":4,"size":7}{"version":4,"si'}},
            [snapshot(5, LIVE[5], **tomb), snapshot(4, LIVE[4], **tomb)],
            bug([DELTA + "issues/5272"],
                affected("delta-kernel-java", "writing _last_checkpoint with overwrite on file "
                         "systems without atomic overwrite (reported 2025-09, open)")),
        ),
        vector(
            "real-bugs/stale-last-checkpoint",
            "A checkpointer of version 4 died after writing the checkpoint and before "
            "updating _last_checkpoint, which still names version 2. delta-rs asserted that "
            "the checkpoints it listed were the hinted one and refused to load the table. A "
            "stale hint is harmless: the reader uses the newest complete checkpoint it lists "
            "(version 4) for version 5, and checkpoint 2 plus commit 3 for version 3.",
            ["CHECKPOINT.READ", "CHECKPOINT.LAST_CHECKPOINT", "LOG.LISTING"],
            {checkpoint_name(2): {"checkpoint": rows2}, checkpoint_name(4): {"checkpoint": rows4},
             **commits(2, 3, 4, 5), **hint(2, len(rows2))},
            [snapshot(5, LIVE[5], **tomb), snapshot(3, LIVE[3], **tomb)],
            bug([DELTA_RS + "2258"], affected("deltalake (delta-rs)", "0.15.3 (as reported)")),
        ),
        vector(
            "real-bugs/classic-and-multi-part-checkpoint-of-one-version",
            "Two writers checkpointed version 2 at once, one as a classic file and one in two "
            "parts, and _last_checkpoint (no parts) names version 2. delta-rs counted every "
            "checkpoint file of the version against the hint's parts and refused to load the "
            "table. Both checkpoints are complete and either may be used: versions 2 and 4 "
            "read.",
            ["CHECKPOINT.READ", "CHECKPOINT.LAST_CHECKPOINT"],
            {checkpoint_name(2): {"checkpoint": rows2},
             checkpoint_name(2, 1, 2): {"checkpoint": rows2[:2]},
             checkpoint_name(2, 2, 2): {"checkpoint": rows2[2:]},
             **commits(2, 3, 4), **hint(2, len(rows2))},
            [snapshot(4, LIVE[4], **tomb), snapshot(2, LIVE[2], **tomb)],
            bug([DELTA_RS + "2643"], affected("deltalake (delta-rs)", "0.17.3 (as reported)")),
        ),
        vector(
            "real-bugs/lone-checkpoint-part-bounds-log-cleanup",
            "Commits 0-4 and both checkpoints have expired; _last_checkpoint names a two-part "
            "checkpoint of version 4 of which only part 2 exists, and the classic checkpoint "
            "of version 2 is whole. delta-spark's log cleanup took any checkpoint file as the "
            "start of the retained log, so it deleted commits 2-3 and checkpoint 2, and every "
            "later read failed (DELTA_MISSING_PART_FILES). A partial checkpoint bounds nothing: "
            "the cleanup keeps the log from checkpoint 2 on, and versions 2, 3 and 5 read.",
            ["RETENTION.LOG", "RETENTION.VERIFIED_CHECKPOINT", "CHECKPOINT.READ"],
            partial,
            [{"version": 1, "error": "VERSION_NOT_FOUND"}, snapshot(2, LIVE[2], **tomb),
             snapshot(3, LIVE[3], **tomb), snapshot(5, LIVE[5], **tomb)],
            bug([DELTA + "pull/4146", DELTA + "pull/4784"],
                affected("delta-spark", "2.1.1–4.0.0 (observed live on 2.1.1–3.3.2)",
                         "4.0.1 (#4784), 4.1.0 (#4146)")),
            file_times=old(n for n in partial if n not in {name(5), "_last_checkpoint"}),
            clean_up_expired_logs=True,
        ),
    ]  # fmt: skip


def ict_table(*stamps: int) -> Json:
    """Commits 0, 1, 2, … of a table with in-commit timestamps from version 0, stamped
    ``stamps``: version 0 creates it with a, each later version adds one file (b, c, …)."""
    ict = {"delta.enableInCommitTimestamps": "true"}
    proto = protocol(1, 7, writerFeatures=["inCommitTimestamp"])

    def stamped(operation: str, blind: bool, stamp: int) -> Json:
        return {"commitInfo": {**info(operation, blind)["commitInfo"], "inCommitTimestamp": stamp}}

    log = {name(0): [stamped("CREATE TABLE", False, stamps[0]), proto, metadata(ict), add("a")]}
    for version, stamp in enumerate(stamps[1:], start=1):
        log[name(version)] = [stamped("WRITE", True, stamp), add("abcdefgh"[version])]
    return log


def real_bug_timestamp_vectors() -> list[Json]:
    """Time travel by timestamp (ICT.TIME_TRAVEL) as engines got it wrong."""
    return [
        vector(
            "real-bugs/timestamp-read-within-one-second",
            "A table without in-commit timestamps whose versions 0, 1 and 2 were committed "
            "100, 400 and 800 ms into one second (their commit files' modification times, "
            "and their commitInfo timestamps alike). delta-rs turned the requested time into "
            "whole seconds before looking the version up, so every time in that second read "
            "the same version. Commit timestamps are milliseconds: 399 ms into the second reads "
            "version 0, 600 ms version 1, 800 ms version 2.",
            ["ICT.TIME_TRAVEL", "SNAPSHOT.TIME_TRAVEL"],
            {name(v): [{"commitInfo": {**info(op, blind)["commitInfo"], "timestamp": t}}, *rest]
             for v, (op, blind, t, rest) in enumerate([
                 ("CREATE TABLE", False, 1100, [protocol(), metadata(), add("a")]),
                 ("WRITE", True, 1400, [add("b")]), ("WRITE", True, 1800, [add("c")])])},
            [{"timestamp": 1600, "expect": {"version": 1, "files": ["a", "b"]}},
             {"timestamp": 1800, "expect": {"version": 2, "files": ["a", "b", "c"]}},
             {"timestamp": 1399, "expect": {"version": 0, "files": ["a"]}}],
            bug([DELTA_RS + "1967"], affected("deltalake (delta-rs)", "0.14.0 (as reported)")),
            file_times={name(0): 1100, name(1): 1400, name(2): 1800},
        ),
        vector(
            "real-bugs/timestamp-read-uses-in-commit-timestamps",
            "In-commit timestamps are on from version 0 (one second apart), and the commit "
            "files' modification times say otherwise (the log was copied: seconds into 1970, "
            "in reverse order). delta-kernel-java looked versions up by file modification "
            "time on such tables. A version's timestamp is its in-commit timestamp: 1.5 s "
            "after version 0's reads version 1, a time before version 0's fails.",
            ["ICT.TIME_TRAVEL", "SNAPSHOT.TIME_TRAVEL"],
            ict_table(SECOND, SECOND + 1000, SECOND + 2000),
            [{"timestamp": SECOND + 1500, "expect": {"version": 1, "files": ["a", "b"]}},
             {"timestamp": SECOND + 2000, "expect": {"version": 2, "files": ["a", "b", "c"]}},
             {"timestamp": SECOND - 1, "error": "TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"}],
            bug([DELTA + "issues/4294", DELTA + "pull/4581"],
                affected("delta-kernel-java", "3.3.0–4.0.0", "4.0.1 (#4870), 4.1.0 (#4581)")),
            file_times={name(0): 3000, name(1): 2000, name(2): 1000},
        ),
    ]  # fmt: skip


def real_bug_dv_vectors() -> list[Json]:
    """Removes that did not name the deletion vector of the file they removed (SNAPSHOT.FILE_KEY):
    the log such a writer left, and what it means."""
    dv = protocol(3, 7, readerFeatures=["deletionVectors"], writerFeatures=["deletionVectors"])
    stats = '{"numRecords":10,"tightBounds":false}'
    return [
        vector(
            "real-bugs/compaction-removes-without-the-vector",
            "Version 1 is a DELETE with deletion vectors (a gets vector X); version 2 is "
            "Trino's OPTIMIZE of a and b into c, whose remove of a carries no vector. A file "
            "is its path and its vector: that remove tombstones the old a, not the live one, "
            "so a with X stays live beside c, which holds its rows again (the rows twice). "
            "A reader that keys by path alone hides it, and loses a where the commit lists "
            "the add after the remove.",
            ["SNAPSHOT.FILE_KEY", "SNAPSHOT.RECONCILE"],
            {name(0): create(add("a"), add("b"), proto=dv),
             name(1): [info("DELETE", False), add("a", deletionVector=DV_X, stats=stats),
                       remove("a")],
             name(2): [info("OPTIMIZE", False), remove("a", data_change=False),
                       remove("b", data_change=False), add("c", data_change=False)]},
            [snapshot(2, ["a", "c"])],
            bug([TRINO + "31253"],
                affected("Trino (Delta Lake connector)", "OPTIMIZE of tables with deletion "
                         "vectors (reported 2026-09, open)")),
        ),
        vector(
            "real-bugs/second-dv-delete-removes-without-the-vector",
            "Two DELETEs mark rows of a.parquet: the first gives it vector X, the second "
            "vector Y, but the second's remove of a carries no vector. It tombstones the a "
            "that no longer exists, so both a with X and a with Y are live: every row the "
            "second DELETE kept is there twice (delta-spark and Trino read 17 rows of 10).",
            ["SNAPSHOT.FILE_KEY", "SNAPSHOT.RECONCILE"],
            {name(0): create(add("a"), proto=dv),
             name(1): [info("DELETE", False), remove("a"),
                       add("a", deletionVector=DV_X, stats=stats)],
             name(2): [info("DELETE", False), remove("a"),
                       add("a", deletionVector=DV_Y, stats=stats)]},
            [snapshot(2, ["a", "a"])],
            bug([TRINO + "24648"],
                affected("Trino (Delta Lake connector)", "DELETE on tables with deletion "
                         "vectors (reported 2025-01)")),
        ),
    ]  # fmt: skip


FAMILIES = {
    "log": log_family,
    "action": action_family,
    "snapshot": snapshot_family,
    "checkpoint": checkpoint_family,
    "retention": retention_family,
    "real-bugs": real_bugs_family,
}


def generate() -> dict[str, str]:
    """Relative path -> file text, for every vector."""
    out = {}
    for family in FAMILIES.values():
        for item in family():
            out[f"{item['id']}.json"] = json.dumps(item, indent=2) + "\n"
    return out


def write(directory: Path) -> int:
    return write_tree(directory, generate())


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else spec_folder() / "vectors"
    print(f"wrote {write(target)} log vectors to {target}")
