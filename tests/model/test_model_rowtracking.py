"""Row tracking in the model (ROWTRACKING.*): fresh row ids, default row commit versions, the
high-water mark, and their reassignment over winners, including several winners in a row."""

from __future__ import annotations

import json

import pytest

from deltaspec.model import machine as m
from deltaspec.model.actions import AddFile, DomainMetadata, Metadata, Protocol
from deltaspec.model.outcomes import Committed, ErrorKind, Rejected
from deltaspec.model.profiles import profile
from deltaspec.model.rowtracking import (
    ROW_TRACKING_DOMAIN,
    high_water_mark,
    high_water_mark_domain,
)
from deltaspec.model.transaction import stage

SCHEMA = '{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}'
ROW_TRACKING = Protocol(1, 7, None, frozenset({"domainMetadata", "rowTracking"}))


def records(path: str, n: int, **fields: int) -> AddFile:
    return AddFile(path, stats=json.dumps({"numRecords": n}), **fields)  # type: ignore[arg-type]


def run(machine: m.Machine, name: str, *actions: object, now: int = 1) -> m.Machine:
    begun = m.begin(machine, name)
    assert isinstance(begun, m.Machine)
    return m.update(begun, name, lambda t: stage(t, actions))  # type: ignore[arg-type]


def created(release: str | None = None, protocol: Protocol = ROW_TRACKING) -> m.Machine:
    machine = run(m.Machine(profile=profile(release)), "setup", protocol, Metadata("t", SCHEMA))
    machine = m.commit(machine, "setup", now=0)
    assert m.outcome(machine, "setup") == Committed(0)
    return machine


def live(machine: m.Machine) -> dict[str, tuple[int | None, int | None]]:
    snapshot = machine.log.snapshot()
    assert snapshot is not None
    return {f.path: (f.base_row_id, f.default_row_commit_version) for f in snapshot.files.values()}


def mark(machine: m.Machine) -> int:
    snapshot = machine.log.snapshot()
    assert snapshot is not None
    return high_water_mark(snapshot)


@pytest.mark.rules("ROWTRACKING.FRESH_ROW_IDS", "ROWTRACKING.DEFAULT_ROW_COMMIT_VERSION")
def test_new_files_are_numbered_from_the_high_water_mark() -> None:
    machine = m.commit(run(created(), "w", records("a", 3), records("b", 2)), "w", now=1)
    assert live(machine) == {"a": (0, 1), "b": (3, 1)}
    assert mark(machine) == 4
    machine = m.commit(run(machine, "v", records("c", 0), records("d", 1)), "v", now=2)
    assert live(machine)["c"] == (5, 2) and live(machine)["d"] == (5, 2)
    assert mark(machine) == 5


@pytest.mark.rules("ROWTRACKING.FRESH_ROW_IDS", "ROWTRACKING.DEFAULT_ROW_COMMIT_VERSION")
def test_preserved_ids_are_kept_and_unmoved_marks_are_not_written() -> None:
    kept = records("a2", 5, base_row_id=0, default_row_commit_version=1)
    machine = m.commit(run(created(), "w", kept), "w", now=1)
    assert live(machine) == {"a2": (0, 1)}
    assert ROW_TRACKING_DOMAIN not in machine.log.snapshot().domains  # type: ignore[union-attr]


@pytest.mark.rules("ROWTRACKING.FRESH_ROW_IDS")
def test_a_file_without_num_records_cannot_be_numbered() -> None:
    machine = m.commit(run(created(), "w", AddFile("a")), "w", now=1)
    assert m.outcome(machine, "w") == Rejected(ErrorKind.ROW_ID_ASSIGNMENT_WITHOUT_STATS)
    plain = m.commit(run(created(protocol=Protocol(1, 2)), "w", AddFile("a")), "w", now=1)
    assert live(plain) == {"a": (None, None)}


@pytest.mark.rules("ROWTRACKING.FRESH_ROW_IDS")
@pytest.mark.rules("TXN.WRITER_PROTOCOL")
def test_releases_before_row_tracking_refuse_its_tables() -> None:
    """2.4.0 commits the rowTracking protocol it is given (no check of a new protocol before
    3.1.0) but then cannot write the table: rowTracking is not among its writer features."""
    machine = m.commit(run(created("2.4.0"), "w", records("a", 3)), "w", now=1)
    assert m.outcome(machine, "w") == Rejected(ErrorKind.UNSUPPORTED_WRITE_PROTOCOL)
    assert machine.log.latest_version == 0


@pytest.mark.rules("ROWTRACKING.REBASE")
def test_rebase_over_several_winners_renumbers_from_each_winners_mark() -> None:
    machine = m.commit(run(created(), "first", records("y", 2)), "first", now=1)
    late = run(machine, "late", records("z", 4))  # reads version 1, mark 1: z = 2, version 2
    for name, path, n in (("w1", "p", 3), ("w2", "q", 0), ("w3", "r", 1)):
        late = m.commit(run(late, name, records(path, n)), name, now=2)
    late = m.commit(late, "late", now=3)
    assert m.outcome(late, "late") == Committed(5)
    # y 0..1; p 2..4; q takes 5 (no records); r 5; z after r's mark 5: 6, version 5
    assert live(late)["z"] == (6, 5)
    assert mark(late) == 9
    commit = late.log.commits[5]
    assert next(a for a in commit.actions if isinstance(a, DomainMetadata)) == (
        high_water_mark_domain(9)
    )


@pytest.mark.rules("ROWTRACKING.REBASE")
def test_rebase_writes_the_mark_even_without_new_ids() -> None:
    machine = run(created(), "winner", records("a", 2))
    machine = run(machine, "loser", Metadata("t", SCHEMA, configuration=(("k", "v"),)))
    machine = m.commit(machine, "winner", now=1)
    machine = m.commit(machine, "loser", now=2)
    assert m.outcome(machine, "loser") == Committed(2)
    assert high_water_mark_domain(1) in machine.log.commits[2].actions
