"""The commit pipeline's prepared commit (deltaspec.impl.txn.prepared_commit): each action's line
is encoded once, an attempt encodes again only the lines it changes (ICT.RETRY, ICT.ENABLEMENT),
a rebase only the actions it changed (ROWTRACKING.REBASE), and the bytes are what encoding the
actions afresh gives."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from deltaspec.impl import codec, errors
from deltaspec.impl.actions import Action, AddFile, CommitInfo, Metadata
from deltaspec.impl.codec import actions as codec_actions
from deltaspec.impl.txn import timestamps as ict
from deltaspec.impl.txn.current_transaction import CurrentTransactionInfo
from deltaspec.impl.txn.prepared_commit import PreparedCommit
from deltaspec.impl.txn.read_set import ReadSet

SCHEMA = '{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}'
TABLE = "/tables/t"
INFO = CommitInfo({"inCommitTimestamp": 1000, "timestamp": 1000, "operation": "WRITE"})
METADATA = Metadata("t", SCHEMA, (), {"delta.enableInCommitTimestamps": "true"})


def seen_by_conflicts(actions: list[Action]) -> CurrentTransactionInfo:
    """What the conflict checks see of a transaction committing ``actions`` (no commitInfo)."""
    mine = tuple(a for a in actions if not isinstance(a, CommitInfo))
    return CurrentTransactionInfo(TABLE, None, None, ReadSet(), mine, None, True, None, None)


def prepared(ordered: list[Action], version: int = 3) -> PreparedCommit:
    return PreparedCommit.of(ordered, seen_by_conflicts(ordered), table=TABLE, version=version)


def add(name: str, base_row_id: int | None = None) -> AddFile:
    return AddFile(f"{name}.parquet", {}, 10, 0, True, base_row_id=base_row_id)


@pytest.fixture
def encoded_lines(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every action line the codec encodes while the test runs (the real encoder, counted)."""
    seen: list[str] = []
    real = codec_actions.encode_action

    def counting(action: Action) -> str:
        line = real(action)
        seen.append(line)
        return line

    monkeypatch.setattr(codec, "encode_action", counting)
    yield seen


@pytest.mark.parametrize("info_last", [False, True])
@pytest.mark.parametrize("enables", [False, True])
@pytest.mark.rules("ICT.RETRY", "ICT.ENABLEMENT")
def test_an_attempts_bytes_are_its_actions_encoded_afresh(info_last: bool, enables: bool) -> None:
    actions: list[Action] = [METADATA, add("a"), add("b")]
    ordered = [*actions, INFO] if info_last else [INFO, *actions]
    commit = prepared(ordered)
    assert commit.payload == codec.encode_commit(ordered)
    restamped = [
        ict.stamped(a, 1234)
        if isinstance(a, CommitInfo)
        else ict.with_enablement_info(a, 7, 1234)
        if enables and isinstance(a, Metadata)
        else a
        for a in ordered
    ]
    assert commit.attempt_bytes(7, 1234, enables) == codec.encode_commit(restamped)
    assert commit.attempt_bytes(7, None, enables) == commit.payload


@pytest.mark.rules("ICT.RETRY", "ICT.ENABLEMENT")
def test_an_attempt_encodes_only_the_lines_it_changes(encoded_lines: list[str]) -> None:
    commit = prepared([INFO, METADATA, add("a"), add("b")])
    assert len(encoded_lines) == 4
    commit.attempt_bytes(3, 1000, enables=False)  # the first attempt's timestamp: as prepared
    assert len(encoded_lines) == 4
    commit.attempt_bytes(5, 1001, enables=False)  # moved past a winner: the commitInfo only
    assert len(encoded_lines) == 5 and '"inCommitTimestamp":1001' in encoded_lines[-1]
    commit.attempt_bytes(5, 1001, enables=True)  # turning the feature on: and the metadata
    assert len(encoded_lines) == 7
    assert '"delta.inCommitTimestampEnablementVersion":"5"' in encoded_lines[-1]


@pytest.mark.parametrize("info_last", [False, True])
@pytest.mark.rules("ROWTRACKING.REBASE")
def test_a_rebase_encodes_only_the_actions_it_changed(
    info_last: bool, encoded_lines: list[str]
) -> None:
    kept, moved = add("a", base_row_id=0), add("b", base_row_id=10)
    ordered: list[Action] = [kept, moved, INFO] if info_last else [INFO, kept, moved]
    commit = prepared(ordered)
    unchanged = commit.rebased(seen_by_conflicts([kept, moved]), version=5)
    assert unchanged.payload is commit.payload and unchanged.lines is commit.lines
    rebased_add = dataclasses.replace(moved, base_row_id=20)
    del encoded_lines[:]
    rebased = commit.rebased(seen_by_conflicts([kept, rebased_add]), version=5)
    assert encoded_lines == [codec_actions.encode_action(rebased_add)]
    expected = [kept, rebased_add, INFO] if info_last else [INFO, kept, rebased_add]
    assert rebased.payload == codec.encode_commit(expected)


@pytest.mark.rules("TXN.WRITE_BOUNDARY")
def test_an_action_that_cannot_be_written_is_a_typed_error() -> None:
    with pytest.raises(errors.InvalidCommitActionError) as raised:
        prepared([INFO, add("lone-\ud800-surrogate")])
    assert raised.value.table == TABLE and raised.value.version == 3


@pytest.mark.rules("TXN.WRITE_BOUNDARY")
def test_a_rebase_the_reader_would_refuse_is_refused() -> None:
    commit = prepared([INFO, add("a")])
    with pytest.raises(errors.InvalidCommitActionError) as raised:
        commit.rebased(seen_by_conflicts([add("../outside")]), version=5)
    assert raised.value.version == 5
