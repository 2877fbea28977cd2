"""``deltaspec oracle``: the differential state machine, the impl (or another adapter) against
the model."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from ..conformance.engines.registry import UnknownAdapter, adapter_factory
from .outputs import add_output

ORACLE_NEEDS = frozenset({"actions", "checkpoint", "time_travel"})


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "oracle", help="run the differential state machine: the impl against the model"
    )
    parser.add_argument("--profile", choices=["ci", "deep"], default="ci")
    parser.add_argument("--examples", type=int, help="override the profile's example count")
    parser.add_argument("--model-only", action="store_true", help="drive the model alone")
    parser.add_argument("--adapter", default="impl",
                        help="checked against the model: impl (default) or any adapter with "
                        "actions, checkpoint and time_travel, e.g. cmd:PROGRAM")  # fmt: skip
    add_output(parser, "--regressions", directory=True, metavar="DIR",
               help="where a failing run's trace is written as a vector")  # fmt: skip
    add_output(parser, "--json", metavar="PATH", help="write a JSON report")
    return parser


def run(args: argparse.Namespace) -> int:
    from ..conformance.oracle.differential import (  # lazy: CLI start-up (1.2 s)
        Divergence,
    )
    from ..conformance.oracle.machine import (  # lazy: CLI start-up (1.2 s)
        ORACLE_PROFILES,
        run_oracle,
    )

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
    print("tables: " + ", ".join(f"{k} {v}" for k, v in report.tables.items()))
    if args.json:
        Path(args.json).write_text(json.dumps({**report.__dict__, "against": against}, indent=2))
    return 0
