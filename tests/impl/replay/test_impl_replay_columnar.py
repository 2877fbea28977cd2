"""The columnar decoding of a commit's add lines (impl/replay/columnar.py) against the strict one.

The fast path must give the snapshot the strict decoder gives, and must never accept a file the
strict decoder refuses: generated commits (well-formed, and with one of the malformations the
fast path must notice) are decoded both ways and replayed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deltaspec.impl import codec
from deltaspec.impl.actions import Action, AddFile, CommitInfo, Metadata, Protocol, RemoveFile
from deltaspec.impl.errors import DeltaError
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.replay.columnar import ColumnarCommit, decode_columnar
from deltaspec.impl.replay.commits import read_checked_commit, read_replay_commit, reconcile
from deltaspec.impl.replay.file_checks import check_commit_actions
from deltaspec.impl.replay.state import ReplayState
from deltaspec.impl.replay.stats import parse_stats, stats_layout
from deltaspec.impl.snapshot.delta_log import DeltaLog

TABLE = "/tmp/deltaspec-columnar-table"
NAME = "00000000000000000001.json"

_safe_paths = st.lists(
    st.sampled_from(["a", "b c", "é", "x%20y", "p=1", "part-0001.parquet"]), min_size=1, max_size=3
).map("/".join)
_odd_paths = st.sampled_from(
    ["./a", "a//b", "/abs/x", "_delta_log/x", "s3://b/x", "a%zz", "a/../b"]
)
_paths = st.integers(0, 19).flatmap(lambda i: _odd_paths if i == 19 else _safe_paths)
_values = st.sampled_from(["1", "2", "", "a b", 'q"t', "é"])
_STATS_SCHEMA = json.dumps(
    {
        "type": "struct",
        "fields": [
            {"name": "a", "type": "string", "nullable": True, "metadata": {}},
            {"name": "n", "type": "long", "nullable": True, "metadata": {}},
            {"name": "t", "type": "timestamp", "nullable": True, "metadata": {}},
            {"name": "x", "type": "double", "nullable": True, "metadata": {}},
        ],
    }
)
_stat_values = {
    "a": st.sampled_from(["é", 'q"t', "a\\b", "\u00e9", "", "z" * 40]),
    "n": st.one_of(st.integers(-(2**63), 2**63 - 1), st.just(2**64), st.just(1.5)),
    "t": st.sampled_from(["2026-01-02T03:04:05.123Z", "2026-01-02T03:04:05Z", "not a time"]),
    "x": st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.just("NaN")),
}
_stats = st.builds(
    lambda records, low, counts, raw: (
        raw
        or json.dumps(
            {"numRecords": records, "minValues": low, "nullCount": counts}, separators=(",", ":")
        )
    ),
    st.integers(0, 10**6),
    st.fixed_dictionaries({}, optional=_stat_values),
    st.fixed_dictionaries({}, optional={k: st.integers(0, 9) for k in _stat_values}),
    st.sampled_from([None] * 8 + ["", "{", "[]", '{"numRecords":"x"}']),
)
"""``stats`` strings, mostly well-formed for :data:`_STATS_SCHEMA`, some out of range or torn."""


@st.composite
def _adds(draw: st.DrawFn, keys: tuple[str, ...]) -> AddFile:
    """An add whose partition values have ``keys`` in this order, sometimes another order, a null
    or a missing key; other fields sometimes ones the fast path must decline."""
    values: dict[str, str | None] = {key: draw(_values) for key in keys}
    odd = draw(st.integers(0, 39))
    if odd == 0 and keys:
        values[keys[0]] = None
    elif odd == 1 and len(keys) > 1:
        values = dict(reversed(values.items()))
    elif odd == 2 and keys:
        values.pop(keys[-1])
    return AddFile(
        draw(_paths),
        values,
        draw(st.integers(0, 10**12)) if draw(st.integers(0, 19)) < 19 else -1,
        draw(st.integers(0, 2**40)),
        draw(st.booleans()),
        draw(st.one_of(st.none(), _stats)),
        draw(st.sampled_from([None] * 6 + [{}, {"k": "v"}])),
        base_row_id=draw(st.one_of(st.none(), st.integers(0, 100))),
        clustering_provider=draw(st.sampled_from([None, None, "liquid"])),
    )


_others = st.one_of(
    st.builds(RemoveFile, path=_paths, deletion_timestamp=st.integers(0, 100)),
    st.just(CommitInfo({"operation": "WRITE", "readVersion": 0})),
    st.just(Protocol(1, 2)),
)

_MUTATIONS = {
    "duplicate key": lambda line: line.replace(b'"size":', b'"size":7,"size":', 1),
    "unknown field": lambda line: line.replace(b'"path":', b'"future":1,"path":', 1),
    "float size": lambda line: line.replace(b'"size":', b'"size":1.0,"x":', 1),
    "torn line": lambda line: line[: len(line) // 2],
    "two objects": lambda line: line + line,
    "carriage return": lambda line: line + b"\r",
    "invalid UTF-8": lambda line: line.replace(b'"path":"', b'"path":"\xff', 1),
    "lone surrogate": lambda line: line.replace(b'"path":"', b'"path":"\\ud800', 1),
    "null path": lambda line: line.replace(b'"path":', b'"path":null,"x":', 1),
    "second action": lambda line: line[:-1] + b',"txn":{"appId":"a","version":1}}',
}


@st.composite
def commits(draw: st.DrawFn) -> bytes:
    """A commit file: adds with other actions between them, blank and unknown lines, and maybe
    one line malformed."""
    keys = tuple(draw(st.lists(st.sampled_from(["p", "q", "date"]), unique=True, max_size=3)))
    adds = _adds(keys)
    lines: list[bytes] = []
    actions = draw(st.lists(st.one_of(adds, adds, adds, _others), min_size=1, max_size=12))
    if draw(st.booleans()):  # the usual bulk commit: other actions before and after the adds
        actions.sort(key=lambda action: isinstance(action, AddFile) + 2 * draw(st.booleans()))
    for action in actions:
        lines.append(codec.encode_action(action).encode())
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from([b"", b"  ", b'{"future":{"a":1}}'])))
    if draw(st.booleans()):
        index = draw(st.integers(0, len(lines) - 1))
        mutation = draw(st.sampled_from(sorted(_MUTATIONS)))
        lines[index] = _MUTATIONS[mutation](lines[index])
    return b"\n".join(lines) + b"\n"


def _strict(data: bytes) -> list[Action] | DeltaError:
    try:
        actions = codec.decode_commit(data, table=TABLE, version=1, file=NAME)
        check_commit_actions(actions, TABLE, 1, NAME)
    except DeltaError as error:
        return error
    return actions


def _replayed(actions: list[Action] | ColumnarCommit) -> dict[str, Any]:
    state = ReplayState()
    last = reconcile(state, [(1, NAME, actions)])
    layout = stats_layout(Metadata("id", _STATS_SCHEMA, ()))
    return {
        "files": state.files.to_pylist(),
        "stats": str(parse_stats(state.files.column("stats"), layout).to_pylist()),  # NaN == NaN
        "tombstones": state.tombstones.to_pylist(),
        "protocol": state.protocol,
        "last": None if last is None else [a for a in last if not isinstance(a, AddFile)],
    }


@pytest.mark.rules("ACTION.LINE_FORMAT", "SNAPSHOT.RECONCILE")
@given(commits())
def test_fast_path_gives_the_strict_snapshot_or_declines(data: bytes) -> None:
    strict = _strict(data)
    fast = decode_columnar(data, table=TABLE, version=1, file=NAME, min_adds=1)
    if isinstance(strict, DeltaError):
        assert fast is None, f"the fast path read a file the strict decoder refuses: {strict}"
        return
    if fast is not None:
        assert _replayed(fast) == _replayed(strict)


def _bulk_commit(count: int, keys: tuple[str, ...] = ("p", "q")) -> bytes:
    actions: list[Action] = [CommitInfo({"operation": "WRITE"})]
    for i in range(count):
        values: dict[str, str | None] = {key: str(i % 3) for key in keys}
        stats = json.dumps({"numRecords": i, "minValues": {"a": i}}, separators=(",", ":"))
        actions.append(AddFile(f"p={i % 3}/f{i}.parquet", values, 10 + i, 1000 + i, True, stats))
        if i % 10 == 0:
            actions.append(RemoveFile(f"p={i % 3}/f{i}.parquet", 5, True))
    return codec.encode_commit(actions)


@pytest.mark.rules("ACTION.LINE_FORMAT", "SNAPSHOT.RECONCILE")
@pytest.mark.parametrize("keys", [(), ("p",), ("p", "q")])
def test_a_bulk_commit_takes_the_fast_path(keys: tuple[str, ...]) -> None:
    data = _bulk_commit(200, keys)
    fast = decode_columnar(data, table=TABLE, version=1, file=NAME)
    assert fast is not None and fast.adds.num_rows == 200
    strict = _strict(data)
    assert not isinstance(strict, DeltaError)
    assert _replayed(fast) == _replayed(strict)
    assert len(_replayed(fast)["files"]) == 200 - 20  # every tenth add removed after it


@pytest.mark.rules("ACTION.LINE_FORMAT")
def test_partition_keys_in_another_order_decline_the_fast_path() -> None:
    data = _bulk_commit(100)
    swapped = data.replace(
        b'"partitionValues":{"p":"1","q":"1"}', b'"partitionValues":{"q":"1","p":"1"}'
    )
    assert swapped != data
    assert decode_columnar(swapped, table=TABLE, version=1, file=NAME) is None
    assert decode_columnar(data, table=TABLE, version=1, file=NAME) is not None


def _table(root: Path, commit: bytes) -> LocalLogStore:
    log = root / "_delta_log"
    log.mkdir(parents=True)
    metadata = Metadata("id", '{"type":"struct","fields":[]}', ("p", "q"))
    first = codec.encode_commit([Protocol(1, 2), metadata])
    (log / "00000000000000000000.json").write_bytes(first)
    (log / NAME).write_bytes(commit)
    return LocalLogStore(root)


@pytest.mark.rules("ACTION.LINE_FORMAT")
def test_a_malformed_bulk_commit_raises_the_strict_error(tmp_path: Path) -> None:
    lines = _bulk_commit(100).split(b"\n")
    lines[50] = lines[50].replace(b'"size":', b'"size":"x","y":', 1)
    store = _table(tmp_path, b"\n".join(lines))
    with pytest.raises(DeltaError) as strict:
        read_checked_commit(store, 1)
    with pytest.raises(DeltaError) as fast:
        read_replay_commit(store, 1)
    assert type(fast.value) is type(strict.value)
    assert str(fast.value) == str(strict.value) and "line 51" in str(fast.value)
    with pytest.raises(type(strict.value)):
        DeltaLog(str(tmp_path)).snapshot()


@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_a_loaded_bulk_commit_is_the_strict_replay(tmp_path: Path) -> None:
    data = _bulk_commit(300)
    _table(tmp_path, data)
    assert isinstance(read_replay_commit(LocalLogStore(tmp_path), 1), ColumnarCommit)
    snapshot = DeltaLog(str(tmp_path)).snapshot()
    strict = _strict(data)
    assert not isinstance(strict, DeltaError)
    assert snapshot.files_table().to_pylist() == _replayed(strict)["files"]
    assert snapshot.tombstones_table(0).num_rows == 30


@pytest.mark.rules("ACTION.LINE_FORMAT")
@pytest.mark.parametrize(
    "odd",
    [b"\xc0\x80", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80", b"\xc3"],
    ids=["overlong-2", "overlong-3", "encoded-surrogate", "past-10ffff", "continuation", "torn"],
)
def test_bytes_python_refuses_as_utf8_decline_the_fast_path(odd: bytes) -> None:
    data = _bulk_commit(100).replace(b'"path":"p=1/f1.parquet"', b'"path":"p=1/f1' + odd + b'"', 1)
    assert isinstance(_strict(data), DeltaError)
    assert decode_columnar(data, table=TABLE, version=1, file=NAME) is None


@pytest.mark.rules("ACTION.LINE_FORMAT", "SNAPSHOT.RECONCILE")
def test_other_lines_between_the_adds_still_take_the_fast_path() -> None:
    data = _bulk_commit(200)  # a remove after every tenth add: the adds are not one span
    lines = data.split(b"\n")
    contiguous = b"\n".join(
        [lines[0], *(line for line in lines if line.startswith(b'{"add"')), b""]
    )
    for commit in (data, contiguous):
        fast = decode_columnar(commit, table=TABLE, version=1, file=NAME)
        strict = _strict(commit)
        assert fast is not None and not isinstance(strict, DeltaError)
        assert _replayed(fast) == _replayed(strict)
