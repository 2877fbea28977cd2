"""``--quiet``: no progress lines (conformance/harness/progress.py) on stderr; the commands that
run long take it, and ``main`` applies it while the command runs."""

from __future__ import annotations

import argparse
from contextlib import AbstractContextManager, nullcontext

from ..conformance.harness.progress import silenced


def add_quiet_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--quiet", action="store_true", help="no progress lines on stderr (verdicts stay on stdout)"
    )


def quiet_if_asked(args: argparse.Namespace) -> AbstractContextManager[None]:
    """While the command runs: no progress lines from this process and those it starts, when
    ``--quiet`` asked for it (restored afterwards)."""
    if getattr(args, "quiet", False):
        return silenced()
    return nullcontext()
