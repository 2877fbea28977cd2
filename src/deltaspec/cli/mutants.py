"""``deltaspec mutants``: score the oracle on seeded impl bugs."""

from __future__ import annotations

import argparse
import json
import sys
from difflib import get_close_matches
from pathlib import Path
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "mutants", help="score the oracle on seeded impl bugs"
    )
    parser.add_argument("ids", nargs="*", help="mutant ids (default: the whole catalog)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once")
    parser.add_argument("--stage", action="append",
                        choices=["vectors", "race", "services", "machine", "spark"],
                        help="run only these oracle stages (repeatable; default all)")  # fmt: skip
    parser.add_argument("--json", metavar="PATH", help="write a JSON report")
    return parser


def run(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from deltaspec.conformance.oracle.mutants import CATALOG, STAGES, MutantResult, run_mutants

    described = {m.id: m.description for m in CATALOG}
    unknown = [i for i in args.ids if i not in described]
    if unknown:
        near = {i: get_close_matches(i, described, n=2) for i in unknown}
        hints = "; ".join(f"{i!r}" + (f" (did you mean {', '.join(n)}?)" if n else "")
                          for i, n in near.items())  # fmt: skip
        known = ", ".join(sorted(described))
        print(f"deltaspec mutants: no such mutant {hints}; known: {known}", file=sys.stderr)
        return 2

    def show(result: MutantResult) -> None:
        verdict = f"killed by {result.stage}" if result.killed else "SURVIVED"
        print(f"{result.id:<36} {verdict:<18} {result.seconds:6.1f} s  {described[result.id]}",
              flush=True)  # fmt: skip

    stages = args.stage or STAGES
    baseline, results = run_mutants(args.ids or None, args.timeout, args.jobs, show, stages)
    killed = [r for r in results if r.killed and r.seconds <= args.timeout]
    print(f"unmutated impl: {'passes' if not baseline.killed else 'FAILS: ' + baseline.detail}"
          f" ({baseline.seconds:.1f} s)")  # fmt: skip
    print(f"score: {len(killed)}/{len(results)} mutants killed within {args.timeout:g} s")
    if args.json:
        report = {"baseline": asdict(baseline), "mutants": [asdict(r) for r in results],
                  "killed": len(killed), "total": len(results)}  # fmt: skip
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0 if not baseline.killed and len(killed) == len(results) else 1
