"""The judge: where a run of a scenario vector differs from what the vector expects.

One function, :func:`judge`, compares an adapter's :class:`RunResult` with every expectation a
vector holds: each writer's outcome (``expect``), the latest snapshot (``expect_snapshot``), the
checkpointed versions (``expect_checkpoints``) and the checksum files (``expect_checksums``). The
run passes when it finds no divergence. harness/verdicts.py grades the divergences it finds
(unsafe, wrong, spurious…); it compares nothing itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .outcomes import PENDING, Outcome, outcome_json
from .scenarios import Expectation, RunResult, Scenario
from .snapshots import field_json

PATH_SETS = frozenset({"files", "tombstones"})
"""Snapshot fields compared as sets of paths (any order)."""


@dataclass(frozen=True)
class Divergence:
    """One expectation the run did not meet. ``subject`` is what was judged: ``writer`` (``name``
    the writer), ``snapshot`` (``name`` the snapshot field), ``checkpoints`` or ``checksum``
    (``name`` the version). A writer's ``expected`` is its :class:`Expectation` and ``got`` its
    outcome; otherwise both are the JSON of what was compared (path lists sorted)."""

    subject: str
    name: str | int | None
    expected: Any
    got: Any

    def __str__(self) -> str:
        where = self.subject if self.name is None else f"{self.subject} {self.name}"
        expected, got = self.expected, self.got
        if isinstance(expected, Expectation):
            expected, got = expected.as_json(), outcome_json(got)
        return f"{where}: expected {expected!r}, got {got!r}"


@dataclass(frozen=True)
class Judgement:
    """A run of ``scenario``: the divergences found, or the adapter's crash (``error``)."""

    scenario: Scenario
    divergences: tuple[Divergence, ...]
    error: str | None = None

    @property
    def passed(self) -> bool:
        return not self.divergences and self.error is None

    @property
    def failures(self) -> tuple[str, ...]:
        """Each divergence (or the crash) in one line."""
        return tuple(map(str, self.divergences)) + ((self.error,) if self.error else ())


def outcome_of(result: RunResult, writer: str) -> Outcome:
    """What ``writer`` ended with; a writer the run never reported is still pending."""
    return result.outcomes.get(writer, PENDING)


def judge(scenario: Scenario, result: RunResult, *, compare_files: bool = True) -> Judgement:
    """Every way ``result`` differs from ``scenario``'s expectations, in the vector's order:
    writers, snapshot fields, checkpoints, checksums (``compare_files=False``: the snapshot's
    ``files`` and ``tombstones`` are not judged)."""
    found: list[Divergence] = []
    for writer, expected in scenario.expect.items():
        actual = outcome_of(result, writer)
        if not expected.met_by(actual):
            found.append(Divergence("writer", writer, expected, actual))
    for key, want in scenario.expect_snapshot.items():
        if key in PATH_SETS and not compare_files:
            continue
        got = getattr(result.snapshot, key)
        if key in PATH_SETS:
            want, got = sorted(want), sorted(got or [])
        if want != got:
            found.append(Divergence("snapshot", key, field_json(key, want), field_json(key, got)))
    if scenario.expect_checkpoints is not None:
        want, got = sorted(scenario.expect_checkpoints), sorted(result.checkpoints or ())
        if want != got:
            found.append(Divergence("checkpoints", None, want, got))
    for version, fields in (scenario.expect_checksums or {}).items():
        want = fields.as_json()
        crc = (result.checksums or {}).get(version)
        got = None if crc is None else {k: crc.get(k) for k in want}
        if got != want:
            found.append(Divergence("checksum", version, want, got))
    return Judgement(scenario, tuple(found))


def run_all(
    scenarios: Iterable[Scenario], runner: Callable[[Scenario], RunResult]
) -> list[Judgement]:
    """Run and judge each vector; an adapter crash is a failed vector, reported as such."""
    judged = []
    for scenario in scenarios:
        try:
            judged.append(judge(scenario, runner(scenario)))
        except Exception as error:
            judged.append(Judgement(scenario, (), f"{type(error).__name__}: {error}"))
    return judged
