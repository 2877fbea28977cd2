"""The ``deltaspec conformance`` and ``deltaspec check`` commands."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from deltaspec.conformance.harness.selection import Selection

if TYPE_CHECKING:
    from deltaspec.conformance.harness.gate import Gate
    from deltaspec.conformance.harness.suites import Report
    from deltaspec.conformance.harness.verdicts import CaseResult

EXIT_CODES = (
    "exit codes: 0 pass; 1 a case failed (unsafe, wrong, error; with --strict also spurious, "
    "wrong-kind, stale known issue); 2 usage or set-up error (unknown adapter, a bridge program "
    "that does not start, a bad corpus or option); 3 coverage not met (a --require'd capability "
    "is missing, or fewer than --min-cases cases ran)"
)

# Only the standard library at import time: the ``deltaspec`` command builds these parsers on
# every start, and the suites pull in pyarrow, the model and the impl.
SUITES = ("scenarios", "fixtures", "writes", "logs")

DEFAULT_FIXTURES = Path(
    os.environ.get(
        "DELTASPEC_FIXTURES",
        Path(__file__).resolve().parents[3] / ".." / "shared" / "fixtures" / "delta-spark",
    )
)


def _fixtures_dir(given: Path | None) -> Path:
    return (given or DEFAULT_FIXTURES).resolve()


def missing_prerequisite(suite: str, fixtures_dir: Path | None) -> str | None:
    """Why ``suite`` cannot run on this install (None: it can)."""
    from deltaspec.extras import available

    if (
        suite in {"fixtures", "writes"}
        and not (_fixtures_dir(fixtures_dir) / "MANIFEST.json").is_file()
    ):
        return (
            f"no delta-spark fixtures at {_fixtures_dir(fixtures_dir)}: pass --fixtures DIR or "
            "set DELTASPEC_FIXTURES"
        )
    if suite == "writes" and not available("pyspark"):
        return "the writes suite needs pyspark: pip install 'deltaspec[spark]'"
    return None


@dataclass(frozen=True)
class RunOptions:
    """What ``deltaspec conformance`` was asked beyond adapter and suites: the cases chosen, the
    coverage gate, where to trace failing vectors, whether the spec's own corpus is included."""

    selection: Selection = Selection()
    gate: Gate | None = None
    trace: Path | None = None
    include_spec: bool = True


def _scenario_results(
    adapter: str, vectors: list[Any], options: RunOptions
) -> tuple[list[CaseResult], frozenset[str]]:
    from deltaspec.conformance.adapters.base import Adapter
    from deltaspec.conformance.harness import suites
    from deltaspec.conformance.harness.transcript import Recorder, write_trace
    from deltaspec.conformance.harness.verdicts import Verdict

    progress = suites.Progress("scenarios", len(vectors))
    transcripts: list[list[str]] = []
    with suites.adapter_factory(adapter) as factory, tempfile.TemporaryDirectory() as scratch:
        capabilities = _probe(factory, Path(scratch))

        def traced(root: Path) -> Adapter:
            transcripts.append([])
            return cast(Adapter, Recorder(factory(root), transcripts[-1]))

        chosen = traced if options.trace is not None else factory
        results = suites.run_scenario_suite(chosen, vectors, progress=progress)
    progress.finish()
    if options.trace is not None:
        for result, lines in zip(results, transcripts, strict=True):
            if result.fails(strict=True) and result.verdict is not Verdict.SKIPPED:
                write_trace(options.trace, result.case, lines)
    return results, capabilities


def _probe(factory: Any, scratch: Path) -> frozenset[str]:
    """The capabilities an adapter declares (a fresh adapter, closed untouched)."""
    probe = factory(scratch)
    try:
        return frozenset(c.value for c in probe.capabilities)
    finally:
        probe.close()


def _declared(adapter: str) -> frozenset[str]:
    """The declared capabilities when no scenario suite ran (for --require)."""
    from deltaspec.conformance.harness import suites

    try:
        with suites.adapter_factory(adapter) as factory, tempfile.TemporaryDirectory() as scratch:
            return _probe(factory, Path(scratch))
    except suites.UnknownAdapter:  # a reader-only name (deltaspark before its adapter)
        return frozenset()


def run_suites(
    adapter: str,
    chosen: list[str],
    *,
    scenario_dirs: list[Path],
    fixtures_dir: Path | None,
    pinned: str | None,
    strict: bool,
    known_issues: Path | None,
    options: RunOptions | None = None,
) -> Report:
    from deltaspec.conformance.harness import suites
    from deltaspec.conformance.harness.gate import judge_coverage, not_for_release, parse_release
    from deltaspec.conformance.harness.scenarios import load_scenarios
    from deltaspec.conformance.harness.verdicts import (
        CaseResult,
        Verdict,
        apply_known,
        load_known_issues,
    )
    from deltaspec.rules import load_rules

    options = options or RunOptions()
    report = suites.Report(adapter, strict)
    known = load_known_issues(adapter, known_issues)
    capabilities: frozenset[str] = frozenset()
    if "scenarios" in chosen:
        vectors = [
            v
            for v in load_scenarios(scenario_dirs, include_spec=options.include_spec)
            if options.selection.matches(v.id, v.rules)
        ]
        declined: list[CaseResult] = []
        if options.gate is not None and options.gate.profile is not None:
            release = parse_release(options.gate.profile)
            rules = {rule.id: rule for rule in load_rules()}
            reasons = {v.id: not_for_release(v, release, rules) for v in vectors}
            declined = [
                CaseResult(
                    v.id, Verdict.SKIPPED, (f"not for {options.gate.profile}: {why}",), v.rules
                )
                for v in vectors
                if (why := reasons[v.id]) is not None
            ]
            vectors = [v for v in vectors if reasons[v.id] is None]
        results, capabilities = _scenario_results(adapter, vectors, options)
        report.suites["scenarios"] = apply_known(results, known) + declined
    if "fixtures" in chosen or "logs" in chosen:
        with table_reader(adapter) as reader:
            capabilities |= _read_suites(
                report, reader, adapter, chosen, options, known, fixtures_dir, pinned
            )
    if "writes" in chosen:
        from deltaspec.conformance.harness import writes

        directory = _fixtures_dir(fixtures_dir)
        results = [
            r
            for r in writes.run_writes(adapter, directory)
            if options.selection.matches(r.case, r.rules)
        ]
        report.suites["writes"] = apply_known(results, known)
    if options.gate is not None:
        if "scenarios" not in chosen and options.gate.require:
            capabilities |= _declared(adapter)
        everything = [r for rs in report.suites.values() for r in rs]
        report.coverage = judge_coverage(options.gate, capabilities, everything)
    return report


@contextmanager
def table_reader(adapter: str) -> Iterator[Any]:
    """The reader of tables on disk behind ``adapter`` (None: it cannot read one): the impl's,
    delta-rs's, the model's, live delta-spark's, or a bridge's ``read_table``."""
    from deltaspec.conformance.adapters import readers
    from deltaspec.conformance.harness import suites

    if adapter == "model":
        yield readers.ModelReader()
    elif adapter == "deltaspark":
        yield readers.DeltaSparkReader()
    elif adapter.startswith("cmd:"):
        from deltaspec.conformance.adapters.base import Capability
        from deltaspec.conformance.bridge.client import BridgeProcess, BridgeReader

        process = BridgeProcess(adapter.removeprefix("cmd:"))
        try:
            process._start()
            yield BridgeReader(process) if Capability.READ_TABLE in process.capabilities else None
        finally:
            process.stop()
    else:
        yield suites.reader_for(adapter)


def _read_suites(
    report: Report,
    reader: Any,
    adapter: str,
    chosen: list[str],
    options: RunOptions,
    known: Any,
    fixtures_dir: Path | None,
    pinned: str | None,
) -> frozenset[str]:
    """The suites that read tables on disk: ``fixtures`` and ``logs`` (log vectors)."""
    from deltaspec.conformance.harness import fixtures, suites
    from deltaspec.conformance.harness.logvectors import load_log_vectors, run_log_vectors
    from deltaspec.conformance.harness.verdicts import CaseResult, Verdict, apply_known

    for suite in ("fixtures", "logs"):
        if suite not in chosen:
            continue
        if reader is None:
            why = f"{adapter} cannot read tables on disk (no read_table)"
            report.suites[suite] = [CaseResult(suite, Verdict.SKIPPED, (why,))]
            continue
        if suite == "fixtures":
            directory = _fixtures_dir(fixtures_dir)
            tables = fixtures.load_manifest(directory, pinned=pinned)
            progress = suites.Progress("fixtures", len(tables))
            results = fixtures.run_fixtures(reader, directory, pinned=pinned, progress=progress)
        else:
            vectors = [
                v
                for v in (load_log_vectors() if options.include_spec else [])
                if options.selection.matches(v.id, v.rules) and _for_profile(v, options)
            ]
            progress = suites.Progress("logs", len(vectors))
            results = run_log_vectors(reader, vectors, progress=progress)
        progress.finish()
        results = [r for r in results if options.selection.matches(r.case, r.rules)]
        report.suites[suite] = apply_known(results, known)
    return frozenset() if reader is None else frozenset({"read_table"})


def _for_profile(vector: Any, options: RunOptions) -> bool:
    """Whether a log vector applies under ``--profile`` (every rule it cites holds then)."""
    if options.gate is None or options.gate.profile is None:
        return True
    from deltaspec.conformance.harness.gate import parse_release
    from deltaspec.rules import covers, load_rules

    release = parse_release(options.gate.profile)
    rules = {rule.id: rule for rule in load_rules()}
    return all(covers(rules[r].releases, release) for r in vector.rules if r in rules)


def _print(report: Report, corpus: list[str] | None = None) -> None:
    from deltaspec.conformance.harness.reporting import console

    print("\n".join(console(report, corpus or [])))


def _corpus_arguments(args: argparse.Namespace) -> list[str]:
    """The corpus options of this run, for the repro commands."""
    out = [arg for d in args.scenarios for arg in ("--scenarios", str(d))]
    out += [arg for d in args.only for arg in ("--only", str(d))]
    return out + (["--fixtures", str(args.fixtures)] if args.fixtures else [])


def conformance_main(args: argparse.Namespace) -> int:
    from deltaspec.conformance.bridge.client import BridgeError
    from deltaspec.conformance.harness import fixtures, suites
    from deltaspec.conformance.harness.gate import (
        EXIT_COVERAGE,
        EXIT_FAILED,
        EXIT_PASS,
        EXIT_SETUP,
        Gate,
    )
    from deltaspec.conformance.harness.reporting import junit
    from deltaspec.conformance.harness.scenarios import ScenarioError
    from deltaspec.conformance.harness.selection import SelectionError
    from deltaspec.conformance.harness.verdicts import CaseResult, Verdict

    chosen = list(SUITES) if args.suite == "all" else [args.suite]
    unavailable = {s: why for s in chosen if (why := missing_prerequisite(s, args.fixtures))}
    if args.suite != "all" and unavailable:
        print(f"deltaspec conformance: {unavailable[args.suite]}", file=sys.stderr)
        return 2
    chosen = [s for s in chosen if s not in unavailable]
    pinned: str | None = args.fixtures_sha256 or fixtures.PINNED_MANIFEST_SHA256
    if pinned == "any":
        pinned = None
    require = frozenset(c.strip() for arg in args.require for c in arg.split(",") if c.strip())
    try:
        options = RunOptions(
            selection=Selection(tuple(args.case), args.keyword),
            gate=Gate(require, args.min_cases, args.profile),
            trace=args.trace,
            include_spec=not args.only,
        )
        if args.profile is not None:
            from deltaspec.conformance.harness.gate import parse_release

            parse_release(args.profile)
        report = run_suites(
            args.adapter,
            chosen,
            scenario_dirs=[*args.scenarios, *args.only],
            fixtures_dir=args.fixtures,
            pinned=pinned,
            strict=args.strict,
            known_issues=args.known_issues,
            options=options,
        )
    except (
        suites.UnknownAdapter,
        BridgeError,
        ScenarioError,
        SelectionError,
        ValueError,
        OSError,
    ) as error:
        print(f"deltaspec conformance: {error}", file=sys.stderr)
        return EXIT_SETUP
    for suite, why in unavailable.items():
        report.suites[suite] = [CaseResult(suite, Verdict.SKIPPED, (why,))]
    suites.write_reports(report, args.json, args.markdown)
    if args.junit is not None:
        junit(report, args.junit)
    _print(report, _corpus_arguments(args))
    if report.failures():
        return EXIT_FAILED
    return EXIT_COVERAGE if not report.passed() else EXIT_PASS


def _add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--scenarios",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="another directory of scenario vectors (repeatable)",
    )
    parser.add_argument(
        "--fixtures",
        type=Path,
        metavar="DIR",
        help="the delta-spark fixtures (default ../shared/fixtures/delta-spark)",
    )


def add_conformance_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "conformance",
        help="run a corpus against one implementation and judge it",
        description="Run a corpus against one implementation and judge it. The run passes when "
        "no case fails and the coverage gate is met.",
        epilog=EXIT_CODES,
    )
    parser.add_argument(
        "--adapter",
        default="impl",
        help="model, impl, deltars, spark or cmd:PROGRAM (default impl)",
    )
    parser.add_argument("--suite", choices=[*SUITES, "all"], default="all")
    _add_corpus_arguments(parser)
    parser.add_argument(
        "--fixtures-sha256",
        help="the MANIFEST.json checksum to accept (default: the pinned corpus; 'any' to skip)",
    )
    parser.add_argument(
        "--known-issues",
        type=Path,
        metavar="FILE",
        help="known issues (default conformance/harness/known_issues/<adapter>.json)",
    )
    parser.add_argument(
        "--strict", action="store_true", help="spurious conflicts and wrong kinds fail too"
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the JSON report")
    parser.add_argument("--markdown", type=Path, metavar="PATH", help="write a markdown report")
    _add_gate_arguments(parser)
    parser.set_defaults(handler=conformance_main)


def _add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """Selection, coverage gate, tracing and JUnit: gate.py, selection.py, reporting.py."""
    parser.add_argument(
        "--only",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="run this directory of vectors without the built-in corpus (repeatable)",
    )
    parser.add_argument(
        "--case",
        action="append",
        default=[],
        metavar="PATTERN",
        help="only cases whose id matches this glob (repeatable)",
    )
    parser.add_argument(
        "-k",
        dest="keyword",
        metavar="EXPR",
        help="only cases whose id or rules match: words with and/or/not",
    )
    parser.add_argument(
        "--require",
        action="append",
        default=[],
        metavar="CAP[,CAP]",
        help="fail (exit 3) unless the adapter declares these capabilities "
        "(actions, commit_steps, checkpoint, time_travel, read_table, write_append, …)",
    )
    parser.add_argument(
        "--min-cases",
        type=int,
        default=1,
        metavar="N",
        help="fail (exit 3) when fewer than N cases ran rather than being skipped (default 1)",
    )
    parser.add_argument(
        "--profile",
        metavar="RELEASE",
        help="judge an engine following this delta-spark release (e.g. 3.1.0): vectors of other "
        "releases, and rules that do not hold at it, are skipped",
    )
    parser.add_argument(
        "--trace",
        type=Path,
        metavar="DIR",
        help="write each failing vector's adapter calls as bridge messages",
    )
    parser.add_argument("--junit", type=Path, metavar="PATH", help="write JUnit XML")


def check_main(args: argparse.Namespace) -> int:
    """The main job: the oracle's state machine (ci profile), the vectors on model and impl, the
    fixtures on impl; one summary, a report, non-zero on any failure."""
    from deltaspec.conformance.harness import fixtures

    started = time.perf_counter()
    reports: dict[str, Any] = {}
    failed = False
    missing = missing_prerequisite("fixtures", args.fixtures)
    if missing is not None and not args.quick:
        print(f"deltaspec check: fixtures suite skipped: {missing}")
        reports["fixtures_skipped"] = missing
    impl_suites = ["scenarios", "logs"] + (["fixtures"] if missing is None else [])
    for adapter, chosen in (("model", ["scenarios", "logs"]), ("impl", impl_suites)):
        if args.quick and adapter != "model":
            continue
        report = run_suites(
            adapter,
            chosen,
            scenario_dirs=args.scenarios,
            fixtures_dir=args.fixtures,
            pinned=fixtures.PINNED_MANIFEST_SHA256,
            strict=False,
            known_issues=None,
        )
        print(f"== {adapter}")
        _print(report)
        reports[adapter] = report.as_json()
        failed = failed or bool(report.failures())
    if not args.quick:
        from deltaspec.conformance.adapters.impl import ImplAdapter
        from deltaspec.conformance.oracle.differential import Divergence
        from deltaspec.conformance.oracle.machine import ORACLE_PROFILES, run_oracle

        print("== oracle (state machine, ci profile: model vs impl)")
        try:
            oracle = run_oracle([ImplAdapter], ORACLE_PROFILES["ci"], regressions=args.regressions)
            print(f"oracle: PASS; {oracle.steps} steps in {oracle.seconds:.1f} s")
            reports["oracle"] = {"passed": True, "steps": oracle.steps}
        except Divergence as divergence:
            print(f"oracle: FAIL: {divergence.message}")
            reports["oracle"] = {"passed": False, "divergence": divergence.message}
            failed = True
    seconds = time.perf_counter() - started
    summary = {"passed": not failed, "seconds": round(seconds, 1), "reports": reports}
    args.report.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(
        f"deltaspec check: {'PASS' if not failed else 'FAIL'} in {seconds:.0f} s "
        f"(report: {args.report})"
    )
    return 1 if failed else 0


def add_check_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "check",
        help="the main job: state machine model vs impl, vectors on model and impl, fixtures",
    )
    _add_corpus_arguments(parser)
    parser.add_argument("--quick", action="store_true", help="only the vectors on the model")
    parser.add_argument(
        "--regressions",
        type=Path,
        metavar="DIR",
        help="where a state-machine divergence is written as a vector",
    )
    parser.add_argument(
        "--report",
        type=Path,
        default=Path("deltaspec-check.json"),
        help="the JSON report (default deltaspec-check.json)",
    )
    parser.set_defaults(handler=check_main)
