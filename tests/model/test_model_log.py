"""The log: commit file names, contiguity, put-if-absent, atomic visibility, listing, new tables
(LOG.*)."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import examples

from deltaspec.model import machine as m
from deltaspec.model.actions import (
    Action,
    AddFile,
    CommitInfo,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.model.log import Log, commit_name
from deltaspec.model.outcomes import (
    Committed,
    Conflict,
    ConflictKind,
    ErrorKind,
    Pending,
    Rejected,
)
from deltaspec.model.profiles import profile
from deltaspec.model.snapshot import Snapshot, replay
from deltaspec.model.transaction import filter_files, stage

SCHEMA = json.dumps({"type": "struct", "fields": [{"name": "x", "type": "integer"}]})
TABLE = Metadata("t", SCHEMA)
LONG_MAX = 2**63 - 1

# --------------------------------------------------------------------------------------------
# LOG.COMMIT_FILE_NAME
# --------------------------------------------------------------------------------------------


@pytest.mark.rules("LOG.COMMIT_FILE_NAME")
@pytest.mark.parametrize(
    ("version", "name"),
    [
        (0, "00000000000000000000.json"),
        (42, "00000000000000000042.json"),
        (10**19, "10000000000000000000.json"),
        (LONG_MAX, "09223372036854775807.json"),
    ],
)
def test_commit_file_names(version, name):
    assert commit_name(version) == name


@pytest.mark.rules("LOG.COMMIT_FILE_NAME")
@given(st.integers(0, LONG_MAX), st.integers(0, LONG_MAX))
def test_names_are_twenty_digits_and_sort_like_versions(a, b):
    name_a, name_b = commit_name(a), commit_name(b)
    assert re.fullmatch(r"\d{20}\.json", name_a)
    assert int(name_a.removesuffix(".json")) == a
    assert (name_a < name_b) == (a < b)
    assert (name_a == name_b) == (a == b)


@pytest.mark.rules("LOG.COMMIT_FILE_NAME")
@pytest.mark.parametrize("version", [-1, -42])
def test_negative_versions_have_no_file(version):
    with pytest.raises(ValueError):
        commit_name(version)


# --------------------------------------------------------------------------------------------
# LOG.PUT_IF_ABSENT, LOG.CONTIGUITY, LOG.ATOMIC_VISIBILITY, LOG.LISTING on the Log itself
# --------------------------------------------------------------------------------------------

bodies = st.lists(
    st.one_of(
        st.builds(AddFile, st.sampled_from(["a", "b", "c"]), size=st.integers(1, 9)),
        st.builds(RemoveFile, st.sampled_from(["a", "b", "c"]), st.integers(0, 9)),
        st.builds(SetTransaction, st.sampled_from(["x", "y"]), st.integers(0, 9)),
        st.builds(CommitInfo, st.integers(0, 9), st.just("WRITE")),
    ),
    max_size=4,
).map(tuple)


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "LOG.CONTIGUITY", "LOG.ATOMIC_VISIBILITY", "LOG.LISTING")
@examples(0.5)
@given(st.lists(st.tuples(st.integers(-2, 3), bodies), max_size=20))
def test_put_if_absent_creates_only_the_next_version(attempts):
    """Each attempt names a version relative to the latest (-2 … latest + 3)."""
    log = Log()
    for offset, body in attempts:
        version = log.latest_version + offset
        before = log
        if offset <= 0:  # the version exists (or is negative): the put fails, nothing changes
            assert log.write_new(version, body, 7) is None
        elif offset == 1:
            landed = log.write_new(version, body, 7)
            assert landed is not None
            assert landed.latest_version == version == before.latest_version + 1
            assert landed.commits[:-1] == before.commits  # nothing earlier is rewritten
            assert landed.commits[-1].actions == body  # the whole commit, in order
            assert landed.commits[-1].version == version
            log = landed
        else:  # a gap is never created
            with pytest.raises(ValueError):
                log.write_new(version, body, 7)
        assert before.latest_version == len(before.commits) - 1  # the old log is untouched
        assert [c.version for c in log.commits] == list(range(log.latest_version + 1))
        assert len(log.snapshots) == len(log.commits)


@pytest.mark.rules("LOG.ATOMIC_VISIBILITY")
@examples(0.5)
@given(st.lists(bodies, min_size=1, max_size=8))
def test_a_version_shows_all_of_its_commit_and_nothing_of_later_ones(commit_bodies):
    log = Log()
    history = [log]
    for version, body in enumerate(commit_bodies):
        log = log.write_new(version, body, version)
        history.append(log)
    for version in range(len(commit_bodies)):
        seen = log.snapshot(version)
        assert seen == replay(log.commits[: version + 1])
        # a reader that held the log before the commit never sees any part of it
        assert history[version].snapshot(version) is None
        assert history[version + 1].snapshot(version) == seen
    for version, body in enumerate(commit_bodies):
        last = {}
        for action in body:
            if isinstance(action, AddFile | RemoveFile):
                last[(action.path, action.dv_id)] = action
        seen = log.snapshot(version)
        for key, action in last.items():  # every file action of the commit took effect
            if isinstance(action, AddFile):
                assert seen.files.get(key) == action
            else:
                assert key not in seen.files
                assert seen.tombstones.get(key) == action


def _begin(machine: m.Machine, name: str, **kwargs) -> m.Machine:
    begun = m.begin(machine, name, **kwargs)
    assert isinstance(begun, m.Machine), begun
    return begun


def _table(*extra: Action) -> m.Machine:
    machine = _begin(m.Machine(), "creator")
    machine = m.update(machine, "creator", lambda t: stage(t, [TABLE, *extra]))
    machine = m.commit(machine, "creator", now=1)
    assert m.outcome(machine, "creator") == Committed(0)
    return machine


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "LOG.ATOMIC_VISIBILITY")
@examples(0.25)
@given(st.integers(2, 8), st.permutations(range(8)))
def test_of_writers_racing_for_one_version_exactly_one_creates_it(count, order):
    machine = _table(AddFile("seed"))
    names = [f"w{i}" for i in range(count)]
    for name in names:
        machine = _begin(machine, name)
        machine = m.update(machine, name, lambda t, n=name: stage(t, [AddFile(n)]))
    before = machine.log
    for index in (i for i in order if i < count):
        machine = m.try_write(machine, names[index], now=10 + index)
    outcomes = {name: m.outcome(machine, name) for name in names}
    winners = [n for n, o in outcomes.items() if o == Committed(1)]
    first = names[next(i for i in order if i < count)]
    assert winners == [first]
    for name in names:
        if name != first:
            assert outcomes[name] == Pending()
            assert machine.writer(name).collisions == 1
    assert machine.log.latest_version == 1
    assert machine.log.commits[0] == before.commits[0]
    written = machine.log.commits[1]
    assert written.actions == machine.writer(first).prepared.file_actions(machine.profile)
    assert machine.log.snapshot(1).live_paths() == {"seed", first}


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "LOG.ATOMIC_VISIBILITY")
def test_a_lost_race_leaves_the_log_exactly_as_it_was():
    machine = _table()
    machine = _begin(_begin(machine, "a"), "b")
    for name in ("a", "b"):
        machine = m.update(machine, name, lambda t, n=name: stage(t, [AddFile(n)]))
    machine = m.try_write(machine, "a", now=5)
    log_after_a = machine.log
    machine = m.try_write(machine, "b", now=6)
    assert machine.log == log_after_a
    assert m.outcome(machine, "b") == Pending()
    assert machine.writer("b").must_resolve


# --------------------------------------------------------------------------------------------
# LOG.LISTING
# --------------------------------------------------------------------------------------------


def _append(machine: m.Machine, name: str, *actions: Action, now: int = 2) -> m.Machine:
    machine = _begin(machine, name)
    machine = m.update(machine, name, lambda t: stage(t, actions))
    return m.commit(machine, name, now=now)


@pytest.mark.rules("LOG.LISTING")
def test_the_loser_sees_every_commit_up_to_the_latest_not_just_the_one_it_hit():
    machine = _table(AddFile("f"))
    machine = _begin(machine, "compactor")  # dataChange=false: SnapshotIsolation, adds pass
    machine = m.update(
        machine,
        "compactor",
        lambda t: stage(
            filter_files(t, []),
            [RemoveFile("f", 3, data_change=False), AddFile("g", data_change=False)],
        ),
    )
    machine = _append(machine, "w1", AddFile("x"))  # version 1
    machine = m.try_write(machine, "compactor", now=3)  # collides at 1
    assert machine.writer("compactor").attempt_version == 1
    # two more commits land after the collision; the last one removes the file it read
    machine = _append(machine, "w2", AddFile("y"))
    machine = _append(machine, "w3", RemoveFile("f", 4))
    assert machine.log.latest_version == 3
    machine = m.resolve(machine, "compactor")
    assert m.outcome(machine, "compactor") == Conflict(ConflictKind.CONCURRENT_DELETE_READ, 3)


@pytest.mark.rules("LOG.LISTING")
def test_after_resolving_the_next_attempt_is_past_the_latest_listed_version():
    machine = _table()
    machine = _begin(machine, "late")
    machine = m.update(machine, "late", lambda t: stage(t, [AddFile("late")]))
    for i in range(3):
        machine = _append(machine, f"w{i}", AddFile(f"w{i}"))
    machine = m.try_write(machine, "late", now=9)
    assert machine.writer("late").attempt_version == 1
    machine = _append(machine, "w3", AddFile("w3"))  # lands between collision and listing
    machine = m.resolve(machine, "late")
    assert machine.writer("late").attempt_version == machine.log.latest_version + 1 == 5
    machine = m.try_write(machine, "late", now=10)
    assert m.outcome(machine, "late") == Committed(5)


# --------------------------------------------------------------------------------------------
# LOG.NEW_TABLE
# --------------------------------------------------------------------------------------------


@pytest.mark.rules("LOG.NEW_TABLE")
def test_a_log_without_commits_is_no_table():
    log = Log()
    assert log.latest_version == -1
    assert log.snapshot() == Snapshot()
    empty = log.snapshot()
    assert (empty.version, empty.protocol, empty.metadata) == (-1, None, None)
    assert not empty.files and not empty.tombstones and not empty.app_txns and not empty.domains
    assert log.snapshot(0) is None


@pytest.mark.rules("LOG.NEW_TABLE")
def test_reading_a_version_of_a_missing_table_fails():
    assert m.begin(m.Machine(), "r", version=0) == Rejected(ErrorKind.TABLE_NOT_FOUND)
    assert m.begin(m.Machine(), "r", version=3) == Rejected(ErrorKind.TABLE_NOT_FOUND)
    begun = m.begin(m.Machine(), "r")
    assert isinstance(begun, m.Machine)
    assert begun.writer("r").txn.read_version == -1


@pytest.mark.rules("LOG.NEW_TABLE")
def test_the_first_commit_creates_version_zero():
    machine = _table(AddFile("a"))
    commit = machine.log.commits[0]
    assert commit.version == 0
    assert Protocol(1, 2) in commit.actions
    assert TABLE in commit.actions
    assert commit.commit_info is not None
    assert commit.commit_info.read_version is None
    snapshot = machine.log.snapshot()
    assert (snapshot.version, snapshot.protocol, snapshot.metadata) == (0, Protocol(1, 2), TABLE)
    assert snapshot.live_paths() == {"a"}


@pytest.mark.rules("LOG.NEW_TABLE")
@pytest.mark.parametrize(
    ("release", "outcome"),
    [
        (None, Rejected(ErrorKind.METADATA_ABSENT)),
        ("0.7.0", Rejected(ErrorKind.METADATA_ABSENT)),
        ("0.6.0", Committed(0)),
    ],
)
def test_a_table_needs_metadata_to_exist(release, outcome):
    machine = m.Machine(profile=profile(release))
    machine = _begin(machine, "w")
    machine = m.update(machine, "w", lambda t: stage(t, [AddFile("a")]))
    machine = m.commit(machine, "w", now=1)
    assert m.outcome(machine, "w") == outcome
    assert machine.log.latest_version == (0 if outcome == Committed(0) else -1)


@pytest.mark.rules("LOG.NEW_TABLE", "LOG.PUT_IF_ABSENT")
@pytest.mark.parametrize(
    ("release", "loser"),
    [
        (None, Conflict(ConflictKind.PROTOCOL_CHANGED, 0)),
        ("3.1.0", Conflict(ConflictKind.PROTOCOL_CHANGED, 0)),
        ("0.5.0", Conflict(ConflictKind.PROTOCOL_CHANGED, 0)),
        ("0.1.0", Conflict(ConflictKind.CONCURRENT_MODIFICATION, 0)),
    ],
)
def test_of_two_table_creators_the_second_fails(release, loser):
    machine = m.Machine(profile=profile(release))
    machine = _begin(_begin(machine, "a"), "b")
    for name in ("a", "b"):
        machine = m.update(machine, name, lambda t, n=name: stage(t, [TABLE, AddFile(n)]))
    machine = m.commit(machine, "a", now=1)
    machine = m.commit(machine, "b", now=2)
    assert m.outcome(machine, "a") == Committed(0)
    assert m.outcome(machine, "b") == loser
    assert machine.log.latest_version == 0
