"""The ``deltaspec`` command."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from difflib import get_close_matches
from pathlib import Path
from typing import Any

from deltaspec import __version__
from deltaspec.cli.conformance import add_check_parser, add_conformance_parser
from deltaspec.rules import Rule, load_rules, rule_text, verified_live


def _spec(args: argparse.Namespace) -> int:
    rules = load_rules()
    if args.ids:
        return _print_rules(rules, args.ids)
    live = verified_live()
    if args.json:
        rows = [{**r.__dict__, "verified_live": list(live.get(r.id, ()))} for r in rules]
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r.id) for r in rules)
    for rule in rules:
        checked = "live " if rule.id in live else "paper"
        print(f"{rule.id:<{width}}  {rule.releases:<22}  {checked}  {rule.title}")
    print(
        f"{len(rules)} rules; {sum(r.id in live for r in rules)} verified on live delta-spark "
        "(a vector citing them passes on it), the rest on paper"
    )
    return 0


def _print_rules(rules: list[Rule], ids: list[str]) -> int:
    """``deltaspec spec RULE ...``: each rule's heading, Releases line and prose."""
    by_id = {rule.id: rule for rule in rules}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        close = {i: get_close_matches(i, by_id, n=3) for i in unknown}
        for rule_id, near in close.items():
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            print(f"deltaspec spec: no rule {rule_id!r}{hint}", file=sys.stderr)
        return 2
    live = verified_live()

    def status(rule_id: str) -> str:
        vectors = live.get(rule_id)
        if not vectors:
            return "Verified on paper only (no vector citing it passes on live delta-spark)."
        return f"Verified on live delta-spark by {len(vectors)} vector(s): {', '.join(vectors)}"

    print(
        "\n\n".join(f"{rule_text(by_id[i])}\n\n(spec/{by_id[i].source}) {status(i)}" for i in ids)
    )
    return 0


def _describe(args: argparse.Namespace) -> int:
    from deltaspec.impl.errors import DeltaError
    from deltaspec.impl.snapshot import DeltaLog

    try:
        snapshot = DeltaLog(args.path).snapshot(args.version)
    except DeltaError as error:
        print(f"{error.error_class}: {error}", file=sys.stderr)
        return 2
    protocol, metadata = snapshot.protocol, snapshot.metadata
    files = sorted(f.path for f in snapshot.files.values())
    described: dict[str, Any] = {
        "version": snapshot.version,
        "protocol": {
            "minReaderVersion": protocol.min_reader_version,
            "minWriterVersion": protocol.min_writer_version,
            "readerFeatures": list(protocol.reader_features or []),
            "writerFeatures": list(protocol.writer_features or []),
        },
        "metadata": {
            "id": metadata.id,
            "name": metadata.name,
            "schema": json.loads(metadata.schema_string or "null"),
            "partitionColumns": list(metadata.partition_columns),
            "configuration": dict(metadata.configuration),
        },
        "num_files": len(files),
        "size_bytes": sum(f.size for f in snapshot.files.values()),
        "files": files,
        "app_transactions": {a: t.version for a, t in sorted(snapshot.app_transactions.items())},
        "domains": {d: m.configuration for d, m in sorted(snapshot.domains.items())},
        "checkpoint_version": snapshot.checkpoint_version,
    }
    if args.json:
        print(json.dumps(described, indent=2))
        return 0
    features = ", ".join([*described["protocol"]["readerFeatures"],
                          *described["protocol"]["writerFeatures"]]) or "none"  # fmt: skip
    schema = described["metadata"]["schema"] or {"fields": []}
    print(f"table        {args.path}")
    print(f"version      {snapshot.version}"
          + (f" (from checkpoint {snapshot.checkpoint_version})"
             if snapshot.checkpoint_version is not None else ""))  # fmt: skip
    print(f"protocol     reader {protocol.min_reader_version}, "
          f"writer {protocol.min_writer_version}; features: {features}")  # fmt: skip
    print(f"table id     {metadata.id}")
    print("schema       " + ", ".join(f"{f['name']} {f['type']}" for f in schema["fields"]))
    print(f"partitioned  {', '.join(metadata.partition_columns) or 'no'}")
    for key, value in sorted(metadata.configuration.items()):
        print(f"property     {key} = {value}")
    print(f"files        {len(files)} live, {described['size_bytes']} bytes")
    for app, version in described["app_transactions"].items():
        print(f"app txn      {app} at {version}")
    for domain, configuration in described["domains"].items():
        print(f"domain       {domain}: {configuration}")
    return 0


ORACLE_NEEDS = frozenset({"actions", "checkpoint", "time_travel"})


def _oracle(args: argparse.Namespace) -> int:
    from contextlib import ExitStack
    from dataclasses import replace
    from tempfile import TemporaryDirectory

    from deltaspec.conformance.harness.suites import UnknownAdapter, adapter_factory
    from deltaspec.conformance.oracle.differential import Divergence
    from deltaspec.conformance.oracle.machine import ORACLE_PROFILES, run_oracle

    profile = ORACLE_PROFILES[args.profile]
    if args.examples is not None:
        profile = replace(profile, max_examples=args.examples)
    with ExitStack() as stack:
        factories = []
        if not args.model_only:
            try:
                factory = stack.enter_context(adapter_factory(args.adapter))
                probe = factory(Path(stack.enter_context(TemporaryDirectory())))
            except (UnknownAdapter, OSError, ValueError) as error:
                print(f"deltaspec oracle: {error}", file=sys.stderr)
                return 2
            missing = ORACLE_NEEDS - {c.value for c in probe.capabilities}
            probe.close()
            if missing:
                needs, lacks = ", ".join(sorted(ORACLE_NEEDS)), ", ".join(sorted(missing))
                message = f"the state machine drives {needs}; {args.adapter} lacks {lacks}"
                print(f"deltaspec oracle: {message}", file=sys.stderr)
                return 2
            factories.append(factory)
        try:
            report = run_oracle(factories, profile, regressions=args.regressions)
        except Divergence as divergence:
            print(f"FAIL {divergence.message}", file=sys.stderr)
            if args.regressions is not None:
                print(f"replay vector written under {args.regressions}", file=sys.stderr)
            return 1
    against = "model alone" if args.model_only else f"model + {args.adapter}"
    print(f"oracle ({profile.name}, {against}): {report.steps} steps in {report.seconds:.1f} s, "
          f"{report.steps_per_second:.0f} steps/s; all agreed")  # fmt: skip
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in report.outcomes.items()))
    if args.json:
        Path(args.json).write_text(json.dumps({**report.__dict__, "against": against}, indent=2))
    return 0


def _mutants(args: argparse.Namespace) -> int:
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


def _explore_progress(quiet: bool) -> Any:
    from deltaspec.conformance.explore.search import Progress

    if quiet:
        return None
    end = "\r" if sys.stderr.isatty() else "\n"

    def show(progress: Progress) -> None:
        print(
            f"explore: depth {progress.depth}, {progress.states:,} distinct states, "
            f"{progress.queued:,} queued, {progress.states_per_second:,.0f} states/s   ",
            end=end,
            file=sys.stderr,
            flush=True,
        )

    return show


def _explore(args: argparse.Namespace) -> int:
    from deltaspec.conformance.explore.export import export, write_violation
    from deltaspec.conformance.explore.search import ExploreConfig, explore
    from deltaspec.conformance.workload.alphabet import ALPHABET, ExploreError, check_alphabet

    try:
        alphabet = check_alphabet(args.alphabet.split(",")) if args.alphabet else ALPHABET
        config = ExploreConfig(
            writers=args.writers,
            ops=args.ops,
            partitions=args.partitions,
            isolation=args.isolation,
            profile=args.profile,
            put_if_absent=not args.no_put_if_absent,
            symmetry=not args.no_symmetry,
            alphabet=alphabet,
            mutant=args.mutant,
            max_states=args.max_states,
            max_commit_attempts=args.max_commit_attempts,
        )
    except ExploreError as error:
        print(f"deltaspec explore: {error}", file=sys.stderr)
        return 2
    explorer, report = explore(config, _explore_progress(args.quiet))
    if not args.quiet and sys.stderr.isatty():
        print(file=sys.stderr)
    print(f"explore {config.slug}: {config.describe()}")
    print(report.summary())
    code = 0
    violation = report.violation
    if violation is not None:
        problem = violation.problem
        print(
            f"VIOLATION of {problem.rule} ({problem.kind}) at depth {violation.depth}, "
            f"after {violation.states:,} distinct states:\n  {problem.message}"
        )
        print("shortest trace:")
        print("\n".join(violation.lines()))
        path = write_violation(config, problem, violation.trace, args.regressions)
        print(f"vector (the correct rules' outcomes for this schedule): {path}")
        code = 1
    elif not report.complete:
        print(f"incomplete: stopped at {args.max_states:,} states; no violation so far")
    else:
        print("safe: every interleaving keeps the log, model and isolation invariants")
    if args.export is not None and not report.safe:
        print("nothing exported: the search found a violation or stopped early")
    elif args.export is not None:
        exported = export(explorer, args.export, args.export_limit)
        tiers = ", ".join(f"{tier} {n}" for tier, n in exported.tiers().items())
        print(
            f"exported {len(exported.paths):,} of {exported.terminal:,} terminal interleavings "
            f"to {args.export} ({tiers})"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(report.json(), indent=2) + "\n")
    return code


def _inspect(args: argparse.Namespace) -> int:
    from deltaspec.conformance.tools.inspect import dot, inspect

    report = inspect(args.path)
    if args.json:
        print(json.dumps(report.json(), indent=2))
    else:
        print("\n".join(report.lines()))
    if args.dot is not None:
        Path(args.dot).write_text(dot(report))
    return 0 if report.ok else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="deltaspec",
        description="Executable specification and test oracle for the Delta Lake transaction log.",
    )
    parser.add_argument("--version", action="version", version=f"deltaspec {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    spec = commands.add_parser("spec", help="list the spec's rule IDs, or print rules")
    spec.add_argument("ids", nargs="*", metavar="RULE", help="print these rules' text")
    spec.add_argument("--json", action="store_true", help="print the rules as JSON")
    spec.set_defaults(handler=_spec)
    add_check_parser(commands)
    add_conformance_parser(commands)
    describe = commands.add_parser("describe", help="load a Delta table and describe its snapshot")
    describe.add_argument("path", help="the table's root directory")
    describe.add_argument("--version", type=int, default=None, help="time travel to this version")
    describe.add_argument("--json", action="store_true", help="print one JSON object")
    describe.set_defaults(handler=_describe)
    oracle = commands.add_parser(
        "oracle", help="run the differential state machine: the impl against the model"
    )
    oracle.add_argument("--profile", choices=["ci", "deep"], default="ci")
    oracle.add_argument("--examples", type=int, help="override the profile's example count")
    oracle.add_argument("--model-only", action="store_true", help="drive the model alone")
    oracle.add_argument("--adapter", default="impl",
                        help="checked against the model: impl (default) or any adapter with "
                        "actions, checkpoint and time_travel, e.g. cmd:PROGRAM")  # fmt: skip
    oracle.add_argument("--regressions", type=Path, metavar="DIR",
                        help="where a failing run's trace is written as a vector")  # fmt: skip
    oracle.add_argument("--json", metavar="PATH", help="write a JSON report")
    oracle.set_defaults(handler=_oracle)
    mutants = commands.add_parser("mutants", help="score the oracle on seeded impl bugs")
    mutants.add_argument("ids", nargs="*", help="mutant ids (default: the whole catalog)")
    mutants.add_argument("--timeout", type=float, default=60.0, help="seconds per mutant")
    mutants.add_argument("--jobs", type=int, default=2, help="mutants run at once")
    mutants.add_argument("--stage", action="append", choices=["vectors", "race", "machine"],
                         help="run only these oracle stages (repeatable; default all)")  # fmt: skip
    mutants.add_argument("--json", metavar="PATH", help="write a JSON report")
    mutants.set_defaults(handler=_mutants)
    explore = commands.add_parser(
        "explore", help="enumerate every interleaving of a few writers over the model"
    )
    explore.add_argument("--writers", type=int, default=2, help="concurrent writers (default 2)")
    explore.add_argument("--ops", type=int, default=2, help="operations per writer (default 2)")
    explore.add_argument(
        "--partitions",
        type=int,
        default=1,
        help="partitions of the table, 0 for unpartitioned (default 1)",
    )
    explore.add_argument(
        "--isolation",
        choices=["Serializable", "WriteSerializable"],
        help="the table's delta.isolationLevel (default unset: Serializable)",
    )
    explore.add_argument("--profile", metavar="RELEASE", help="delta-spark release, e.g. 3.1.0")
    explore.add_argument(
        "--alphabet",
        metavar="OPS",
        help="comma-separated operations (default all: append, read_write, "
        "delete, update, compact, metadata, set_txn)",
    )
    explore.add_argument(
        "--no-put-if-absent",
        action="store_true",
        help="a broken log store: a write to an existing version overwrites it",
    )
    explore.add_argument("--no-symmetry", action="store_true", help="no symmetry reduction")
    explore.add_argument(
        "--mutant",
        help="swap in a broken model rule for the run (no-append-check-under-serializable)",
    )
    explore.add_argument("--max-states", type=int, help="stop after this many distinct states")
    explore.add_argument(
        "--max-commit-attempts",
        type=int,
        metavar="N",
        help="maxCommitAttempts (RETRY.MAX_ATTEMPTS)",
    )
    explore.add_argument(
        "--export",
        type=Path,
        metavar="DIR",
        help="write the terminal interleavings as tiered scenario vectors",
    )
    explore.add_argument(
        "--export-limit",
        type=int,
        default=2000,
        metavar="N",
        help="at most N vectors: a deterministic cover (default 2000)",
    )
    explore.add_argument(
        "--regressions",
        type=Path,
        default=Path("explore-regressions"),
        metavar="DIR",
        help="where a violation's vector is written",
    )
    explore.add_argument("--json", metavar="PATH", help="write a JSON report")
    explore.add_argument("--quiet", action="store_true", help="no progress on stderr")
    explore.set_defaults(handler=_explore)
    inspect = commands.add_parser("inspect", help="validate a real table and its history")
    inspect.add_argument("path", help="the table's root directory")
    inspect.add_argument("--json", action="store_true", help="print one JSON object")
    inspect.add_argument("--dot", metavar="FILE", help="write the commit graph as Graphviz DOT")
    inspect.set_defaults(handler=_inspect)
    args = parser.parse_args(argv)
    try:
        code: int = args.handler(args)
    except ImportError as error:
        from deltaspec.extras import missing_extra

        message = missing_extra(error)
        if message is None:
            raise
        print(f"deltaspec {args.command}: {message}", file=sys.stderr)
        return 2
    return code


if __name__ == "__main__":
    sys.exit(main())
