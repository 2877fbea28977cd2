"""The ``deltaspec conformance`` and ``deltaspec check`` commands."""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deltaspec.conformance.suites import Report

# Only the standard library at import time: the ``deltaspec`` command builds these parsers on
# every start, and the suites pull in pyarrow, the model and the impl.
SUITES = ("scenarios", "fixtures", "writes")

DEFAULT_FIXTURES = Path(
    os.environ.get(
        "DELTASPEC_FIXTURES",
        Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "delta-spark",
    )
)


def _fixtures_dir(given: Path | None) -> Path:
    return (given or DEFAULT_FIXTURES).resolve()


def run_suites(
    adapter: str,
    chosen: list[str],
    *,
    scenario_dirs: list[Path],
    fixtures_dir: Path | None,
    pinned: str | None,
    strict: bool,
    known_issues: Path | None,
) -> Report:
    from deltaspec.conformance import fixtures, suites
    from deltaspec.conformance.scenarios import load_scenarios
    from deltaspec.conformance.verdicts import CaseResult, Verdict, apply_known, load_known_issues

    report = suites.Report(adapter, strict)
    known = load_known_issues(adapter, known_issues)
    if "scenarios" in chosen:
        vectors = load_scenarios(scenario_dirs)
        progress = suites.Progress("scenarios", len(vectors))
        with suites.adapter_factory(adapter) as factory:
            results = suites.run_scenario_suite(factory, vectors, progress=progress)
        progress.finish()
        report.suites["scenarios"] = apply_known(results, known)
    if "fixtures" in chosen:
        reader = suites.reader_for(adapter)
        if reader is None:
            report.suites["fixtures"] = [
                CaseResult("fixtures", Verdict.SKIPPED, (f"{adapter} cannot read tables on disk",))
            ]
        else:
            directory = _fixtures_dir(fixtures_dir)
            tables = fixtures.load_manifest(directory, pinned=pinned)
            progress = suites.Progress("fixtures", len(tables))
            results = fixtures.run_fixtures(reader, directory, pinned=pinned, progress=progress)
            progress.finish()
            report.suites["fixtures"] = apply_known(results, known)
    if "writes" in chosen:
        from deltaspec.conformance import writes

        directory = _fixtures_dir(fixtures_dir)
        report.suites["writes"] = apply_known(writes.run_writes(adapter, directory), known)
    return report


def _print(report: Report) -> None:
    print(report.table())
    for result in report.failures():
        print(f"FAIL {result.case}: {result.verdict.value}")
        for line in result.details[:3]:
            print(f"     {line[:300]}")
    stale = [r.case for rs in report.suites.values() for r in rs if r.stale]
    if stale:
        print(f"stale known issues (they pass now; remove them): {', '.join(stale)}")
    verdict = "PASS" if not report.failures() else "FAIL"
    print(f"{report.adapter}: {verdict}; {len(report.unsafe())} unsafe")


def conformance_main(args: argparse.Namespace) -> int:
    from deltaspec.conformance import fixtures, suites

    chosen = list(SUITES) if args.suite == "all" else [args.suite]
    pinned: str | None = args.fixtures_sha256 or fixtures.PINNED_MANIFEST_SHA256
    if pinned == "any":
        pinned = None
    report = run_suites(
        args.adapter,
        chosen,
        scenario_dirs=args.scenarios,
        fixtures_dir=args.fixtures,
        pinned=pinned,
        strict=args.strict,
        known_issues=args.known_issues,
    )
    suites.write_reports(report, args.json, args.markdown)
    _print(report)
    return 1 if report.failures() else 0


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
        "conformance", help="run a corpus against one implementation and judge it"
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
        help="known issues (default conformance/known_issues/<adapter>.json)",
    )
    parser.add_argument(
        "--strict", action="store_true", help="spurious conflicts and wrong kinds fail too"
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the JSON report")
    parser.add_argument("--markdown", type=Path, metavar="PATH", help="write a markdown report")
    parser.set_defaults(handler=conformance_main)


def check_main(args: argparse.Namespace) -> int:
    """The main job: the oracle's state machine (ci profile), the vectors on model and impl, the
    fixtures on impl; one summary, a report, non-zero on any failure."""
    from deltaspec.conformance import fixtures

    started = time.perf_counter()
    reports: dict[str, Any] = {}
    failed = False
    for adapter, chosen in (("model", ["scenarios"]), ("impl", ["scenarios", "fixtures"])):
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
        from deltaspec.conformance.differential import Divergence
        from deltaspec.conformance.oracle import ORACLE_PROFILES, run_oracle

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
