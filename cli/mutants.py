"""``deltaspec mutants``: score the oracle on seeded impl bugs, per module and per rule."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from difflib import get_close_matches
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..conformance.harness.progress import Progress
from ..conformance.oracle.catalog import STAGES
from .outputs import add_output
from .quiet import add_quiet_argument

if TYPE_CHECKING:
    from ..conformance.oracle.catalog import Mutant
    from ..conformance.oracle.mutants import MutantResult


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "mutants", help="score the oracle on seeded impl bugs"
    )
    parser.add_argument("ids", nargs="*", help="mutant ids (default: the whole catalog)")
    parser.add_argument("--module", action="append", default=[],
                        help="only mutants of this impl module or package, e.g. txn or "
                             "spark.overwrite (repeatable)")  # fmt: skip
    parser.add_argument("--rule", action="append", default=[],
                        help="only mutants keyed to this rule (repeatable)")  # fmt: skip
    parser.add_argument("--side", choices=["impl", "spark"],
                        help="only the core impl's or the Spark path's mutants")  # fmt: skip
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds per mutant: a guard against a hung oracle (600)")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=2, help="mutants run at once")
    parser.add_argument("--stage", action="append", choices=list(STAGES),
                        help="run only these oracle stages (repeatable; default all)")  # fmt: skip
    parser.add_argument("--own-stage", action="store_true",
                        help="run each mutant only on the stage recorded as killing it "
                             "(its killed_by): the quick check the tests make")  # fmt: skip
    add_output(parser, "--json", metavar="PATH", help="write a JSON report")
    add_quiet_argument(parser)
    return parser


def _chosen(args: argparse.Namespace, catalog: Sequence[Mutant]) -> list[Mutant] | None:
    """The mutants the arguments select, or None after printing why an id is unknown."""
    described = {m.id: m for m in catalog}
    unknown = [i for i in args.ids if i not in described]
    if unknown:
        near = {i: get_close_matches(i, described, n=1) for i in unknown}
        hints = "; ".join(f"{i!r}" + (f" (did you mean {', '.join(n)}?)" if n else "")
                          for i, n in near.items())  # fmt: skip
        print(f"deltaspec mutants: no such mutant {hints}; known: {', '.join(sorted(described))}",
              file=sys.stderr)  # fmt: skip
        return None
    chosen = [described[i] for i in args.ids] if args.ids else list(catalog)
    if args.module:
        chosen = [m for m in chosen if any(_in_module(m, name) for name in args.module)]
    if args.rule:
        chosen = [m for m in chosen if m.rule in args.rule]
    if args.side:
        chosen = [m for m in chosen if m.side == args.side]
    return chosen


def _in_module(mutant: Mutant, name: str) -> bool:
    return mutant.module == name or mutant.module.startswith(name + ".")


def group(
    results: Iterable[MutantResult], mutants: dict[str, Mutant], key: Callable[[Mutant], str]
) -> dict[str, dict[str, Any]]:
    """Killed/total and the slowest kill per ``key`` (module, rule...) of the results."""
    out: dict[str, dict[str, Any]] = {}
    for result in results:
        name = key(mutants[result.id])
        entry = out.setdefault(name, {"killed": 0, "total": 0, "slowest_kill_seconds": None,
                                      "slowest_kill": None, "survivors": []})  # fmt: skip
        entry["total"] += 1
        if not result.killed:
            entry["survivors"].append(result.id)
            continue
        entry["killed"] += 1
        if entry["slowest_kill_seconds"] is None or result.seconds > entry["slowest_kill_seconds"]:
            entry["slowest_kill_seconds"] = round(result.seconds, 2)
            entry["slowest_kill"] = result.id
    return dict(sorted(out.items()))


def by_rule(
    results: Iterable[MutantResult], mutants: dict[str, Mutant]
) -> dict[str, list[dict[str, Any]]]:
    """Each result with what the catalog says of its mutant, keyed by the rule it breaks."""
    out: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        mutant = mutants[r.id]
        out.setdefault(mutant.rule, []).append({
            **asdict(r),
            "module": mutant.module,
            "function": mutant.target,
            "side": mutant.side,
            "killed_by": mutant.killed_by,
            "expected": mutant.expected,
            "description": mutant.description,
        })  # fmt: skip
    return dict(sorted(out.items()))


def _print_groups(title: str, groups: dict[str, dict[str, Any]]) -> None:
    print(f"\nby {title}:")
    for name, entry in groups.items():
        slowest = (f"slowest kill {entry['slowest_kill_seconds']:.1f} s ({entry['slowest_kill']})"
                   if entry["slowest_kill"] else "no kill")  # fmt: skip
        survivors = f"  survivors: {', '.join(entry['survivors'])}" if entry["survivors"] else ""
        print(f"  {name:<34} {entry['killed']:>3}/{entry['total']:<3} {slowest}{survivors}")


def _report(
    args: argparse.Namespace,
    stages: Sequence[str],
    baseline: MutantResult,
    results: list[MutantResult],
    mutants: dict[str, Mutant],
) -> dict[str, Any]:
    killed = [r for r in results if r.killed and r.seconds <= args.timeout]
    slowest = max(killed, key=lambda r: r.seconds, default=None)
    return {
        "command": "deltaspec mutants " + shlex.join(sys.argv[2:]),
        "stages": "own" if args.own_stage else list(stages),
        "baseline": asdict(baseline),
        "mutants": by_rule(results, mutants),
        "by_module": group(results, mutants, lambda m: m.module),
        "by_rule": group(results, mutants, lambda m: m.rule),
        "killed": len(killed),
        "total": len(results),
        "slowest_kill_seconds": None if slowest is None else round(slowest.seconds, 2),
        "slowest_kill": None if slowest is None else slowest.id,
    }


def disagreements(results: Iterable[MutantResult], mutants: dict[str, Mutant]) -> list[str]:
    """Where a run of every stage contradicts the catalog's ``killed_by``: the lines to fix."""
    out = []
    for result in results:
        recorded = mutants[result.id].killed_by
        if result.stage != recorded:
            now = f"killed_by={result.stage!r}" if result.killed else "killed_by=None (survives)"
            out.append(f"{result.id}: the catalog says killed_by={recorded!r}; this run: {now}")
    return out


def run(args: argparse.Namespace) -> int:
    from ..conformance.oracle.mutants import (  # lazy: CLI start-up (2.4 s)
        CATALOG,
        run_mutants,
    )

    chosen = _chosen(args, CATALOG)
    if chosen is None:
        return 2
    mutants = {m.id: m for m in chosen}
    progress = Progress("mutants", len(mutants))
    progress.say(f"the unmutated baseline, then {len(mutants)} mutants, {args.jobs} at a time")

    def show(result: MutantResult) -> None:
        verdict = f"killed by {result.stage}" if result.killed else "SURVIVED"
        mutant = mutants[result.id]
        print(f"{result.id:<38} {verdict:<18} {result.seconds:6.1f} s  {mutant.module:<26} "
              f"{mutant.description}", flush=True)  # fmt: skip
        progress.step(result.id, verdict)

    stages = args.stage or STAGES
    baseline, results = run_mutants(
        list(mutants), args.timeout, args.jobs, show, stages, own_stage=args.own_stage
    )
    report = _report(args, stages, baseline, results, mutants)
    _print_groups("module", report["by_module"])
    _print_groups("rule", report["by_rule"])
    print(f"\nunmutated impl: {'passes' if not baseline.killed else 'FAILS: ' + baseline.detail}"
          f" ({baseline.seconds:.1f} s)")  # fmt: skip
    slowest = report["slowest_kill"]
    print(f"score: {report['killed']}/{report['total']} mutants killed within {args.timeout:g} s"
          + (f"; slowest kill {report['slowest_kill_seconds']:.1f} s ({slowest})" if slowest
             else ""))  # fmt: skip
    if not args.own_stage and not args.stage:
        for line in disagreements(results, mutants):
            print(f"catalog disagrees: {line}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0 if not baseline.killed and report["killed"] == report["total"] else 1
