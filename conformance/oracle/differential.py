"""Differential execution: the same steps on the model and on other adapters, compared.

``Differential`` applies each scenario step to the reference (the model) and to every
adapter under test, compares what they report, and keeps the steps as a trace. The
trace is a scenario vector at every moment: when an adapter diverges, ``Divergence``
carries the vector that reproduces it, with the model's outcomes as expectations.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...model import machine as m
from ...model.actions import AddFile, RemoveFile, as_dict
from ...model.outcomes import Committed
from ...model.predicates import form
from ...model.values import partition_schema
from ..engines.model.adapter import ModelAdapter
from ..harness.adapter import Adapter, Json, TableSetup
from ..harness.outcomes import Outcome, outcome_json
from ..harness.scenarios import Writer
from ..harness.snapshots import TableSnapshot, snapshot_json
from ..isolation import checker as isolation

COMMIT_INFO_KEYS = ("timestamp", "operation", "readVersion", "isolationLevel", "isBlindAppend")
SNAPSHOT_KEYS = (
    "version", "files", "stats", "tombstones", "app_txns", "domains", "properties", "schema",
    "partition_columns", "protocol",
)  # fmt: skip
RULES_BY_OUTCOME = {
    "PROTOCOL_CHANGED": "CONFLICT.PROTOCOL",
    "METADATA_CHANGED": "CONFLICT.METADATA",
    "CONCURRENT_TRANSACTION": "CONFLICT.APP_TXN",
    "CONCURRENT_APPEND": "CONFLICT.APPEND_MATCH",
    "CONCURRENT_DELETE_READ": "CONFLICT.DELETE_READ",
    "CONCURRENT_DELETE_DELETE": "CONFLICT.DELETE_DELETE",
    "CONCURRENT_WRITE": "CONFLICT.LEGACY_WRITE",
    "CONCURRENT_MODIFICATION": "CONFLICT.ANY_COMMIT_V01",
}


class Divergence(AssertionError):
    """An adapter disagreed with the model, or a history broke an isolation promise."""

    def __init__(self, message: str, scenario: Json) -> None:
        super().__init__(f"{message}\nreplay: {json.dumps(scenario, sort_keys=True)}")
        self.message = message
        self.scenario = scenario

    def write(self, directory: Path) -> Path:
        """Write the reproducing vector as ``<directory>/<id>.json``."""
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{self.scenario['id'].rsplit('/', 1)[-1]}.json"
        path.write_text(json.dumps(self.scenario, indent=2) + "\n", encoding="utf-8")
        return path


def outcome_view(typed: Outcome) -> Json:
    """What must agree between adapters: the outcome kind and its version, plus the
    commitInfo fields every implementation writes the same way (not the engine's own words: a
    bridge's conflict or error may carry a ``message``, spec/bridge/response.schema.json)."""
    outcome = outcome_json(typed)
    view = {k: v for k, v in outcome.items() if k not in ("commit_info", "message")}
    if "commit_info" in outcome:
        info = outcome["commit_info"]
        view["commit_info"] = {k: info.get(k) for k in COMMIT_INFO_KEYS}
    return view


WALL_CLOCK_FIELDS = ("timestamp", "tombstones")
"""What an engine on the wall clock (``adapter.wall_clock``) cannot share with the model, whose
clock is the step index: commit timestamps, and the tombstones its retention expires by them."""


def _without(value: Any, fields: Sequence[str]) -> Any:
    if not fields or not isinstance(value, dict):
        return value
    out = {k: v for k, v in value.items() if k not in fields}
    if isinstance(out.get("commit_info"), dict):
        out["commit_info"] = {k: v for k, v in out["commit_info"].items() if k not in fields}
    return out


def supported_profile(profile: str, adapters: Sequence[Any]) -> str:
    """``profile``, or the one release every adapter runs when one of them runs only some
    (``adapter.releases``, e.g. the live delta-spark engine): the oracle checks that release."""
    allowed: set[str] | None = None
    for adapter in adapters:
        releases = getattr(adapter, "releases", None)
        if releases is not None:
            allowed = set(releases) if allowed is None else allowed & set(releases)
    if allowed is None or profile in allowed:
        return profile
    if not allowed:
        raise ValueError("the adapters under test run no release in common")
    return max(allowed, key=lambda r: tuple(int(p) for p in r.split(".")))


def snapshot_view(typed: TableSnapshot) -> Json:
    """The snapshot fields that must agree, in the vectors' JSON."""
    snapshot = snapshot_json(typed)
    return {k: snapshot.get(k) for k in SNAPSHOT_KEYS if snapshot}


@dataclass
class Differential:
    """The model and the adapters under test, driven in lockstep; ``steps`` is the trace."""

    adapters: Sequence[Adapter]
    setup: TableSetup = field(default_factory=TableSetup)
    model: ModelAdapter = field(default_factory=ModelAdapter)
    writers: dict[str, Json] = field(default_factory=dict)
    steps: list[Json] = field(default_factory=list)
    outcomes: dict[str, Json] = field(default_factory=dict)
    clock: int | None = None
    """The clock of the next step in milliseconds, once ``advance`` has set it; until then the
    clock of a step is its index in the trace (spec/scenarios.md)."""

    def __post_init__(self) -> None:
        profile = self.setup.profile
        if profile is not None:
            self.setup = replace(self.setup, profile=supported_profile(profile, self.adapters))
        for adapter in (self.model, *self.adapters):
            adapter.create(self.setup)

    @property
    def now(self) -> int:
        """The clock of the next step."""
        return len(self.steps) if self.clock is None else self.clock

    def advance(self, milliseconds: int) -> None:
        """Move the clock by ``milliseconds``: zero (commits at equal times), back (a clock that
        went backwards; never below 0) or forward (retention expiring). From then on every step
        records its clock as ``time``."""
        self.clock = max(0, self.now + milliseconds)

    def _step(self, step: Json) -> None:
        self.steps.append(step if self.clock is None else {**step, "time": self.clock})

    def scenario(self, message: str = "") -> Json:
        """The trace as a scenario vector, expecting what the model did."""
        conflicts = {o.get("conflict") or o.get("error") for o in self.outcomes.values()}
        rules = {RULES_BY_OUTCOME[c] for c in conflicts if c in RULES_BY_OUTCOME}
        if any("skipped" in outcome for outcome in self.outcomes.values()):
            rules.add("TXN.EMPTY_COMMIT")  # a skipped commit is that rule's, release by release
        expect = {}
        for name, outcome in self.outcomes.items():
            expected = dict(outcome)  # already a view
            if "commit_info" in expected:
                info = expected["commit_info"]
                expected["commit_info"] = {k: info[k] for k in COMMIT_INFO_KEYS[2:]}
            expect[name] = expected
        final = snapshot_view(self.model.snapshot())
        data: Json = {
            "id": f"regressions/oracle-{_digest(self.steps)}",
            "description": message or "A trace of the differential state machine.",
            "rules": sorted(rules) or ["SNAPSHOT.REPLAY"],
            "writers": self.writers,
            "steps": self.steps,
            "expect": expect,
            "expect_snapshot": {
                k: final[k]
                for k in ("version", "files", "app_txns", "domains", "properties", "protocol")
            },
        }
        if self.setup.profile is not None:
            data["profile"] = self.setup.profile
        if self.setup.config:
            data["config"] = self.setup.config
        return data

    def fail(self, message: str) -> Divergence:
        return Divergence(message, self.scenario(message))

    def _agree(self, what: str, reference: Any, results: Sequence[Any]) -> None:
        for adapter, result in zip(self.adapters, results, strict=True):
            ignored = WALL_CLOCK_FIELDS if getattr(adapter, "wall_clock", False) else ()
            if _without(result, ignored) != _without(reference, ignored):
                raise self.fail(f"{what}: model {reference!r} but {adapter.name} {result!r}")

    def begin(self, writer: str, spec: Json, version: int | None = None) -> Json | None:
        """Begin ``writer`` with its reads and actions (a scenario writer object)."""
        step: Json = {"begin": writer}
        if version is not None:
            step["version"] = version
        now = self.now
        self.writers[writer] = spec
        self._step(step)
        results = []
        typed = Writer.of(spec)
        for adapter in (self.model, *self.adapters):
            failed = adapter.begin(writer, typed.spec, version, now)
            if failed is None:
                for read in typed.reads:
                    adapter.read(writer, read)
                adapter.stage(writer, typed.actions, now)
            results.append(None if failed is None else outcome_view(failed))
        self._agree(f"begin {writer}", results[0], results[1:])
        self.outcomes[writer] = results[0] or {"pending": True}
        return results[0]

    def commit(self, writer: str) -> Json:
        now = self.now
        self._step({"commit": writer})
        results = [outcome_view(a.commit(writer, now)) for a in (self.model, *self.adapters)]
        self.outcomes[writer] = results[0]
        self._agree(f"commit {writer}", results[0], results[1:])
        return results[0]

    def checkpoint(self, version: int, parts: int | None = None) -> None:
        """Checkpoint ``version`` everywhere, in ``parts`` parts where an adapter can (the trace
        records a classic checkpoint: scenario steps have no parts)."""
        now = self.now
        self._step({"checkpoint": version})
        for adapter in (self.model, *self.adapters):
            in_parts = getattr(adapter, "checkpoint_in_parts", None)
            if parts is not None and in_parts is not None:
                in_parts(version, now, parts)
            else:
                adapter.checkpoint(version, now)

    def _optional(self, method: str) -> list[tuple[Adapter, Any]]:
        """The adapters under test that offer ``method`` (beyond the Adapter interface)."""
        found = [(a, getattr(a, method, None)) for a in self.adapters]
        return [(a, call) for a, call in found if call is not None]

    def _agree_optional(self, what: str, method: str, *args: Any) -> Any:
        reference = getattr(self.model, method)(*args)
        for adapter, call in self._optional(method):
            result = call(*args)
            if result != reference:
                raise self.fail(f"{what}: model {reference!r} but {adapter.name} {result!r}")
        return reference

    def compare_version_at(self, timestamp: int) -> Json:
        """Time travel by ``timestamp``: the version (or error) agrees."""
        answer: Json = self._agree_optional(
            f"version at timestamp {timestamp}", "version_at", timestamp, self.now
        )
        return answer

    def vacuum(self, retention_ms: int | None) -> list[str]:
        """VACUUM at the clock: the data files deleted agree with the model's."""
        what = f"VACUUM at {self.now} (retention {retention_ms})"
        deleted: list[str] = self._agree_optional(what, "vacuum", retention_ms, self.now)
        return deleted

    def compare_listing(self) -> None:
        """The commits left in the log after cleanup (RETENTION.LOG) agree."""
        self._agree_optional("listed commit versions", "listed_versions")

    def inject(self, fault: str) -> None:
        """The next commit write of each adapter that can fail fails as ``fault`` says."""
        for _, call in self._optional("inject"):
            call(fault)

    def compare_snapshots(self, version: int | None = None) -> Json:
        """The adapters' snapshots at ``version`` (latest if None) equal the model's."""
        reference = snapshot_view(self.model.snapshot(version))
        results = [snapshot_view(a.snapshot(version)) for a in self.adapters]
        self._agree(
            f"snapshot at {version if version is not None else 'latest'}", reference, results
        )
        return reference

    def compare_checkpoints(self) -> None:
        self._agree(
            "checkpointed versions",
            self.model.checkpoints(),
            [a.checkpoints() for a in self.adapters],
        )

    def history(self) -> isolation.History:
        """The committed history with each transaction's read set, from the model."""
        machine = self.model.machine
        latest = machine.log.snapshot()
        metadata = None if latest is None else latest.metadata
        types = {} if metadata is None else partition_schema(metadata)
        records = []
        for name, writer in machine.writers.items():
            if not isinstance(writer.outcome, Committed) or writer.prepared is None:
                continue
            records.append(_record(name, writer, machine))
        return isolation.History(types, tuple(sorted(records, key=lambda r: r.version)))

    def check_isolation(self) -> None:
        anomalies = isolation.check(self.history())
        if anomalies:
            raise self.fail(f"isolation anomaly: {anomalies[0].explanation}")

    def close(self) -> None:
        for adapter in (self.model, *self.adapters):
            adapter.close()


def _digest(steps: list[Json]) -> str:
    """A short name for a trace, the same in every process (``hash`` is salted per process)."""
    return hashlib.sha256(json.dumps(steps, sort_keys=True).encode()).hexdigest()[:8]


def _level(value: str | None, data_change: bool) -> isolation.Level:
    if value is not None:
        return isolation.Level(value)
    return isolation.Level.SERIALIZABLE if data_change else isolation.Level.SNAPSHOT_ISOLATION


def _record(name: str, writer: m.Writer, machine: m.Machine) -> isolation.CommitRecord:
    assert writer.prepared is not None and isinstance(writer.outcome, Committed)
    prepared, reads = writer.prepared, writer.txn.reads
    adds = {
        a.path: isolation.FileWrite(as_dict(a.partition_values), a.data_change)
        for a in prepared.actions
        if isinstance(a, AddFile)
    }
    removes = {
        r.path: isolation.FileWrite(as_dict(r.partition_values or ()), r.data_change)
        for r in prepared.actions
        if isinstance(r, RemoveFile)
    }
    data_change = any(w.data_change for w in (*adds.values(), *removes.values()))
    info = prepared.commit_info
    return isolation.CommitRecord(
        version=writer.outcome.version,
        read_version=writer.txn.read_version,
        level=_level(info.isolation_level, data_change),
        blind_append=bool(info.is_blind_append),
        read_predicates=tuple(form(p) for p in reads.predicates),
        read_files=reads.file_paths,
        read_whole_table=reads.whole_table,
        adds=adds,
        removes=removes,
        operation=writer.txn.operation.name,
        writer=name,
    )
