"""``--quiet``: no progress lines (conformance/harness/progress.py) on stderr; the commands that
run long take it, and ``main`` applies it before the command runs."""

from __future__ import annotations

import argparse


def add_quiet_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--quiet", action="store_true", help="no progress lines on stderr (verdicts stay on stdout)"
    )


def apply_quiet(args: argparse.Namespace) -> None:
    """Silence the progress lines of this process, and of those it starts, when asked."""
    if getattr(args, "quiet", False):
        from deltaspec.conformance.harness.progress import silence

        silence()
