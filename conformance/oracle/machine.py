"""The oracle: a Hypothesis state machine of many concurrent writers, model against adapters.

Each example creates a table (partitioned by 0, 1 or 2 columns, one of them a string column
whose values need escaping, under a release profile, an isolation level and retention
properties), then interleaves up to ``MAX_OPEN`` open writers: blind appends, deletes, updates,
merges, overwrites, compactions, property and schema changes, protocol upgrades, streaming
SetTransactions, domain metadata, empty commits; writers may begin at an older version (slow
writers), commit in any order, and a commit write may fail or lose its acknowledgement (storage
faults). The clock moves between steps: not at all (commits at equal times), backwards, or past
a retention boundary. The table is checkpointed (classic or multi-part) at any version, which
cleans up expired log files; it is read back in time by version and by timestamp, and
vacuumed. After every step the adapters must report what the model reports
(``deltaspec.conformance.oracle.differential``): snapshots, checkpoints and listed commits,
versions at timestamps, the files VACUUM deletes; at the end the committed history must keep
the isolation promises (``isolation.check``).

A failing example shrinks to a short trace, raised as ``Divergence`` with a scenario
vector that replays it (``run_oracle`` writes it to ``regressions``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from deltaspec.releases_table import (
    ReleaseNumber,
    full_writer_protocol,
    latest_release,
    parse_release,
    unwritable_protocol,
)

from ...impl.errors import VersionExistsError
from ...impl.log.names import commit_name
from ...model.actions import AddFile, as_dict
from ...model.predicates import parse
from ...model.snapshot import Snapshot
from ...model.transaction import Transaction, filter_files
from ..harness.adapter import Adapter, Json, TableSetup
from ..workload.alphabet import OPERATION_NAMES, Kind
from .differential import Differential, Divergence

AdapterFactory = Callable[[Path], Adapter]
MAX_OPEN = 8
PROFILES = (
    "4.4.0",
    "3.2.0",
    "4.1.0",
    "3.1.0",
    "3.0.0",
    "2.3.0",
    "1.2.0",
    "0.8.0",
    "0.5.0",
    "0.2.0",
)
LEVELS = (None, "WriteSerializable", "Serializable")
SHAPES: dict[str, tuple[tuple[str, str, tuple[str | None, ...]], ...]] = {
    "p": (("p", "integer", ("0", "1", "2", None)),),
    "none": (),
    "pq": (("p", "integer", ("0", "1", None)), ("q", "string", ("a", "b", None))),
    "s": (("s", "string", ("a b", "50%", "x/y", "k=v", "\u00e9", "", None)),),
}
"""Partition columns: name, type, the values writers use. ``s`` holds values that need escaping
in a directory name and in a path URI (space, ``%``, ``/``, ``=``, non-ASCII, empty, null)."""
DATA_COLUMNS = (("id", "long"), ("x", "long"))
PROTOCOLS: tuple[Json, ...] = (
    {"minReaderVersion": 1, "minWriterVersion": 2},
    {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["domainMetadata"]},
    {"minReaderVersion": 1, "minWriterVersion": 4},
    {"minReaderVersion": 1, "minWriterVersion": 3},
    {"minReaderVersion": 1, "minWriterVersion": 7, "writerFeatures": ["appendOnly"]},
)
V2_CHECKPOINT_PROTOCOL: Json = {
    "minReaderVersion": 3,
    "minWriterVersion": 7,
    "readerFeatures": ["v2Checkpoint"],
    "writerFeatures": ["v2Checkpoint", "domainMetadata"],
}
CHECKPOINT_POLICIES = ("classic", "classic", "v2")
"""``delta.checkpointPolicy`` of a new table: v2 (a top-level file with sidecars) on releases
from 4.0, with the protocol that supports it; classic otherwise."""
PROPERTY_CHANGES: tuple[tuple[str, str | None], ...] = (
    ("delta.isolationLevel", "WriteSerializable"),
    ("delta.isolationLevel", "Serializable"),
    ("user.note", "x"),
    ("delta.checkpointInterval", "3"),
    ("delta.appendOnly", "true"),
    ("delta.appendOnly", None),
    ("delta.logRetentionDuration", "interval 2 days"),
    ("delta.enableExpiredLogCleanup", "false"),
)
HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
RETENTIONS: tuple[dict[str, str], ...] = (
    {},
    {"delta.logRetentionDuration": "interval 1 day",
     "delta.deletedFileRetentionDuration": "interval 1 hour"},
)  # fmt: skip
"""Retention properties a table starts with: the defaults (30 days of log, a week of
tombstones), or short ones that a few clock steps reach."""
CLOCK_STEPS = (0, 0, 1, -1, -HOUR_MS, HOUR_MS, DAY_MS, 7 * DAY_MS, 31 * DAY_MS)
"""How far the clock moves before a step (ms): not at all (equal commit times), back, or
exactly onto the default retention boundaries (an hour, a day, a week, past 30 days)."""
FAULTS = (None, None, None, None, None, None, "WRITE_FAILS", "WRITE_LOST_ACK")
"""Storage faults of a commit write (``impl.log.faults.Fault`` by name); None: no fault."""
MAINTENANCE = ("checkpoint", "time_travel", "time_travel", "timestamp", "vacuum")
PARTS = (None, None, 2, 3)
"""Checkpoint layouts: classic (None) or multi-part."""
VACUUM_RETENTIONS = (None, None, 0, HOUR_MS)
"""VACUUM retentions: the table's (None), or an explicit one with the check disabled."""
KINDS: tuple[Kind, ...] = (
    Kind.APPEND, Kind.DELETE, Kind.UPDATE, Kind.MERGE, Kind.COMPACT, Kind.REPLACE_WHERE,
    Kind.OVERWRITE, Kind.SET_TXN, Kind.SET_PROPERTIES, Kind.DOMAIN_METADATA, Kind.CHANGE_SCHEMA,
    Kind.UPGRADE_PROTOCOL, Kind.EMPTY, Kind.RECOMPUTE_STATS,
)  # fmt: skip
"""What a writer does (the alphabet's kinds; ``Kind.CREATE`` is the machine's initial step): one
rule of the machine per kind, named as the kind. Each table draws a few of them besides appends
(swarm testing: a small alphabet per example makes two writers of the same kind meet, and
metadata changes, which conflict with everyone, stay out of most examples)."""
SWARMS: tuple[tuple[Kind, ...], ...] = (
    (Kind.DELETE, Kind.UPDATE),
    (Kind.MERGE, Kind.COMPACT, Kind.RECOMPUTE_STATS),
    (Kind.REPLACE_WHERE, Kind.OVERWRITE, Kind.DELETE),
    (Kind.SET_TXN, Kind.RECOMPUTE_STATS, Kind.EMPTY),
    (Kind.SET_PROPERTIES, Kind.CHANGE_SCHEMA, Kind.UPDATE),
    (Kind.UPGRADE_PROTOCOL, Kind.DOMAIN_METADATA, Kind.MERGE),
    (Kind.COMPACT, Kind.RECOMPUTE_STATS, Kind.DELETE),
    (Kind.UPDATE, Kind.MERGE, Kind.REPLACE_WHERE, Kind.SET_TXN),
    (Kind.DELETE, Kind.SET_PROPERTIES, Kind.RECOMPUTE_STATS),
    (Kind.COMPACT, Kind.UPGRADE_PROTOCOL, Kind.EMPTY, Kind.REPLACE_WHERE),
)
"""The alphabets a table draws from: together they hold every kind, each several times, so
that even a short run meets every kind of writer."""
assert set(KINDS) == {Kind.APPEND, *(k for swarm in SWARMS for k in swarm)}


SEED = 1


@dataclass(frozen=True)
class OracleProfile:
    """How long the oracle explores: Hypothesis settings for the state machine."""

    name: str
    max_examples: int
    steps: int
    derandomize: bool
    shrink: bool = True
    seed: int | None = None
    """A derandomized profile's fixed seed: without one Hypothesis derives it from the machine's
    source text, so any edit of this module would change the examples the ci profile runs."""

    def settings(self) -> settings:
        # never the explain phase: it replays the shrunk trace hundreds of times to annotate
        # which draws do not matter (136 of 141 s on a 4-step divergence), and the oracle
        # reports the shrunk trace as a vector, not as Hypothesis's annotated listing
        phases = tuple(
            p for p in Phase if p is not Phase.explain and (self.shrink or p is not Phase.shrink)
        )
        return settings(
            phases=phases,
            max_examples=self.max_examples,
            stateful_step_count=self.steps,
            derandomize=self.derandomize,
            deadline=None,
            database=None,
            print_blob=False,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
        )


ORACLE_PROFILES = {
    "ci": OracleProfile("ci", max_examples=60, steps=40, derandomize=True, seed=SEED),
    "deep": OracleProfile("deep", max_examples=5_000, steps=80, derandomize=False),
}


def _value_json(value: str | None, type_name: str) -> Any:
    if value is None:
        return None
    return int(value) if type_name == "integer" else value


class _Draw:
    """What one writer reads and writes, drawn against its read snapshot."""

    def __init__(
        self,
        draw: Callable[[st.SearchStrategy[Any]], Any],
        machine: OracleMachine,
        snapshot: Snapshot,
    ) -> None:
        self.draw = draw
        self.machine = machine
        self.snapshot = snapshot
        self.shape = SHAPES[machine.shape]

    def partition(self) -> dict[str, str | None]:
        return {c: self.draw(st.sampled_from(values)) for c, _, values in self.shape}

    def add(self, partition: dict[str, str | None], data_change: bool = True) -> Json:
        self.machine.files += 1
        directory = "".join(f"{c}={_directory_value(v)}/" for c, v in partition.items())
        name = f"{directory}part-{self.machine.files:05d}.parquet"
        body: Json = {"path": quote(name, safe="/=")}
        if partition:
            body["partitionValues"] = partition
        if not data_change:
            body["dataChange"] = False
        if self.machine.rows_counted:
            body["stats"] = '{"numRecords":1}'
        return {"add": body}

    def predicate(self) -> list[Any]:
        if not self.shape:
            return ["true"]
        column, type_name, values = self.draw(st.sampled_from(self.shape))
        concrete = [v for v in values if v is not None]
        kind = self.draw(st.sampled_from(("=", "in", "is_null", "!=", ">=", "is_not_null", "or")))
        literal = _value_json(self.draw(st.sampled_from(concrete)), type_name)
        match kind:
            case "in":
                other = _value_json(self.draw(st.sampled_from(concrete)), type_name)
                return ["in", column, sorted({literal, other}, key=str)]
            case "is_null" | "is_not_null":
                return [kind, column]
            case "or":
                return ["or", ["=", column, literal], ["is_null", column]]
        return [kind, column, literal]

    def filters(self) -> list[Any]:
        """A filter as a command passes it: partition and data conjuncts, sometimes unsplit."""
        elements: list[Any] = []
        if self.shape and self.draw(st.booleans()):
            elements.append(self.predicate())
        if self.draw(st.integers(0, 3)) == 0:
            data = [">", "x", self.draw(st.integers(0, 9))]
            unsplit = elements and self.draw(st.booleans())
            elements = [["and", elements[0], data]] if unsplit else [*elements, data]
        return elements

    def subset(self, files: list[AddFile]) -> list[AddFile]:
        if not files:
            return []
        chosen: list[AddFile] = self.draw(st.lists(st.sampled_from(files), unique=True, max_size=3))
        return chosen

    def scan(self, filters: list[Any]) -> tuple[Json, list[AddFile]]:
        """A filtered read and the files it reads (all matches, or a data-skipped subset)."""
        model_matches = self.machine.matching(self.snapshot, filters)
        if model_matches and self.draw(st.integers(0, 2)) == 0:
            chosen = self.subset(model_matches)
            return {"filter": filters, "files": [f.path for f in chosen]}, chosen
        return {"filter": filters}, model_matches

    def rewrite(self, keep_rows: bool) -> tuple[list[Json], list[Json]]:
        """A filtered read, and some of the files it read removed (their rows kept: re-added)."""
        read, files = self.scan(self.filters())
        touched = self.subset(files)
        actions: list[Json] = [{"remove": {"path": f.path}} for f in touched]
        if keep_rows:
            actions += [self.add(as_dict(f.partition_values)) for f in touched]
        return [read], actions


def _directory_value(value: str | None) -> str:
    """A partition value as a directory name: percent-escaped, null or empty as Hive's default
    partition. (The path URI escapes it once more: a ``%`` is ``%25`` on disk, ``%2525`` in
    ``add.path``.)"""
    return quote(value, safe=" ") if value else "__HIVE_DEFAULT_PARTITION__"


def _live(snapshot: Snapshot) -> list[AddFile]:
    return sorted(snapshot.files.values(), key=lambda f: f.path)


def _begins(kind: Kind) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The rule of the machine for one kind of writer: enabled once the table exists, while
    fewer than ``MAX_OPEN`` writers are open and when the table's swarm holds the kind."""

    def decorate(method: Callable[..., None]) -> Callable[..., None]:
        assert method.__name__ == kind.name.lower(), (method.__name__, kind)
        enabled = precondition(
            lambda self: self.diff is not None and len(self.open) < MAX_OPEN and kind in self.swarm
        )
        return enabled(rule(data=st.data())(method))

    return decorate


@dataclass
class Tally:
    """What one oracle run did, summed over its examples."""

    steps: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    tables: Counter[str] = field(default_factory=Counter)
    """Tables created, by protocol: ``full-feature <release>`` or ``default``."""
    releases: Counter[str] = field(default_factory=Counter)
    """Tables created, by the release profile drawn for them."""


class OracleMachine(RuleBasedStateMachine):
    """Many writers on one table, every step run on the model and on each adapter."""

    factories: Sequence[AdapterFactory] = ()
    tally: Tally
    """The run's tally (``machine_for`` gives each run its own)."""

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="deltaspec-oracle-"))
        self.adapters = [f(self.root / f"t{i}") for i, f in enumerate(self.factories)]
        self.diff: Differential | None = None
        self.shape = "p"
        self.swarm: frozenset[Kind] = frozenset(KINDS)
        self.open: list[str] = []
        self.writers = 0
        self.files = 0
        self.release: ReleaseNumber = latest_release()
        self.rows_counted = False
        """Adds carry ``numRecords`` (a table drawn with a full-feature protocol, which may
        track row ids: ROWTRACKING.FRESH_ROW_IDS)."""

    @property
    def d(self) -> Differential:
        assert self.diff is not None
        return self.diff

    @property
    def latest(self) -> int:
        return self.d.model.machine.log.latest_version

    def matching(self, snapshot: Snapshot, filters: list[Any]) -> list[AddFile]:
        txn = filter_files(Transaction("scan", snapshot), [parse(f) for f in filters])
        return sorted(txn.reads.files, key=lambda f: f.path)

    @initialize(
        shape=st.sampled_from(tuple(SHAPES)),
        profile=st.sampled_from(PROFILES),
        level=st.sampled_from(LEVELS),
        interval=st.sampled_from(("10", "3")),
        attempts=st.sampled_from((None, None, None, 1, 0)),
        swarm=st.sampled_from(SWARMS),
        retention=st.sampled_from(RETENTIONS),
        policy=st.sampled_from(CHECKPOINT_POLICIES),
        full_features=st.sampled_from((False, False, True)),
    )
    def create_table(
        self,
        shape: str,
        profile: str,
        level: str | None,
        interval: str,
        attempts: int | None,
        swarm: Sequence[Kind],
        retention: dict[str, str],
        policy: str,
        full_features: bool,
    ) -> None:
        self.shape = shape
        self.swarm = frozenset({Kind.APPEND, *swarm})
        config = {} if attempts is None else {"maxCommitAttempts": attempts}
        self.diff = Differential(self.adapters, TableSetup(profile=profile, config=config))
        columns = [
            *({"name": c, "type": t} for c, t, _ in SHAPES[shape]),
            *({"name": c, "type": t} for c, t in DATA_COLUMNS),
        ]
        configuration = {"delta.checkpointInterval": interval, **retention}
        live = any(getattr(a, "wall_clock", False) for a in self.adapters)
        if live:
            # an engine on the wall clock expires log files by its own time, the model by the
            # steps' clock: the two can agree on no cleanup, so nobody cleans up (RETENTION.LOG)
            configuration["delta.enableExpiredLogCleanup"] = "false"
        if level is not None:
            configuration["delta.isolationLevel"] = level
        release = self.release = parse_release(profile)
        protocol = PROTOCOLS[1] if release >= (3, 0, 0) else PROTOCOLS[0]
        self.tally.tables[f"full-feature {profile}" if full_features else "default"] += 1
        self.tally.releases[profile] += 1
        if full_features:
            # every feature the release's writer can write, as delta-spark's own tests create
            # tables (TXN.WRITER_PROTOCOL)
            protocol = full_writer_protocol(release)
            self.rows_counted = True
        elif policy == "v2" and release >= (4, 0, 0) and not live:
            # live delta-spark's action-level commit of this protocol with the policy's metadata
            # upgrades the protocol a second time (PROTOCOL_CHANGED_TWICE), the known issue of
            # conflict/metadata-resolution/dv-enable-with-protocol-upgrade
            protocol = V2_CHECKPOINT_PROTOCOL  # CHECKPOINT.V2_WRITE
            configuration["delta.checkpointPolicy"] = "v2"
        metadata = {
            "schema": columns,
            "partitionColumns": [c for c, _, _ in SHAPES[shape]],
            "configuration": configuration,
        }
        spec = {
            "operation": OPERATION_NAMES[Kind.CREATE],
            "actions": [{"protocol": protocol}, {"metaData": metadata}],
        }
        self.d.begin("w0", spec)
        outcome = self.d.commit("w0")
        assert outcome.get("committed") == 0, outcome
        self.d.compare_snapshots()

    def _begin(self, data: st.DataObject) -> tuple[_Draw, int | None]:
        """After the clock moves, a writer reads the latest version or, as a slow writer, an
        older one (possibly one log cleanup deleted)."""
        self.d.advance(data.draw(st.sampled_from(CLOCK_STEPS), label="clock"))
        version = data.draw(st.one_of(st.none(), st.integers(0, self.latest)), label="version")
        snapshot = self.d.model.machine.log.snapshot(version)
        assert snapshot is not None
        return _Draw(data.draw, self, snapshot), version

    def _open(
        self, kind: Kind, version: int | None, reads: list[Json], actions: list[Json], **more: Any
    ) -> None:
        """The writer begins on every side, recording ``commitInfo.operation`` of its kind."""
        spec: Json = {"operation": OPERATION_NAMES[kind], "reads": reads, "actions": actions}
        self.writers += 1
        name = f"w{self.writers}"
        if self.d.begin(name, {**spec, **more}, version) is None:
            self.open.append(name)
        self.tally.steps += 1

    @_begins(Kind.APPEND)
    def append(self, data: st.DataObject) -> None:
        """Adds one or two files; sometimes after a filtered read (then not blind)."""
        w, version = self._begin(data)
        reads = [w.scan(w.filters())[0]] if w.draw(st.integers(0, 3)) == 0 else []
        count = w.draw(st.integers(1, 2))
        self._open(Kind.APPEND, version, reads, [w.add(w.partition()) for _ in range(count)])

    @_begins(Kind.DELETE)
    def delete(self, data: st.DataObject) -> None:
        """Removes files it read, sometimes re-adding their surviving rows."""
        w, version = self._begin(data)
        self._open(Kind.DELETE, version, *w.rewrite(keep_rows=w.draw(st.booleans())))

    @_begins(Kind.UPDATE)
    def update(self, data: st.DataObject) -> None:
        w, version = self._begin(data)
        self._open(Kind.UPDATE, version, *w.rewrite(keep_rows=True))

    @_begins(Kind.MERGE)
    def merge(self, data: st.DataObject) -> None:
        """An update that sometimes inserts a file besides."""
        w, version = self._begin(data)
        reads, actions = w.rewrite(keep_rows=True)
        if w.draw(st.booleans()):
            actions.append(w.add(w.partition()))
        self._open(Kind.MERGE, version, reads, actions)

    @_begins(Kind.OVERWRITE)
    def overwrite(self, data: st.DataObject) -> None:
        w, version = self._begin(data)
        removes = [{"remove": {"path": f.path}} for f in _live(w.snapshot)]
        actions = [*removes, w.add(w.partition())]
        self._open(Kind.OVERWRITE, version, [{"whole_table": True}], actions)

    @_begins(Kind.REPLACE_WHERE)
    def replace_where(self, data: st.DataObject) -> None:
        w, version = self._begin(data)
        predicate = w.predicate()
        files = self.matching(w.snapshot, [predicate])
        actions: list[Json] = [{"remove": {"path": f.path}} for f in files]
        if files:
            actions.append(w.add(as_dict(files[0].partition_values)))
        self._open(Kind.REPLACE_WHERE, version, [{"filter": [predicate]}], actions)

    @_begins(Kind.COMPACT)
    def compact(self, data: st.DataObject) -> None:
        """Rewrites two or more files of one partition it read as one (dataChange=false)."""
        w, version = self._begin(data)
        read, files = w.scan(w.filters())
        by_partition: dict[str, list[AddFile]] = {}
        for f in files:
            by_partition.setdefault(json.dumps(as_dict(f.partition_values)), []).append(f)
        groups = [g for _, g in sorted(by_partition.items()) if len(g) >= 2]
        actions: list[Json] = []
        if groups:
            group = w.draw(st.sampled_from(groups))
            actions = [{"remove": {"path": f.path, "dataChange": False}} for f in group]
            actions.append(w.add(as_dict(group[0].partition_values), data_change=False))
        self._open(Kind.COMPACT, version, [read], actions)

    @_begins(Kind.SET_PROPERTIES)
    def set_properties(self, data: st.DataObject) -> None:
        w, version = self._begin(data)
        key, value = w.draw(st.sampled_from(PROPERTY_CHANGES))
        metadata = w.snapshot.metadata
        configuration = dict(as_dict(metadata.configuration)) if metadata else {}
        if value is None:
            configuration.pop(key, None)
        else:
            configuration[key] = value
        self._open(
            Kind.SET_PROPERTIES, version, [], [{"metaData": {"configuration": configuration}}]
        )

    @_begins(Kind.CHANGE_SCHEMA)
    def change_schema(self, data: st.DataObject) -> None:
        """Adds a nullable string column."""
        w, version = self._begin(data)
        actions: list[Json] = []
        if w.snapshot.metadata is not None:
            schema = json.loads(w.snapshot.metadata.schema_string)
            self.files += 1
            field = {"name": f"c{self.files}", "type": "string", "nullable": True, "metadata": {}}
            schema["fields"].append(field)
            actions = [{"metaData": {"schemaString": json.dumps(schema, separators=(",", ":"))}}]
        self._open(Kind.CHANGE_SCHEMA, version, [], actions)

    @_begins(Kind.UPGRADE_PROTOCOL)
    def upgrade_protocol(self, data: st.DataObject) -> None:
        """A protocol upgrade: one of PROTOCOLS, or the release's full-feature protocol, or one
        the release cannot write (TXN.WRITER_PROTOCOL)."""
        w, version = self._begin(data)
        full = full_writer_protocol(self.release)
        choices = (*PROTOCOLS, full, unwritable_protocol(self.release, full))
        self._open(
            Kind.UPGRADE_PROTOCOL, version, [], [{"protocol": w.draw(st.sampled_from(choices))}]
        )

    @_begins(Kind.SET_TXN)
    def set_txn(self, data: st.DataObject) -> None:
        """A streaming write: its app id's next SetTransaction version and a file."""
        w, version = self._begin(data)
        app = w.draw(st.sampled_from(("app-a", "app-b")))
        txn = {"txn": {"appId": app, "version": w.snapshot.app_txn_version(app) + 1}}
        self._open(Kind.SET_TXN, version, [{"app_id": app}], [txn, w.add(w.partition())])

    @_begins(Kind.DOMAIN_METADATA)
    def domain_metadata(self, data: st.DataObject) -> None:
        """Sets a metadata domain, sometimes adding a file besides."""
        w, version = self._begin(data)
        domain = w.draw(st.sampled_from(("d1", "d2")))
        actions = [{"domainMetadata": {"domain": domain, "configuration": f"c{self.files}"}}]
        if w.draw(st.booleans()):
            actions.append(w.add(w.partition()))
        self._open(Kind.DOMAIN_METADATA, version, [], actions)

    @_begins(Kind.RECOMPUTE_STATS)
    def recompute_stats(self, data: st.DataObject) -> None:
        """Re-adds live files with recomputed statistics (dataChange=false)."""
        w, version = self._begin(data)
        files = w.subset(_live(w.snapshot))
        self.files += 1
        stats = json.dumps({"numRecords": self.files})
        adds = [
            {"add": {"path": f.path, "partitionValues": as_dict(f.partition_values),
                     "dataChange": False, "stats": stats}}
            for f in files
        ]  # fmt: skip
        reads = [{"files": [f.path for f in files]}] if files else []
        self._open(Kind.RECOMPUTE_STATS, version, reads, adds)

    @_begins(Kind.EMPTY)
    def empty(self, data: st.DataObject) -> None:
        """A commit with no actions, recorded as a WRITE or an OPTIMIZE; sometimes one that
        commitIfNeeded may skip."""
        w, version = self._begin(data)
        operation = w.draw(st.sampled_from(("WRITE", "OPTIMIZE")))
        skip = {"commit_if_needed": False} if w.draw(st.booleans()) else {}
        self._open(Kind.EMPTY, version, [], [], operation=operation, **skip)

    @precondition(lambda self: bool(self.open))
    @rule(data=st.data())
    def commit(self, data: st.DataObject) -> None:
        """Any open writer commits next, its write sometimes failing: every interleaving of
        commits is reachable."""
        name = data.draw(st.sampled_from(self.open), label="writer")
        fault = data.draw(st.sampled_from(FAULTS), label="fault")
        if fault is not None:
            self.d.inject(fault)
        self._commit(name)

    @precondition(lambda self: bool(self.open))
    @rule()
    def commit_oldest(self) -> None:
        """The writer open longest commits: it has the most winners to check."""
        self._commit(self.open[0])

    def _commit(self, name: str) -> None:
        self.open.remove(name)
        outcome = self.d.commit(name)
        kind = next(
            k for k in ("committed", "conflict", "error", "skipped", "pending") if k in outcome
        )
        self.tally.outcomes[kind if kind in ("committed", "skipped") else outcome[kind]] += 1
        self.d.compare_snapshots()
        self.d.compare_checkpoints()
        self.d.compare_listing()
        self.tally.steps += 1

    @precondition(lambda self: self.diff is not None)
    @rule(data=st.data())
    def maintain(self, data: st.DataObject) -> None:
        """After the clock moves: checkpoint a version (classic or in parts; log cleanup
        follows), read a version back by number or by timestamp, or VACUUM."""
        self.d.advance(data.draw(st.sampled_from(CLOCK_STEPS), label="clock"))
        latest = self.latest
        version = data.draw(st.one_of(st.just(latest), st.integers(0, latest)), label="version")
        task = data.draw(st.sampled_from(MAINTENANCE), label="task")
        if task == "checkpoint":
            if version < self.d.model.log_start:
                version = latest  # a cleaned-up version cannot be checkpointed
            self.d.checkpoint(version, data.draw(st.sampled_from(PARTS), label="parts"))
            self.d.compare_snapshots()
            self.d.compare_checkpoints()
            self.d.compare_listing()
        elif task == "timestamp":
            commits = self.d.model.machine.log.commits
            moment = data.draw(st.sampled_from([c.timestamp for c in commits]), label="moment")
            self.d.compare_version_at(moment + data.draw(st.sampled_from((-1, 0, 1))))
        elif task == "vacuum":
            self.d.vacuum(data.draw(st.sampled_from(VACUUM_RETENTIONS), label="retention"))
            self.d.compare_snapshots()
        else:
            self.d.compare_snapshots(version)
        self.tally.steps += 1

    @invariant()
    def stored_log_is_well_formed(self) -> None:
        if self.diff is None:
            return
        for adapter in self.adapters:
            problems = adapter.verify()
            if problems:
                raise self.d.fail(f"{adapter.name} log: {'; '.join(problems)}")

    def teardown(self) -> None:
        try:
            if self.diff is not None:
                self.d.check_isolation()
        finally:
            if self.diff is not None:
                self.d.close()
            shutil.rmtree(self.root, ignore_errors=True)


def machine_for(
    factories: Sequence[AdapterFactory], tally: Tally | None = None
) -> type[OracleMachine]:
    """The state machine class driving the model and the adapters ``factories`` build; its
    examples add what they did to ``tally``."""
    namespace = {"factories": tuple(factories), "tally": tally or Tally()}
    return type("OracleMachine", (OracleMachine,), namespace)


@dataclass(frozen=True)
class OracleReport:
    profile: str
    steps: int
    seconds: float
    races: int
    outcomes: Mapping[str, int]
    tables: Mapping[str, int]
    releases: Mapping[str, int] = field(default_factory=dict)
    """Tables created, by release profile, newest first."""

    @property
    def steps_per_second(self) -> float:
        return self.steps / self.seconds if self.seconds else 0.0


def _race_once(store: Any, version: int, writers: int) -> tuple[list[bytes], list[bytes], bytes]:
    """One race: (the payloads whose writers were told they won, those whose write had an
    unknown outcome — an OSError, e.g. a server that dropped the connection — and what is
    stored)."""
    barrier = threading.Barrier(writers)
    won: list[bytes] = []
    unknown: list[bytes] = []

    def write(payload: bytes) -> None:
        barrier.wait()
        try:
            store.write_new(commit_name(version), payload)
            won.append(payload)
        except VersionExistsError:
            pass
        except OSError:
            unknown.append(payload)

    payloads = [
        json.dumps({"commitInfo": {"writer": w, "pad": "x" * 4096}}).encode() + b"\n"
        for w in range(writers)
    ]
    threads = [threading.Thread(target=write, args=(p,)) for p in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return won, unknown, store.read(commit_name(version))


def race_put_if_absent(store_factory: Callable[[Path], Any], rounds: int, writers: int = 4) -> int:
    """LOG.PUT_IF_ABSENT under real contention: ``writers`` threads write the same commit
    name at once, ``rounds`` times; at most one may be told it won, and what is stored is its
    bytes, or (when none was) the bytes of a writer whose outcome was unknown (the store said
    so with an OSError). Raises AssertionError otherwise; returns the number of races run."""
    root = Path(tempfile.mkdtemp(prefix="deltaspec-race-"))
    try:
        store = store_factory(root)
        for version in range(rounds):
            won, unknown, stored = _race_once(store, version, writers)
            if len(won) > 1 or stored not in (won or unknown):
                whose = "theirs" if stored in won + unknown else "none of theirs"
                raise AssertionError(
                    f"put-if-absent race at version {version}: {len(won)} writers were told "
                    f"they won, {len(unknown)} had an unknown outcome, and the stored commit is "
                    f"{whose}"
                )
        return rounds
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_oracle(
    factories: Sequence[AdapterFactory],
    profile: OracleProfile = ORACLE_PROFILES["ci"],
    regressions: Path | None = None,
    store_factory: Callable[[Path], Any] | None = None,
) -> OracleReport:
    """Run the state machine (and, given a log store, the put-if-absent race) once.

    Raises ``Divergence`` (after writing its vector under ``regressions``) or the
    failure the machine found.
    """
    started = time.perf_counter()
    races = race_put_if_absent(store_factory, rounds=200) if store_factory else 0
    tally = Tally()
    try:
        machine = machine_for(factories, tally)
        if profile.seed is not None:
            machine = seed(profile.seed)(machine)
        run_state_machine_as_test(machine, settings=profile.settings())
    except Divergence as divergence:
        if regressions is not None:
            divergence.write(regressions)
        raise
    return OracleReport(
        profile.name,
        tally.steps,
        time.perf_counter() - started,
        races,
        dict(tally.outcomes.most_common()),
        dict(sorted(tally.tables.items())),
        dict(sorted(tally.releases.items(), key=lambda kv: parse_release(kv[0]), reverse=True)),
    )
