"""``deltaspec conformance``: run a corpus against one adapter and report asymmetric verdicts.

Suites: ``scenarios`` (spec/scenarios and extra directories, through harness/runner.py),
``fixtures`` (delta-spark-written tables, harness/fixtures.py), ``logs`` (log vectors,
harness/logvectors.py) and ``writes`` (what the Spark path writes against what delta-spark wrote,
conformance/writes). Adapters by name: engines/registry.py.
"""

from __future__ import annotations

import json
import logging
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from .adapter import Adapter, Unsupported
from .bugs import Bug
from .gate import Coverage
from .runner import run_scenario
from .scenarios import Scenario
from .verdicts import CaseResult, Verdict, classify

AdapterFactory = Callable[[Path], Adapter]


def run_scenario_suite(
    factory: AdapterFactory,
    scenarios: Sequence[Scenario],
    *,
    compare_files: bool = True,
    progress: Callable[[str], None] | None = None,
    stop: Callable[[CaseResult], bool] | None = None,
) -> list[CaseResult]:
    """Run and judge each of ``scenarios`` on a fresh adapter in its own scratch directory; an
    adapter's crash fails the vector. With ``stop``, the suite ends after the first result it
    holds true for (a mutant's run needs one failing vector, not all of them)."""
    results: list[CaseResult] = []
    for scenario in scenarios:
        if stop is not None and results and stop(results[-1]):
            break
        if progress is not None:
            progress(scenario.id)
        with (
            tempfile.TemporaryDirectory(prefix="deltaspec-conformance-") as scratch,
            kept_logs() as logged,
        ):
            try:
                result = run_scenario(factory(Path(scratch)), scenario)
            except Unsupported as unsupported:
                results.append(
                    CaseResult(scenario.id, Verdict.SKIPPED, (str(unsupported),), scenario.rules)
                )
                continue
            except Exception as error:  # an adapter (or bridge) crash fails the vector
                results.append(
                    CaseResult(
                        scenario.id,
                        Verdict.ERROR,
                        (f"{type(error).__name__}: {error}",),
                        scenario.rules,
                    )
                )
                continue
        results.append(_with_logs(classify(scenario, result, compare_files=compare_files), logged))
    return results


class Cited(Protocol):
    """A vector: a scenario or a log vector."""

    @property
    def id(self) -> str: ...

    @property
    def bug(self) -> Bug | None: ...


def cite(results: Iterable[CaseResult], vectors: Iterable[Cited]) -> list[CaseResult]:
    """``results`` with the published bug of the vector each judged, when it has one."""
    bugs = {v.id: v.bug for v in vectors if v.bug is not None}
    return [replace(r, bug=bugs[r.case]) if r.case in bugs else r for r in results]


class _Kept(logging.Handler):
    def __init__(self, lines: list[str]) -> None:
        super().__init__()
        self.lines = lines

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"logged {record.levelname.lower()}: {record.getMessage()}")


@contextmanager
def kept_logs(name: str = "deltaspec") -> Iterator[list[str]]:
    """What the ``name`` loggers say while a vector runs, kept instead of printed: a vector that
    sets up what an implementation warns of (a checkpoint interval of 0, a commit with no
    metadata to checksum) expects the warning, and a passing run prints nothing."""
    lines: list[str] = []
    logger = logging.getLogger(name)
    handler, propagate = _Kept(lines), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def _with_logs(result: CaseResult, logged: list[str]) -> CaseResult:
    """A failing case shows what was logged while it ran; a passing one drops it."""
    if result.verdict in {Verdict.PASS, Verdict.SKIPPED} or not logged:
        return result
    return replace(result, details=(*result.details, *logged))


@dataclass
class Report:
    adapter: str
    strict: bool
    suites: dict[str, list[CaseResult]] = field(default_factory=dict)
    coverage: Coverage | None = None  # what the run covered against the gate (gate.py)

    def failures(self) -> list[CaseResult]:
        return [r for results in self.suites.values() for r in results if r.fails(self.strict)]

    def passed(self) -> bool:
        return not self.failures() and not (self.coverage and self.coverage.problems)

    def unsafe(self) -> list[CaseResult]:
        """Unsafe cases, but for those where the spec is stricter than the engine on purpose."""
        return [
            r
            for rs in self.suites.values()
            for r in rs
            if r.verdict is Verdict.UNSAFE and not (r.stricter and not r.stale)
        ]

    def counts(self) -> dict[str, Counter[str]]:
        table: dict[str, Counter[str]] = {}
        for suite, results in self.suites.items():
            counter: Counter[str] = Counter()
            for r in results:
                counter[r.label] += 1
            table[suite] = counter
        return table

    def as_json(self) -> dict[str, Any]:
        return {
            "adapter": self.adapter,
            "strict": self.strict,
            "passed": self.passed(),
            "counts": {s: dict(c) for s, c in self.counts().items()},
            **(
                {}
                if self.coverage is None
                else {
                    "coverage": {
                        "ran": self.coverage.ran,
                        "capabilities": sorted(self.coverage.capabilities),
                        "problems": self.coverage.problems,
                    }
                }
            ),
            "suites": {s: [r.as_json() for r in rs] for s, rs in self.suites.items()},
        }

    def table(self) -> str:
        """The verdict table: one row per suite, one column per verdict."""
        counts = self.counts()
        labels = sorted({label for c in counts.values() for label in c})
        lines = [
            "| suite | " + " | ".join(labels) + " |",
            "|---|" + "---|" * len(labels),
        ]
        for suite, counter in counts.items():
            lines.append(
                f"| {suite} | " + " | ".join(str(counter.get(x, 0)) for x in labels) + " |"
            )
        return "\n".join(lines)

    def markdown(self) -> str:
        out = [f"# Conformance: `{self.adapter}`", "", self.table(), ""]
        failing = self.failures()
        mode = " (strict)" if self.strict else ""
        out.append(
            f"**{'PASS' if self.passed() else 'FAIL'}**{mode}: {len(failing)} failing cases."
        )
        sections = (
            ("Failing", failing),
            (
                "Known issues",
                [
                    r
                    for rs in self.suites.values()
                    for r in rs
                    if r.known is not None and not r.stale
                ],
            ),
            (
                "Stale known issues (remove them)",
                [r for rs in self.suites.values() for r in rs if r.stale],
            ),
            (
                "Skipped",
                [
                    r
                    for rs in self.suites.values()
                    for r in rs
                    if r.verdict is Verdict.SKIPPED and r.known is None
                ],
            ),
        )
        for title, cases in sections:
            if not cases:
                continue
            out += [
                "",
                f"## {title}",
                "",
                "| case | verdict | rules | details |",
                "|---|---|---|---|",
            ]
            for r in cases:
                detail = "; ".join(r.details).replace("|", "\\|")[:400]
                if r.known:
                    detail = f"known: {r.known}. {detail}"
                out.append(f"| {r.case} | {r.verdict.value} | {', '.join(r.rules)} | {detail} |")
        return "\n".join(out) + "\n"


def write_reports(report: Report, json_path: Path | None, markdown_path: Path | None) -> None:
    if json_path is not None:
        json_path.write_text(json.dumps(report.as_json(), indent=2) + "\n", encoding="utf-8")
    if markdown_path is not None:
        markdown_path.write_text(report.markdown(), encoding="utf-8")
