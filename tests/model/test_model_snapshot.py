"""Snapshots as a fold over commits (SNAPSHOT.*).

The model folds commits one at a time; the reference here answers the same
questions the other way round: the state of each key is the *last* action that
mentions it anywhere in the log.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import examples

from deltaspec.model import machine as m
from deltaspec.model.actions import (
    Action,
    AddCDCFile,
    AddFile,
    Commit,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.model.log import Log
from deltaspec.model.outcomes import ErrorKind, Rejected
from deltaspec.model.snapshot import Snapshot, apply_commit, replay
from deltaspec.model.transaction import stage

SCHEMA = json.dumps({"type": "struct", "fields": [{"name": "x", "type": "integer"}]})
PATHS = ["a", "b", "c"]
DVS = [None, "dv1", "dv2"]
APPS = ["app1", "app2"]
DOMAINS = ["d1", "d2"]

adds = st.builds(
    AddFile,
    path=st.sampled_from(PATHS),
    dv_id=st.sampled_from(DVS),
    size=st.integers(1, 1000),  # distinguishes successive adds of one key
    data_change=st.booleans(),
)
removes = st.builds(
    RemoveFile,
    path=st.sampled_from(PATHS),
    dv_id=st.sampled_from(DVS),
    deletion_timestamp=st.one_of(st.none(), st.integers(0, 10**6)),
    data_change=st.booleans(),
)
txns = st.builds(
    SetTransaction,
    app_id=st.sampled_from(APPS),
    version=st.integers(0, 9),  # not monotone on purpose: the latest action wins, not the max
    last_updated=st.one_of(st.none(), st.integers(0, 10**6)),
)
domains = st.builds(
    DomainMetadata,
    domain=st.sampled_from(DOMAINS),
    configuration=st.sampled_from(["", "{}", '{"k":1}']),
    removed=st.booleans(),
)
protocols = st.builds(Protocol, st.integers(1, 3), st.integers(1, 7))
metadatas = st.builds(
    Metadata,
    id=st.just("t"),
    schema_string=st.just(SCHEMA),
    configuration=st.sampled_from([(), (("k", "1"),), (("k", "2"),)]),
)
ignored = st.one_of(
    st.builds(CommitInfo, timestamp=st.integers(0, 10), operation=st.just("WRITE")),
    st.builds(AddCDCFile, path=st.sampled_from(PATHS)),
)
actions = st.one_of(adds, adds, removes, removes, txns, domains, protocols, metadatas, ignored)


@st.composite
def logs(draw: st.DrawFn, max_commits: int = 8) -> list[Commit]:
    bodies = draw(st.lists(st.lists(actions, max_size=6), min_size=1, max_size=max_commits))
    stamps = sorted(
        draw(st.lists(st.integers(0, 10**6), min_size=len(bodies), max_size=len(bodies)))
    )
    return [Commit(v, tuple(body), stamps[v]) for v, body in enumerate(bodies)]


def reference(commits: list[Commit]) -> dict[str, Any]:
    """Last action wins, per file key, per app id, per domain; the last protocol and metadata."""
    last_file: dict[tuple[str, str | None], Action] = {}
    last_txn: dict[str, SetTransaction] = {}
    last_domain: dict[str, DomainMetadata] = {}
    protocol = metadata = None
    for commit in commits:
        for action in commit.actions:
            if isinstance(action, AddFile | RemoveFile):
                last_file[(action.path, action.dv_id)] = action
            elif isinstance(action, SetTransaction):
                last_txn[action.app_id] = action
            elif isinstance(action, DomainMetadata):
                last_domain[action.domain] = action
            elif isinstance(action, Protocol):
                protocol = action
            elif isinstance(action, Metadata):
                metadata = action
    return {
        "version": commits[-1].version if commits else -1,
        "timestamp": commits[-1].timestamp if commits else 0,
        "protocol": protocol,
        "metadata": metadata,
        "files": {k: a for k, a in last_file.items() if isinstance(a, AddFile)},
        "tombstones": {k: a for k, a in last_file.items() if isinstance(a, RemoveFile)},
        "app_txns": last_txn,
        "domains": {d: a for d, a in last_domain.items() if not a.removed},
    }


def as_plain(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "version": snapshot.version,
        "timestamp": snapshot.timestamp,
        "protocol": snapshot.protocol,
        "metadata": snapshot.metadata,
        "files": dict(snapshot.files),
        "tombstones": dict(snapshot.tombstones),
        "app_txns": dict(snapshot.app_txns),
        "domains": dict(snapshot.domains),
    }


def build_log(commits: list[Commit]) -> Log:
    log = Log()
    for commit in commits:
        landed = log.write_new(commit.version, commit.actions, commit.timestamp)
        assert landed is not None
        log = landed
    return log


@pytest.mark.rules(
    "SNAPSHOT.REPLAY",
    "SNAPSHOT.FILE_KEY",
    "SNAPSHOT.RECONCILE",
    "SNAPSHOT.TOMBSTONES",
    "SNAPSHOT.PROTOCOL_METADATA",
    "SNAPSHOT.APP_TXN",
    "SNAPSHOT.DOMAIN_METADATA",
)
@examples(1.0)
@given(logs())
def test_replay_agrees_with_the_last_action_wins_reference(commits):
    snapshot = replay(commits)
    assert as_plain(snapshot) == reference(commits)
    # a key is live or tombstoned, never both (SNAPSHOT.TOMBSTONES)
    assert not set(snapshot.files) & set(snapshot.tombstones)
    for key, add in snapshot.files.items():
        assert key == (add.path, add.dv_id)
    for app_id in APPS:
        expected = reference(commits)["app_txns"].get(app_id)
        assert snapshot.app_txn_version(app_id) == (-1 if expected is None else expected.version)


@pytest.mark.rules("SNAPSHOT.TIME_TRAVEL", "SNAPSHOT.REPLAY")
@examples(0.5)
@given(logs())
def test_every_version_is_the_replay_of_its_prefix(commits):
    log = build_log(commits)
    for version in range(len(commits)):
        at = log.snapshot(version)
        assert at is not None
        assert at == replay(commits[: version + 1])
        assert as_plain(at) == reference(commits[: version + 1])
    assert log.snapshot() == log.snapshot(len(commits) - 1)
    assert log.snapshot(-1) == Snapshot()
    assert log.snapshot(len(commits)) is None
    assert log.snapshot(-2) is None


@pytest.mark.rules("SNAPSHOT.REPLAY")
@examples(0.5)
@given(logs(), st.data())
def test_replay_can_resume_from_any_intermediate_snapshot(commits, data):
    cut = data.draw(st.integers(0, len(commits)))
    middle = replay(commits[:cut])
    assert replay(commits[cut:], start=middle) == replay(commits)
    if cut < len(commits):
        assert apply_commit(middle, commits[cut]) == replay(commits[: cut + 1])


@pytest.mark.rules("SNAPSHOT.REPLAY")
@examples(0.5)
@given(logs(), st.data())
def test_commit_info_and_cdc_files_do_not_change_the_state(commits, data):
    noisy = []
    for commit in commits:
        body = list(commit.actions)
        for _ in range(data.draw(st.integers(0, 2))):
            body.insert(data.draw(st.integers(0, len(body))), data.draw(ignored))
        noisy.append(Commit(commit.version, tuple(body), commit.timestamp))
    clean = [
        Commit(c.version, tuple(a for a in c.actions if not isinstance(a, CommitInfo | AddCDCFile)))
        for c in commits
    ]
    assert as_plain(replay(noisy)) | {"timestamp": 0} == as_plain(replay(clean))


def _fold(*bodies: tuple[Action, ...]) -> Snapshot:
    return replay(Commit(v, body, 10 * v) for v, body in enumerate(bodies))


@pytest.mark.rules("SNAPSHOT.FILE_KEY")
def test_remove_without_dv_leaves_the_dv_variant_live():
    s = _fold((AddFile("p", dv_id="dv1"),), (RemoveFile("p", 5),))
    assert set(s.files) == {("p", "dv1")}
    assert set(s.tombstones) == {("p", None)}
    assert s.live_paths() == {"p"}


@pytest.mark.rules("SNAPSHOT.FILE_KEY", "SNAPSHOT.RECONCILE")
def test_a_deletion_vector_update_swaps_the_key_of_a_path():
    s = _fold(
        (AddFile("p", size=1),),
        (RemoveFile("p", 5), AddFile("p", size=1, dv_id="dv1")),
        (RemoveFile("p", 6, dv_id="dv1"), AddFile("p", size=1, dv_id="dv2")),
    )
    assert set(s.files) == {("p", "dv2")}
    assert set(s.tombstones) == {("p", None), ("p", "dv1")}
    assert s.file_by_path("p") == AddFile("p", size=1, dv_id="dv2")
    assert s.file_by_path("q") is None


@pytest.mark.rules("SNAPSHOT.RECONCILE", "SNAPSHOT.TOMBSTONES")
@pytest.mark.parametrize(
    ("bodies", "live", "tombstoned"),
    [
        (((AddFile("p"), RemoveFile("p", 1)),), set(), {"p"}),
        (((RemoveFile("p", 1), AddFile("p")),), {"p"}, set()),
        (((AddFile("p"),), (RemoveFile("p", 1),)), set(), {"p"}),
        (((AddFile("p"),), (RemoveFile("p", 1),), (AddFile("p"),)), {"p"}, set()),
        (((RemoveFile("p", 1),),), set(), {"p"}),  # a tombstone needs no prior add
        (((AddFile("p"), AddFile("q")), (RemoveFile("q", 1),)), {"p"}, {"q"}),
    ],
)
def test_the_latest_action_on_a_key_decides(bodies, live, tombstoned):
    s = _fold(*bodies)
    assert {p for p, _ in s.files} == live
    assert {p for p, _ in s.tombstones} == tombstoned


@pytest.mark.rules("SNAPSHOT.RECONCILE")
def test_a_later_add_of_a_live_key_replaces_it():
    s = _fold((AddFile("p", size=1),), (AddFile("p", size=2, data_change=False),))
    assert s.files == {("p", None): AddFile("p", size=2, data_change=False)}


@pytest.mark.rules("SNAPSHOT.TOMBSTONES")
def test_a_tombstone_is_the_remove_action_as_written():
    remove = RemoveFile("p", deletion_timestamp=1234, data_change=False, size=7)
    s = _fold((AddFile("p"),), (remove,))
    assert s.tombstones == {("p", None): remove}


@pytest.mark.rules("SNAPSHOT.PROTOCOL_METADATA")
def test_the_latest_protocol_and_metadata_win():
    m1 = Metadata("t", SCHEMA, configuration=(("k", "1"),))
    m2 = Metadata("t", SCHEMA, configuration=(("k", "2"),))
    s = _fold((Protocol(1, 2), m1), (AddFile("p"),), (Protocol(1, 3),), (m2,))
    assert s.protocol == Protocol(1, 3)
    assert s.metadata == m2
    assert _fold((Protocol(1, 2), m1), (AddFile("p"),)).metadata == m1
    assert Snapshot().protocol is None
    assert Snapshot().metadata is None


@pytest.mark.rules("SNAPSHOT.APP_TXN")
def test_the_latest_set_transaction_per_app_wins_even_when_lower():
    s = _fold(
        (SetTransaction("a", 5, 1), SetTransaction("b", 1, 1)),
        (SetTransaction("a", 3, 2),),
    )
    assert s.app_txn_version("a") == 3
    assert s.app_txn_version("b") == 1
    assert s.app_txn_version("unknown") == -1
    assert s.app_txns["a"] == SetTransaction("a", 3, 2)


@pytest.mark.rules("SNAPSHOT.DOMAIN_METADATA")
def test_a_removed_domain_disappears_and_can_come_back():
    s = _fold((DomainMetadata("d", "1"),), (DomainMetadata("d", "2"),))
    assert s.domains == {"d": DomainMetadata("d", "2")}
    s = _fold(
        (DomainMetadata("d", "1"), DomainMetadata("e", "1")), (DomainMetadata("d", "", True),)
    )
    assert s.domains == {"e": DomainMetadata("e", "1")}
    s = _fold(
        (DomainMetadata("d", "1"),), (DomainMetadata("d", "", True),), (DomainMetadata("d", "3"),)
    )
    assert s.domains == {"d": DomainMetadata("d", "3")}


@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_the_snapshot_carries_the_last_commit_version_and_time():
    s = _fold((AddFile("p"),), (AddFile("q"),))
    assert (s.version, s.timestamp) == (1, 10)
    assert replay([]) == Snapshot()


def _machine_with_versions(count: int) -> m.Machine:
    machine = m.Machine()
    for version in range(count):
        name = f"w{version}"
        begun = m.begin(machine, name)
        assert isinstance(begun, m.Machine)
        body: list[Action] = [AddFile(f"f{version}")]
        if version == 0:
            body.insert(0, Metadata("t", SCHEMA))
        machine = m.update(begun, name, lambda t, b=tuple(body): stage(t, b))
        machine = m.commit(machine, name, now=100 + version)
    assert machine.log.latest_version == count - 1
    return machine


@pytest.mark.rules("SNAPSHOT.TIME_TRAVEL")
@pytest.mark.parametrize("version", [0, 1, 2, 3, None])
def test_a_transaction_can_read_any_existing_version(version):
    machine = _machine_with_versions(4)
    begun = m.begin(machine, "reader", version=version)
    assert isinstance(begun, m.Machine)
    txn = begun.writer("reader").txn
    expected_version = 3 if version is None else version
    assert txn.read_version == expected_version
    assert txn.read_snapshot == replay(machine.log.commits[: expected_version + 1])
    assert txn.read_snapshot.live_paths() == {f"f{v}" for v in range(expected_version + 1)}


@pytest.mark.rules("SNAPSHOT.TIME_TRAVEL")
@pytest.mark.parametrize("version", [4, 17, -2])
def test_reading_a_version_that_does_not_exist_is_rejected(version):
    machine = _machine_with_versions(4)
    assert m.begin(machine, "reader", version=version) == Rejected(ErrorKind.VERSION_NOT_FOUND)
