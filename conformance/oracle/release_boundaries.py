"""Every release boundary the spec states, judged on model and impl (part of the ``vectors`` stage).

A scenario vector states its outcomes at one release profile (its ``profile``, default the
newest). A behaviour moved to the wrong release passes those vectors whenever none of them sits
on either side of the release the behaviour starts (or stops) in. So for every behaviour of
spec/data/releases.json, the vectors citing one of its rules are run on the model at the last
release without it and the first release with it (and around its ``until``); those whose result
changes across the boundary are its *witnesses*: they show the behaviour. Up to
:data:`WITNESSES` of them are then run on the impl at both releases, and everything the two
report must agree: each writer's outcome, which release-dependent commitInfo fields it wrote,
and the final snapshot. The model reads the same table of releases, so a boundary the impl
places elsewhere is a disagreement on one side. A behaviour no vector witnesses is named in the
report (a gap in the vectors, not a pass).
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from deltaspec.releases_table import (
    Behaviour,
    ReleaseNumber,
    behaviours,
    described_releases,
    parse_release,
    release_text,
)

from ..engines.impl.adapter import ImplAdapter
from ..engines.model.adapter import ModelAdapter
from ..harness.adapter import Adapter, Unsupported
from ..harness.outcomes import Committed, Outcome
from ..harness.runner import run_scenario
from ..harness.scenarios import RunResult, Scenario
from ..harness.suites import kept_logs
from .differential import outcome_view, snapshot_view

WITNESSES = 3
"""Witnesses run on the impl per behaviour (each at both releases of its boundary)."""
ENGINE_INFO = frozenset({"engineInfo", "operationParameters", "operationMetrics", "userMetadata"})
"""commitInfo fields an engine writes in its own words (the model writes none of them); whether
every other field (isBlindAppend, isolationLevel, txnId, inCommitTimestamp, …) is written must
agree, and the values of those both must write the same are compared by ``outcome_view``."""


@dataclass(frozen=True)
class BoundaryRun:
    """One vector at one release on either side of a behaviour's boundary."""

    vector: Scenario
    release: str
    behaviour: str


def boundary_releases(behaviour: Behaviour) -> list[ReleaseNumber]:
    """The last release without ``behaviour`` and the first with it, and the same around the
    release it stops in (only releases the spec describes)."""
    described = described_releases()
    edges: list[ReleaseNumber] = []
    for edge in (behaviour.since, behaviour.until):
        if edge is None or edge not in described:
            continue
        index = described.index(edge)
        edges += [*described[max(index - 1, 0) : index], edge]
    return edges


def boundary_runs(vectors: Sequence[Scenario]) -> list[BoundaryRun]:
    """Every (vector, release) the boundaries ask for, once per behaviour: each vector citing one
    of the behaviour's rules at each release of :func:`boundary_releases`."""
    runs: list[BoundaryRun] = []
    for name, behaviour in behaviours().items():
        rules = set(behaviour.rules)
        cited = [v for v in vectors if rules & set(v.rules)]
        for release in boundary_releases(behaviour):
            text = release_text(release)
            runs += [BoundaryRun(replace(v, profile=text), text, name) for v in cited]
    return runs


@dataclass(frozen=True)
class BoundaryReport:
    runs: int
    """Impl runs (each against the model's result)."""
    releases: tuple[str, ...]
    witnessed: tuple[str, ...]
    """Behaviours some vector witnesses."""
    unwitnessed: tuple[str, ...]
    """Behaviours no vector witnesses: their boundary is not judged."""
    disagreements: tuple[str, ...]

    def line(self) -> str:
        gap = f"; no vector shows {', '.join(self.unwitnessed)}" if self.unwitnessed else ""
        return (
            f"{len(self.witnessed)} release boundaries judged on model and impl at "
            f"{len(self.releases)} releases ({self.runs} runs){gap}"
        )


def judge_boundaries(vectors: Sequence[Scenario], stop_at_first: bool = False) -> BoundaryReport:
    """Find each behaviour's witnesses on the model, run them on the impl at both releases of
    its boundary, and list where model and impl disagree."""
    by_behaviour: dict[str, dict[str, list[BoundaryRun]]] = {}
    for run in boundary_runs(vectors):
        by_behaviour.setdefault(run.behaviour, {}).setdefault(run.vector.id, []).append(run)
    disagreements: list[str] = []
    witnessed: list[str] = []
    releases: set[str] = set()
    runs = 0
    workdir = Path(tempfile.mkdtemp(prefix="deltaspec-boundaries-"))
    try:
        with kept_logs():  # a vector at an old release sets up what the impl warns of
            for behaviour, per_vector in by_behaviour.items():
                found = (
                    (pair, model) for pair in per_vector.values()
                    if (model := _model_results(pair)) is not None and _changes(model)
                )  # fmt: skip
                witnesses = list(itertools.islice(found, WITNESSES))
                if witnesses:
                    witnessed.append(behaviour)
                for pair, model in witnesses:
                    for run, expected in zip(pair, model, strict=True):
                        runs += 1
                        releases.add(run.release)
                        got = _run(ImplAdapter(workdir / str(runs)), run.vector)
                        if got is None:
                            continue
                        disagreements += [
                            f"{run.vector.id} at {run.release} (boundary of {behaviour}): {d}"
                            for d in differences(expected, got)
                        ]
                if disagreements and stop_at_first:
                    break
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    unwitnessed = tuple(sorted(set(behaviours()) - set(witnessed)))
    ordered = tuple(sorted(releases, key=parse_release))
    return BoundaryReport(runs, ordered, tuple(witnessed), unwitnessed, tuple(disagreements))


def _run(adapter: Adapter, vector: Scenario) -> RunResult | None:
    try:
        return run_scenario(adapter, vector)
    except Unsupported:
        return None


def _model_results(pair: list[BoundaryRun]) -> list[RunResult] | None:
    results = [_run(ModelAdapter(), run.vector) for run in pair]
    return None if any(r is None for r in results) else [r for r in results if r is not None]


def _changes(results: list[RunResult]) -> bool:
    """Whether the model's result at one release differs from the next one's."""
    return any(next(differences(a, b), None) is not None for a, b in itertools.pairwise(results))


def differences(model: RunResult, impl: RunResult) -> Iterator[str]:
    """What the impl reported that the model did not: outcomes (with the commitInfo fields
    written) per writer, and the final snapshot."""
    for writer in sorted(set(model.outcomes) | set(impl.outcomes)):
        want, got = model.outcomes.get(writer), impl.outcomes.get(writer)
        if want is None or got is None:
            yield f"writer {writer}: model {want}, impl {got}"
            continue
        if outcome_view(want) != outcome_view(got):
            yield f"writer {writer}: model {outcome_view(want)}, impl {outcome_view(got)}"
        elif _info_fields(want) != _info_fields(got):
            yield (
                f"writer {writer}: commitInfo fields: model {sorted(_info_fields(want))}, "
                f"impl {sorted(_info_fields(got))}"
            )
    want_snapshot, got_snapshot = snapshot_view(model.snapshot), snapshot_view(impl.snapshot)
    if not want_snapshot.get("schema"):
        return  # no metadata was ever committed: no reader recovers a table state from that log
    if want_snapshot != got_snapshot:
        keys = sorted(k for k in want_snapshot if want_snapshot.get(k) != got_snapshot.get(k))
        wanted, found = _pick(want_snapshot, keys), _pick(got_snapshot, keys)
        yield f"snapshot differs in {keys}: model {wanted}, impl {found}"


def _info_fields(outcome: Outcome) -> frozenset[str]:
    if not isinstance(outcome, Committed) or outcome.commit_info is None:
        return frozenset()
    return frozenset(outcome.commit_info) - ENGINE_INFO


def _pick(snapshot: dict[str, Any], keys: list[str]) -> dict[str, Any]:
    return {k: snapshot.get(k) for k in keys}
