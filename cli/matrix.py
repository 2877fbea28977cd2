"""``deltaspec matrix``: the compatibility matrix, engines × suites, from committed reports."""

from __future__ import annotations

import argparse
import json
from typing import Any


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "matrix",
        help="the compatibility matrix: engines × suites, from committed reports",
        description="Every engine's verdict counts per suite, with the date, seconds and command "
        "of the run that made them, read from the committed reports only (nothing is run): "
        "conformance/reports/<engine>.json, written by python -m "
        "deltaspec.conformance.tools.matrix_record, and every live delta-spark release of "
        "spec/data/verified_live.json. A run whose cases are no longer today's corpus is marked "
        "STALE. docs/matrix.md renders the same with each unsafe finding.",
        epilog="exit codes: 0 printed; 1 a report is stale",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object: "
                        '{"format": 1, "engines": [{engine, implementation, version, adapter, '
                        "source, suites: {SUITE: {date, command, seconds, counts, stale}}, "
                        "findings, reports, unavailable}]}")  # fmt: skip
    return parser


def run(args: argparse.Namespace) -> int:
    from ..conformance.tools.matrix import (  # lazy: CLI start-up (0.1 s)
        engines,
        matrix_json,
        text,
    )

    found = engines()
    if args.json:
        print(json.dumps(matrix_json(found), indent=1))
    else:
        print("\n".join(text(found)))
    return 1 if any(run.stale for e in found for run in e.suites.values()) else 0
