"""Running the conformance suites on an adapter named by its registry name: what ``deltaspec
conformance`` and the vector stages of ``deltaspec check`` (conformance/oracle/stages) both run."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

from deltaspec.extras import available, install_hint
from deltaspec.rules import load_rules

from .engines.model.reader import model_states
from .engines.registry import UnknownAdapter, adapter_factory, table_reader
from .harness import fixtures, suites
from .harness.adapter import Adapter
from .harness.gate import judge_coverage, not_for_release, parse_release
from .harness.logvectors import load_log_vectors, run_log_vectors
from .harness.progress import Progress
from .harness.reporting import console
from .harness.scenarios import load_scenarios
from .harness.selection import Selection
from .harness.suites import cite
from .harness.transcript import Recorder, write_trace
from .harness.verdicts import CaseResult, Verdict, apply_known, load_known_issues
from .writes.suite import run_writes

if TYPE_CHECKING:
    from collections.abc import Callable

    from .harness.adapter import Adapter
    from .harness.gate import Gate
    from .harness.logvectors import LogVector
    from .harness.reading import TableReader
    from .harness.scenarios import Scenario
    from .harness.suites import Report
    from .harness.verdicts import CaseResult, KnownIssue

DEFAULT_FIXTURES = Path(
    os.environ.get(
        "DELTASPEC_FIXTURES",
        Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "delta-spark",
    )
)


def fixtures_dir(given: Path | None) -> Path:
    return (given or DEFAULT_FIXTURES).resolve()


def missing_prerequisite(suite: str, fixtures: Path | None) -> str | None:
    """Why ``suite`` cannot run on this install (None: it can)."""
    if suite in {"fixtures", "writes"} and not (fixtures_dir(fixtures) / "MANIFEST.json").is_file():
        return (
            f"no delta-spark fixtures at {fixtures_dir(fixtures)}: pass --fixtures DIR or "
            "set DELTASPEC_FIXTURES"
        )
    if suite == "writes" and not available("pyspark"):
        return f"the writes suite needs pyspark: {install_hint('spark')}"
    return None


@dataclass(frozen=True)
class RunOptions:
    """What ``deltaspec conformance`` was asked beyond adapter and suites: the cases chosen, the
    coverage gate, where to trace failing vectors, whether the spec's own corpus is included."""

    selection: Selection = Selection()
    gate: Gate | None = None
    trace: Path | None = None
    include_spec: bool = True
    stop_at_first_failure: bool = False
    """End the run at the first failing case: the rest of its suite and the later suites are
    not run (a seeded bug's run needs one failure, not all of them)."""


@dataclass(frozen=True)
class Corpus:
    """Where the vectors and tables come from, and how failures count."""

    scenario_dirs: list[Path]
    fixtures_dir: Path | None
    pinned: str | None
    strict: bool
    known_issues: Path | None


def run_suites(
    adapter: str, chosen: list[str], corpus: Corpus, options: RunOptions | None = None
) -> Report:
    options = options or RunOptions()
    report = suites.Report(adapter, corpus.strict)
    known = load_known_issues(adapter, corpus.known_issues)
    capabilities: frozenset[str] = frozenset()
    if "scenarios" in chosen:
        results, capabilities = _scenario_suite(adapter, corpus, options, known)
        report.suites["scenarios"] = apply_known(results[0], known) + results[1]
    if options.stop_at_first_failure and report.failures():
        return report
    if "fixtures" in chosen or "logs" in chosen:
        with table_reader(adapter) as reader:
            for suite in ("fixtures", "logs"):
                if suite in chosen:
                    report.suites[suite] = _read_suite(
                        suite, reader, adapter, corpus, options, known
                    )
            capabilities |= frozenset() if reader is None else frozenset({"read_table"})
    if "writes" in chosen:
        writes = run_writes(adapter, fixtures_dir(corpus.fixtures_dir))
        selected = [r for r in writes if options.selection.matches(r.case, r.rules)]
        report.suites["writes"] = apply_known(selected, known)
    if options.gate is not None:
        if "scenarios" not in chosen and options.gate.require:
            capabilities |= _declared(adapter)
        everything = [r for rs in report.suites.values() for r in rs]
        report.coverage = judge_coverage(options.gate, capabilities, everything)
    return report


def _scenario_suite(
    adapter: str, corpus: Corpus, options: RunOptions, known: dict[str, KnownIssue]
) -> tuple[tuple[list[CaseResult], list[CaseResult]], frozenset[str]]:
    """The scenario vectors chosen: (run, declined for ``--profile``) and the capabilities."""
    vectors = [
        v
        for v in load_scenarios(corpus.scenario_dirs, include_spec=options.include_spec)
        if options.selection.matches(v.id, v.rules)
    ]
    declined: list[CaseResult] = []
    if options.gate is not None and options.gate.profile is not None:
        declined, vectors = _declined_for_release(vectors, options.gate.profile)
    stop = partial(_fails, known, corpus.strict) if options.stop_at_first_failure else None
    results, capabilities = _scenario_results(adapter, vectors, options, stop)
    return (cite(results, vectors), cite(declined, vectors)), capabilities


def _fails(known: dict[str, KnownIssue], strict: bool, result: CaseResult) -> bool:
    """Whether ``result`` fails the run once the known issues excuse what they excuse."""
    return apply_known([result], known)[0].fails(strict)


def _declined_for_release(
    vectors: list[Scenario], profile: str
) -> tuple[list[CaseResult], list[Scenario]]:
    """The vectors not for release ``profile`` (skipped, with why) and the others."""
    release = parse_release(profile)
    rules = {rule.id: rule for rule in load_rules()}
    reasons = {v.id: not_for_release(v, release, rules) for v in vectors}
    declined = [
        CaseResult(v.id, Verdict.SKIPPED, (f"not for {profile}: {why}",), v.rules)
        for v in vectors
        if (why := reasons[v.id]) is not None
    ]
    return declined, [v for v in vectors if reasons[v.id] is None]


def _scenario_results(
    adapter: str,
    vectors: list[Scenario],
    options: RunOptions,
    stop: Callable[[CaseResult], bool] | None = None,
) -> tuple[list[CaseResult], frozenset[str]]:
    progress = Progress(f"{adapter} scenarios", len(vectors))
    transcripts: list[list[str]] = []
    with adapter_factory(adapter) as factory, tempfile.TemporaryDirectory() as scratch:
        capabilities = _probe(factory, Path(scratch))

        def traced(root: Path) -> Adapter:
            transcripts.append([])
            return cast(Adapter, Recorder(factory(root), transcripts[-1]))

        chosen = traced if options.trace is not None else factory
        results = suites.run_scenario_suite(chosen, vectors, progress=progress, stop=stop)
    progress.finish()
    if options.trace is not None:
        for result, lines in zip(results, transcripts, strict=True):
            if result.fails(strict=True) and result.verdict is not Verdict.SKIPPED:
                write_trace(options.trace, result.case, lines)
    return results, capabilities


def _probe(factory: Callable[[Path], Adapter], scratch: Path) -> frozenset[str]:
    """The capabilities an adapter declares (a fresh adapter, closed untouched)."""
    probe = factory(scratch)
    try:
        return frozenset(c.value for c in probe.capabilities)
    finally:
        probe.close()


def _declared(adapter: str) -> frozenset[str]:
    """The declared capabilities when no scenario suite ran (for --require)."""
    try:
        with adapter_factory(adapter) as factory, tempfile.TemporaryDirectory() as scratch:
            return _probe(factory, Path(scratch))
    except UnknownAdapter:  # a reader-only name (deltaspark before its adapter)
        return frozenset()


def _read_suite(
    suite: str,
    reader: TableReader | None,
    adapter: str,
    corpus: Corpus,
    options: RunOptions,
    known: dict[str, KnownIssue],
) -> list[CaseResult]:
    """A suite that reads tables on disk: ``fixtures`` or ``logs`` (log vectors)."""
    if reader is None:
        why = f"{adapter} cannot read tables on disk (no read_table)"
        return [CaseResult(suite, Verdict.SKIPPED, (why,))]
    if suite == "fixtures":
        directory = fixtures_dir(corpus.fixtures_dir)

        tables = [
            t
            for t in fixtures.load_manifest(directory, pinned=corpus.pinned)
            if options.selection.may_select_under(f"fixtures/{t.name}/")
        ]
        progress = Progress(f"{adapter} fixtures", len(tables))
        results = fixtures.run_fixtures(reader, directory, expected_states=model_states,
                                        progress=progress, tables=tables)  # fmt: skip
    else:
        # --only DIR: that directory's log vectors alone
        extra = [] if options.include_spec else corpus.scenario_dirs
        chosen = [
            v
            for v in load_log_vectors(extra, include_spec=options.include_spec)
            if options.selection.matches(v.id, v.rules)
        ]
        vectors = _for_profile(chosen, options)
        progress = Progress(f"{adapter} logs", len(vectors))
        results = suites.cite(run_log_vectors(reader, vectors, progress=progress), vectors)
    progress.finish()
    return apply_known([r for r in results if options.selection.matches(r.case, r.rules)], known)


def _for_profile(vectors: list[LogVector], options: RunOptions) -> list[LogVector]:
    """The log vectors that apply under ``--profile``: as a scenario vector for the newest
    release does (gate.not_for_release: its rules hold then, and behave as at the newest)."""
    if options.gate is None or options.gate.profile is None:
        return vectors

    rules = {rule.id: rule for rule in load_rules()}
    release = parse_release(options.gate.profile)
    return [v for v in vectors if not_for_release(v, release, rules) is None]


def print_report(report: Report, corpus: list[str] | None = None) -> None:
    print("\n".join(console(report, corpus or [])))
