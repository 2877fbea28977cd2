"""Explored interleavings as scenario vectors (``deltaspec explore --export``, violations).

A trace of the explorer is a schedule: which writer begins which operation, tries to
write, resolves. :func:`vector` replays a schedule on the correct model with a correct
log store (``Differential`` with no adapter under test) and writes what the model did as
the expectations, so a vector always says what the spec requires, even when the trace was
found under a model fault or a broken store. Steps of a writer the correct model has already
finished are dropped, and writers still pending at the end commit. A run of one writer's
``try_write``/``resolve`` steps that ends its commit loop with no other step in between
becomes one ``commit`` step: the vector means the same and the impl, whose commit loop
cannot be stepped, runs it too.

:func:`export` writes one vector per distinct terminal state (or a deterministic cover:
one per distinct final log, then an even sample), sorted into ``tier1/``, ``tier2/``...
by the number of steps (at most 6, 12, 24, then more), so that other implementations can
run the small ones first.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..harness.adapter import Json
from ..oracle.differential import Differential, outcome_view
from ..workload.alphabet import ExploreError
from .search import (
    ExploreConfig,
    Explorer,
    Problem,
    StateId,
    Step,
    start,
    step_names,
)

TIER_STEPS = (6, 12, 24)
"""The most steps a vector of tier 1, 2, 3 has; longer ones are tier 4."""


def tier(steps: int) -> int:
    return next((i for i, most in enumerate(TIER_STEPS, 1) if steps <= most), len(TIER_STEPS) + 1)


def _digest(data: object) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:10]


def _collapse(steps: Sequence[tuple[Json, bool]]) -> list[Json]:
    """Each maximal run of one writer's loop steps that finishes it becomes ``commit``."""
    out: list[Json] = []
    i = 0
    while i < len(steps):
        step, _ = steps[i]
        if "begin" in step:
            out.append(step)
            i += 1
            continue
        name = next(iter(step.values()))
        j = i
        while j < len(steps) and "begin" not in steps[j][0] and name in steps[j][0].values():
            j += 1
        finished = steps[j - 1][1]
        out.extend([{"commit": name}] if finished else [s for s, _ in steps[i:j]])
        i = j
    return out


def vector(config: ExploreConfig, trace: Sequence[Step], problem: Problem | None = None) -> Json:
    """The scenario vector of ``trace``, with the correct model's outcomes as expectations
    (its ``id`` is left for :func:`write` to set)."""
    diff = Differential([], config.setup)
    model = diff.model
    raw: list[tuple[Json, bool]] = []
    for step, name in zip(trace, step_names(trace), strict=True):
        if step.action == "begin":
            assert step.op is not None
            start(diff, name, step.op, diff.now)
            raw.append(({"begin": name}, False))
            continue
        if model.machine.writer(name).done:
            continue  # the correct rules ended it earlier
        now = diff.now
        diff.steps.append({step.action: name})
        ran = model.resolve(name) if step.action == "resolve" else model.try_write(name, now)
        diff.outcomes[name] = outcome_view(ran)
        raw.append(({step.action: name}, model.machine.writer(name).done))
    for name in sorted(diff.writers):
        if not model.machine.writer(name).done:
            diff.steps.append({"commit": name})
            diff.outcomes[name] = outcome_view(model.commit(name, diff.now))
            raw.append(({"commit": name}, True))
    diff.steps[:] = _collapse(raw)
    data = {**diff.scenario(), "table": config.setup.table}
    found = f"deltaspec explore ({config.describe()})"
    if problem is None:
        data["description"] = f"An interleaving explored by {found}."
        return data
    data["description"] = (
        f"The shortest trace {found} found to break {problem.rule} ({problem.kind}: "
        f"{problem.message}). The expectations are the correct rules' outcomes for the same "
        "schedule."
    )
    data["rules"] = sorted({*data["rules"], problem.rule})
    return data


def write(data: Json, directory: Path, id_prefix: str, stem: str) -> Path:
    """Write ``data`` as ``directory/<stem>-<digest>.json`` with the id ``id_prefix/<same>``."""
    name = f"{stem}-{_digest({k: v for k, v in data.items() if k != 'id'})}"
    data["id"] = f"{id_prefix}/{name}"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return path


def _even(items: Sequence[StateId], count: int) -> list[StateId]:
    return [items[i * len(items) // count] for i in range(count)] if count > 0 else []


def cover(explorer: Explorer, limit: int | None) -> list[StateId]:
    """The terminal states to export: all, or at most ``limit`` of them, deterministically:
    the first (shortest) per distinct final log, then an even sample of the rest."""
    terminals = explorer.terminals
    if limit is None or len(terminals) <= limit:
        return list(terminals)
    firsts: dict[int, StateId] = {}
    for key in terminals:
        firsts.setdefault(explorer.nodes_of[key].shape, key)
    chosen = set(_even(list(firsts.values()), min(limit, len(firsts))))
    rest = [k for k in terminals if k not in chosen]
    chosen |= set(_even(rest, limit - len(chosen)))
    return [k for k in terminals if k in chosen]


@dataclass(frozen=True)
class Exported:
    paths: tuple[Path, ...]
    terminal: int
    """How many distinct terminal states there were to export."""

    def tiers(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for path in self.paths:
            counts[path.parent.name] = counts.get(path.parent.name, 0) + 1
        return dict(sorted(counts.items()))


def export(
    explorer: Explorer, directory: Path, limit: int | None = None, prefix: str = "explored"
) -> Exported:
    """Write the terminal interleavings of a finished exploration as tiered vectors."""
    paths = []
    for key in cover(explorer, limit):
        data = vector(explorer.config, explorer.trace(key))
        expected = sorted(explorer.nodes_of[key].log.snapshots[-1].live_paths())
        if sorted(data["expect_snapshot"]["files"]) != expected:
            raise ExploreError(f"replaying terminal state {key} gave other files than explored")
        level = f"tier{tier(len(data['steps']))}"
        paths.append(write(data, directory / level, f"{prefix}/{level}", explorer.config.slug))
    return Exported(tuple(paths), len(explorer.terminals))


def write_violation(
    config: ExploreConfig, problem: Problem, trace: Sequence[Step], directory: Path
) -> Path:
    """The violation's shortest trace as a vector under ``directory``."""
    data = vector(config, trace, problem)
    return write(data, directory, "regressions", f"explore-{config.slug}")
