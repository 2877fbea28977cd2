"""The ``spark`` stage of the main job: conformance/spark_differential on a SparkSession with
delta-spark loaded (conformance/adapters/deltaspark_session). Without pyspark or delta-spark it
is skipped, and says what is missing."""

from __future__ import annotations

import time
from functools import partial

from .stages import StageResult, StageSkipped


def spark_session() -> object:
    """This process's SparkSession with delta-spark, or StageSkipped saying why there is none."""
    from deltaspec.extras import available, install_hint

    if not available("pyspark"):
        raise StageSkipped(f"needs pyspark: {install_hint('spark')}")
    from ..adapters.deltaspark_session import (
        DeltaSparkUnavailable,
        delta_session,
    )

    try:
        return delta_session(app_name="deltaspec-check")
    except DeltaSparkUnavailable as why:
        raise StageSkipped(f"needs delta-spark: {why}") from None


def run_spark_differential(*, stop_at_first: bool = False, verbose: bool = False) -> StageResult:
    """Every script and conflict case of the differential (``stop_at_first``: up to the first
    that differs); any difference fails the stage. ``verbose``: a line when the session is up
    and one per script and case, with the time so far."""
    started = time.perf_counter()
    session = spark_session()
    from ..spark_differential.suite import run_differential

    progress = partial(print, flush=True) if verbose else None
    if progress is not None:
        progress(f"  SparkSession with delta-spark up in {time.perf_counter() - started:.0f} s")
    report = run_differential(session, stop_at_first=stop_at_first, progress=progress)
    failures = report.failures()
    cases = report.cases()
    summary = f"{len(report.scripts)} scripts, {len(report.conflicts)} conflict cases"
    if failures:
        summary += f"; {len(failures)} differ from delta-spark: {failures[0][:300]}"
    return StageResult(not failures, summary, {"cases": cases})
