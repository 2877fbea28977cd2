"""deltaspec.impl.codec against the logs delta-spark wrote (../shared/fixtures/delta-spark).

Every line of every JSON commit file must decode and re-encode to the very same bytes, except the
lines listed in DOCUMENTED_DIFFERENCES (hand-edited lines that delta-spark itself would not write
back unchanged either). Then: whole files, corrupt input, paths, partition directories, partition
values and stats.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deltaspec.impl import codec
from deltaspec.impl.actions import (
    AddCDCFile,
    AddFile,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.impl.errors import CorruptLogError

COMMIT = re.compile(r"^(\d{20})\.json$")
KINDS = ("protocol", "metaData", "add", "remove", "txn", "commitInfo", "domainMetadata", "cdc")

# delta-spark's field order (actions.scala), written out independently of the codec.
FIELD_ORDER = {
    "add": (
        "path", "partitionValues", "size", "modificationTime", "dataChange", "stats", "tags",
        "deletionVector", "baseRowId", "defaultRowCommitVersion", "clusteringProvider",
    ),
}  # fmt: skip

Line = tuple[str, int, int]  # table, version, 1-based line number


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _known_keys_only(obj: dict[str, Any]) -> str | None:
    kept = {key: value for key, value in obj.items() if key in codec.KNOWN_ACTIONS}
    return _compact(kept) if kept else None


def _known_fields_in_order(obj: dict[str, Any]) -> str:
    ((kind, body),) = ((k, v) for k, v in obj.items() if k in codec.KNOWN_ACTIONS)
    return _compact({kind: {name: body[name] for name in FIELD_ORDER[kind] if name in body}})


@dataclass(frozen=True)
class Difference:
    """Lines the codec does not write back byte for byte, why, and what it writes instead."""

    reason: str
    lines: frozenset[Line]
    expected: Callable[[dict[str, Any]], str | None]  # the parsed original -> the line written


DOCUMENTED_DIFFERENCES: dict[str, Difference] = {
    "unknown actions are dropped": Difference(
        "ACTION.UNKNOWN: a line with no known action key decodes to None and is not written. "
        "Hand-edited by delta-spark's EvolvabilitySuite.",
        frozenset({("spark-log-schema-evolvability", 4, 3)}),
        lambda obj: None,
    ),
    "unknown keys beside an action are dropped": Difference(
        "ACTION.UNKNOWN: a top-level key that names no action, next to a known one, is ignored "
        "(delta-spark's SingleAction has no slot for it either).",
        frozenset({("spark-log-schema-evolvability", 5, 1)}),
        _known_keys_only,
    ),
    "unknown fields are dropped and field order is delta-spark's": Difference(
        "ACTION.UNKNOWN: an unknown field inside add is ignored; the hand-edited line also lists "
        "the known fields out of order and the codec writes them in delta-spark's order.",
        frozenset(
            {("spark-log-schema-evolvability", 5, 2), ("spark-log-schema-evolvability", 5, 3)}
        ),
        _known_fields_in_order,
    ),
    "hand-written whitespace is compacted": Difference(
        "The protocol line of this hand-made kernel test table has a space after the commas of "
        'its feature arrays (["columnMapping", "deletionVectors"]); Jackson writes none.',
        frozenset({("krs-cdf-column-mapping-dv", 0, 2)}),
        _compact,
    ),
}


def commit_files(fixtures: Path) -> Iterator[tuple[str, int, Path]]:
    for table in sorted(p for p in fixtures.iterdir() if (p / "_delta_log").is_dir()):
        for path in sorted((table / "_delta_log").iterdir()):
            if match := COMMIT.match(path.name):
                yield table.name, int(match[1]), path


def commit_lines(fixtures: Path) -> Iterator[tuple[Line, str]]:
    for table, version, path in commit_files(fixtures):
        for number, line in enumerate(path.read_bytes().decode("utf-8").split("\n"), 1):
            if line:
                yield (table, version, number), line


def documented(where: Line) -> tuple[str, Difference] | None:
    for name, difference in DOCUMENTED_DIFFERENCES.items():
        if where in difference.lines:
            return name, difference
    return None


def expected_line(where: Line, line: str) -> str | None:
    found = documented(where)
    return line if found is None else found[1].expected(json.loads(line))


# --- round trips -------------------------------------------------------------------------------


@pytest.mark.rules(
    "ACTION.LINE_FORMAT", "ACTION.PROTOCOL", "ACTION.METADATA", "ACTION.ADD", "ACTION.REMOVE",
    "ACTION.TXN", "ACTION.COMMIT_INFO", "ACTION.DOMAIN_METADATA", "ACTION.CDC", "ACTION.UNKNOWN",
)  # fmt: skip
def test_every_fixture_line_round_trips_byte_for_byte(fixtures_dir: Path) -> None:
    exact: Counter[str] = Counter()
    different: dict[str, set[Line]] = {name: set() for name in DOCUMENTED_DIFFERENCES}
    undocumented: list[str] = []
    for where, line in commit_lines(fixtures_dir):
        obj = json.loads(line)
        action = codec.decode_action(obj)
        written = None if action is None else codec.encode_action(action)
        if written == line:
            assert documented(where) is None, f"{where} is listed but round-trips exactly"
            exact[next(k for k in obj if k in codec.KNOWN_ACTIONS)] += 1
            continue
        found = documented(where)
        if found is None:
            undocumented.append(f"{where}\n  read:  {line}\n  wrote: {written}")
            continue
        name, difference = found
        assert written == difference.expected(obj), f"{where}: {name}"
        different[name].add(where)
    assert not undocumented, "undocumented differences:\n" + "\n".join(undocumented)
    for name, difference in DOCUMENTED_DIFFERENCES.items():
        assert different[name] == difference.lines, name
    assert all(exact[kind] > 0 for kind in KINDS), exact
    total = sum(exact.values()) + sum(map(len, different.values()))
    assert sum(exact.values()) / total > 0.99
    print(f"\n{sum(exact.values())}/{total} lines byte-exact {dict(exact)}")


@pytest.mark.rules("ACTION.LINE_FORMAT", "ACTION.UNKNOWN")
def test_whole_commit_files_round_trip(fixtures_dir: Path) -> None:
    exact_files = 0
    for table, version, path in commit_files(fixtures_dir):
        data = path.read_bytes()
        actions = codec.decode_commit(data, table=table, version=version, file=path.name)
        lines = data.decode("utf-8").split("\n")
        assert lines[-1] == "", f"{path}: delta-spark ends every line with a newline"
        expected = [
            written
            for number, line in enumerate(lines, 1)
            if line and (written := expected_line((table, version, number), line)) is not None
        ]
        assert [codec.encode_action(a) for a in actions] == expected, path
        written_file = codec.encode_commit(actions)
        assert written_file == "".join(f"{line}\n" for line in expected).encode(), path
        exact_files += written_file == data
    touched = {
        (table, version) for d in DOCUMENTED_DIFFERENCES.values() for table, version, _ in d.lines
    }
    assert exact_files == sum(1 for _ in commit_files(fixtures_dir)) - len(touched)


@pytest.mark.rules("ACTION.LINE_FORMAT")
def test_v2_checkpoint_json_files_round_trip(fixtures_dir: Path) -> None:
    files = sorted(fixtures_dir.glob("*/_delta_log/*.checkpoint.*.json"))
    assert files
    kinds: Counter[str] = Counter()
    for path in files:
        data = path.read_bytes()
        actions = codec.decode_commit(data, table=path.parts[-3], version=None, file=path.name)
        kinds.update(type(a).__name__ for a in actions)
        assert codec.encode_commit(actions) == data, path
    assert kinds["CheckpointMetadata"] == len(files) and kinds["Sidecar"] > 0


@pytest.mark.rules("ACTION.LINE_FORMAT")
def test_encode_commit_of_nothing_is_empty() -> None:
    assert codec.encode_commit([]) == b""
    assert codec.decode_commit(b"\n\n  \n", table="t", version=0, file="f") == []


# --- decoding rules ----------------------------------------------------------------------------


@pytest.mark.rules("ACTION.UNKNOWN")
def test_unknown_actions_and_fields_are_ignored() -> None:
    assert codec.decode_action({"someNewAction": {"a": 1}}) is None
    assert codec.decode_action({}) is None
    action = codec.decode_action(
        {"txn": {"appId": "a", "version": 3, "future": [1]}, "later": {"x": None}}
    )
    assert action == SetTransaction("a", 3)
    assert codec.decode_action({"add": None, "txn": {"appId": "a", "version": 1}}) == (
        SetTransaction("a", 1)
    )


@pytest.mark.rules("ACTION.REMOVE", "ACTION.DOMAIN_METADATA", "ACTION.CDC")
def test_defaults_of_optional_flags() -> None:
    remove = codec.decode_action({"remove": {"path": "a"}})
    assert remove == RemoveFile("a", data_change=True)
    assert codec.encode_action(remove) == '{"remove":{"path":"a","dataChange":true}}'
    domain = codec.decode_action({"domainMetadata": {"domain": "d", "configuration": "{}"}})
    assert domain == DomainMetadata("d", "{}", removed=False)
    cdc = codec.decode_action({"cdc": {"path": "c", "partitionValues": {"p": None}, "size": 1}})
    assert cdc == AddCDCFile("c", {"p": None}, 1)
    assert codec.encode_action(cdc) == (
        '{"cdc":{"path":"c","partitionValues":{"p":null},"size":1,"dataChange":false}}'
    )


@pytest.mark.rules("ACTION.METADATA")
def test_metadata_without_schema_string_round_trips(fixtures_dir: Path) -> None:
    line = fixtures_dir / "golden-versions-not-contiguous/_delta_log/00000000000000000000.json"
    meta = [
        a
        for a in codec.decode_commit(line.read_bytes(), table="t", version=0, file="f")
        if isinstance(a, Metadata)
    ]
    assert len(meta) == 1 and meta[0].schema_string == ""
    assert '"schemaString"' not in codec.encode_action(meta[0])


@pytest.mark.rules("ACTION.REMOVE", "ACTION.PARTITION_VALUES")
def test_remove_drops_null_partition_values_as_jackson_does() -> None:
    # RemoveFile.partitionValues lacks @JsonInclude(ALWAYS): NON_ABSENT drops null map entries.
    remove = RemoveFile("p", 5, True, True, {"a": "1", "b": None}, 10)
    assert codec.encode_action(remove) == (
        '{"remove":{"path":"p","deletionTimestamp":5,"dataChange":true,'
        '"extendedFileMetadata":true,"partitionValues":{"a":"1"},"size":10}}'
    )
    add = AddFile("p", {"a": None}, 1, 2, True)
    assert codec.encode_action(add) == (
        '{"add":{"path":"p","partitionValues":{"a":null},"size":1,"modificationTime":2,'
        '"dataChange":true}}'
    )


@pytest.mark.rules("ACTION.LINE_FORMAT")
def test_strings_are_escaped_as_jackson_does() -> None:
    add = AddFile('a\u0001\u001f\n"\\/é😈\u2028\x7f', {}, 1, 2, True, stats="\\u001b")
    line = codec.encode_action(add)
    assert line.startswith('{"add":{"path":"a\\u0001\\u001F\\n\\"\\\\/é😈\u2028\x7f"')
    assert line.endswith('"stats":"\\\\u001b"}}')
    assert codec.decode_action(json.loads(line)) == add


@pytest.mark.rules("ACTION.COMMIT_INFO")
def test_commit_info_is_kept_as_read_and_built_in_delta_spark_order() -> None:
    fields = {"operation": "WRITE", "zzz": 1, "timestamp": 5, "operationParameters": {"a": None}}
    assert codec.encode_action(CommitInfo(fields)) == (
        '{"commitInfo":{"operation":"WRITE","zzz":1,"timestamp":5,"operationParameters":{"a":null}}}'
    )
    built = codec.make_commit_info(
        {
            "txnId": "t",
            "engineInfo": "e",
            "isBlindAppend": True,
            "operationParameters": {"mode": "Append", "partitionBy": "[]"},
            "readVersion": None,
            "operation": "WRITE",
            "custom": 1,
            "timestamp": 7,
        }
    )
    assert codec.encode_action(built) == (
        '{"commitInfo":{"timestamp":7,"operation":"WRITE","operationParameters":'
        '{"mode":"Append","partitionBy":"[]"},"isBlindAppend":true,"engineInfo":"e",'
        '"txnId":"t","custom":1}}'
    )


@pytest.mark.rules("ACTION.PROTOCOL")
def test_protocol_features_keep_their_order() -> None:
    line = (
        '{"protocol":{"minReaderVersion":3,"minWriterVersion":7,'
        '"readerFeatures":["b","a"],"writerFeatures":["z"]}}'
    )
    action = codec.decode_action(json.loads(line))
    assert action == Protocol(3, 7, ("b", "a"), ("z",))
    assert codec.encode_action(action) == line


# --- corrupt input -----------------------------------------------------------------------------


def _corrupt(data: bytes) -> CorruptLogError:
    with pytest.raises(CorruptLogError) as info:
        codec.decode_commit(data, table="/tables/t", version=7, file="00000000000000000007.json")
    error = info.value
    assert (error.table, error.version, error.file) == (
        "/tables/t",
        7,
        "00000000000000000007.json",
    )
    text = str(error)
    assert "table=/tables/t" in text and "version=7" in text
    assert "file=00000000000000000007.json" in text
    return error


GOOD = b'{"commitInfo":{"timestamp":1}}\n'


MISPLACED_LISTS = {
    "readerFeatures at reader version 2": (2, 5, "[]", None),
    "readerFeatures at reader version 1": (1, 7, '["deletionVectors"]', '["deletionVectors"]'),
    "writerFeatures at writer version 6": (1, 6, None, '["identityColumns"]'),
    "both lists at (1, 2)": (1, 2, "[]", "[]"),
}


@pytest.mark.rules("ACTION.PROTOCOL_FEATURE_LISTS")
@pytest.mark.parametrize("protocol", MISPLACED_LISTS.values(), ids=list(MISPLACED_LISTS))
def test_feature_lists_at_versions_without_table_features_are_corrupt(
    protocol: tuple[int, int, str | None, str | None],
) -> None:
    reader, writer, readers, writers = protocol
    body = f'"minReaderVersion":{reader},"minWriterVersion":{writer}'
    body += "" if readers is None else f',"readerFeatures":{readers}'
    body += "" if writers is None else f',"writerFeatures":{writers}'
    error = _corrupt(GOOD + b'{"protocol":{' + body.encode() + b"}}\n")
    assert "line 2: protocol with " in error.message
    decoded = Protocol(reader, writer, None if readers is None else tuple(json.loads(readers)))
    assert codec.misplaced_feature_lists(decoded) == (
        [] if readers is None else [f"readerFeatures at minReaderVersion {reader}"]
    )


@pytest.mark.rules("ACTION.PROTOCOL_FEATURE_LISTS")
@pytest.mark.parametrize("protocol", [(3, 7, (), ()), (1, 7, None, ()), (1, 2, None, None),
                                      (99, 7, (), ())])  # fmt: skip
def test_feature_lists_at_table_features_versions_and_no_lists_decode(
    protocol: tuple[int, int, tuple[str, ...] | None, tuple[str, ...] | None],
) -> None:
    action = Protocol(*protocol)
    assert codec.decode_commit(
        (codec.encode_action(action) + "\n").encode(), table="t", version=0, file="f"
    ) == [action]  # fmt: skip


@pytest.mark.rules("ACTION.LINE_FORMAT")
def test_truncated_json_line_is_corrupt() -> None:
    error = _corrupt(GOOD + b'\n{"add":{"path":"a","partitionValues":{')
    assert "line 3:" in str(error) and "invalid JSON" in str(error)


@pytest.mark.rules("ACTION.LINE_FORMAT")
def test_invalid_utf8_is_corrupt() -> None:
    error = _corrupt(GOOD + b'{"txn":{"appId":"\xff\xfe","version":1}}\n')
    assert "line 2:" in str(error) and "UTF-8" in str(error)


@pytest.mark.rules("ACTION.LINE_FORMAT")
@pytest.mark.parametrize("line", [b"[1,2]", b'"add"', b"null", b"3", b"NaN"])
def test_a_line_that_is_not_an_object_is_corrupt(line: bytes) -> None:
    assert "line 2:" in str(_corrupt(GOOD + line + b"\n"))


@pytest.mark.rules("ACTION.ADD")
@pytest.mark.parametrize(
    "body",
    [
        '"size":"12","modificationTime":1,"dataChange":true',
        '"size":12.0,"modificationTime":1,"dataChange":true',
        '"size":12,"modificationTime":1,"dataChange":"true"',
        '"size":12,"modificationTime":1',
        '"size":true,"modificationTime":1,"dataChange":true',
    ],
)
def test_add_with_a_wrong_type_is_corrupt(body: str) -> None:
    line = '{"add":{"path":"a","partitionValues":{},' + body + "}}\n"
    error = _corrupt(GOOD + line.encode())
    assert "line 2:" in str(error) and "add" in str(error)


@pytest.mark.rules("ACTION.ADD", "ACTION.PARTITION_VALUES")
def test_malformed_nested_fields_are_corrupt() -> None:
    base = '{"add":{"path":"a","size":1,"modificationTime":1,"dataChange":true,'
    for extra in (
        '"partitionValues":{"p":1}',
        '"partitionValues":[]',
        '"partitionValues":{},"tags":{"t":2}',
        '"partitionValues":{},"stats":{}',
        '"partitionValues":{},"deletionVector":{"storageType":"u"}',
    ):
        assert "line 1:" in str(_corrupt((base + extra + "}}\n").encode()))


@pytest.mark.rules("ACTION.LINE_FORMAT")
def test_two_known_actions_on_one_line_are_corrupt() -> None:
    line = b'{"txn":{"appId":"a","version":1},"commitInfo":{"timestamp":1}}\n'
    error = _corrupt(GOOD + GOOD + line)
    assert "line 3:" in str(error) and "two actions" in str(error)


@pytest.mark.rules(
    "ACTION.PROTOCOL", "ACTION.METADATA", "ACTION.REMOVE", "ACTION.TXN", "ACTION.DOMAIN_METADATA",
    "ACTION.CDC", "ACTION.COMMIT_INFO",
)  # fmt: skip
@pytest.mark.parametrize(
    "line",
    [
        '{"protocol":{"minReaderVersion":1}}',
        '{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":[1]}}',
        '{"metaData":{"format":{"provider":"parquet"},"partitionColumns":[]}}',
        '{"metaData":{"id":"i","partitionColumns":[]}}',
        '{"metaData":{"id":"i","format":{"provider":"parquet"}}}',
        '{"metaData":{"id":"i","format":{},"partitionColumns":[]}}',
        '{"metaData":{"id":"i","format":{"provider":"p"},"partitionColumns":[],"configuration":{"a":1}}}',
        '{"remove":{"deletionTimestamp":1}}',
        '{"remove":{"path":"a","dataChange":1}}',
        '{"txn":{"appId":"a","version":"1"}}',
        '{"domainMetadata":{"domain":"d"}}',
        '{"cdc":{"path":"a","size":1}}',
        '{"commitInfo":[]}',
        '{"add":"a"}',
    ],
)
def test_malformed_known_actions_are_corrupt(line: str) -> None:
    assert "line 1:" in str(_corrupt(line.encode() + b"\n"))


# --- paths -------------------------------------------------------------------------------------


def _file_action_paths(fixtures: Path) -> Iterator[str]:
    for _where, line in commit_lines(fixtures):
        obj = json.loads(line)
        for kind in ("add", "remove", "cdc"):
            if isinstance(obj.get(kind), dict):
                yield obj[kind]["path"]


@pytest.mark.rules("ACTION.ADD")
def test_every_fixture_path_decodes_and_encodes_to_itself(fixtures_dir: Path) -> None:
    paths = set(_file_action_paths(fixtures_dir))
    assert len(paths) > 500
    for path in paths:
        assert codec.encode_path(codec.decode_path(path)) == path
    assert any("%25" in p for p in paths) and any(not p.isascii() for p in paths)


@pytest.mark.rules("ACTION.ADD")
def test_path_examples() -> None:
    assert codec.decode_path("special%20p@%23h") == "special p@#h"
    assert codec.encode_path("special p@#h") == "special%20p@%23h"
    assert codec.decode_path("_2=bar+%252521/part.parquet") == "_2=bar+%2521/part.parquet"
    assert codec.encode_path("data=😈/é") == "data=😈/é"
    assert codec.encode_path("a\u00a0b\u0085c\u3000d\u200be") == "a%C2%A0b%C2%85c%E3%80%80d\u200be"
    assert codec.encode_path('x?y[z]{w}|v^u`t"s<r>q\\p') == (
        "x%3Fy%5Bz%5D%7Bw%7D%7Cv%5Eu%60t%22s%3Cr%3Eq%5Cp"
    )
    assert codec.encode_path("a-_.!~*'();:@&=+$,/b") == "a-_.!~*'();:@&=+$,/b"
    assert codec.encode_path("\x00\x7f") == "%00%7F"
    assert codec.decode_path("%e2%82%ac") == "€"
    with pytest.raises(ValueError):
        codec.decode_path("bad%2")
    with pytest.raises(ValueError):
        codec.decode_path("bad%zz")


LEGAL_URI_PATH = re.compile(r"(?:[A-Za-z0-9\-_.!~*'();:@&=+$,/]|%[0-9A-F]{2}|[^\x00-\x7f])*")


@pytest.mark.rules("ACTION.ADD")
@given(st.text().filter(lambda s: not s.startswith("/")))
def test_path_encoding_round_trips(relative: str) -> None:
    encoded = codec.encode_path(relative)
    assert LEGAL_URI_PATH.fullmatch(encoded)
    assert codec.decode_path(encoded) == relative


# --- partition directories ---------------------------------------------------------------------


@pytest.mark.rules("ACTION.PARTITION_VALUES")
def test_partition_directory_escaping() -> None:
    directory = codec.partition_directory
    assert directory([]) == ""
    assert directory([("a", "x y")]) == "a=x y"
    assert directory([("a", "50%")]) == "a=50%25"
    assert directory([("a", "x/y"), ("b", "k=v")]) == "a=x%2Fy/b=k%3Dv"
    assert directory([("a", "😈é")]) == "a=😈é"
    assert directory([("a", None), ("b", "")]) == (
        "a=__HIVE_DEFAULT_PARTITION__/b=__HIVE_DEFAULT_PARTITION__"
    )
    assert directory([("c=d", "2020-01-01 10:00:00")]) == "c%3Dd=2020-01-01 10%3A00%3A00"
    assert directory([("a", "\"#%'*/:=?\\\x7f{[]^\x01\n")]) == (
        "a=%22%23%25%27%2A%2F%3A%3D%3F%5C%7F%7B%5B%5D%5E%01%0A"
    )
    assert directory([("a", "+-@!$&(),;<>|`~}")]) == "a=+-@!$&(),;<>|`~}"
    assert directory([("a", "\x00")]) == "a=\x00"  # NUL is not in Spark's list


@pytest.mark.rules("ACTION.PARTITION_VALUES", "ACTION.ADD")
def test_partition_directory_in_add_path_matches_delta_spark(fixtures_dir: Path) -> None:
    def path(values: list[tuple[str, str | None]]) -> str:
        return codec.encode_path(codec.partition_directory(values) + "/part-0.parquet")

    assert path([("_2", "bar+%21")]) == "_2=bar+%252521/part-0.parquet"
    assert path([("letter", "/%20%f")]) == "letter=%252F%252520%2525f/part-0.parquet"
    assert path([("p", "a b")]) == "p=a%20b/part-0.parquet"

    checked = 0
    physical: dict[str, tuple[str, ...]] = {}
    for table, version, file in commit_files(fixtures_dir):
        for action in codec.decode_commit(file.read_bytes(), table=table, version=version, file=""):
            if isinstance(action, Metadata):
                physical[table] = _physical_partition_columns(action)
            elif isinstance(action, AddFile | AddCDCFile) and physical.get(table):
                values = [(c, action.partition_values.get(c)) for c in physical[table]]
                directory = codec.encode_path(codec.partition_directory(values))
                assert action.path.removeprefix("_change_data/").startswith(directory + "/")
                checked += 1
    assert checked > 100


def _physical_partition_columns(metadata: Metadata) -> tuple[str, ...]:
    fields = {f["name"]: f for f in json.loads(metadata.schema_string or "{}").get("fields", [])}
    names = []
    for column in metadata.partition_columns:
        meta = fields[column].get("metadata", {})
        names.append(meta.get("delta.columnMapping.physicalName", column))
    return tuple(names)


# --- partition values --------------------------------------------------------------------------


@pytest.mark.rules("ACTION.PARTITION_VALUES")
def test_fixture_partition_values_decode_and_encode_to_themselves(fixtures_dir: Path) -> None:
    checked: Counter[str] = Counter()
    types: dict[str, dict[str, str]] = {}
    skipped: set[str] = set()
    for table, version, file in commit_files(fixtures_dir):
        for action in codec.decode_commit(file.read_bytes(), table=table, version=version, file=""):
            if isinstance(action, Metadata):
                types[table] = _physical_partition_types(action)
            elif isinstance(action, AddFile | RemoveFile | AddCDCFile):
                for column, raw in (action.partition_values or {}).items():
                    kind = types.get(table, {}).get(column)
                    if kind is None:
                        skipped.add(table)
                        continue
                    value = codec.decode_partition_value(raw, kind)
                    assert codec.encode_partition_value(value, kind) == raw, (table, raw)
                    checked[kind] += 1
    for kind in ("string", "integer", "long", "byte", "short", "boolean", "float", "double"):
        assert checked[kind] > 0, kind
    assert checked["date"] and checked["timestamp"] and checked["timestamp_ntz"], checked
    assert any(kind.startswith("decimal") for kind in checked), checked
    # a hand-made cdc of no partition column; a log whose metaData lives only in a checkpoint
    assert skipped <= {"golden-txn-cdc-manual", "rs-checkpoint-cdf-log-starts-at-checkpoint"}


def _physical_partition_types(metadata: Metadata) -> dict[str, str]:
    fields = {f["name"]: f for f in json.loads(metadata.schema_string or "{}").get("fields", [])}
    types = {}
    for column in metadata.partition_columns:
        field = fields[column]
        name = field.get("metadata", {}).get("delta.columnMapping.physicalName", column)
        types[name] = field["type"]
    return types


@pytest.mark.rules("ACTION.PARTITION_VALUES")
def test_partition_value_examples() -> None:
    enc = codec.encode_partition_value
    assert enc(None, "integer") is None
    assert enc("", "string") is None
    assert enc("x", "string") == "x"
    assert enc(-12, "integer") == "-12"
    assert enc(True, "boolean") == "true" and enc(False, "boolean") == "false"
    assert enc(1.5, "double") == "1.5"
    assert enc(1.0, "double") == "1.0"
    assert enc(1e10, "double") == "1.0E10"
    assert enc(1e-4, "double") == "1.0E-4"
    assert enc(1e7, "double") == "1.0E7" and enc(9999999.0, "double") == "9999999.0"
    assert enc(0.1, "float") == "0.1" and enc(1 / 3, "float") == "0.33333334"
    assert enc(-0.0, "double") == "-0.0" and enc(math.nan, "double") == "NaN"
    assert enc(math.inf, "float") == "Infinity"
    assert enc(Decimal("12.3"), "decimal(5,2)") == "12.30"
    assert enc(Decimal("-0.000000010"), "decimal(12,9)") == "-0.000000010"
    assert enc(7, "decimal(3,0)") == "7"
    assert enc(date(1970, 1, 1), "date") == "1970-01-01"
    moment = datetime(2021, 9, 8, 11, 11, 11)
    assert enc(moment, "timestamp") == "2021-09-08 11:11:11"
    assert enc(moment.replace(microsecond=100000), "timestamp_ntz") == "2021-09-08 11:11:11.1"
    assert enc(moment.replace(microsecond=123456), "timestamp") == "2021-09-08 11:11:11.123456"
    aware = datetime(2021, 9, 8, 13, 11, 11, 5, tzinfo=timezone(timedelta(hours=2)))
    assert enc(aware, "timestamp") == "2021-09-08 11:11:11.000005"
    assert enc(aware, "timestamp", utc_timestamp=True) == "2021-09-08T11:11:11.000005Z"
    assert enc(b"\x01ab", "binary") == "\x01ab"
    for bad_value, kind in [
        (128, "byte"),
        (Decimal("123.4"), "decimal(4,2)"),
        (Decimal("1.234"), "decimal(4,2)"),
        (aware, "timestamp_ntz"),
        (b"\xff", "binary"),
        (1, "interval"),
    ]:
        with pytest.raises(ValueError):
            enc(bad_value, kind)
    with pytest.raises(TypeError):
        enc("1", "integer")


@pytest.mark.rules("ACTION.PARTITION_VALUES")
def test_partition_value_decoding() -> None:
    dec = codec.decode_partition_value
    assert dec(None, "string") is None and dec("", "integer") is None
    assert dec("-12", "long") == -12
    assert dec("1.0E10", "double") == 1e10 and math.isnan(dec("NaN", "double"))
    assert dec("TRUE", "boolean") is True
    assert dec("1E-7", "decimal(10,8)") == Decimal("0.0000001")
    assert dec("2021-09-08 11:11:11", "timestamp") == datetime(2021, 9, 8, 11, 11, 11, tzinfo=UTC)
    assert dec("2021-09-08T11:11:11.000005Z", "timestamp") == datetime(
        2021, 9, 8, 11, 11, 11, 5, tzinfo=UTC
    )
    assert dec("2021-09-08T13:11:11+02:00", "timestamp") == datetime(
        2021, 9, 8, 11, 11, 11, tzinfo=UTC
    )
    assert dec("2021-09-08 11:11:11.1", "timestamp_ntz") == datetime(2021, 9, 8, 11, 11, 11, 100000)
    assert dec("1970-01-01", "date") == date(1970, 1, 1)
    assert dec("\x01ab", "binary") == b"\x01ab"
    for raw, kind in [
        ("1.5", "integer"),
        ("300", "byte"),
        ("maybe", "boolean"),
        ("19700101", "date"),
        ("2021-09-08 11:11:11Z", "timestamp_ntz"),
        ("2021-09-08 11:11:11.1234567", "timestamp"),
        ("x", "double"),
        ("x", "decimal(3,1)"),
    ]:
        with pytest.raises(ValueError):
            dec(raw, kind)


@pytest.mark.rules("ACTION.PARTITION_VALUES")
@given(st.floats(allow_nan=False))
def test_double_partition_values_round_trip(value: float) -> None:
    raw = codec.encode_partition_value(value, "double")
    assert raw is not None and codec.decode_partition_value(raw, "double") == value
    assert re.fullmatch(r"-?(Infinity|\d+\.\d+(E-?\d+)?)", raw)


@pytest.mark.rules("ACTION.PARTITION_VALUES")
@given(st.floats(allow_nan=False, width=32))
def test_float_partition_values_round_trip(value: float) -> None:
    raw = codec.encode_partition_value(value, "float")
    assert raw is not None and codec.decode_partition_value(raw, "float") == value


@pytest.mark.rules("ACTION.PARTITION_VALUES")
@given(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
    st.sampled_from(["timestamp", "timestamp_ntz"]),
)
def test_timestamp_partition_values_round_trip(moment: datetime, kind: str) -> None:
    raw = codec.encode_partition_value(moment, kind)
    assert raw is not None
    decoded = codec.decode_partition_value(raw, kind)
    assert decoded == (moment.replace(tzinfo=UTC) if kind == "timestamp" else moment)


# --- stats -------------------------------------------------------------------------------------


@pytest.mark.rules("ACTION.ADD")
def test_fixture_stats_are_rebuilt_byte_for_byte(fixtures_dir: Path) -> None:
    rebuilt = 0
    for table, version, file in commit_files(fixtures_dir):
        for action in codec.decode_commit(file.read_bytes(), table=table, version=version, file=""):
            stats = getattr(action, "stats", None)
            if not stats:
                continue
            parsed = json.loads(stats, parse_float=Decimal)
            again = codec.encode_stats(
                parsed["numRecords"],
                parsed.get("minValues"),
                parsed.get("maxValues"),
                parsed.get("nullCount"),
                parsed.get("tightBounds"),
            )
            assert again == stats, (table, version)
            rebuilt += 1
    assert rebuilt > 700


@pytest.mark.rules("ACTION.ADD")
def test_stats_examples() -> None:
    assert codec.encode_stats(50, None, None, None) == '{"numRecords":50}'
    stats = codec.encode_stats(
        3,
        {"a": 1.5, "b": {"c": "x\u00e9"}, "d": None, "e": 1e20, "t": date(2020, 1, 2)},
        {"a": math.inf, "ts": datetime(2020, 1, 2, 3, 4, 5, 678900, tzinfo=UTC)},
        {"a": 0, "b": {"c": 1}},
        tight_bounds=False,
    )
    assert stats == (
        '{"numRecords":3,"minValues":{"a":1.5,"b":{"c":"xé"},"e":1.0E20,"t":"2020-01-02"},'
        '"maxValues":{"a":"Infinity","ts":"2020-01-02T03:04:05.678Z"},'
        '"nullCount":{"a":0,"b":{"c":1}},"tightBounds":false}'
    )
