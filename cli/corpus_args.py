"""The command-line options that name a corpus of vectors (``deltaspec conformance``, ``check``)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_corpus_arguments(parser: argparse.ArgumentParser) -> None:
    add_directories(parser, "--scenarios", "another directory of scenario vectors (repeatable)")
    parser.add_argument("--fixtures", type=Path, metavar="DIR", help="the delta-spark fixtures "
                        "(default ../shared/fixtures/delta-spark)")  # fmt: skip


def add_directories(parser: argparse.ArgumentParser, flag: str, help: str) -> None:
    """A repeatable option naming directories of vectors."""
    parser.add_argument(flag, type=Path, action="append", default=[], metavar="DIR", help=help)
