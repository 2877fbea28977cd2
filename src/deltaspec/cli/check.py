"""``deltaspec check``: the main job. The oracle's state machine (ci profile), the vectors on
model and impl, the fixtures on impl; one summary, a report, non-zero on any failure."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from deltaspec.cli.run import Corpus, add_corpus_arguments, missing_prerequisite, print_report


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "check",
        help="the main job: state machine model vs impl, vectors on model and impl, fixtures",
    )
    add_corpus_arguments(parser)
    parser.add_argument("--quick", action="store_true", help="only the vectors on the model")
    parser.add_argument("--regressions", type=Path, metavar="DIR",
                        help="where a state-machine divergence is written as a vector")  # fmt: skip
    parser.add_argument("--report", type=Path, default=Path("deltaspec-check.json"),
                        help="the JSON report (default deltaspec-check.json)")  # fmt: skip
    return parser


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    reports: dict[str, Any] = {}
    missing = missing_prerequisite("fixtures", args.fixtures)
    if missing is not None and not args.quick:
        print(f"deltaspec check: fixtures suite skipped: {missing}")
        reports["fixtures_skipped"] = missing
    failed = not _vectors(args, reports, fixtures=missing is None)
    if not args.quick:
        failed = not _oracle(args, reports) or failed
    seconds = time.perf_counter() - started
    summary = {"passed": not failed, "seconds": round(seconds, 1), "reports": reports}
    args.report.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(
        f"deltaspec check: {'PASS' if not failed else 'FAIL'} in {seconds:.0f} s "
        f"(report: {args.report})"
    )
    return 1 if failed else 0


def _vectors(args: argparse.Namespace, reports: dict[str, Any], *, fixtures: bool) -> bool:
    """The vectors on the model, then (unless --quick) on the impl with the fixtures."""
    from deltaspec.cli.run import run_suites
    from deltaspec.conformance.harness.fixtures import PINNED_MANIFEST_SHA256

    passed = True
    corpus = Corpus(args.scenarios, args.fixtures, PINNED_MANIFEST_SHA256, False, None)
    impl_suites = ["scenarios", "logs"] + (["fixtures"] if fixtures else [])
    for adapter, chosen in (("model", ["scenarios", "logs"]), ("impl", impl_suites)):
        if args.quick and adapter != "model":
            continue
        report = run_suites(adapter, chosen, corpus)
        print(f"== {adapter}")
        print_report(report)
        reports[adapter] = report.as_json()
        passed = passed and not report.failures()
    return passed


def _oracle(args: argparse.Namespace, reports: dict[str, Any]) -> bool:
    """The state machine, ci profile: model against impl."""
    from deltaspec.conformance.adapters.impl import ImplAdapter
    from deltaspec.conformance.oracle.differential import Divergence
    from deltaspec.conformance.oracle.machine import ORACLE_PROFILES, run_oracle

    print("== oracle (state machine, ci profile: model vs impl)")
    try:
        oracle = run_oracle([ImplAdapter], ORACLE_PROFILES["ci"], regressions=args.regressions)
    except Divergence as divergence:
        print(f"oracle: FAIL: {divergence.message}")
        reports["oracle"] = {"passed": False, "divergence": divergence.message}
        return False
    print(f"oracle: PASS; {oracle.steps} steps in {oracle.seconds:.1f} s")
    reports["oracle"] = {"passed": True, "steps": oracle.steps}
    return True
