"""``deltaspec conformance``: run a corpus against one implementation and judge it."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..conformance.engines.cmd.adapter import BridgeError
from ..conformance.engines.registry import UnknownAdapter, release_profile
from ..conformance.harness import fixtures, suites
from ..conformance.harness.gate import (
    EXIT_CODES,
    EXIT_COVERAGE,
    EXIT_FAILED,
    EXIT_NO_CASE,
    EXIT_PASS,
    EXIT_SETUP,
    Gate,
    parse_release,
)
from ..conformance.harness.reporting import junit
from ..conformance.harness.scenarios import ScenarioError
from ..conformance.harness.selection import Selection, SelectionError
from ..conformance.harness.verdicts import CaseResult, Verdict
from ..conformance.releases.errors import EngineError
from ..conformance.suite_names import SUITES
from .corpus_args import add_corpus_arguments, add_directories
from .outputs import add_output
from .quiet import add_quiet_argument

if TYPE_CHECKING:
    from ..conformance.harness.suites import Report


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "conformance",
        help="run a corpus against one implementation and judge it",
        description="Run a corpus against one implementation and judge it. The run passes when "
        "no case fails and the coverage gate is met.",
        epilog=EXIT_CODES,
    )
    add = parser.add_argument
    add(
        "--adapter",
        default="impl",
        help="model, impl, deltars, spark, deltaspark, deltaspark@X.Y.Z (a release fetched by "
        "`deltaspec engines fetch`; judged with --profile X.Y.Z unless given) or cmd:PROGRAM "
        "(default impl)",
    )
    add("--suite", choices=[*SUITES, "all"], default="all")
    add_corpus_arguments(parser)
    add("--fixtures-sha256", help="the MANIFEST.json checksum to accept "
        "(default: the pinned corpus; 'any' to skip)")  # fmt: skip
    add("--known-issues", type=Path, metavar="FILE",
        help="known issues (default conformance/harness/known_issues/<adapter>.json)")  # fmt: skip
    add("--strict", action="store_true", help="spurious conflicts and wrong kinds fail too")
    add_output(parser, "--json", metavar="PATH", help="write the JSON report")
    add_output(parser, "--markdown", metavar="PATH", help="write a markdown report")
    _add_gate_arguments(parser)
    add_quiet_argument(parser)
    return parser


def _add_gate_arguments(parser: argparse.ArgumentParser) -> None:
    """Selection, coverage gate, tracing and JUnit: gate.py, selection.py, reporting.py."""
    add = parser.add_argument
    only = "run this directory of vectors without the built-in corpus (repeatable)"
    add_directories(parser, "--only", only)
    add("--case", action="append", default=[], metavar="PATTERN",
        help="only cases whose id matches this glob (repeatable)")  # fmt: skip
    add("-k", dest="keyword", metavar="EXPR",
        help="only cases whose id or rules match: words with and/or/not")  # fmt: skip
    add("--require", action="append", default=[], metavar="CAP[,CAP]",
        help="fail (exit 3) unless the adapter declares these capabilities (actions, "
        "commit_steps, checkpoint, time_travel, read_table, write_append, …)")  # fmt: skip
    add("--min-cases", type=int, default=1, metavar="N",
        help="fail (exit 3) when fewer than N cases ran rather than being skipped "
        "(default 1)")  # fmt: skip
    add("--profile", metavar="RELEASE",
        help="judge an engine following this delta-spark release (e.g. 3.1.0): vectors of other "
        "releases, and rules that do not hold at it, are skipped")  # fmt: skip
    add_output(parser, "--trace", directory=True, metavar="DIR",
               help="write each failing vector's adapter calls as bridge messages")  # fmt: skip
    add_output(parser, "--junit", metavar="PATH", help="write JUnit XML")


def run(args: argparse.Namespace) -> int:
    from ..conformance.corpus_run import (  # lazy: CLI start-up (1.8 s)
        missing_prerequisite,
        print_report,
    )

    chosen = list(SUITES) if args.suite == "all" else [args.suite]
    unavailable = {s: why for s in chosen if (why := missing_prerequisite(s, args.fixtures))}
    if args.suite != "all" and unavailable:
        print(f"deltaspec conformance: {unavailable[args.suite]}", file=sys.stderr)
        return EXIT_SETUP
    report = _run_or_explain(args, [s for s in chosen if s not in unavailable])
    if report is None:
        return EXIT_SETUP
    selection = Selection(tuple(args.case), args.keyword)
    if not selection.everything and not _any_selected(report, selection):
        asked = shlex.join(selection.arguments())
        ran = ", ".join(report.suites) or "none"
        print(f"deltaspec conformance: {asked} matched no case of the suites run ({ran})",
              file=sys.stderr)  # fmt: skip
        return EXIT_NO_CASE
    for suite, why in unavailable.items():
        report.suites[suite] = [CaseResult(suite, Verdict.SKIPPED, (why,))]
    suites.write_reports(report, args.json, args.markdown)
    if args.junit is not None:
        junit(report, args.junit)
    print_report(report, _corpus_arguments(args))
    if report.failures():
        return EXIT_FAILED
    return EXIT_COVERAGE if not report.passed() else EXIT_PASS


def _any_selected(report: Report, selection: Selection) -> bool:
    """Whether any case of the report is one ``selection`` chose (not a suite's placeholder)."""
    return any(selection.matches(r.case, r.rules) for rs in report.suites.values() for r in rs)


def _run_or_explain(args: argparse.Namespace, chosen: list[str]) -> Report | None:
    """The report of the chosen suites, or None after saying on stderr why they cannot run."""
    from ..conformance.corpus_run import (  # lazy: CLI start-up (1.8 s)
        Corpus,
        RunOptions,
        run_suites,
    )

    pinned: str | None = args.fixtures_sha256 or fixtures.PINNED_MANIFEST_SHA256
    require = frozenset(c.strip() for arg in args.require for c in arg.split(",") if c.strip())
    if pinned == "any":
        pinned = None
    corpus = Corpus(
        [*args.scenarios, *args.only], args.fixtures, pinned, args.strict, args.known_issues
    )
    profile = args.profile or release_profile(args.adapter)  # deltaspark@R: judged as R
    try:
        options = RunOptions(
            selection=Selection(tuple(args.case), args.keyword),
            gate=Gate(require, args.min_cases, profile),
            trace=args.trace,
            include_spec=not args.only,
        )
        if profile is not None:
            parse_release(profile)
        return run_suites(args.adapter, chosen, corpus, options)
    except (UnknownAdapter, BridgeError, EngineError, ScenarioError, SelectionError, ValueError,
            OSError) as error:  # fmt: skip
        print(f"deltaspec conformance: {error}", file=sys.stderr)
        return None


def _corpus_arguments(args: argparse.Namespace) -> list[str]:
    """The corpus options of this run, for the repro commands."""
    out = [arg for d in args.scenarios for arg in ("--scenarios", str(d))]
    out += [arg for d in args.only for arg in ("--only", str(d))]
    return out + (["--fixtures", str(args.fixtures)] if args.fixtures else [])
