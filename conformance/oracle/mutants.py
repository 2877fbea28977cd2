"""Seeded bugs in the impl, to measure how much the oracle catches.

A mutant (the catalog is :mod:`deltaspec.conformance.oracle.catalog`) replaces one snippet of one
impl function by a slightly wrong one: the kind of mistake a Delta writer's author makes.
``apply`` recompiles just that function from its mutated source inside a process and rebinds it
everywhere it was imported; nothing on disk changes. ``run_mutants`` runs each mutant in its own
spawned process through the oracle's stages, cheapest first, and reports whether it was killed,
by which stage and how fast; with ``own_stage`` each mutant runs only the stage recorded as
killing it (its ``killed_by``).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import Any

from ..spark_differential.reference import ENV as REFERENCE_ENV
from ..spark_differential.reference import default_folder, setting
from .catalog import (
    CATALOG,
    STAGES,
    Mutant,
    MutantError,
    by_id,
    mutated_source,
)
from .mutant_env import worker_environment
from .mutation import apply
from .stages import StageOptions, chosen, run_stage

__all__ = [
    "CATALOG",
    "STAGES",
    "Mutant",
    "MutantError",
    "MutantResult",
    "apply",
    "by_id",
    "mutated_source",
    "run_isolated",
    "run_mutants",
]


@dataclass(frozen=True)
class MutantResult:
    id: str
    killed: bool
    stage: str | None
    """The oracle stage that failed: ``machine``, ``race`` or ``vectors``."""
    seconds: float
    detail: str = ""


def run_in_process(mutant_id: str | None, stages: Sequence[str] = STAGES) -> MutantResult:
    """Apply ``mutant_id`` (None: no mutant) here, then run the chosen stages in order; the
    first that fails kills the mutant. A stage that cannot run here (no Spark) kills nothing."""
    started = time.perf_counter()
    options = StageOptions(shrink=False, verbose=False, fail_fast=True)
    first: StageOptions | None = None
    if mutant_id is not None:
        mutant = by_id(mutant_id)
        apply(mutant)
        os.environ.update(worker_environment(mutant.id, mutant.target))  # Spark's workers
        first = replace(options, rule=mutant.rule)
    for stage in chosen(list(stages)):
        # the vectors citing the mutant's rule first: most mutants die there, in a second
        result = run_stage(stage, first) if first is not None and stage.name == "vectors" else None
        if result is None or result.passed:
            result = run_stage(stage, options)
        if not result.passed:
            return MutantResult(
                mutant_id or "", True, stage.name, time.perf_counter() - started,
                result.summary[:300],
            )  # fmt: skip
    return MutantResult(mutant_id or "", False, None, time.perf_counter() - started)


def _child(mutant_id: str | None, stages: Sequence[str], queue: Any, reference: str | None) -> None:
    if reference is not None:
        os.environ[REFERENCE_ENV] = reference
    queue.put(asdict(run_in_process(mutant_id, stages)))


def run_isolated(
    mutant_id: str | None,
    timeout: float,
    stages: Sequence[str] = STAGES,
    reference: str | None = None,
) -> MutantResult:
    """``run_in_process`` in a fresh spawned interpreter, killed after ``timeout`` seconds;
    ``reference``: the setting of the recorded delta-spark side (spark_differential/reference)."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    started = time.perf_counter()
    process = context.Process(target=_child, args=(mutant_id, tuple(stages), queue, reference))
    process.start()
    process.join(timeout)
    if process.is_alive():
        process.kill()
        process.join()
        return MutantResult(mutant_id or "", False, None, timeout, f"timed out after {timeout} s")
    if queue.empty():  # a dead oracle proves nothing: not counted as a kill
        return MutantResult(
            mutant_id or "", False, None, time.perf_counter() - started,
            f"the oracle process died with exit code {process.exitcode}",
        )  # fmt: skip
    return MutantResult(**queue.get())


def run_mutants(
    ids: Iterable[str] | None = None,
    timeout: float = 60.0,
    jobs: int = 2,
    progress: Callable[[MutantResult], None] | None = None,
    stages: Sequence[str] = STAGES,
    *,
    own_stage: bool = False,
) -> tuple[MutantResult, list[MutantResult]]:
    """The unmutated baseline, then each mutant (``jobs`` at a time); with ``own_stage`` each
    mutant runs only its ``killed_by`` stage (a known survivor none) and the baseline every
    stage they name."""
    chosen: Sequence[str] = list(ids) if ids is not None else [m.id for m in CATALOG]
    unknown = set(chosen) - {m.id for m in CATALOG}
    if unknown:
        raise MutantError(f"no such mutants: {sorted(unknown)}")
    for mutant_id in chosen:
        mutated_source(by_id(mutant_id))

    def stages_of(mutant_id: str) -> Sequence[str]:
        if not own_stage:
            return stages
        killed_by = by_id(mutant_id).killed_by
        return () if killed_by is None else (killed_by,)  # a known survivor runs nothing

    if own_stage:
        stages = [s for s in STAGES if any(s in stages_of(i) for i in chosen)]
    # the spark stage's delta-spark side does not depend on the mutant: the baseline replays
    # what deltaspec check recorded (recording what is missing), each mutant replays it
    folder = default_folder()
    baseline = run_isolated(None, timeout * 3, stages, setting("auto", folder))
    replay = setting("replay", folder)
    results: list[MutantResult] = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        runs = pool.map(lambda i: run_isolated(i, timeout, stages_of(i), replay), chosen)
        for result in runs:
            results.append(result)
            if progress is not None:
                progress(result)
    return baseline, results
