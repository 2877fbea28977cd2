"""The append check's kept partition matches agree with evaluating predicate by predicate, add by
add (CONFLICT.APPEND_MATCH), over several winners sharing one read set."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deltaspec.impl import errors, predicates
from deltaspec.impl.actions import AddFile, CommitInfo, Metadata, Protocol
from deltaspec.impl.table.releases import Profile
from deltaspec.impl.txn.conflicts import check_added_files
from deltaspec.impl.txn.current_transaction import CurrentTransactionInfo
from deltaspec.impl.txn.read_set import ReadSet
from deltaspec.impl.txn.winning_commit import WinningCommit

SCHEMA = json.dumps(
    {
        "type": "struct",
        "fields": [
            {"name": "a", "type": "integer", "nullable": True, "metadata": {}},
            {"name": "b", "type": "string", "nullable": True, "metadata": {}},
        ],
    }
)
METADATA = Metadata("t", SCHEMA, ("a", "b"))
VALUES_A = st.sampled_from([None, "", "0", "1", "2", "3"])
VALUES_B = st.sampled_from([None, "x", "y"])
LEAF = st.one_of(
    st.builds(
        lambda op, v: [op, "a", v], st.sampled_from(["=", "<", ">=", "!="]), st.integers(0, 3)
    ),
    st.builds(lambda v: ["=", "b", v], st.sampled_from(["x", "y"])),
    st.builds(lambda c: ["is_null", c], st.sampled_from(["a", "b"])),
    st.builds(lambda vs: ["in", "a", vs], st.lists(st.integers(0, 3), min_size=1, max_size=2)),
)
PREDICATE = st.recursive(LEAF, lambda inner: st.builds(lambda x, y: ["or", x, y], inner, inner))
ADDS = st.lists(st.tuples(VALUES_A, VALUES_B), min_size=1, max_size=8)


def _current(forms: list[list[object]]) -> CurrentTransactionInfo:
    reads = ReadSet(predicates=tuple(predicates.parse(f) for f in forms), depends_on_files=True)
    protocol = Protocol(1, 2)
    return CurrentTransactionInfo(
        "/t", protocol, METADATA, reads, (), "Serializable", False, protocol, METADATA
    )


def _winner(version: int, rows: list[tuple[str | None, str | None]]) -> WinningCommit:
    adds = (
        AddFile(f"f{version}-{i}", {"a": a, "b": b}, 1, 0, True) for i, (a, b) in enumerate(rows)
    )
    return WinningCommit(version, (CommitInfo({"operation": "WRITE"}), *adds))


def _naive_hint(forms: list[list[object]], rows: list[tuple[str | None, str | None]]) -> str | None:
    """The hint of the first add matching the first predicate that matches any add, or None."""
    schema = predicates.PartitionSchema.of(METADATA)
    for form in dict.fromkeys(json.dumps(f) for f in forms):
        for a, b in rows:
            if predicates.matching(predicates.parse(json.loads(form)), [{"a": a, "b": b}], schema)[
                0
            ]:
                return f"[a={a}, b={b}]"
    return None


@pytest.mark.rules("CONFLICT.APPEND_MATCH")
@given(forms=st.lists(PREDICATE, max_size=4), winners=st.lists(ADDS, min_size=1, max_size=4))
def test_kept_matches_give_the_naive_verdict_and_hint(
    forms: list[list[object]], winners: list[list[tuple[str | None, str | None]]]
) -> None:
    current = _current(forms)  # one read set for every winner: its matches are kept
    for version, rows in enumerate(winners, start=1):
        expected = _naive_hint(forms, rows)
        if expected is None:
            assert check_added_files(current, _winner(version, rows), Profile()) is current
            continue
        with pytest.raises(errors.ConcurrentAppendException) as raised:
            check_added_files(current, _winner(version, rows), Profile())
        assert raised.value.partition_hint == expected


@pytest.mark.rules("CONFLICT.APPEND_MATCH")
def test_an_invalid_literal_is_raised_only_where_no_earlier_predicate_matched() -> None:
    forms: list[list[object]] = [["=", "a", 1], ["=", "a", "not a number"]]
    current = _current(forms)
    with pytest.raises(errors.ConcurrentAppendException):
        check_added_files(current, _winner(1, [("2", "x"), ("1", "x")]), Profile())
    with pytest.raises(predicates.InvalidPredicateError):
        check_added_files(current, _winner(2, [("2", "x")]), Profile())
    with pytest.raises(errors.ConcurrentAppendException):  # row 1 was kept as matching
        check_added_files(current, _winner(3, [("3", "y"), ("1", "x")]), Profile())
