"""The whole differential in one call: every script and every conflict case, as failures."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .compare import differences, run_both
from .conflicts import (
    CONFLICTS,
    conflict_differences,
    run_conflict,
)
from .engines import make_engines
from .scripts import KNOWN_DIFFERENCES, SCRIPTS


@dataclass
class DifferentialReport:
    """Per script and per conflict case, what differs from delta-spark (empty: the same)."""

    scripts: dict[str, list[str]] = field(default_factory=dict)
    conflicts: dict[str, list[str]] = field(default_factory=dict)

    def failures(self) -> list[str]:
        return [f"{name}: {found[0]}" for name, found in self.cases().items() if found]

    def cases(self) -> dict[str, list[str]]:
        return {**self.scripts, **{f"conflict: {k}": v for k, v in self.conflicts.items()}}


def script_failures(name: str, found: list[str]) -> list[str]:
    """``found`` judged against KNOWN_DIFFERENCES: a listed script must still differ."""
    if name in KNOWN_DIFFERENCES:
        return [] if found else [f"{name} now matches delta-spark: drop it from KNOWN_DIFFERENCES"]
    return found


def run_differential(
    spark: Any, workdir: Path | None = None, *, stop_at_first: bool = False
) -> DifferentialReport:
    """Every script, then every conflict case, on ``spark`` (a session with delta-spark);
    ``stop_at_first``: none after the first that differs."""
    engines = make_engines(spark)
    base = Path(tempfile.mkdtemp(prefix="deltaspec-spark-diff-")) if workdir is None else workdir
    report = DifferentialReport()
    try:
        for name in SCRIPTS:
            found = differences(run_both(spark, engines, name, base / name))
            report.scripts[name] = script_failures(name, found)
            if stop_at_first and report.failures():
                return report
        for case in CONFLICTS:
            outcomes = run_conflict(spark, engines, case, base / case.replace(" ", "-"))
            report.conflicts[case] = conflict_differences(outcomes, case)
            if stop_at_first and report.failures():
                return report
    finally:
        if workdir is None:
            shutil.rmtree(base, ignore_errors=True)
    return report
