"""Scenario vectors: loading, schema validation, and the vector as typed values.

The vectors are language-neutral JSON (spec/scenarios.md, spec/scenario.schema.json). A vector is
validated against the schema once, when it is loaded, and parsed into frozen values
(:class:`Scenario` and the types below, named after the JSON keys in snake_case); the runner, the
adapters and the judge (harness/judge.py) read those. A writer's reads, staged actions and
expected outcomes are the typed values of harness/reads.py, harness/actions.py and
harness/outcomes.py, as are the setup commits; only the initial ``table`` stays the vector's JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, ClassVar

import jsonschema

from deltaspec.rules import spec_root

from .actions import Action, parse_action
from .actions import Protocol as ProtocolAction
from .adapter import TableSetup, WriterSpec
from .bugs import Bug
from .outcomes import Outcome, meets, outcome_json, parse_outcome
from .reads import Read, parse_read
from .snapshots import RowIds, TableSnapshot, parse_snapshot

Json = dict[str, Any]


class ScenarioError(ValueError):
    """A scenario file that is not valid JSON or does not match the schema."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source


@dataclass(frozen=True)
class Expectation:
    """A writer's expected outcome: any of ``one_of`` (one outcome unless the vector lists
    several)."""

    one_of: tuple[Outcome, ...]

    @classmethod
    def of(cls, data: Json) -> Expectation:
        return cls(tuple(parse_outcome(o) for o in data.get("one_of", [data])))

    def as_json(self) -> Json:
        if len(self.one_of) == 1:
            return outcome_json(self.one_of[0])
        return {"one_of": [outcome_json(o) for o in self.one_of]}

    def met_by(self, actual: Outcome) -> bool:
        return any(meets(actual, option) for option in self.one_of)


@dataclass(frozen=True)
class Writer:
    """One transaction of the vector (spec/scenarios.md, Writers), its ``reads`` and ``actions``
    typed."""

    operation: str = "WRITE"
    changes_data: bool | None = None
    reads: tuple[Read, ...] = ()
    actions: tuple[Action, ...] = ()
    commit_if_needed: bool = True

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Writer:
        spec = WriterSpec.of(data)
        reads = tuple(parse_read(r) for r in data.get("reads", []))
        actions = tuple(parse_action(a) for a in data.get("actions", []))
        return cls(spec.operation, spec.changes_data, reads, actions, spec.commit_if_needed)

    @property
    def spec(self) -> WriterSpec:
        return WriterSpec(self.operation, self.changes_data, self.commit_if_needed)


@dataclass(frozen=True, kw_only=True)
class StepBase:
    """What every step has: its clock (ms; None: the step's index in ``steps``)."""

    KIND: ClassVar[str]
    time: int | None = None

    def now(self, index: int) -> int:
        return index if self.time is None else self.time

    @property
    def writer(self) -> str | None:
        """The writer the step acts for (None: a checkpoint or log cleanup)."""
        return None


@dataclass(frozen=True, kw_only=True)
class WriterStep(StepBase):
    """A step that acts for a writer, named by the step's key."""

    @property
    def writer(self) -> str:
        return str(getattr(self, self.KIND))


@dataclass(frozen=True, kw_only=True)
class Begin(WriterStep):
    """Open writer ``begin``'s transaction on ``version`` (None: the latest; -1: no table),
    record its reads and stage its actions."""

    KIND: ClassVar[str] = "begin"
    begin: str
    version: int | None = None


@dataclass(frozen=True, kw_only=True)
class Commit(WriterStep):
    """Run writer ``commit``'s whole commit loop."""

    KIND: ClassVar[str] = "commit"
    commit: str


@dataclass(frozen=True, kw_only=True)
class TryWrite(WriterStep):
    """One put-if-absent attempt of writer ``try_write`` at its attempt version."""

    KIND: ClassVar[str] = "try_write"
    try_write: str


@dataclass(frozen=True, kw_only=True)
class Resolve(WriterStep):
    """Check the winners since writer ``resolve``'s last attempt."""

    KIND: ClassVar[str] = "resolve"
    resolve: str


@dataclass(frozen=True, kw_only=True)
class Checkpoint(StepBase):
    """Write a checkpoint of version ``checkpoint``."""

    KIND: ClassVar[str] = "checkpoint"
    checkpoint: int


@dataclass(frozen=True, kw_only=True)
class CleanUpLog(StepBase):
    """Delete the log's files of every version below ``clean_up_log``, a checkpointed version."""

    KIND: ClassVar[str] = "clean_up_log"
    clean_up_log: int


Step = Begin | Commit | TryWrite | Resolve | Checkpoint | CleanUpLog
_STEPS: tuple[type[Step], ...] = (Begin, Checkpoint, CleanUpLog, Commit, TryWrite, Resolve)
"""The step kinds, in the order a step naming several is read as the first."""


def _step(data: Json, source: str) -> Step:
    kind = next((k for k in _STEPS if k.KIND in data), None)
    if kind is None:
        raise ScenarioError(source, f"a step names no action: {data}")
    if kind is Begin:
        return Begin(begin=data["begin"], version=data.get("version"), time=data.get("time"))
    return kind(**{kind.KIND: data[kind.KIND]}, time=data.get("time"))


@dataclass(frozen=True)
class MatrixCell:
    """The conflict-matrix cell a vector realises (spec/data/conflict_matrix.json)."""

    winner: str
    loser: str
    isolation: str
    partitions: str


SNAPSHOT_KEYS = ("version", "files", "tombstones", "app_txns", "domains", "properties",
                 "protocol", "row_ids")  # fmt: skip


@dataclass(frozen=True)
class ExpectedSnapshot:
    """The latest snapshot after all steps, as far as the vector gives it (None: not checked);
    each field in the adapters' snapshot shape (harness/adapter.py)."""

    version: int | None = None
    files: tuple[str, ...] | None = None
    tombstones: tuple[str, ...] | None = None
    app_txns: Mapping[str, int] | None = None
    domains: Mapping[str, str] | None = None
    properties: Mapping[str, str] | None = None
    protocol: ProtocolAction | None = None
    row_ids: Mapping[str, RowIds] | None = None
    order: tuple[str, ...] = field(default=(), compare=False, repr=False)
    """The fields given, in the vector's order (reports list differences in it)."""

    @classmethod
    def of(cls, data: Json) -> ExpectedSnapshot:
        values: dict[str, Any] = {
            k: tuple(v) if k in {"files", "tombstones"} else v for k, v in data.items()
        }
        if "protocol" in data:
            values["protocol"] = ProtocolAction.of(data["protocol"])
        if "row_ids" in data:
            values["row_ids"] = {path: tuple(ids) for path, ids in data["row_ids"].items()}
        return cls(**values, order=tuple(data))

    def items(self) -> Iterator[tuple[str, Any]]:
        """The fields given, by their JSON name, typed as the snapshot's
        (harness/snapshots.py)."""
        for key in self.order:
            yield key, getattr(self, key)


CHECKSUM_FIELDS = {
    "tableSizeBytes": "table_size_bytes",
    "numFiles": "num_files",
    "numMetadata": "num_metadata",
    "numProtocol": "num_protocol",
    "inCommitTimestampOpt": "in_commit_timestamp_opt",
    "fileSizeHistogram": "file_size_histogram",
}


@dataclass(frozen=True)
class ExpectedChecksum:
    """Fields of the ``<v>.crc`` the writer of a version left (CHECKSUM.WRITE); None: not
    checked."""

    table_size_bytes: int | None = None
    num_files: int | None = None
    num_metadata: int | None = None
    num_protocol: int | None = None
    in_commit_timestamp_opt: int | None = None
    file_size_histogram: Json | None = None
    """``sortedBinBoundaries``, ``fileCounts`` and ``totalBytes``, each in full."""

    @classmethod
    def of(cls, data: Json) -> ExpectedChecksum:
        return cls(**{CHECKSUM_FIELDS[k]: v for k, v in data.items()})

    def as_json(self) -> Json:
        """The fields given, by their names in the checksum file."""
        given = {key: getattr(self, name) for key, name in CHECKSUM_FIELDS.items()}
        return {key: value for key, value in given.items() if value is not None}


@dataclass(frozen=True)
class Scenario:
    """One scenario vector, typed (spec/scenarios.md; field names are its JSON keys).

    ``data`` is the vector's JSON as read, kept for what needs the document itself rather than
    its meaning: the digest of a vector in spec/data/verified_live.json
    (conformance/tools/verified_live.py) and tests that derive a variant of a vector and parse it
    again (:meth:`of`)."""

    source: str
    id: str
    description: str
    rules: tuple[str, ...]
    writers: Mapping[str, Writer]
    steps: tuple[Step, ...]
    expect: Mapping[str, Expectation]
    profile: str | None = None
    matrix_cell: MatrixCell | None = None
    config: Json = field(default_factory=dict)
    table: Json | None = None
    commits: tuple[tuple[Action, ...], ...] = ()
    expect_snapshot: ExpectedSnapshot = ExpectedSnapshot()
    expect_checkpoints: tuple[int, ...] | None = None
    expect_checksums: Mapping[int, ExpectedChecksum] | None = None
    bug: Bug | None = None
    data: Json = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, data: Json, source: str) -> Scenario:
        """The typed vector of ``data`` (already checked against the schema: :func:`parse_scenario`
        does both; fields the schema requires and a partial vector leaves out are empty)."""
        cell = data.get("matrix_cell")
        checkpoints = data.get("expect_checkpoints")
        checksums = data.get("expect_checksums")
        crcs = None if checksums is None else {int(v): ExpectedChecksum.of(c)
                                               for v, c in checksums.items()}  # fmt: skip
        return cls(
            source,
            str(data["id"]),
            data.get("description", ""),
            tuple(data["rules"]),
            {name: Writer.of(w) for name, w in data.get("writers", {}).items()},
            tuple(_step(step, source) for step in data.get("steps", [])),
            {name: Expectation.of(e) for name, e in data["expect"].items()},
            data.get("profile"),
            None if cell is None else MatrixCell(**cell),
            dict(data.get("config", {})),
            data.get("table"),
            tuple(tuple(parse_action(a) for a in c) for c in data.get("commits", [])),
            ExpectedSnapshot.of(data.get("expect_snapshot", {})),
            None if checkpoints is None else tuple(checkpoints),
            crcs,
            Bug.of(data.get("bug"), data["rules"]),
            data,
        )

    @property
    def setup(self) -> TableSetup:
        """The world before the first step, as the adapters' ``create`` takes it."""
        return TableSetup(self.profile, dict(self.config), self.table, self.commits)


@dataclass(frozen=True)
class RunResult:
    """What an adapter observed: outcome per writer and the final snapshot."""

    outcomes: Mapping[str, Outcome]
    snapshot: TableSnapshot = TableSnapshot()
    checkpoints: tuple[int, ...] | None = None  # only for vectors with expect_checkpoints
    checksums: Mapping[int, Json | None] | None = None  # only for vectors with expect_checksums

    @classmethod
    def of(
        cls,
        outcomes: Mapping[str, Mapping[str, Any]],
        snapshot: Mapping[str, Any] | None = None,
        checkpoints: tuple[int, ...] | None = None,
        checksums: Mapping[int, Json | None] | None = None,
    ) -> RunResult:
        """A run written in the vectors' JSON (outcomes and snapshot), typed."""
        return cls(
            {name: parse_outcome(o) for name, o in outcomes.items()},
            parse_snapshot(snapshot or {}),
            checkpoints,
            checksums,
        )


def schema_string(columns: Iterable[Mapping[str, Any]]) -> str:
    """A scenario's column list as Spark's schema JSON (metaData.schemaString)."""
    fields = [
        {"name": c["name"], "type": c["type"], "nullable": c.get("nullable", True), "metadata": {}}
        for c in columns
    ]
    return json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"))


@cache
def schema() -> Json:
    loaded: Json = json.loads((spec_root() / "scenario.schema.json").read_text(encoding="utf-8"))
    return loaded


def parse_scenario(text: str, source: str) -> Scenario:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ScenarioError(source, f"not JSON: {error}") from error
    return validated_scenario(data, source)


def validated_scenario(data: Any, source: str) -> Scenario:
    """The vector of an already decoded JSON document, checked against the schema first
    (ScenarioError naming ``source`` otherwise)."""
    errors = sorted(
        jsonschema.Draft202012Validator(schema()).iter_errors(data), key=lambda e: list(e.path)
    )
    if errors:
        where = "/".join(str(p) for p in errors[0].path) or "(root)"
        raise ScenarioError(source, f"schema violation at {where}: {errors[0].message}")
    return Scenario.of(data, source)


def _walk(root: Traversable, prefix: str) -> Iterator[tuple[str, Traversable]]:
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        name = f"{prefix}{entry.name}"
        if entry.is_dir():
            yield from _walk(entry, f"{name}/")
        elif entry.name.endswith(".json"):
            yield name, entry


def load_scenarios(
    directories: Iterable[Path | Traversable] = (), *, include_spec: bool = True
) -> list[Scenario]:
    """The spec's own vectors (spec/scenarios/; not with ``include_spec=False``), plus any extra
    directories given."""
    roots: list[Path | Traversable] = [spec_root() / "scenarios"] if include_spec else []
    roots += directories
    scenarios: list[Scenario] = []
    for root in roots:
        for name, entry in _walk(root, ""):
            scenarios.append(parse_scenario(entry.read_text(encoding="utf-8"), f"{root}/{name}"))
    ids = [s.id for s in scenarios]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ScenarioError("scenarios", f"duplicate ids: {duplicates}")
    return scenarios
