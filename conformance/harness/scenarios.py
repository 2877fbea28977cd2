"""Scenario vectors: loading, schema validation, and judging an adapter's results.

The vectors are language-neutral JSON (spec/scenarios.md). An adapter runs a
scenario and reports, per writer, an outcome in the same JSON shape as the
expectations, plus the final snapshot; this module decides pass or fail.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Protocol

import jsonschema

from deltaspec.rules import spec_root

Json = dict[str, Any]


class ScenarioError(ValueError):
    """A scenario file that is not valid JSON or does not match the schema."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source


@dataclass(frozen=True)
class Scenario:
    source: str
    data: Json

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(self.data["rules"])


@dataclass(frozen=True)
class RunResult:
    """What an adapter observed: outcome per writer (expectation-shaped JSON) and final snapshot."""

    outcomes: Mapping[str, Json]
    snapshot: Json = field(default_factory=dict)
    checkpoints: tuple[int, ...] | None = None  # only for vectors with expect_checkpoints
    checksums: Mapping[str, Json | None] | None = None  # only for vectors with expect_checksums


class ScenarioRunner(Protocol):
    def __call__(self, scenario: Scenario) -> RunResult: ...


@dataclass(frozen=True)
class Verdict:
    scenario: Scenario
    failures: tuple[str, ...]
    error: str | None = None

    @property
    def passed(self) -> bool:
        return not self.failures and self.error is None


def schema_string(columns: list[Json]) -> str:
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
    errors = sorted(
        jsonschema.Draft202012Validator(schema()).iter_errors(data), key=lambda e: list(e.path)
    )
    if errors:
        where = "/".join(str(p) for p in errors[0].path) or "(root)"
        raise ScenarioError(source, f"schema violation at {where}: {errors[0].message}")
    return Scenario(source, data)


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


def _outcome_matches(expected: Json, actual: Json) -> bool:
    for key in ("committed", "conflict", "error", "skipped", "pending"):
        if key in expected and expected[key] != actual.get(key):
            return False
    if "winner" in expected and expected["winner"] != actual.get("winner"):
        return False
    written = actual.get("commit_info", {})
    return all(written.get(k) == v for k, v in expected.get("commit_info", {}).items())


def expectation_met(expected: Json, actual: Json) -> bool:
    options = expected.get("one_of", [expected])
    return any(_outcome_matches(option, actual) for option in options)


def _snapshot_failures(expected: Json, actual: Json) -> list[str]:
    failures = []
    for key, want in expected.items():
        got = actual.get(key)
        if key in {"files", "tombstones"}:
            want, got = sorted(want), sorted(got or [])
        if want != got:
            failures.append(f"snapshot {key}: expected {want!r}, got {got!r}")
    return failures


def checksum_fields(result: RunResult, version: str, want: Json) -> Json | None:
    """The fields ``want`` names of the ``<version>.crc`` the run left (None: no file), to
    compare with ``expect_checksums`` (CHECKSUM.WRITE)."""
    found = (result.checksums or {}).get(version)
    return None if found is None else {k: found.get(k) for k in want}


def judge(scenario: Scenario, result: RunResult) -> Verdict:
    failures = []
    for writer, expected in scenario.data["expect"].items():
        actual = result.outcomes.get(writer, {"pending": True})
        if not expectation_met(expected, actual):
            failures.append(f"writer {writer}: expected {expected}, got {actual}")
    failures += _snapshot_failures(scenario.data.get("expect_snapshot", {}), result.snapshot)
    for version, want in scenario.data.get("expect_checksums", {}).items():
        got = checksum_fields(result, version, want)
        if got != want:
            failures.append(f"checksum {version}: expected {want!r}, got {got!r}")
    return Verdict(scenario, tuple(failures))


def run_all(scenarios: Iterable[Scenario], runner: ScenarioRunner) -> list[Verdict]:
    verdicts = []
    for scenario in scenarios:
        try:
            verdicts.append(judge(scenario, runner(scenario)))
        except Exception as error:  # an adapter crash is a failed vector, reported as such
            verdicts.append(Verdict(scenario, (), f"{type(error).__name__}: {error}"))
    return verdicts
