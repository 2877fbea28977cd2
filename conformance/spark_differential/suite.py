"""The whole differential in one call: every script and every conflict case, as failures."""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engines.registry import make_engines
from ..harness.progress import Progress
from .compare import differences, run_both
from .conflicts import (
    CONFLICTS,
    conflict_differences,
    run_conflict,
)
from .reference import ReferenceCache
from .scripts import KNOWN_DIFFERENCES, SCRIPTS


@dataclass
class DifferentialReport:
    """Per script and per conflict case, what differs from delta-spark (empty: the same), and
    the scripts and cases whose delta-spark side was replayed from the recorded reference (the
    others ran it live)."""

    scripts: dict[str, list[str]] = field(default_factory=dict)
    conflicts: dict[str, list[str]] = field(default_factory=dict)
    replayed: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    """Each script's and case's time, both sides and the cross-reads."""

    def live(self) -> list[str]:
        """The scripts and cases whose delta-spark side ran live."""
        return [name for name in self.cases() if name not in self.replayed]

    def failures(self) -> list[str]:
        return [f"{name}: {found[0]}" for name, found in self.cases().items() if found]

    def cases(self) -> dict[str, list[str]]:
        return {**self.scripts, **{f"conflict: {k}": v for k, v in self.conflicts.items()}}


CASES = len(SCRIPTS) + len(CONFLICTS)
"""The scripts and conflict cases of a whole run."""


def script_failures(name: str, found: list[str]) -> list[str]:
    """``found`` judged against KNOWN_DIFFERENCES: a listed script must still differ."""
    if name in KNOWN_DIFFERENCES:
        return [] if found else [f"{name} now matches delta-spark: drop it from KNOWN_DIFFERENCES"]
    return found


def run_differential(
    spark: Any,
    workdir: Path | None = None,
    *,
    stop_at_first: bool = False,
    progress: Progress | None = None,
    reference: ReferenceCache | None = None,
) -> DifferentialReport:
    """Every script, then every conflict case, on ``spark`` (a session with delta-spark);
    ``stop_at_first``: none after the first that differs; ``progress`` counts the scripts and
    cases (each one's verdict and time); ``reference``: delta-spark's side recorded and
    replayed (None: always live, nothing recorded)."""
    engines = make_engines(spark)
    base = Path(tempfile.mkdtemp(prefix="deltaspec-spark-diff-")) if workdir is None else workdir
    report = DifferentialReport()

    def done(label: str, failures: list[str], since: float, replays_before: int) -> None:
        replayed = reference is not None and len(reference.replayed) > replays_before
        if replayed:
            report.replayed.append(label)
        report.seconds[label] = round(time.perf_counter() - since, 1)
        if progress is not None:
            verdict = "differs from delta-spark" if failures else "same as delta-spark"
            progress.step(label, f"{verdict}, delta-spark {'replayed' if replayed else 'live'}, "
                          f"in {report.seconds[label]:.1f} s")  # fmt: skip

    def replays() -> int:
        return 0 if reference is None else len(reference.replayed)

    try:
        for name in SCRIPTS:
            since, before = time.perf_counter(), replays()
            found = differences(run_both(spark, engines, name, base / name, reference))
            report.scripts[name] = script_failures(name, found)
            done(name, report.scripts[name], since, before)
            if stop_at_first and report.failures():
                return report
        for case in CONFLICTS:
            since, before = time.perf_counter(), replays()
            outcomes = run_conflict(spark, engines, case, base / case.replace(" ", "-"), reference)
            report.conflicts[case] = conflict_differences(outcomes, case)
            done(f"conflict: {case}", report.conflicts[case], since, before)
            if stop_at_first and report.failures():
                return report
    finally:
        if workdir is None:
            shutil.rmtree(base, ignore_errors=True)
    return report
