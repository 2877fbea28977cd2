"""Conformance verdicts: how far an adapter's result is from a vector's expectation.

Asymmetric, as a CI gate should be: **unsafe** (committed where a conflict or error is required,
or a live file set that differs: data lost or duplicated) always fails; **wrong** (a different
version, commitInfo field or table state) always fails; **spurious** (a conflict or error where
a commit is allowed) and **wrong-kind** (another conflict or error kind) fail only in strict
mode. Known issues (one file per adapter) can excuse spurious, wrong-kind and unsupported cases,
never an unsafe one; an entry whose case now passes is **stale** and must be removed.

One exception, decided by the spec and not by an adapter's list: where a rule's text says the spec
is **stricter than delta-spark on purpose** (rules.STRICTER_MARKER), delta-spark's own adapters
list the vectors of that rule as ``"stricter": true`` known issues. Such a case is reported as
``spec stricter`` and does not fail the run, whatever its verdict; an entry marked so whose rule
does not carry the marker is refused when the list is loaded (KnownIssueError).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any

from deltaspec.rules import (
    PRIMARY_LIVE_RELEASE,
    STRICTER_MARKER,
    covers,
    load_rules,
    release_of,
    stricter_than_engine,
)

from .bugs import Bug
from .judge import Divergence, judge
from .outcomes import Outcome, outcome_json, outcome_kind
from .scenarios import Expectation, RunResult, Scenario

Json = dict[str, Any]
KNOWN_ISSUES = Path(__file__).parent / "known_issues"


class Verdict(Enum):
    PASS = "pass"
    UNSAFE = "unsafe"
    WRONG = "wrong"
    WRONG_KIND = "wrong-kind"
    SPURIOUS = "spurious"
    SKIPPED = "skipped"
    ERROR = "error"  # the adapter crashed

    @property
    def severity(self) -> int:
        return _SEVERITY[self]


_SEVERITY = {
    Verdict.PASS: 0,
    Verdict.SKIPPED: 0,
    Verdict.SPURIOUS: 1,
    Verdict.WRONG_KIND: 2,
    Verdict.WRONG: 3,
    Verdict.ERROR: 3,
    Verdict.UNSAFE: 4,
}
LENIENT = frozenset({Verdict.SPURIOUS, Verdict.WRONG_KIND})


def _writer_verdict(expected: Expectation, actual: Outcome) -> Verdict:
    """How bad a writer's outcome is that does not meet ``expected`` (the judge found it)."""
    wanted = {outcome_kind(option) for option in expected.one_of}
    got = outcome_kind(actual)
    if got in {"committed", "skipped"} and "failed" in wanted and not wanted & {got}:
        return Verdict.UNSAFE if got == "committed" else Verdict.WRONG
    if got == "failed" and wanted & {"committed", "skipped"} and "failed" not in wanted:
        return Verdict.SPURIOUS
    if got == "failed" and "failed" in wanted:
        return Verdict.WRONG_KIND
    return Verdict.WRONG


@dataclass(frozen=True)
class CaseResult:
    """One vector (or fixture check) on one adapter."""

    case: str
    verdict: Verdict
    details: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    known: str | None = None  # the known-issue reason that excuses it
    stale: bool = False  # listed as a known issue but passes now
    stricter: bool = False  # the spec is stricter than this engine on purpose (its rule says so)
    failures: tuple[Json, ...] = ()
    """Structured divergences: ``{"writer"|"snapshot", "step", "verdict", "expected", "got"}``
    with JSON values (a knock-on of an earlier divergence is marked ``"knock_on": true``)."""
    bug: Bug | None = None
    """The published bug the vector reproduces (its ``bug`` field, harness/bugs.py)."""

    def fails(self, strict: bool) -> bool:
        if self.stricter and not self.stale:
            return False
        if self.verdict is Verdict.UNSAFE:
            return True
        if self.stale:
            return strict
        if self.known is not None:
            return False
        if self.verdict in LENIENT:
            return strict
        return self.verdict in {Verdict.WRONG, Verdict.ERROR}

    @property
    def label(self) -> str:
        """How a report counts this case: its verdict, or ``known`` (a listed known issue, unless
        unsafe), ``spec stricter`` (the rule is stricter than the engine on purpose) or ``stale
        known issue``."""
        if self.stale:
            return "stale known issue"
        if self.stricter:
            return "spec stricter"
        if self.known is not None and self.verdict is not Verdict.UNSAFE:
            return "known"
        return self.verdict.value

    def as_json(self) -> Json:
        out: Json = {"case": self.case, "verdict": self.verdict.value, "label": self.label,
                     "rules": list(self.rules)}  # fmt: skip
        if self.details:
            out["details"] = list(self.details)
        if self.known is not None:
            out["known_issue"] = self.known
        if self.stale:
            out["stale_known_issue"] = True
        if self.stricter:
            out["spec_stricter"] = True
        if self.failures:
            out["failures"] = list(self.failures)
        if self.bug is not None:
            out["bug"] = self.bug.as_json()
        if self.verdict not in {Verdict.PASS, Verdict.SKIPPED} and self.rules:
            first = self.rules[0]
            out["broken_rule"] = {"id": first, "title": _rule_titles().get(first),
                                  "text": f"deltaspec spec {first}"}  # fmt: skip
        return out


def _outcome_step(scenario: Scenario, writer: str) -> int | None:
    """The index of the last step that gave ``writer`` its outcome."""
    found = [i for i, step in enumerate(scenario.steps) if step.writer == writer]
    return found[-1] if found else None


def classify(scenario: Scenario, result: RunResult, *, compare_files: bool = True) -> CaseResult:
    """The verdict of one run against the vector's expectations: the judge's divergences
    (harness/judge.py) graded, the worst deciding.

    The root cause is graded: once a writer diverged, a snapshot, checkpoint list or checksum
    that differs is that divergence's knock-on (a spurious conflict leaves its files out) and
    gets the writer's verdict, not a second, worse one. Without one, a live file set that
    differs is lost or duplicated data (unsafe); anything else that differs is wrong."""
    divergences = judge(scenario, result, compare_files=compare_files).divergences
    worst, details, failures = Verdict.PASS, [], []
    for found in divergences:
        if found.subject != "writer":
            continue
        expected, writer = found.expected.as_json(), str(found.name)
        verdict = _writer_verdict(found.expected, found.got)
        got = outcome_json(found.got)
        details.append(f"{writer}: {verdict.value}: expected {_text(expected)}, got {_text(got)}")
        step = _outcome_step(scenario, writer)
        failures.append({"writer": writer, "step": step, "verdict": verdict.value,
                         "expected": expected, "got": got})  # fmt: skip
        worst = max(worst, verdict, key=lambda v: v.severity)
    writers_worst = worst
    knock_on = writers_worst is not Verdict.PASS
    for found in divergences:
        if found.subject == "writer":
            continue
        lost_data = (found.subject, found.name) == ("snapshot", "files")
        verdict = writers_worst if knock_on else Verdict.UNSAFE if lost_data else Verdict.WRONG
        detail, entry = _described(found, verdict, knock_on)
        details.append(detail)
        failures.append(entry)
        worst = max(worst, verdict, key=lambda v: v.severity)
    return CaseResult(scenario.id, worst, tuple(details), scenario.rules, failures=tuple(failures))


def _described(found: Divergence, verdict: Verdict, knock_on: bool) -> tuple[str, Json]:
    """A divergence other than a writer's as a report's detail line and structured failure."""
    want, got = found.expected, found.got
    common = {"step": None, "verdict": verdict.value, "expected": want, "got": got}
    if found.subject == "snapshot":
        label = f"{verdict.value}, knock-on" if knock_on else verdict.value
        entry = {"snapshot": found.name, **common}
        return (f"snapshot {found.name}: {label}: expected {_text(want)}, got {_text(got)}",
                {**entry, "knock_on": True} if knock_on else entry)  # fmt: skip
    if found.subject == "checkpoints":
        return (f"checkpoints: {verdict.value}: expected {want}, got {got}",
                {"checkpoints": True, **common, "knock_on": knock_on})  # fmt: skip
    return (f"checksum {found.name}: {verdict.value}: expected {_text(want)}, got {_text(got)}",
            {"checksum": found.name, **common, "knock_on": knock_on})  # fmt: skip


@cache
def _rule_titles() -> dict[str, str]:
    return {rule.id: rule.title for rule in load_rules()}


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


@dataclass(frozen=True)
class KnownIssue:
    case: str
    verdict: str  # unsafe | spurious | wrong-kind | unsupported | ...
    reason: str
    rule: str | None = None
    stricter: bool = False  # the rule's text says the spec is stricter than the engine on purpose


class KnownIssueError(ValueError):
    """A known-issue list is malformed, or claims a stricter rule whose text does not say so."""


def load_known_issues(adapter: str, path: Path | None = None) -> dict[str, KnownIssue]:
    """``known_issues/<adapter>.json`` (or ``path``): a list of ``{"scenario"|"case", "verdict",
    "reason", "rule", "stricter", "releases"}`` entries.

    A published release of an engine (``deltaspark@3.2.1``) shares its engine's list
    (``deltaspark.json``) and takes the entries whose ``releases`` (a ``Releases:`` line of
    spec/README.md, e.g. ``v3.0.0–v3.2.x, v4.4.0``) cover it; an entry without one was measured
    on the in-process engine's release only (PRIMARY_LIVE_RELEASE)."""
    name, _, release = adapter.split(":")[0].partition("@")
    source = path if path is not None else KNOWN_ISSUES / f"{name}.json"
    if not source.exists():
        return {}
    entries = json.loads(source.read_text(encoding="utf-8"))
    at = release_of(release or PRIMARY_LIVE_RELEASE)
    issues = {}
    for entry in entries:
        if not covers(entry.get("releases", f"v{PRIMARY_LIVE_RELEASE}"), at):
            continue
        case = entry.get("case", entry.get("scenario"))
        issue = KnownIssue(
            case, entry["verdict"], entry["reason"], entry.get("rule"), entry.get("stricter", False)
        )
        if issue.stricter and not _stricter_rules().get(issue.rule or "", False):
            raise KnownIssueError(
                f"{source}: {case} is listed as stricter, but rule {issue.rule} does not say "
                f"the spec is stricter than delta-spark on purpose ({STRICTER_MARKER!r})"
            )
        issues[case] = issue
    return issues


def apply_known(results: Iterable[CaseResult], known: Mapping[str, KnownIssue]) -> list[CaseResult]:
    """Mark excused failures and stale entries; an unsafe case stays failing even when listed,
    unless the spec's rule is stricter than the engine on purpose."""
    out = []
    for result in results:
        issue = known.get(result.case)
        if issue is None:
            out.append(result)
        elif result.verdict is Verdict.PASS:
            out.append(replace(result, stale=True, known=issue.reason))
        else:
            out.append(replace(result, known=issue.reason, stricter=issue.stricter))
    return out


@cache
def _stricter_rules() -> dict[str, bool]:
    return {rule.id: stricter_than_engine(rule) for rule in load_rules()}
