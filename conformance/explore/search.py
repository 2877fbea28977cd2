"""Bounded exhaustive exploration of interleavings over the model (``deltaspec explore``).

Random testing samples interleavings; this enumerates them. ``writers`` writers each run up
to ``ops`` operations of the workload alphabet (``workload.alphabet.ALPHABET``) on one table.
A writer's moves are the model's own steps (``deltaspec.model.machine``): *begin* an
operation on the latest snapshot (reads recorded, actions staged), *try_write* (one
put-if-absent at the attempt version, RETRY.ATTEMPT_VERSION) and, after a collision,
*resolve* (check the winners,
CONFLICT.PER_WINNER, and aim past them, RETRY.NEXT_VERSION). Every interleaving of those
moves is reached, breadth first, so the first violation found has a shortest trace.

States are hashed by a canonical form: the log as the list of (writer, operation number,
operation, read version) that committed each version, plus each writer's local state
(operations done, and where and how those that did not commit ended; the running one's
read version, attempt version, pending collision).
With symmetry reduction the writer names are dropped: the log keeps only what committed,
and each writer becomes a signature (its local state, the versions it committed); a
state is the log plus the sorted signatures, so states that differ by a renaming of
writers are one. Moves are memoised per (log, writer, local state), and the checks per
log, so the model runs once for each distinct situation.

After each new state: the log invariants (LOG.CONTIGUITY; every commit a writer was told
about is still in the log, LOG.PUT_IF_ABSENT; a checkpoint of every version replays to
the latest snapshot, CHECKPOINT.CONTENTS), the writers' invariants (RETRY.ATTEMPT_VERSION)
and the isolation checker (``isolation.check``) on the committed history.

``put_if_absent=False`` models a broken log store that overwrites an existing version
and reports success; ``fault`` swaps one model rule for a broken one for the run (:mod:`.faults`).
"""

from __future__ import annotations

import time
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from ...model import machine as m
from ...model.actions import as_dict
from ...model.checkpoint import checkpoint_actions, snapshot_from_checkpoint
from ...model.log import Log
from ...model.outcomes import Committed, Conflict, Outcome, Rejected, Skipped
from ...model.snapshot import Snapshot
from ..engines.model.adapter import ModelAdapter
from ..harness.adapter import Json, TableSetup
from ..harness.scenarios import Writer
from ..isolation import checker as isolation
from ..oracle.differential import Differential
from ..workload.alphabet import ALPHABET, ExploreError, Operation, choices
from ..workload.scenario import APP_ID, TableState, table, writer_spec
from .faults import FAULTS, OverwritingLog, faulted

NOW = 0
"""Every step runs at clock 0: timestamps would tell apart states that behave alike."""

LEVELS = ("Serializable", "WriteSerializable")


def start(model: ModelAdapter | Differential, name: str, op: Operation, now: int) -> Json:
    """Begin ``op`` as writer ``name`` on the latest snapshot of ``model``: the writer object
    (spec/scenarios.md) it is there, its reads recorded and its actions staged."""
    adapter = model.model if isinstance(model, Differential) else model
    snapshot = adapter.machine.log.snapshot()
    assert snapshot is not None
    spec = writer_spec(op, name, table_state(snapshot))
    if isinstance(model, Differential):
        model.begin(name, spec)
        return spec
    typed = Writer.of(spec)
    model.begin(name, typed.spec, None, now)
    for read in typed.reads:
        model.read(name, read)
    model.stage(name, typed.actions, now)
    return spec


def table_state(snapshot: Snapshot) -> TableState:
    """What an explored operation sees of a model snapshot."""
    metadata = snapshot.metadata
    return TableState(
        version=snapshot.version,
        files={f.path: as_dict(f.partition_values) for f in snapshot.files.values()},
        configuration=None if metadata is None else as_dict(metadata.configuration),
        app_version=snapshot.app_txn_version(APP_ID),
    )


# --- configuration and results ----------------------------------------------------------------


@dataclass(frozen=True)
class ExploreConfig:
    """What to explore. ``isolation`` is the table's ``delta.isolationLevel`` (None: unset,
    which is Serializable, ISOLATION.TABLE_DEFAULT); ``profile`` a delta-spark release."""

    writers: int = 2
    ops: int = 2
    partitions: int = 1
    isolation: str | None = None
    profile: str | None = None
    put_if_absent: bool = True
    symmetry: bool = True
    alphabet: tuple[str, ...] = ALPHABET
    fault: str | None = None
    """A model fault of :data:`.faults.FAULTS` to run with (None: the correct model)."""
    max_states: int | None = None
    max_commit_attempts: int | None = None
    """``maxCommitAttempts`` (RETRY.MAX_ATTEMPTS); None: delta-spark's default."""

    def __post_init__(self) -> None:
        if self.writers < 1 or self.ops < 1 or self.partitions < 0:
            raise ExploreError("need at least one writer and one operation, partitions >= 0")
        if self.isolation is not None and self.isolation not in LEVELS:
            raise ExploreError(f"isolation level must be one of {', '.join(LEVELS)}")
        if self.fault is not None and self.fault not in FAULTS:
            raise ExploreError(f"unknown fault {self.fault!r}; known: {', '.join(FAULTS)}")

    @property
    def setup(self) -> TableSetup:
        attempts = self.max_commit_attempts
        session = {} if attempts is None else {"maxCommitAttempts": attempts}
        return TableSetup(self.profile, session, table(self.partitions, self.isolation))

    def describe(self) -> str:
        level = self.isolation or "Serializable (table default)"
        store = "put-if-absent" if self.put_if_absent else "NO put-if-absent"
        return (
            f"{self.writers} writers x {self.ops} operations of {', '.join(self.alphabet)}; "
            f"{self.partitions} partition(s); {level}; profile {self.profile or 'latest'}; "
            f"{store}; symmetry reduction {'on' if self.symmetry else 'off'}"
            + (f"; fault {self.fault}" if self.fault else "")
        )

    @property
    def slug(self) -> str:
        """A short lower-case name for file names and vector ids."""
        level = {"Serializable": "-ser", "WriteSerializable": "-ws"}.get(self.isolation or "", "")
        release = f"-v{self.profile}" if self.profile else ""
        return f"w{self.writers}k{self.ops}p{self.partitions}{level}{release}"


@dataclass(frozen=True)
class Step:
    """One move of writer ``writer`` (0-based): ``begin`` an operation, ``try_write`` or
    ``resolve``."""

    writer: int
    action: str
    op: Operation | None = None


def writer_name(writer: int, op_number: int) -> str:
    """The name of a writer's ``op_number``-th operation (both 0-based): ``w1-1`` first."""
    return f"w{writer + 1}-{op_number + 1}"


def step_names(steps: Sequence[Step]) -> list[str]:
    """The transaction each step moves: a begin starts the writer's next operation."""
    begun: dict[int, int] = {}
    names = []
    for step in steps:
        if step.action == "begin":
            begun[step.writer] = begun.get(step.writer, -1) + 1
        names.append(writer_name(step.writer, begun.get(step.writer, 0)))
    return names


@dataclass(frozen=True)
class Problem:
    """A broken invariant: the rule it breaks and what happened."""

    rule: str
    kind: str
    message: str
    anomaly: isolation.Anomaly | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Violation:
    problem: Problem
    depth: int
    states: int
    """Distinct states seen when it was found."""
    trace: tuple[Step, ...]
    outcomes: tuple[str, ...]
    """What each step of the trace came to, in words."""

    def lines(self) -> list[str]:
        return [
            f"{i:>3}. {name:<6} {outcome}"
            for i, (name, outcome) in enumerate(
                zip(step_names(self.trace), self.outcomes, strict=True), 1
            )
        ]


@dataclass(frozen=True)
class Progress:
    states: int
    depth: int
    queued: int
    seconds: float

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds else 0.0


@dataclass(frozen=True)
class ExploreReport:
    config: ExploreConfig
    states: int
    transitions: int
    depth: int
    terminal: int
    seconds: float
    complete: bool
    """False when ``max_states`` cut the search short (no verdict on the rest)."""
    violation: Violation | None

    @property
    def states_per_second(self) -> float:
        return self.states / self.seconds if self.seconds else 0.0

    @property
    def safe(self) -> bool:
        return self.complete and self.violation is None

    def summary(self) -> str:
        return (
            f"{self.states:,} distinct states, {self.transitions:,} transitions, depth "
            f"{self.depth}, {self.terminal:,} terminal, {self.seconds:.1f} s "
            f"({self.states_per_second:,.0f} states/s)"
        )

    def json(self) -> Json:
        violation = None
        if self.violation is not None:
            v = self.violation
            violation = {
                "rule": v.problem.rule,
                "kind": v.problem.kind,
                "message": v.problem.message,
                "depth": v.depth,
                "states": v.states,
                "trace": v.lines(),
            }
        return {
            "config": asdict(self.config),
            "states": self.states,
            "transitions": self.transitions,
            "depth": self.depth,
            "terminal": self.terminal,
            "seconds": round(self.seconds, 3),
            "states_per_second": round(self.states_per_second),
            "complete": self.complete,
            "violation": violation,
        }


# --- the state space --------------------------------------------------------------------------

Entry = tuple[int, int, Operation, int]
"""Who committed a version: (writer, operation number, operation, read version)."""
Ack = tuple[int, int, int]
"""A commit a writer was told about: (version, writer, operation number)."""


@dataclass(eq=False)
class LogNode:
    """One distinct log (version 0 is the table), interned by its entries."""

    id: int
    entries: tuple[Entry, ...]
    log: Log
    shape: int
    """The interned entries without writer indices (for symmetry reduction)."""
    versions: tuple[tuple[int, ...], ...]
    """Per writer: the versions it committed."""
    records: tuple[isolation.CommitRecord, ...]
    """What the transactions behind versions 1.. read and wrote (the isolation checker's)."""
    problems: tuple[Problem, ...] | None = None


@dataclass(frozen=True, eq=False)
class Local:
    """A writer's local state; ``id`` interns its canonical form: what decides the writer's
    future, and how its operations that did not commit ended (so that terminal states tell
    interleavings with other outcomes apart).

    A writer that has just begun ``op`` on the log ``began`` has no model writer yet: the
    begin runs when the state is expanded (a begin that leads to a state already seen never
    runs).
    """

    id: int
    done: int
    aborted: tuple[tuple[Operation, int, str], ...] = ()
    """The finished operations that did not commit: (operation, read version, outcome)."""
    op: Operation | None = None
    writer: m.Writer | None = None
    began: LogNode | None = None


@dataclass(frozen=True, eq=False)
class Move:
    step: Step
    step_id: int
    local: Local
    node: LogNode
    ack: Ack | None = None
    outcome: str = ""
    problem: Problem | None = None


State = tuple[LogNode, tuple[Local, ...], tuple[Ack, ...]]
K = TypeVar("K")
V = TypeVar("V")
StateId = int
"""A distinct state's number, in the order the search found it (0: the initial state)."""


def _describe(outcome: Outcome, overwrote: bool = False) -> str:
    match outcome:
        case Committed(version=v):
            return f"committed {v}" + (" (over an existing commit)" if overwrote else "")
        case Conflict(kind=kind, winner=winner):
            return f"conflict {kind.value} (winner {winner})"
        case Rejected(kind=kind):
            return f"error {kind.value}"
        case Skipped():
            return "skipped (empty commit)"
    return "pending"


def _view(snapshot: Snapshot) -> tuple[Any, ...]:
    """What a checkpoint must preserve (CHECKPOINT.CONTENTS)."""
    return (
        snapshot.version,
        dict(snapshot.files),
        snapshot.protocol,
        snapshot.metadata,
        dict(snapshot.app_txns),
        dict(snapshot.domains),
    )


class Memo(Generic[K, V]):
    """A memo that forgets what the last two levels of the search did not use: states that
    share a move lie at nearby depths, and the moves of the whole search do not fit in memory
    for long."""

    def __init__(self) -> None:
        self.young: dict[K, V] = {}
        self.old: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        found = self.young.get(key)
        if found is None and (found := self.old.pop(key, None)) is not None:
            self.young[key] = found
        return found

    def put(self, key: K, value: V) -> V:
        self.young[key] = value
        return value

    def age(self) -> None:
        self.old, self.young = self.young, {}


class Explorer:
    """Breadth-first search of one configuration's state space."""

    def __init__(self, config: ExploreConfig) -> None:
        self.config = config
        adapter = ModelAdapter()
        adapter.create(config.setup)
        self.profile = adapter.machine.profile
        root_log = adapter.machine.log
        if not config.put_if_absent:
            root_log = OverwritingLog.of(root_log)
        self.choices = choices(config.alphabet, config.partitions)
        self.count_collisions = (
            self.profile.bounded_retries
            and self.profile.max_commit_attempts < config.writers * config.ops
        )
        self._nodes: dict[tuple[Entry, ...], LogNode] = {}
        self._shapes: dict[tuple[Any, ...], int] = {}
        self._locals: dict[tuple[Any, ...], int] = {}
        self._signatures: dict[tuple[Any, ...], int] = {}
        self._moves: Memo[tuple[int, int, int], tuple[Move, ...]] = Memo()
        self._begins: Memo[tuple[int, str, Operation], m.Writer] = Memo()
        self._history = Differential([], config.setup)
        self.partition_types = self._history.history().partition_types
        self.root = self._node((), root_log, ())
        self.seen: dict[int, StateId] = {}
        """Every distinct state found: its canonical key (packed in one int) and its number."""
        self.parent = array("q")
        """Per state number: the state it was first reached from (-1 for the initial state)..."""
        self.via = array("I")
        """...and the step that reached it (an index into ``steps``)."""
        self.steps: list[Step] = []
        self._step_ids: dict[Step, int] = {}
        self.terminals: list[StateId] = []
        self.nodes_of: dict[StateId, LogNode] = {}
        """The final log of each terminal state."""

    # --- interning ---

    def _node(
        self, entries: tuple[Entry, ...], log: Log, records: tuple[isolation.CommitRecord, ...]
    ) -> LogNode:
        node = self._nodes.get(entries)
        if node is None:
            shape = tuple((number, op, rv) for _, number, op, rv in entries)
            versions = tuple(
                tuple(v for v, entry in enumerate(entries, 1) if entry[0] == w)
                for w in range(self.config.writers)
            )
            shape_id = self._shapes.setdefault(shape, len(self._shapes))
            node = LogNode(len(self._nodes), entries, log, shape_id, versions, records)
            self._nodes[entries] = node
        return node

    def _local(
        self, done: int, aborted: tuple[tuple[Operation, int, str], ...] = (),
        op: Operation | None = None, writer: m.Writer | None = None,
    ) -> Local:  # fmt: skip
        if writer is None:
            key: tuple[Any, ...] = (done, aborted)
        else:
            attempt = writer.attempt_version if writer.prepared is not None else -1
            collisions = writer.collisions if self.count_collisions else 0
            rv = writer.txn.read_version
            key = (done, aborted, op, rv, attempt, writer.must_resolve, collisions)
        return Local(self._locals.setdefault(key, len(self._locals)), done, aborted, op, writer)

    def _begun(self, local: Local, op: Operation, node: LogNode) -> Local:
        key = (local.done, local.aborted, op, node.log.latest_version, -1, False, 0)
        interned = self._locals.setdefault(key, len(self._locals))
        return Local(interned, local.done, local.aborted, op, began=node)

    def key(self, node: LogNode, locals_: tuple[Local, ...]) -> int:
        """The canonical form of a state, its parts packed 32 bits each into one int."""
        if self.config.symmetry:
            signatures = self._signatures
            parts = [node.shape]
            parts += sorted(
                signatures.setdefault((versions, local.id), len(signatures))
                for versions, local in zip(node.versions, locals_, strict=True)
            )
        else:
            parts = [node.id, *(local.id for local in locals_)]
        packed = 0
        for part in parts:
            packed = packed << 32 | part
        return packed

    def _step(self, step: Step) -> int:
        found = self._step_ids.get(step)
        if found is None:
            found = self._step_ids[step] = len(self.steps)
            self.steps.append(step)
        return found

    # --- moves ---

    def moves(self, node: LogNode, index: int, local: Local) -> tuple[Move, ...]:
        memo = (node.id, index, local.id)
        found = self._moves.get(memo)
        if found is None:
            found = self._moves.put(memo, tuple(self._compute_moves(node, index, local)))
        return found

    def _compute_moves(self, node: LogNode, index: int, local: Local) -> Iterator[Move]:
        name = writer_name(index, local.done)
        if local.op is None:
            if local.done < self.config.ops:
                for op in self.choices:
                    step = Step(index, "begin", op)
                    yield Move(step, self._step(step), self._begun(local, op, node), node)
            return
        op = local.op
        if local.writer is None:
            assert local.began is not None
            local = self._local(local.done, local.aborted, op, self._begin(local.began, name, op))
        assert local.writer is not None
        machine = m.Machine(self.profile, node.log, MappingProxyType({name: local.writer}))
        action = "resolve" if local.writer.must_resolve else "try_write"
        step = Step(index, action)
        step_id = self._step(step)
        try:
            after = (
                m.resolve(machine, name) if action == "resolve" else m.try_write(machine, name, NOW)
            )
        except ValueError as error:  # StepError, or a gap the log refuses
            problem = Problem("LOG.CONTIGUITY", "model error", f"{name} {action}: {error}")
            yield Move(step, step_id, local, node, problem=problem)
            return
        writer = after.writer(name)
        if not writer.done:
            pending = self._local(local.done, local.aborted, op, writer)
            yield Move(step, step_id, pending, node, outcome="pending")
            return
        outcome = writer.outcome
        if not isinstance(outcome, Committed):
            aborted = (*local.aborted, (op, writer.txn.read_version, _describe(outcome)))
            idle = self._local(local.done + 1, aborted)
            yield Move(step, step_id, idle, node, outcome=_describe(outcome))
            return
        idle = self._local(local.done + 1, local.aborted)
        version = outcome.version
        entry: Entry = (index, local.done, op, writer.txn.read_version)
        entries = (*node.entries[: version - 1], entry, *node.entries[version:])
        record = self._record(name, writer, after.log)
        records = (*node.records[: version - 1], record, *node.records[version:])
        child = self._node(entries, after.log, records)
        overwrote = version <= len(node.entries)
        ack = (version, index, local.done)
        yield Move(step, step_id, idle, child, ack, _describe(outcome, overwrote))

    def _begin(self, node: LogNode, name: str, op: Operation) -> m.Writer:
        """The model's writer after ``begin`` of ``op``: reads recorded, actions staged."""
        memo = (node.id, name, op)
        writer = self._begins.get(memo)
        if writer is None:
            writer = self._begins.put(memo, self._run_begin(node, name, op))
        return writer

    def _run_begin(self, node: LogNode, name: str, op: Operation) -> m.Writer:
        adapter = ModelAdapter()
        adapter.machine = m.Machine(self.profile, node.log)
        start(adapter, name, op, NOW)
        return adapter.machine.writer(name)

    # --- checks ---

    def _record(self, name: str, writer: m.Writer, log: Log) -> isolation.CommitRecord:
        """The committed ``writer`` as the isolation checker sees it (from the model)."""
        self._history.model.machine = m.Machine(self.profile, log, MappingProxyType({name: writer}))
        (record,) = self._history.history().commits
        return record

    def node_problems(self, node: LogNode) -> tuple[Problem, ...]:
        if node.problems is None:
            node.problems = tuple(self._check_node(node))
        return node.problems

    def _check_node(self, node: LogNode) -> Iterator[Problem]:
        log = node.log
        versions = [c.version for c in log.commits]
        if versions != list(range(len(versions))):
            yield Problem("LOG.CONTIGUITY", "log", f"commit versions {versions}")
        # The log's parent was checked the same way, so by induction a checkpoint of any
        # version replays to the latest snapshot once these two do.
        latest = log.snapshots[-1]
        for version in range(max(0, log.latest_version - 1), log.latest_version + 1):
            restored = snapshot_from_checkpoint(
                version,
                checkpoint_actions(log.snapshots[version], NOW),
                log.commits[version + 1 :],
            )
            if _view(restored) != _view(latest):
                yield Problem(
                    "CHECKPOINT.CONTENTS",
                    "checkpoint",
                    f"a checkpoint of version {version} replays to another latest snapshot",
                )
        for anomaly in isolation.check(isolation.History(self.partition_types, node.records)):
            yield Problem("ISOLATION.LEVELS", anomaly.kind.value, anomaly.explanation, anomaly)

    def state_problem(self, state: State) -> Problem | None:
        node, locals_, acked = state
        for version, writer, number in acked:
            if node.entries[version - 1][:2] != (writer, number):
                other = node.entries[version - 1]
                return Problem(
                    "LOG.PUT_IF_ABSENT",
                    "lost write",
                    f"{writer_name(writer, number)} was told it committed version {version}, "
                    f"but version {version} holds {writer_name(other[0], other[1])}'s commit",
                )
        problems = self.node_problems(node)
        if problems:
            return problems[0]
        latest = node.log.latest_version
        for index, local in enumerate(locals_):
            w = local.writer
            if (
                w is not None
                and w.prepared is not None
                and not (w.txn.read_version < w.attempt_version <= latest + 1)
            ):
                return Problem(
                    "RETRY.ATTEMPT_VERSION",
                    "writer",
                    f"{writer_name(index, local.done)} aims at version {w.attempt_version} "
                    f"(read {w.txn.read_version}, latest {latest})",
                )
        return None

    # --- the search ---

    def run(self, progress: Callable[[Progress], None] | None = None) -> ExploreReport:
        with faulted(self.config.fault):
            return self._search(progress)

    def _search(self, progress: Callable[[Progress], None] | None) -> ExploreReport:
        started = time.perf_counter()
        writers = self.config.writers
        root: State = (self.root, tuple(self._local(0) for _ in range(writers)), ())
        seen = self.seen
        seen[self.key(root[0], root[1])] = 0
        self.parent.append(-1)
        self.via.append(0)
        frontier: list[tuple[StateId, State]] = [(0, root)]
        transitions = depth = 0
        reported = started

        def report(violation: Violation | None, complete: bool) -> ExploreReport:
            seconds = time.perf_counter() - started
            if progress is not None:
                progress(Progress(len(seen), depth, 0, seconds))
            return ExploreReport(
                self.config, len(seen), transitions, depth, len(self.terminals), seconds,
                complete, violation,
            )  # fmt: skip

        problem = self.state_problem(root)
        if problem is not None:
            return report(self._violation(problem, 0, 0), True)
        while frontier:
            following: list[tuple[StateId, State]] = []
            for number, (node, locals_, acked) in frontier:
                moved = False
                for index in range(writers):
                    for move in self.moves(node, index, locals_[index]):
                        moved = True
                        transitions += 1
                        child = self._child(number, (node, locals_, acked), index, move)
                        if child is None:
                            continue
                        problem = move.problem or self.state_problem(child[1])
                        if problem is not None:
                            depth += 1
                            return report(self._violation(problem, child[0], depth), True)
                        following.append(child)
                        if self.config.max_states and len(seen) >= self.config.max_states:
                            return report(None, False)
                if not moved:
                    self.terminals.append(number)
                    self.nodes_of[number] = node
                now = time.perf_counter()
                if progress is not None and now - reported >= 1.0:
                    reported = now
                    progress(Progress(len(seen), depth, len(following), now - started))
            frontier = following
            self._moves.age()
            self._begins.age()
            if frontier:
                depth += 1
        return report(None, True)

    def _child(
        self, number: StateId, state: State, index: int, move: Move
    ) -> tuple[StateId, State] | None:
        """The state that writer ``index``'s ``move`` leads to from state ``number``, numbered
        and linked to its parent for :meth:`trace`; None when it was seen before."""
        _, locals_, acked = state
        new_locals = (*locals_[:index], move.local, *locals_[index + 1 :])
        key = self.key(move.node, new_locals)
        if key in self.seen:
            return None
        new = self.seen[key] = len(self.parent)
        self.parent.append(number)
        self.via.append(move.step_id)
        return new, (move.node, new_locals, acked if move.ack is None else (*acked, move.ack))

    def _violation(self, problem: Problem, number: StateId, depth: int) -> Violation:
        trace = self.trace(number)
        return Violation(problem, depth, len(self.seen), trace, tuple(self.outcomes(trace)))

    def trace(self, number: StateId) -> tuple[Step, ...]:
        """The shortest trace from the initial state to state ``number`` (breadth first)."""
        steps = []
        while number > 0:
            steps.append(self.steps[self.via[number]])
            number = self.parent[number]
        return tuple(reversed(steps))

    def outcomes(self, trace: Sequence[Step]) -> Iterator[str]:
        """What each step came to, walking the memoised moves (under the explored rules)."""
        node = self.root
        locals_ = tuple(self._local(0) for _ in range(self.config.writers))
        with faulted(self.config.fault):
            for step in trace:
                move = next(
                    mv
                    for mv in self.moves(node, step.writer, locals_[step.writer])
                    if mv.step == step
                )
                node = move.node
                locals_ = (*locals_[: step.writer], move.local, *locals_[step.writer + 1 :])
                yield (
                    f"begin {step.op}" if step.op is not None else f"{step.action}: {move.outcome}"
                )


def explore(
    config: ExploreConfig, progress: Callable[[Progress], None] | None = None
) -> tuple[Explorer, ExploreReport]:
    """Explore ``config``; the explorer keeps the search graph for traces and export."""
    explorer = Explorer(config)
    return explorer, explorer.run(progress)
