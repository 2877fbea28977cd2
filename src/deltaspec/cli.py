"""The ``deltaspec`` command."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from deltaspec import __version__
from deltaspec.rules import load_rules


def _spec(args: argparse.Namespace) -> int:
    rules = load_rules()
    if args.json:
        print(json.dumps([r.__dict__ for r in rules], indent=2))
        return 0
    width = max(len(r.id) for r in rules)
    for rule in rules:
        print(f"{rule.id:<{width}}  {rule.releases:<22}  {rule.title}")
    print(f"{len(rules)} rules")
    return 0


def _check(args: argparse.Namespace) -> int:
    from deltaspec.conformance.adapters.model import run
    from deltaspec.conformance.scenarios import load_scenarios, run_all

    scenarios = load_scenarios(args.scenarios)
    verdicts = run_all(scenarios, run)
    failed = [v for v in verdicts if not v.passed]
    for verdict in failed:
        print(f"FAIL {verdict.scenario.id} ({verdict.scenario.source})")
        for line in verdict.failures:
            print(f"     {line}")
        if verdict.error:
            print(f"     error: {verdict.error}")
    print(f"model: {len(verdicts) - len(failed)} passed, {len(failed)} failed")
    if args.json:
        report = [
            {
                "id": v.scenario.id,
                "passed": v.passed,
                "failures": list(v.failures),
                "error": v.error,
            }
            for v in verdicts
        ]
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="deltaspec",
        description="Executable specification and test oracle for the Delta Lake transaction log.",
    )
    parser.add_argument("--version", action="version", version=f"deltaspec {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    spec = commands.add_parser("spec", help="list the spec's rule IDs")
    spec.add_argument("--json", action="store_true", help="print the rules as JSON")
    spec.set_defaults(handler=_spec)
    check = commands.add_parser("check", help="run every scenario vector against the model")
    check.add_argument("--scenarios", type=Path, action="append", default=[],
                       help="another directory of scenario vectors (repeatable)")  # fmt: skip
    check.add_argument("--json", metavar="PATH", help="write a JSON report")
    check.set_defaults(handler=_check)
    args = parser.parse_args(argv)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
