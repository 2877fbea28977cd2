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
import __future__

import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from types import FunctionType
from typing import Any

from ..spark_differential.reference import ENV as REFERENCE_ENV
from ..spark_differential.reference import default_folder, setting
from .catalog import (
    CATALOG,
    Mutant,
    MutantError,
    by_id,
    mutated_source,
    resolve,
)
from .mutant_env import worker_environment

__all__ = [
    "CATALOG",
    "Mutant",
    "MutantError",
    "MutantResult",
    "apply",
    "by_id",
    "mutated_source",
    "run_isolated",
    "run_mutants",
]


def apply(mutant: Mutant, target: str | None = None) -> None:
    """Swap the mutated function in, in this process only (``target``: the function's
    ``module:qualname`` when the caller already resolved it).

    The function object keeps its identity and takes the mutated code, so every reference to it
    sees the mutant: module attributes, but also the tuples and tables of rule functions the impl
    runs in order (a rebinding of names alone would leave those running the original). A
    function whose closure differs from the mutant's is rebound by name instead."""
    target = mutant.target if target is None else target
    owner, name, original = resolve(target)
    module = sys.modules[target.split(":")[0]]
    code = compile(
        mutated_source(mutant, target),
        f"<mutant {mutant.id}>",
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
    namespace: dict[str, Any] = {}
    exec(code, module.__dict__, namespace)
    replacement = namespace[name]
    old, new = _function(original), _function(replacement)
    same_closure = old is not None and new is not None and old.__code__.co_freevars == ()
    if same_closure and new is not None and old is not None and new.__code__.co_freevars == ():
        old.__code__ = new.__code__
        old.__defaults__, old.__kwdefaults__ = new.__defaults__, new.__kwdefaults__
        return
    setattr(owner, name, replacement)
    for other in list(sys.modules.values()):
        if getattr(other, "__name__", "").startswith("deltaspec."):
            for attr, value in list(vars(other).items()):
                if value is original:
                    setattr(other, attr, replacement)


def _function(raw: Any) -> FunctionType | None:
    """The plain function under a property, static or class method, or decorator wrapper."""
    raw = getattr(raw, "fget", raw)
    raw = getattr(raw, "__func__", raw)
    while hasattr(raw, "__wrapped__"):
        raw = raw.__wrapped__
    return raw if isinstance(raw, FunctionType) else None


@dataclass(frozen=True)
class MutantResult:
    id: str
    killed: bool
    stage: str | None
    """The oracle stage that failed: ``machine``, ``race`` or ``vectors``."""
    seconds: float
    detail: str = ""


STAGES: tuple[str, ...] = ("vectors", "race", "services", "machine", "spark")
"""The stages a mutant runs, in order: ``IMPL_STAGE_NAMES`` of conformance/oracle/stages.py, the
registry ``deltaspec check`` runs too (spelled out so that importing this module stays light; a
test keeps them equal). The vectors on the model alone are left out: a mutant of the impl
cannot fail them."""


def run_in_process(mutant_id: str | None, stages: Sequence[str] = STAGES) -> MutantResult:
    """Apply ``mutant_id`` (None: no mutant) here, then run the chosen stages in order; the
    first that fails kills the mutant. A stage that cannot run here (no Spark) kills nothing."""
    from .stages import StageOptions, chosen, run_stage

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
    from concurrent.futures import ThreadPoolExecutor

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
