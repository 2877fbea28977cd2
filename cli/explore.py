"""``deltaspec explore``: enumerate every interleaving of a few writers over the model."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .quiet import add_quiet_argument

if TYPE_CHECKING:
    from ..conformance.explore.search import Progress as SearchProgress

from ..conformance.harness.progress import Progress
from ..conformance.releases.cache import cache_root
from ..conformance.workload.alphabet import ALPHABET, ExploreError, check_alphabet
from .outputs import add_output


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "explore", help="enumerate every interleaving of a few writers over the model"
    )
    add = parser.add_argument
    add("--writers", type=int, default=2, help="concurrent writers (default 2)")
    add("--ops", type=int, default=2, help="operations per writer (default 2)")
    add("--partitions", type=int, default=1,
        help="partitions of the table, 0 for unpartitioned (default 1)")  # fmt: skip
    add("--isolation", choices=["Serializable", "WriteSerializable"],
        help="the table's delta.isolationLevel (default unset: Serializable)")  # fmt: skip
    add("--profile", metavar="RELEASE", help="delta-spark release, e.g. 3.1.0")
    add("--alphabet", metavar="OPS", help="comma-separated operations (default all: append, "
        "read_write, delete, update, compact, metadata, set_txn)")  # fmt: skip
    add("--no-put-if-absent", action="store_true",
        help="a broken log store: a write to an existing version overwrites it")  # fmt: skip
    add("--on", choices=["s3", "azure"], metavar="STORE",
        help="replay a violation's vector on a server started on loopback (s3 or azure): one "
        "driver process per writer, with the store that checks then writes and with the "
        "conditional store")  # fmt: skip
    add("--rounds", type=int, default=10, metavar="N",
        help="rounds of the replay --on a server, each store (default 10)")  # fmt: skip
    add("--no-symmetry", action="store_true", help="no symmetry reduction")
    add("--fault", "--mutant", dest="fault", help="swap in a model fault (a broken model rule) "
        "for the run (no-append-check-under-serializable)")  # fmt: skip
    add("--max-states", type=int, help="stop after this many distinct states")
    add("--max-commit-attempts", type=int, metavar="N",
        help="maxCommitAttempts (RETRY.MAX_ATTEMPTS)")  # fmt: skip
    add_output(parser, "--export", directory=True, metavar="DIR",
               help="write the terminal interleavings as tiered scenario vectors")  # fmt: skip
    add("--export-limit", type=int, default=2000, metavar="N",
        help="at most N vectors: a deterministic cover (default 2000)")  # fmt: skip
    add_output(parser, "--regressions", directory=True, metavar="DIR",
               help="where a violation's vector is written (default: explore-regressions/ in "
               "the cache, $DELTASPEC_CACHE or ~/.cache/deltaspec; never the current "
               "directory)")  # fmt: skip
    add_output(parser, "--json", metavar="PATH", help="write a JSON report")
    add_quiet_argument(parser)
    return parser


def _explore_progress() -> Callable[[SearchProgress], None]:
    """The search's progress as a line on stderr every few seconds (conformance/harness/
    progress; ``--quiet`` silences it)."""
    lines = Progress("explore")

    def show(progress: SearchProgress) -> None:
        lines.note(
            f"depth {progress.depth}, {progress.states:,} distinct states, "
            f"{progress.queued:,} queued, {progress.states_per_second:,.0f} states/s"
        )

    return show


def run(args: argparse.Namespace) -> int:
    from ..conformance.explore.export import (  # lazy: CLI start-up (1 s)
        export,
        write_violation,
    )
    from ..conformance.explore.search import (  # lazy: CLI start-up (1 s)
        ExploreConfig,
        explore,
    )

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
            fault=args.fault,
            max_states=args.max_states,
            max_commit_attempts=args.max_commit_attempts,
        )
    except ExploreError as error:
        print(f"deltaspec explore: {error}", file=sys.stderr)
        return 2
    explorer, report = explore(config, _explore_progress())
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
        path = write_violation(config, problem, violation.trace, _regressions(args.regressions))
        print(f"vector (the correct rules' outcomes for this schedule): {path}")
        if args.on is not None:
            _replay_on(args.on, path, args.rounds)
        code = 1
    elif not report.complete:
        print(f"incomplete: stopped at {args.max_states:,} states; no violation so far")
    else:
        print("safe: every interleaving keeps the log, model and isolation invariants")
    if args.on is not None and violation is None:
        print(f"nothing to replay on {args.on}: no violation")
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


def _replay_on(kind: str, vector: Path, rounds: int) -> None:
    """The violation's vector replayed on a server of ``kind`` with both stores."""
    from ..conformance.oracle.driver_race import (  # lazy: CLI start-up (1 s)
        replay,
    )
    from ..conformance.servers.serving import (  # lazy: CLI start-up (0.25 s)
        serving,
    )

    with serving(kind) as server:
        print(f"on {kind} ({server.base_url} on loopback), one driver process per writer, "
              f"{rounds} rounds, each on a fresh table:")  # fmt: skip
        for result in replay(server, vector.read_text(encoding="utf-8"), rounds):
            print(f"  {result.line()}")


def _regressions(chosen: Path | None) -> Path:
    """Where a violation's vector goes: the directory given, else one in the cache (a checkout
    is left untouched)."""
    return chosen if chosen is not None else cache_root() / "explore-regressions"
