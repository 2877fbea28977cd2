"""The machine: many writers, one log, explicit interleavings (RETRY.*, CONFLICT.PER_WINNER,
TXN.COMMIT_INFO*, LOG.*).

The property test interprets a generated program of steps — begin (at the
latest or an older version), filtered reads, blind appends, rewrites,
compactions, try_write / resolve / commit — on a small partitioned table, and
after every step compares the machine with a shadow kept by the test: what each
writer read and staged, and an oracle for the file-level conflict rules that
says which winner, if any, must stop it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import examples

from deltaspec.model import machine as m
from deltaspec.model.actions import (
    Action,
    AddFile,
    Commit,
    CommitInfo,
    Metadata,
    Protocol,
    RemoveFile,
    pairs,
)
from deltaspec.model.conflicts import WinningCommit, check_winner
from deltaspec.model.outcomes import (
    Committed,
    Conflict,
    ConflictKind,
    ErrorKind,
    Pending,
    Rejected,
    Skipped,
)
from deltaspec.model.predicates import And, Compare, In, IsNull, Literal, Not, Or, Predicate
from deltaspec.model.profiles import Profile, profile
from deltaspec.model.snapshot import replay
from deltaspec.model.transaction import (
    Operation,
    Transaction,
    filter_files,
    read_whole_table,
    stage,
)

SCHEMA = json.dumps(
    {
        "type": "struct",
        "fields": [
            {"name": "p", "type": "integer", "nullable": True, "metadata": {}},
            {"name": "x", "type": "integer", "nullable": True, "metadata": {}},
        ],
    }
)
TABLE = Metadata("t", SCHEMA, partition_columns=("p",))
PARTS: tuple[int | None, ...] = (0, 1, 2, None)
SLOTS = 8
APPEND = ConflictKind.CONCURRENT_APPEND
DELETE_READ = ConflictKind.CONCURRENT_DELETE_READ
DELETE_DELETE = ConflictKind.CONCURRENT_DELETE_DELETE


def pv(part: int | None) -> tuple[tuple[str, str | None], ...]:
    return pairs({"p": None if part is None else str(part)})


def part_of(action: AddFile | RemoveFile) -> int | None:
    value = dict(action.partition_values or ()).get("p")
    return None if value is None else int(value)


def begin(machine: m.Machine, name: str, **kwargs: Any) -> m.Machine:
    begun = m.begin(machine, name, **kwargs)
    assert isinstance(begun, m.Machine), begun
    return begun


def table(release: str | None = None, **confs: int) -> m.Machine:
    """Version 0: the partitioned table with two files in each partition (null included)."""
    machine = begin(m.Machine(profile=profile(release, **confs)), "setup")
    files = [AddFile(f"init-{part}-{i}", pv(part)) for part in PARTS for i in (0, 1)]
    machine = m.update(machine, "setup", lambda t: stage(t, [TABLE, *files]))
    machine = m.commit(machine, "setup", now=0)
    assert m.outcome(machine, "setup") == Committed(0)
    return machine


# --------------------------------------------------------------------------------------------
# The shadow: read predicates as test-side specs, and a conflict oracle over them
# --------------------------------------------------------------------------------------------

PRED_KINDS = ("eq", "ne", "in", "ge", "is_null", "all", "or_data", "and_data", "unsplit_and")


def filters_of(kind: str, k: int) -> list[Predicate]:
    """The filter list a read hands to ``filter_files``."""
    eq = Compare("=", "p", Literal(k))
    data = Compare(">", "x", Literal(5))
    return {
        "eq": [eq],
        "ne": [Not(eq)],
        "in": [In("p", (Literal(k), Literal(str(k + 1))))],
        "ge": [Compare(">=", "p", Literal(str(k)))],
        "is_null": [IsNull("p")],
        "all": [],
        "or_data": [Or((eq, data))],  # one data element: the whole table is read
        "and_data": [eq, data],  # split: the partition element is recorded
        "unsplit_and": [And((eq, data))],  # one data element
    }[kind]


def selects(kind: str, k: int, part: int | None) -> bool:
    """Does the recorded partition predicate hold for a file in ``part``? (only TRUE selects)"""
    if kind in {"all", "or_data", "unsplit_and"}:
        return True
    if kind == "is_null":
        return part is None
    if part is None:
        return False
    return {
        "eq": part == k,
        "and_data": part == k,
        "ne": part != k,
        "in": part in (k, k + 1),
        "ge": part >= k,
    }[kind]


@dataclass
class Shadow:
    name: str
    read_version: int
    read_live: dict[str, int | None]
    predicates: list[tuple[str, int]] = field(default_factory=list)
    read_paths: set[str] = field(default_factory=set)
    whole_table: bool = False
    staged: list[Action] = field(default_factory=list)
    removed: set[str] = field(default_factory=set)
    counter: int = 0

    @property
    def level(self) -> str:
        if all(not a.data_change for a in self.staged):  # all staged actions are file actions
            return "SnapshotIsolation"
        return "Serializable"

    @property
    def blind(self) -> bool:
        only_adds = all(isinstance(a, AddFile) for a in self.staged)
        return only_adds and not self.predicates and not self.whole_table


def oracle(w: Shadow, commit: Commit, prof: Profile) -> ConflictKind | None:
    """The file checks of CONFLICT.APPEND_*, DELETE_READ*, DELETE_DELETE, in that order."""
    adds = [a for a in commit.actions if isinstance(a, AddFile)]
    removed = {a.path for a in commit.actions if isinstance(a, RemoveFile)}
    if w.level == "Serializable" and not w.blind:
        if w.whole_table and adds:
            return APPEND
        for kind, k in w.predicates:
            if any(selects(kind, k, part_of(a)) for a in adds):
                return APPEND
    if removed & w.read_paths:
        return DELETE_READ
    if removed and w.whole_table and prof.since(0, 8):
        return DELETE_READ
    if removed & w.removed:
        return DELETE_DELETE
    return None


# --------------------------------------------------------------------------------------------
# Programs
# --------------------------------------------------------------------------------------------

KINDS = (
    "begin",
    "read", "read", "read",
    "whole",
    "append", "append", "append",
    "rewrite", "rewrite",
    "compact",
    "blind_delete",
    "try", "try",
    "resolve",
    "commit", "commit",
)  # fmt: skip
step_strategy = st.tuples(
    st.sampled_from(KINDS), st.integers(0, SLOTS - 1), st.integers(0, 8), st.integers(0, 3)
)
programs = st.lists(step_strategy, min_size=20, max_size=60)


class Run:
    """Interprets a program; ``check`` compares the machine with the shadow after each step."""

    def __init__(self, release: str | None) -> None:
        self.machine = table(release)
        self.shadows: dict[str, Shadow] = {}
        self.slot_names: dict[int, str] = {}
        self.generation = 0

    def _open(self, slot: int) -> tuple[str, Shadow] | None:
        name = self.slot_names.get(slot)
        if name is None or self.machine.writer(name).done:
            return None
        return name, self.shadows[name]

    def _stageable(self, slot: int) -> tuple[str, Shadow] | None:
        opened = self._open(slot)
        if opened is None or self.machine.writer(opened[0]).prepared is not None:
            return None
        return opened

    def _read(self, name: str, shadow: Shadow, pred_kind: str, k: int) -> None:
        self.machine = m.update(
            self.machine, name, lambda t: filter_files(t, filters_of(pred_kind, k))
        )
        shadow.predicates.append((pred_kind, k))
        shadow.read_paths |= {
            p for p, part in shadow.read_live.items() if selects(pred_kind, k, part)
        }

    def _stage(self, name: str, shadow: Shadow, actions: list[Action]) -> None:
        self.machine = m.update(self.machine, name, lambda t: stage(t, actions))
        shadow.staged.extend(actions)

    def _begin(self, slot: int, back: int) -> None:
        self.generation += 1
        name = f"w{slot}.{self.generation}"
        version = max(0, self.machine.log.latest_version - back)
        self.machine = begin(self.machine, name, version=version)
        live = self.machine.log.snapshot(version).files.values()
        self.shadows[name] = Shadow(name, version, {f.path: part_of(f) for f in live})
        self.slot_names[slot] = name

    def step(self, index: int, step: tuple[Any, ...]) -> None:
        """``(kind, slot, a, b)``: a step on the writer in ``slot``, which begins at the latest
        version if the slot has no open writer; ``begin`` starts one ``b`` versions back."""
        now = 1000 + index
        kind, slot, a, b = step
        if kind == "begin":
            if self._open(slot) is None:
                self._begin(slot, b)
            return
        if self._open(slot) is None:
            if kind in {"try", "resolve", "commit"}:
                return
            self._begin(slot, 0)
        if kind in {"try", "resolve", "commit"}:
            opened = self._open(slot)
            if opened is not None:
                action = {"try": m.try_write, "commit": m.commit}.get(kind)
                if action is None:
                    self.machine = m.resolve(self.machine, opened[0])
                else:
                    self.machine = action(self.machine, opened[0], now)
            return
        opened = self._stageable(slot)
        if opened is None:
            return
        name, shadow = opened
        if kind == "read":
            self._read(name, shadow, PRED_KINDS[a], b % 3)
        elif kind == "whole":
            self.machine = m.update(self.machine, name, read_whole_table)
            shadow.whole_table = True
        elif kind == "append":
            shadow.counter += 1
            self._stage(name, shadow, [AddFile(f"{name}/a{shadow.counter}", pv(PARTS[b]))])
        elif kind == "rewrite":
            if not shadow.read_paths - shadow.removed:  # DELETE / UPDATE read first
                self._read(name, shadow, "eq", b % 3)
            candidates = sorted(shadow.read_paths - shadow.removed)
            if candidates:
                path = candidates[a % len(candidates)]
                part = shadow.read_live[path]
                shadow.counter += 1
                shadow.removed.add(path)
                self._stage(
                    name,
                    shadow,
                    [
                        RemoveFile(path, now, partition_values=pv(part)),
                        AddFile(f"{name}/r{shadow.counter}", pv(part)),
                    ],
                )
        elif kind == "blind_delete":  # removes a file it never read (no read predicate)
            candidates = sorted(set(shadow.read_live) - shadow.removed)
            if candidates:
                path = candidates[a % len(candidates)]
                shadow.removed.add(path)
                remove = RemoveFile(path, now, partition_values=pv(shadow.read_live[path]))
                self._stage(name, shadow, [remove])
        elif kind == "compact":
            part = PARTS[b]
            if part is None:
                self._read(name, shadow, "is_null", 0)
            else:
                self._read(name, shadow, "eq", part)
            victims = sorted(
                p for p in shadow.read_paths - shadow.removed if shadow.read_live[p] == part
            )
            if victims:
                shadow.counter += 1
                shadow.removed.update(victims)
                actions: list[Action] = [
                    RemoveFile(p, now, data_change=False, partition_values=pv(part))
                    for p in victims
                ]
                actions.append(AddFile(f"{name}/c{shadow.counter}", pv(part), data_change=False))
                self._stage(name, shadow, actions)

    def check(self) -> None:
        machine, prof = self.machine, self.machine.profile
        log = machine.log
        commits = log.commits
        latest = log.latest_version
        # LOG.CONTIGUITY
        assert [c.version for c in commits] == list(range(latest + 1))
        assert len(log.snapshots) == len(commits)
        # every version is one writer's commit, holding its txn id (no two writers per version)
        owners = {}
        for name, writer in machine.writers.items():
            if isinstance(writer.outcome, Committed):
                assert writer.outcome.version not in owners
                owners[writer.outcome.version] = name
        assert sorted(owners) == list(range(latest + 1))
        for version, commit in enumerate(commits):
            owner = machine.writer(owners[version])
            info = commit.commit_info
            assert info is not None and owner.prepared is not None
            assert commit.actions == owner.prepared.file_actions(prof)  # the owner's content
            if prof.since(1, 2):  # txnId is written since v1.2.0 (TXN.COMMIT_INFO)
                assert info.txn_id == owners[version]
        for name, shadow in self.shadows.items():
            self._check_writer(name, shadow, prof)
        # removes only ever remove files live just before their commit (no lost update)
        for version in range(1, latest + 1):
            before = log.snapshots[version - 1].files
            for action in commits[version].actions:
                if isinstance(action, RemoveFile):
                    assert action.key in before

    def _check_writer(self, name: str, shadow: Shadow, prof: Profile) -> None:
        writer = self.machine.writer(name)
        commits = self.machine.log.commits
        latest = self.machine.log.latest_version
        assert writer.txn.read_version == shadow.read_version
        assert writer.txn.reads.file_paths == shadow.read_paths  # TXN.READ_FILES via pruning
        outcome = writer.outcome
        assert not isinstance(outcome, Rejected), outcome
        if isinstance(outcome, Skipped):
            assert not shadow.staged
            return
        if writer.prepared is None:
            assert isinstance(outcome, Pending)
            return
        assert writer.prepared.actions == tuple(shadow.staged)
        assert writer.prepared.is_blind_append is shadow.blind
        checked_until = {
            Committed: lambda o: o.version,
            Conflict: lambda o: o.winner,
            Pending: lambda o: writer.attempt_version,
        }[type(outcome)](outcome)
        assert shadow.read_version < checked_until <= latest + 1
        # CONFLICT.PER_WINNER: every winner before the reported one (or before the next
        # attempt) passed, and a conflict is the oracle's verdict on its winner
        for version in range(shadow.read_version + 1, checked_until):
            assert oracle(shadow, commits[version], prof) is None, (name, version)
        if isinstance(outcome, Conflict):
            assert oracle(shadow, commits[outcome.winner], prof) is outcome.kind
            assert not shadow.blind  # a blind append never conflicts with file changes
            assert not (shadow.level == "SnapshotIsolation" and outcome.kind is APPEND)
        if isinstance(outcome, Committed):
            info = commits[outcome.version].commit_info
            assert info is not None
            # TXN.COMMIT_INFO_FIXED: what was decided at preparation, whatever the version
            assert info == writer.prepared.commit_info
            assert info.read_version == shadow.read_version
            assert info.is_blind_append is shadow.blind
            assert info.isolation_level == (shadow.level if prof.since(1, 1) else None)
            actions = commits[outcome.version].actions
            assert [a for a in actions if not isinstance(a, CommitInfo)] == shadow.staged
            self._check_safety(shadow, outcome.version, prof)
        if isinstance(outcome, Pending):
            assert writer.attempt_version >= shadow.read_version + 1
            if writer.must_resolve:
                assert writer.attempt_version <= latest  # it collided with an existing version

    def _check_safety(self, shadow: Shadow, version: int, prof: Profile) -> None:
        """Serializable safety stated directly: no winner between the read and the commit
        removed a file the writer read, or added one its read predicates cover."""
        if shadow.blind:
            return
        for winner in self.machine.log.commits[shadow.read_version + 1 : version]:
            removed = {a.path for a in winner.actions if isinstance(a, RemoveFile)}
            assert not removed & shadow.read_paths
            if shadow.level == "Serializable":
                for add in (a for a in winner.actions if isinstance(a, AddFile)):
                    assert not shadow.whole_table
                    assert not any(selects(k, n, part_of(add)) for k, n in shadow.predicates)

    def final_check(self) -> None:
        log = self.machine.log
        for version in range(log.latest_version + 1):
            assert log.snapshots[version] == replay(log.commits[: version + 1])


def run_program(program: list[tuple[Any, ...]], release: str | None, check: bool) -> m.Machine:
    """Run the steps, then commit every writer still open, slot by slot."""
    run = Run(release)
    for index, step in enumerate(program):
        run.step(index, step)
        if check:
            run.check()
    for index, slot in enumerate(range(SLOTS), start=len(program)):
        if run._open(slot) is not None:
            run.step(index, ("commit", slot, 0, 0))
            if check:
                run.check()
    if check:
        run.final_check()
    return run.machine


MACHINE_RULES = (
    "LOG.CONTIGUITY",
    "LOG.PUT_IF_ABSENT",
    "LOG.ATOMIC_VISIBILITY",
    "RETRY.ATTEMPT_VERSION",
    "RETRY.NEXT_VERSION",
    "CONFLICT.PER_WINNER",
    "TXN.COMMIT_INFO_FIXED",
    "TXN.COMMIT_INFO",
    "PREDICATE.PARTITION_ONLY",
)


@pytest.mark.rules(*MACHINE_RULES)
@examples(0.75)
@given(programs)
def test_random_interleavings_keep_the_invariants(program):
    first = run_program(program, None, check=True)
    assert run_program(program, None, check=False) == first  # the machine is deterministic


@pytest.mark.rules(*MACHINE_RULES, "RETRY.UNBOUNDED")
@pytest.mark.parametrize("release", ["3.1.0", "1.1.0", "0.6.0"])
@examples(0.15)
@given(programs)
def test_random_interleavings_in_older_releases(release, program):
    first = run_program(program, release, check=True)
    assert run_program(program, release, check=False) == first


# --------------------------------------------------------------------------------------------
# Explicit scenarios
# --------------------------------------------------------------------------------------------


def append(machine: m.Machine, name: str, *actions: Action, now: int = 5) -> m.Machine:
    """``name`` begins at the latest version and commits ``actions`` with nobody in between."""
    machine = begin(machine, name)
    machine = m.update(machine, name, lambda t: stage(t, actions))
    machine = m.commit(machine, name, now=now)
    assert isinstance(m.outcome(machine, name), Committed), m.outcome(machine, name)
    return machine


def collide(machine: m.Machine, loser: str, winner: str, *actions: Action, now: int) -> m.Machine:
    """Land ``winner`` exactly at ``loser``'s next attempt version, then let ``loser`` write."""
    if machine.writer(loser).must_resolve:
        machine = m.resolve(machine, loser)
        assert not machine.writer(loser).done
    machine = append(machine, winner, *actions or (AddFile(winner, pv(1)),))
    return m.try_write(machine, loser, now=now)


def blind_writer(machine: m.Machine, name: str, **kwargs: Any) -> m.Machine:
    machine = begin(machine, name, **kwargs)
    return m.update(machine, name, lambda t: stage(t, [AddFile(name, pv(0))]))


def rewriter(machine: m.Machine, name: str, path: str = "init-0-0") -> m.Machine:
    """Reads partition 0 and rewrites ``path`` (a DELETE/UPDATE-like, Serializable commit)."""
    machine = begin(machine, name)

    def change(t: Transaction) -> Transaction:
        t = filter_files(t, [Compare("=", "p", Literal(0))])
        return stage(t, [RemoveFile(path, 3, partition_values=pv(0)), AddFile(name, pv(0))])

    return m.update(machine, name, change)


def commits_by(machine: m.Machine, name: str) -> list[int]:
    return [
        c.version
        for c in machine.log.commits
        if c.commit_info is not None and c.commit_info.txn_id == name
    ]


# RETRY.ATTEMPT_VERSION -----------------------------------------------------------------------


@pytest.mark.rules("RETRY.ATTEMPT_VERSION")
def test_the_first_attempt_is_at_read_version_plus_one():
    machine = table()
    machine = blind_writer(machine, "fresh")
    machine = m.try_write(machine, "fresh", now=1)
    assert m.outcome(machine, "fresh") == Committed(1)
    assert machine.writer("fresh").collisions == 0


@pytest.mark.rules("RETRY.ATTEMPT_VERSION", "SNAPSHOT.TIME_TRAVEL")
def test_a_stale_read_collides_at_once_and_checks_every_later_commit():
    machine = table()
    for i in range(3):
        machine = append(machine, f"w{i}", AddFile(f"w{i}", pv(1)))
    machine = blind_writer(machine, "stale", version=1)
    before = machine.log
    machine = m.try_write(machine, "stale", now=9)
    writer = machine.writer("stale")
    assert (writer.attempt_version, writer.collisions, writer.must_resolve) == (2, 1, True)
    assert machine.log == before
    machine = m.resolve(machine, "stale")
    assert machine.writer("stale").attempt_version == 4
    machine = m.try_write(machine, "stale", now=10)
    assert m.outcome(machine, "stale") == Committed(4)


@pytest.mark.rules("RETRY.ATTEMPT_VERSION", "LOG.NEW_TABLE")
def test_a_table_creator_attempts_version_zero():
    machine = begin(m.Machine(), "creator")
    machine = m.update(machine, "creator", lambda t: stage(t, [TABLE]))
    assert machine.writer("creator").txn.read_version == -1
    machine = m.try_write(machine, "creator", now=1)
    assert m.outcome(machine, "creator") == Committed(0)


# RETRY.NEXT_VERSION --------------------------------------------------------------------------


@pytest.mark.rules("RETRY.NEXT_VERSION")
def test_after_three_winners_the_loser_commits_at_read_plus_four():
    machine = table()
    machine = blind_writer(machine, "loser")
    read = machine.writer("loser").txn.read_version
    for i in range(3):
        machine = append(machine, f"w{i}", AddFile(f"w{i}", pv(2)))
    machine = m.try_write(machine, "loser", now=7)
    assert machine.writer("loser").attempt_version == read + 1
    machine = m.try_write(machine, "loser", now=8)  # resolves the three winners, then writes
    assert m.outcome(machine, "loser") == Committed(read + 4)
    assert machine.writer("loser").collisions == 1
    assert commits_by(machine, "loser") == [read + 4]


@pytest.mark.rules("RETRY.NEXT_VERSION")
def test_attempt_versions_climb_past_each_batch_of_winners():
    machine = table()
    machine = rewriter(machine, "loser")  # reads p = 0; the winners add to p = 1
    attempts = []
    machine = collide(machine, "loser", "a", now=1)
    attempts.append(machine.writer("loser").attempt_version)
    machine = append(machine, "b", AddFile("b", pv(1)))
    machine = collide(machine, "loser", "c", now=2)
    attempts.append(machine.writer("loser").attempt_version)
    machine = m.commit(machine, "loser", now=3)
    assert attempts == [1, 3]
    assert m.outcome(machine, "loser") == Committed(4)
    assert machine.writer("loser").collisions == 2


# RETRY.MAX_ATTEMPTS / RETRY.UNBOUNDED / RETRY.NONE_V01 ------------------------------------------


@pytest.mark.rules("RETRY.MAX_ATTEMPTS")
@pytest.mark.parametrize("max_attempts", [0, 1, 2, 3])
def test_at_most_max_attempts_plus_one_writes(max_attempts):
    machine = table(max_commit_attempts=max_attempts)
    machine = blind_writer(machine, "loser")
    for i in range(max_attempts + 1):
        assert m.outcome(machine, "loser") == Pending()
        machine = collide(machine, "loser", f"w{i}", now=10 + i)
    assert m.outcome(machine, "loser") == Rejected(ErrorKind.MAX_COMMIT_RETRIES_EXCEEDED)
    assert machine.writer("loser").collisions == max_attempts + 1
    assert commits_by(machine, "loser") == []


@pytest.mark.rules("RETRY.MAX_ATTEMPTS")
@pytest.mark.parametrize("max_attempts", [0, 1, 2])
def test_the_last_allowed_attempt_can_still_succeed(max_attempts):
    machine = table(max_commit_attempts=max_attempts)
    machine = blind_writer(machine, "loser")
    for i in range(max_attempts):
        machine = collide(machine, "loser", f"w{i}", now=10 + i)
    machine = m.try_write(machine, "loser", now=99)
    assert m.outcome(machine, "loser") == Committed(max_attempts + 1)


@pytest.mark.rules("RETRY.MAX_ATTEMPTS")
@pytest.mark.parametrize(
    ("max_attempts", "expected"),
    [
        (0, Rejected(ErrorKind.MAX_COMMIT_RETRIES_EXCEEDED)),
        (1, Rejected(ErrorKind.MAX_COMMIT_RETRIES_EXCEEDED)),
        (2, Conflict(DELETE_READ, 2)),
    ],
)
def test_the_last_collision_is_not_checked_for_conflicts(max_attempts, expected):
    """Winner 1 is harmless; winner 2 removes a file the loser read. With M = 1 the collision
    with winner 2 is the last one allowed: the loser fails without looking at it."""
    machine = table(max_commit_attempts=max_attempts)
    machine = rewriter(machine, "loser", path="init-0-0")
    machine = collide(machine, "loser", "harmless", AddFile("h", pv(1)), now=1)
    if not machine.writer("loser").done:
        machine = collide(
            machine, "loser", "deleter", RemoveFile("init-0-1", 2, partition_values=pv(0)), now=2
        )
    if not machine.writer("loser").done:
        machine = m.try_write(machine, "loser", now=3)
    assert m.outcome(machine, "loser") == expected


@pytest.mark.rules("RETRY.UNBOUNDED", "RETRY.MAX_ATTEMPTS")
@pytest.mark.parametrize(
    ("release", "confs", "survives"),
    [
        ("0.2.0", {}, True),
        ("0.6.0", {"max_commit_attempts": 0}, True),  # the conf does not exist before v0.8.0
        ("0.7.0", {"max_commit_attempts": 2}, True),
        ("0.8.0", {"max_commit_attempts": 2}, False),
        (None, {"max_commit_attempts": 4}, False),
        (None, {}, True),
    ],
)
def test_retries_are_bounded_only_from_v0_8(release, confs, survives):
    machine = table(release, **confs)
    machine = blind_writer(machine, "loser")
    for i in range(5):
        if machine.writer("loser").done:
            break
        machine = collide(machine, "loser", f"w{i}", now=10 + i)
    if survives:
        assert machine.writer("loser").collisions == 5
        machine = m.commit(machine, "loser", now=99)
        assert m.outcome(machine, "loser") == Committed(6)
    else:
        assert m.outcome(machine, "loser") == Rejected(ErrorKind.MAX_COMMIT_RETRIES_EXCEEDED)


@pytest.mark.rules("RETRY.NONE_V01")
@pytest.mark.parametrize(
    ("release", "expected"),
    [
        ("0.1.0", Conflict(ConflictKind.CONCURRENT_MODIFICATION, 1)),
        ("0.2.0", Committed(2)),
        (None, Committed(2)),
    ],
)
def test_v0_1_does_not_retry(release, expected):
    machine = table(release)
    machine = blind_writer(machine, "loser")
    machine = append(machine, "winner", AddFile("winner", pv(1)))
    before = machine.log
    machine = m.try_write(machine, "loser", now=9)
    if release == "0.1.0":
        assert m.outcome(machine, "loser") == expected  # a single attempt, two blind appends
        assert machine.log == before
    else:
        machine = m.try_write(machine, "loser", now=10)
        assert m.outcome(machine, "loser") == expected


# CONFLICT.PER_WINNER -------------------------------------------------------------------------


DROP_READ_FILE = RemoveFile("init-0-1", 2, partition_values=pv(0))


@pytest.mark.rules("CONFLICT.PER_WINNER")
@pytest.mark.parametrize(
    ("second", "third", "expected"),
    [
        # version order beats check order: the delete at 2 is reported, not the append at 3
        (DROP_READ_FILE, AddFile("n", pv(0)), Conflict(DELETE_READ, 2)),
        (AddFile("n", pv(0)), DROP_READ_FILE, Conflict(APPEND, 2)),
        (AddFile("n", pv(2)), DROP_READ_FILE, Conflict(DELETE_READ, 3)),
        (AddFile("n", pv(2)), AddFile("o", pv(1)), Committed(4)),
    ],
)
def test_the_first_failing_winner_is_reported(second, third, expected):
    machine = table()
    machine = rewriter(machine, "loser")  # reads p = 0, rewrites init-0-0
    machine = append(machine, "w1", AddFile("w1", pv(1)))
    machine = append(machine, "w2", second)
    machine = append(machine, "w3", third)
    machine = m.commit(machine, "loser", now=9)
    assert m.outcome(machine, "loser") == expected


DV_PROTOCOL = Protocol(
    3,
    7,
    frozenset({"deletionVectors"}),
    frozenset({"deletionVectors", "appendOnly", "invariants"}),
)
DV_TABLE = Metadata(
    "t", SCHEMA, partition_columns=("p",), configuration=(("delta.enableDeletionVectors", "true"),)
)


def _upgrade_then_enable(release: str | None) -> m.Machine:
    """Winner 1 upgrades the protocol to support deletion vectors; winner 2 (which read version
    1) enables them in the metadata; the loser read version 0."""
    machine = table(release)
    machine = blind_writer(machine, "loser")
    machine = append(machine, "upgrader", DV_PROTOCOL)
    return append(machine, "enabler", DV_TABLE)


@pytest.mark.rules("CONFLICT.PER_WINNER")
def test_a_rebased_protocol_carries_over_to_the_next_winner():
    machine = _upgrade_then_enable(None)
    machine = m.try_write(machine, "loser", now=7)  # collides at 1
    original = machine.writer("loser").prepared
    assert original.protocol == Protocol(1, 2)
    machine = m.commit(machine, "loser", now=8)
    assert m.outcome(machine, "loser") == Committed(3)
    rebased = machine.writer("loser").prepared
    assert (rebased.protocol, rebased.metadata) == (DV_PROTOCOL, DV_TABLE)
    # judged alone, against the protocol it read, winner 2's metadata change is not resolvable
    alone = check_winner(original, WinningCommit.of(machine.log.commits[2]), machine.profile)
    assert alone == Conflict(ConflictKind.METADATA_CHANGED, 2)
    # the staged actions themselves are untouched by rebasing
    assert rebased.actions == original.actions
    assert rebased.commit_info == original.commit_info


@pytest.mark.rules("CONFLICT.PER_WINNER")
@pytest.mark.parametrize(
    ("release", "expected"),
    [
        (None, Committed(3)),
        ("4.1.0", Committed(3)),
        ("4.0.0", Conflict(ConflictKind.METADATA_CHANGED, 2)),  # no resolution before v4.1
        ("2.4.0", Conflict(ConflictKind.METADATA_CHANGED, 2)),
    ],
)
def test_protocol_and_metadata_winners_across_releases(release, expected):
    machine = _upgrade_then_enable(release)
    machine = m.commit(machine, "loser", now=8)
    assert m.outcome(machine, "loser") == expected


# TXN.COMMIT_INFO_FIXED -----------------------------------------------------------------------


@pytest.mark.rules("TXN.COMMIT_INFO_FIXED", "RETRY.ATTEMPT_VERSION")
def test_commit_info_is_fixed_at_the_first_attempt():
    machine = table()
    machine = rewriter(machine, "loser", path="init-0-0")
    for i in range(3):
        machine = collide(machine, "loser", f"w{i}", now=100 + i)
    first = machine.writer("loser").prepared.commit_info
    assert first.timestamp == 100
    machine = m.commit(machine, "loser", now=500)
    assert m.outcome(machine, "loser") == Committed(4)
    written = machine.log.commits[4]
    info = written.commit_info
    assert info == first
    assert (info.read_version, info.timestamp, info.txn_id) == (0, 100, "loser")
    assert info.isolation_level == "Serializable"
    assert info.is_blind_append is False
    assert written.timestamp == 500  # the file's own time is the successful attempt's
    assert info.read_version < written.version - 1


# TXN.COMMIT_INFO -----------------------------------------------------------------------------


@pytest.mark.rules("TXN.COMMIT_INFO")
@pytest.mark.parametrize(
    ("release", "first"),
    [
        ("0.2.0", True),
        ("1.0.0", True),
        ("1.1.0", False),
        ("2.1.0", False),
        ("2.2.0", True),
        (None, True),
    ],
)
def test_commit_info_is_first_except_in_v1_1_to_v2_1(release, first):
    machine = table(release)
    machine = append(machine, "w", AddFile("a", pv(0)), AddFile("b", pv(1)))
    actions = machine.log.commits[1].actions
    infos = [i for i, a in enumerate(actions) if isinstance(a, CommitInfo)]
    assert infos == ([0] if first else [len(actions) - 1])
    assert machine.log.commits[1].commit_info is actions[infos[0]]


@pytest.mark.rules("TXN.COMMIT_INFO")
@pytest.mark.parametrize(
    ("scenario", "operation", "level", "blind"),
    [
        ("append", "WRITE", "Serializable", True),
        ("read_append", "WRITE", "Serializable", False),
        ("rewrite", "DELETE", "Serializable", False),
        ("compact", "OPTIMIZE", "SnapshotIsolation", False),
        ("metadata", "SET TBLPROPERTIES", "Serializable", True),
    ],
)
def test_commit_info_fields(scenario, operation, level, blind):
    machine = table()
    machine = begin(machine, "w", operation=Operation(operation))
    compact = [
        RemoveFile("init-0-0", 3, data_change=False, partition_values=pv(0)),
        RemoveFile("init-0-1", 3, data_change=False, partition_values=pv(0)),
        AddFile("c", pv(0), data_change=False),
    ]

    def change(t: Transaction) -> Transaction:
        if scenario == "append":
            return stage(t, [AddFile("a", pv(0))])
        if scenario == "read_append":
            return stage(filter_files(t, [Compare("=", "p", Literal(0))]), [AddFile("a", pv(0))])
        if scenario == "rewrite":
            t = filter_files(t, [Compare("=", "p", Literal(0))])
            return stage(t, [RemoveFile("init-0-0", 3, partition_values=pv(0))])
        if scenario == "compact":
            return stage(filter_files(t, [Compare("=", "p", Literal(0))]), compact)
        return stage(t, [DV_TABLE])

    machine = m.update(machine, "w", change)
    machine = m.commit(machine, "w", now=1234)
    info = machine.log.commits[1].commit_info
    assert info == CommitInfo(
        timestamp=1234,
        operation=operation,
        read_version=0,
        isolation_level=level,
        is_blind_append=blind,
        txn_id="w",
    )


@pytest.mark.rules("TXN.COMMIT_INFO")
@pytest.mark.parametrize(
    ("release", "level"), [("0.6.0", None), ("1.0.0", None), ("1.1.0", "Serializable")]
)
def test_the_isolation_level_is_recorded_from_v1_1(release, level):
    machine = table(release)
    machine = append(machine, "w", AddFile("a", pv(0)))
    assert machine.log.commits[1].commit_info.isolation_level == level


@pytest.mark.rules("TXN.COMMIT_INFO")
def test_the_first_commit_has_no_read_version():
    machine = table()
    info = machine.log.commits[0].commit_info
    assert info.read_version is None
    assert info.txn_id == "setup"


@pytest.mark.rules("TXN.COMMIT_INFO")
def test_v0_1_commit_info_has_no_blind_append_flag():
    machine = table("0.1.0")
    machine = append(machine, "w", AddFile("a", pv(0)))
    assert machine.log.commits[1].commit_info.is_blind_append is None


@pytest.mark.rules("TXN.COMMIT_INFO")
@pytest.mark.parametrize("release", ["0.2.0", "1.1.0"])
def test_txn_id_is_written_from_v1_2(release):
    machine = table(release)
    machine = append(machine, "w", AddFile("a", pv(0)))
    assert machine.log.commits[1].commit_info.txn_id is None
