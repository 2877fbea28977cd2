"""The ``deltaspec`` command: one module per subcommand, each with ``add_parser(commands)`` and
``run(args) -> int``; ``main`` builds the parser from them and dispatches."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .. import __version__
from ..extras import missing_extra
from . import (
    check,
    conformance,
    describe,
    engines,
    explore,
    inspect,
    matrix,
    mutants,
    oracle,
    outputs,
    spec,
)
from .quiet import quiet_if_asked

COMMANDS = (spec, check, conformance, engines, matrix, describe, oracle, mutants, explore, inspect)
"""The subcommands, in the order ``deltaspec --help`` lists them."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deltaspec",
        description="Executable specification and test oracle for the Delta Lake transaction log.",
    )
    parser.add_argument("--version", action="version", version=f"deltaspec {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(commands).set_defaults(run=command.run)
    return parser


SETUP_ERROR = 2
"""The exit code of a usage or set-up error, the same for every command."""


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    problem = outputs.unwritable(args)
    if problem is not None:
        return _setup_error(args, problem)
    try:
        with quiet_if_asked(args):
            code: int = args.run(args)
    except ImportError as error:
        message = missing_extra(error)
        if message is None:
            raise
        return _setup_error(args, message)
    except OSError as error:
        failed = outputs.failed_output(error, args)
        if failed is None:
            raise
        return _setup_error(args, failed)
    return code


def _setup_error(args: argparse.Namespace, message: str) -> int:
    print(f"deltaspec {args.command}: {message}", file=sys.stderr)
    return SETUP_ERROR


if __name__ == "__main__":
    sys.exit(main())
