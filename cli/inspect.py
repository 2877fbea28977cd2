"""``deltaspec inspect``: validate a real table and its history."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .outputs import add_output


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "inspect", help="validate a real table and its history"
    )
    parser.add_argument("path", help="the table's root directory")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_output(parser, "--dot", metavar="FILE", help="write the commit graph as Graphviz DOT")
    return parser


def run(args: argparse.Namespace) -> int:
    from ..conformance.tools.inspect import (  # lazy: CLI start-up (1.4 s)
        dot,
        inspect,
    )

    report = inspect(args.path)
    if args.json:
        print(json.dumps(report.json(), indent=2))
    else:
        print("\n".join(report.lines()))
    if args.dot is not None:
        Path(args.dot).write_text(dot(report))
    return 0 if report.ok else 1
