"""The CI gate of ``deltaspec conformance``: coverage is part of the verdict.

A run passes only when no case fails (verdicts.py) **and** the run covered what the gate asks:
every ``--require``d capability is declared by the adapter, and at least ``--min-cases`` cases
(default 1) actually ran rather than being skipped, so an adapter that declines everything
cannot pass. ``--profile RELEASE`` judges an engine against the delta-spark release it follows:
a vector applies when its own profile is in RELEASE's minor line, or when it targets the newest
release and every rule it cites holds at RELEASE (their ``Releases:`` lines) and behaves there as
at the newest release (no behaviour of spec/data/releases.json naming the rule starts or ends in
between); the others are skipped with that reason.

Exit codes (docs/guides/ci-gate.md, ``deltaspec conformance --help``): 0 pass; 1 a case failed;
2 usage or set-up error (unknown adapter, a bridge that does not start, bad corpus); 3 coverage
not met.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from deltaspec.releases_table import behaviours, writer_support
from deltaspec.rules import Release, Rule, covers

from .logvectors import LogVector
from .scenarios import Scenario
from .verdicts import CaseResult, Verdict

EXIT_PASS, EXIT_FAILED, EXIT_SETUP, EXIT_COVERAGE, EXIT_NO_CASE = 0, 1, 2, 3, 4
EXIT_CODES = (
    "exit codes (every suite): 0 pass; 1 a case failed (unsafe, wrong, error; with --strict also "
    "spurious, wrong-kind, stale known issue); 2 usage or set-up error (unknown adapter, a "
    "missing optional extra, a bridge program that does not start, a bad corpus or option); "
    "3 coverage not met (a --require'd capability is missing, or fewer than --min-cases cases "
    "ran); 4 --case / -k matched no case of the suites run"
)
"""``deltaspec conformance``'s exit codes, one table for all suites (README, docs/conformance.md
and ``--help`` state it)."""
NEWEST = "4.4.0"
WRITER_PROTOCOL = "TXN.WRITER_PROTOCOL"
"""Its release data is the writable features (releases.json ``writer_protocols``), not only
behaviours: a vector citing it applies only where they are the newest release's."""


@dataclass(frozen=True)
class Gate:
    require: frozenset[str] = frozenset()
    min_cases: int = 1
    profile: str | None = None


@dataclass
class Coverage:
    """What a run covered, next to what the gate asked."""

    capabilities: frozenset[str] = frozenset()
    ran: int = 0
    problems: list[str] = field(default_factory=list)


def parse_release(text: str) -> Release:
    parts = text.strip().lstrip("v").split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise ValueError(f"a release is X.Y.Z, not {text!r}")
    return (int(parts[0]), int(parts[1]), int(parts[2]))


def not_for_release(
    scenario: Scenario | LogVector, release: Release, rules: Mapping[str, Rule]
) -> str | None:
    """Why ``scenario`` does not apply to an engine following ``release`` (None: it applies)."""
    own, newest = parse_release(scenario.profile or NEWEST), parse_release(NEWEST)
    if own[:2] == release[:2]:
        return None
    if own != newest:
        return f"written for release {'.'.join(map(str, own))}"
    at = ".".join(map(str, release))
    outside = [r for r in scenario.rules if r in rules and not covers(rules[r].releases, release)]
    if outside:
        return f"{outside[0]} does not hold at {at}"
    for behaviour in behaviours().values():
        cited = sorted(set(behaviour.rules) & set(scenario.rules))
        if cited and behaviour.holds_in(release) != behaviour.holds_in(newest):
            return f"{cited[0]} behaves otherwise at {at} ({behaviour.summary}: {behaviour.name})"
    if WRITER_PROTOCOL in scenario.rules and writer_support(release).features != (
        writer_support(newest).features
    ):
        return f"{WRITER_PROTOCOL} behaves otherwise at {at} (it writes other features)"
    table = getattr(scenario, "table", None) or {}
    protocol = table.get("protocol") or {}
    unwritable = writer_support(release).unsupported(
        protocol.get("minWriterVersion", 1), protocol.get("writerFeatures") or ()
    )
    if unwritable:
        return f"{at} cannot write the vector's table ({WRITER_PROTOCOL}: {unwritable[0]})"
    return None


def ran(results: Iterable[CaseResult]) -> int:
    return sum(r.verdict is not Verdict.SKIPPED for r in results)


def judge_coverage(
    gate: Gate, capabilities: frozenset[str], results: Iterable[CaseResult]
) -> Coverage:
    count = ran(results)
    problems = [
        f"required capability {cap!r} is not declared by the adapter"
        for cap in sorted(gate.require - capabilities)
    ]
    if count < gate.min_cases:
        problems.append(
            f"only {count} case(s) ran (the rest were skipped); the gate needs at least "
            f"{gate.min_cases} (--min-cases)"
        )
    return Coverage(capabilities, count, problems)


def skip_reason(result: CaseResult) -> str:
    return result.details[0] if result.details else "no reason given"


def skips_by_reason(results: Iterable[CaseResult]) -> list[tuple[str, int]]:
    """Skipped cases grouped by their reason, most frequent first."""
    counter = Counter(skip_reason(r) for r in results if r.verdict is Verdict.SKIPPED)
    return sorted(counter.items(), key=lambda item: (-item[1], item[0]))
