"""The ``spark`` stage of the main job: conformance/spark_differential on a SparkSession with
delta-spark loaded (conformance/adapters/deltaspark_session). Without pyspark or delta-spark it
is skipped, and says what is missing."""

from __future__ import annotations

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


def run_spark_differential(*, stop_at_first: bool = False) -> StageResult:
    """Every script and conflict case of the differential (``stop_at_first``: up to the first
    that differs); any difference fails the stage."""
    session = spark_session()
    from ..spark_differential.suite import run_differential

    report = run_differential(session, stop_at_first=stop_at_first)
    failures = report.failures()
    cases = report.cases()
    summary = f"{len(report.scripts)} scripts, {len(report.conflicts)} conflict cases"
    if failures:
        summary += f"; {len(failures)} differ from delta-spark: {failures[0][:300]}"
    return StageResult(not failures, summary, {"cases": cases})
