"""The ``spark`` stage of the main job: conformance/spark_differential on a SparkSession with
delta-spark loaded (conformance/engines/deltaspark/session). The pinned engine is fetched into
the cache when it is missing (the code of ``deltaspec engines fetch``); without pyspark, or where
the engine cannot be fetched (``--offline``, a registry that does not answer, a failed fetch),
the stage is skipped and says why."""

from __future__ import annotations

import os
import time

from deltaspec.extras import available, install_hint

from ..engines.deltaspark.session import (
    ENV,
    RELEASE,
    DeltaSparkUnavailable,
    delta_session,
    locate,
)
from ..harness.progress import Progress
from ..releases.cache import engine_dir
from ..releases.fetch import Status, fetch
from ..releases.pins import load_pins
from ..releases.reachable import unreachable
from ..spark_differential.reference import for_check
from .stage_result import StageResult, StageSkipped


def spark_session(*, offline: bool = False) -> object:
    """This process's SparkSession with delta-spark, or StageSkipped saying why there is none."""
    if not available("pyspark"):
        raise StageSkipped(f"needs pyspark: {install_hint('spark')}")
    ensure_engine(offline=offline)

    try:
        return delta_session(app_name="deltaspec-check")
    except DeltaSparkUnavailable as why:
        raise StageSkipped(f"needs delta-spark: {why}") from None


def ensure_engine(*, offline: bool = False) -> None:
    """The pinned engine (published delta-spark ``RELEASE``: its jars and Python package) in the
    cache, fetched when it is missing, with a progress line; StageSkipped where it cannot be:
    ``offline``, a registry that does not answer a quick probe, a failed fetch. An engine named
    by ``DELTASPEC_DELTA_SPARK`` is the user's own and is never fetched."""
    if os.environ.get(ENV):
        return
    try:
        if locate().python is not None:
            return
    except DeltaSparkUnavailable:
        pass
    missing = f"needs delta-spark {RELEASE}, which is not in the cache ({engine_dir(RELEASE)})"
    hint = f"run `deltaspec engines fetch {RELEASE}` where Maven Central and PyPI answer"
    if offline:
        raise StageSkipped(f"{missing}, and --offline fetches nothing: {hint}")
    _fetch(RELEASE, missing, hint)


def _fetch(release: str, missing: str, hint: str) -> None:
    why = unreachable()
    if why is not None:
        raise StageSkipped(f"{missing}, and it cannot be fetched here: {why}; {hint}")
    progress = Progress("spark")
    progress.say(
        f"fetching delta-spark {release} into the engines cache (not there yet; its jars from "
        "Maven Central, pyspark and its Python package from PyPI) …"
    )
    fetched = fetch(load_pins().by_release[release])
    if fetched.status is not Status.OK:
        raise StageSkipped(f"{missing}, and fetching it failed: {fetched.detail}")
    progress.say(f"delta-spark {release} fetched")


def run_spark_differential(
    *, stop_at_first: bool = False, verbose: bool = False, offline: bool = False, live: bool = False
) -> StageResult:
    """Every script and conflict case of the differential (``stop_at_first``: up to the first
    that differs); any difference fails the stage. delta-spark's side is replayed where the
    reference cache holds it and recorded where not (``live``: always run, and recorded;
    spark_differential/reference). ``verbose``: progress lines when the session is up and for
    each script and case."""
    started = time.perf_counter()
    session = spark_session(offline=offline)
    from ..spark_differential.suite import CASES, run_differential  # lazy: pyspark is optional

    progress = Progress("spark", CASES, every=0, started=started) if verbose else None
    if progress is not None:
        progress.say("SparkSession with delta-spark up")
    reference = for_check(live=live)
    report = run_differential(
        session, stop_at_first=stop_at_first, progress=progress, reference=reference
    )
    failures = report.failures()
    summary = (
        f"{len(report.scripts)} scripts, {len(report.conflicts)} conflict cases; delta-spark's "
        f"side replayed for {len(report.replayed)}, live for {len(report.live())}"
    )
    if failures:
        summary += f"; {len(failures)} differ from delta-spark: {failures[0][:300]}"
    sides = {"reference": f"{reference.mode}:{reference.folder}",
             "replayed": report.replayed, "live": report.live()}  # fmt: skip
    data = {"cases": report.cases(), "seconds": report.seconds, "delta_spark": sides}
    return StageResult(not failures, summary, data)
