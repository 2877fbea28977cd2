"""The compatibility matrix: engines × suites, read from committed reports only (no engine runs).

Two sources, both written from real runs:

- ``conformance/reports/<engine>.json``, one per engine (our impl and model, delta-rs, the
  example bridges…), written by ``python -m deltaspec.conformance.tools.matrix_record``: per suite
  the run's date, command, seconds, counts and every case's label, and the engine's unsafe
  findings, each a short upstream-style report;
- ``spec/data/verified_live.json``: every live delta-spark release (tools/verified_live.py).

``deltaspec matrix`` prints it, ``--json`` gives :func:`matrix_json`, and docs/matrix.md is
:func:`markdown`, rendered by docs/hooks.py at build time. A report is *stale* where its case ids
are no longer in today's corpus, today's corpus has vectors it never judged, or its fixtures run
was made on other fixtures than the pinned ones.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from deltaspec.rules import load_rules

from ..harness.fixtures import PINNED_MANIFEST_SHA256
from ..harness.logvectors import load_log_vectors
from ..harness.scenarios import load_scenarios
from ..harness.verdicts import load_known_issues
from . import verified_live

REPORTS = Path(__file__).resolve().parents[1] / "reports"
FORMAT = 1
"""The version of the ``--json`` document and of a report file; a change that breaks a reader of
either bumps it (CHANGELOG says so)."""
VECTOR_SUITES = ("scenarios", "logs")
SUITE_ORDER = ("scenarios", "logs", "fixtures")
OURS = ("impl", "model")  # listed first: the reference the others are read against
Json = dict[str, Any]


@dataclass(frozen=True)
class SuiteRun:
    """One suite's last full run of one engine."""

    date: str
    command: str
    seconds: float | None
    counts: dict[str, int]
    stale: list[str] = field(default_factory=list)
    """Cases it judged that today's corpus no longer has (empty: none): refresh the run."""
    unjudged: int = 0
    """Vectors of today's corpus it never judged (added since; a gap, not an error)."""


@dataclass(frozen=True)
class Engine:
    """One row group of the matrix."""

    engine: str
    implementation: str
    version: str
    adapter: str
    source: str
    suites: dict[str, SuiteRun]
    findings: list[Json]
    reports: str = ""
    """What the engine's reads report (a row reader reports no files: see its bridge)."""
    unavailable: str | None = None


@cache
def corpus_ids() -> dict[str, frozenset[str]]:
    """Today's vector ids per vector suite."""
    return {
        "scenarios": frozenset(s.id for s in load_scenarios()),
        "logs": frozenset(v.id for v in load_log_vectors()),
    }


def staleness(suite: str, cases: Iterable[str], manifest: str | None = None) -> list[str]:
    """Why a run of ``suite`` that judged ``cases`` is stale today (empty: it is not): a case
    id that is no longer in the corpus, or a fixtures run on other than the pinned fixtures."""
    if suite == "fixtures":
        if manifest not in (None, PINNED_MANIFEST_SHA256):
            return [f"run on fixtures {manifest[:12]}…, pinned {PINNED_MANIFEST_SHA256[:12]}…"]
        return []
    gone = sorted(set(cases) - corpus_ids().get(suite, frozenset()))
    return [f"no longer in the corpus: {case}" for case in gone]


def _run(suite: str, run: Mapping[str, Any], cases: Iterable[str]) -> SuiteRun:
    judged = set(cases)
    stale = staleness(suite, judged, run.get("fixtures_manifest"))
    unjudged = len(corpus_ids().get(suite, frozenset()) - judged)
    return SuiteRun(run["date"], run["command"], run.get("seconds"), run["counts"], stale,
                    unjudged)  # fmt: skip


def load_report(path: Path) -> Engine:
    data: Json = json.loads(path.read_text(encoding="utf-8"))
    suites = {suite: _run(suite, run, run["cases"]) for suite, run in data["suites"].items()}
    return Engine(
        data["engine"], data["implementation"], data["version"], data["adapter"],
        f"conformance/reports/{path.name}", suites, data.get("findings", []),
        data.get("reports", ""), data.get("unavailable"),
    )  # fmt: skip


def live_releases(record: Json | None = None) -> list[Engine]:
    """Every live delta-spark release of verified_live.json, newest first."""
    record = record if record is not None else verified_live.load()
    out = []
    for release, entry in reversed(list(record["releases"].items())):
        suites = {s: _run(s, run, entry.get(s, {})) for s, run in entry.get("runs", {}).items()}
        adapter = entry["adapter"]
        out.append(Engine(
            f"delta-spark {release}", "delta-spark (Scala, JVM)", release, adapter,
            "spec/data/verified_live.json", suites, live_findings(adapter, entry),
            "everything: the in-process adapter reads the whole snapshot",
        ))  # fmt: skip
    return out


def live_findings(adapter: str, entry: Mapping[str, Any]) -> list[Json]:
    """The unsafe verdicts of one delta-spark release: what delta-spark did is its known issue's
    reason (verified_live.json keeps verdicts, not the engine's answers)."""
    known = load_known_issues(adapter)
    out = []
    for suite in VECTOR_SUITES:
        for case, judged in entry.get(suite, {}).items():
            if judged["verdict"] != "unsafe":
                continue
            issue = known.get(case)
            did = issue.reason if issue is not None else "(no known issue records what it did)"
            out.append(finding(suite, case, judged["label"], did, adapter=adapter))
    return out


@cache
def _vectors() -> dict[str, Any]:
    found: dict[str, Any] = {s.id: s for s in load_scenarios()}
    return found | {v.id: v for v in load_log_vectors()}


@cache
def _rule_titles() -> dict[str, str]:
    return {rule.id: rule.title for rule in load_rules()}


def finding(
    suite: str, case: str, label: str, did: str, expected: str = "", adapter: str = "ADAPTER"
) -> Json:
    """A short upstream-style report of one unsafe verdict: the vector, what it sets up, the rule
    and what it requires, what the engine did."""
    vector = _vectors().get(case)
    rules = list(vector.rules) if vector is not None else []
    rule = rules[0] if rules else None
    return {
        "suite": suite,
        "case": case,
        "label": label,
        "what": vector.data["description"] if vector is not None else case,
        "rule": rule,
        "requires": _rule_titles().get(rule or "", ""),
        "expected": expected,
        "engine_did": did,
        "rerun": shlex.join(
            ["deltaspec", "conformance", "--adapter", adapter, "--suite", suite, "--case", case]
        ),
    }


def engines(reports: Path = REPORTS) -> list[Engine]:
    """Every engine of the matrix: the committed reports, then each live delta-spark release."""
    found = [load_report(path) for path in reports.glob("*.json")]
    found.sort(key=lambda e: (e.engine not in OURS, e.engine))
    return found + live_releases()


def matrix_json(found: list[Engine]) -> Json:
    return {"format": FORMAT, "engines": [asdict(engine) for engine in found]}


def _counts(counts: Mapping[str, int]) -> str:
    first = [k for k in ("pass", "skipped") if k in counts]
    rest = sorted(k for k in counts if k not in first)
    return ", ".join(f"{counts[k]} {k}" for k in (*first, *rest))


def text(found: list[Engine]) -> list[str]:
    """The console matrix: one line per engine and suite, with its run's date and command."""
    lines = []
    for engine in found:
        lines.append(f"{engine.engine} ({engine.implementation}; {engine.version})")
        if engine.unavailable:
            lines.append(f"  cannot run here: {engine.unavailable}")
        for suite in (s for s in SUITE_ORDER if s in engine.suites):
            run = engine.suites[suite]
            seconds = "?" if run.seconds is None else f"{run.seconds:g} s"
            lines.append(f"  {suite:<9} {run.date} {seconds:>7}  {_counts(run.counts)}")
            lines.append(f"            $ {run.command}")
            lines += [f"            STALE: {why}" for why in run.stale]
            if run.unjudged:
                lines.append(f"            {run.unjudged} vectors added since were not judged")
    unsafe = sum(len(engine.findings) for engine in found)
    lines.append(f"{len(found)} engines; {unsafe} unsafe findings (docs/matrix.md, --json)")
    return lines


def markdown(found: list[Engine]) -> str:
    """docs/matrix.md's generated part: the matrix, the runs, the unsafe findings."""
    out = ["| engine | version | " + " | ".join(SUITE_ORDER) + " |",
           "|---|---|" + "---|" * len(SUITE_ORDER)]  # fmt: skip
    for engine in found:
        cells = [
            _counts(engine.suites[s].counts) if s in engine.suites else "—" for s in SUITE_ORDER
        ]
        name = f"{engine.engine} ({engine.implementation})"
        if engine.unavailable:
            cells = [f"cannot run here: {engine.unavailable}"] + [""] * (len(SUITE_ORDER) - 1)
        out.append(f"| {name} | {engine.version} | " + " | ".join(cells) + " |")
    out += ["", "## The runs", "", "| engine | suite | date | seconds | command |",
            "|---|---|---|---|---|"]  # fmt: skip
    for engine in found:
        for suite, run in engine.suites.items():
            stale = " **stale**" if run.stale else ""
            command = run.command.replace("|", "\\|")
            out.append(f"| {engine.engine} | {suite}{stale} | {run.date} | {run.seconds} | "
                       f"`{command}` |")  # fmt: skip
    out += ["", "## Unsafe findings", ""]
    groups: dict[str, dict[tuple[str, str], list[Engine]]] = {}
    items: dict[tuple[str, str], Json] = {}
    for engine in found:
        for item in engine.findings:
            key = (item["case"], item["engine_did"])
            groups.setdefault(engine.implementation, {}).setdefault(key, []).append(engine)
            items[key] = item
    for implementation, cases in groups.items():
        out += [f"### {implementation}", ""]
        reports = next(iter(cases.values()))[0].reports
        if reports:
            out += [f"What its reads report: {reports}.", ""]
        for key, where in cases.items():
            out += _finding_markdown(items[key], ", ".join(e.engine for e in where))
        out.append("")
    return "\n".join(out) + "\n"


def _finding_markdown(item: Mapping[str, Any], engines: str) -> list[str]:
    rule = f"`{item['rule']}` ({item['requires']})" if item["rule"] else "—"
    lines = [f"- **`{item['case']}`** ({item['suite']}, {item['label']}; {engines}): "
             f"{item['what']}", f"    - rule: {rule}"]  # fmt: skip
    if item.get("expected"):
        lines.append(f"    - required: {item['expected']}")
    lines.append(f"    - the engine: {item['engine_did']}")
    return lines
