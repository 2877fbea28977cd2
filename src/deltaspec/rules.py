"""The rule catalogue, read from the headings of ``spec/*.md``.

A rule is a level-3 heading ``### <ID> — <title>`` followed by a
``Releases:`` line; the prose is the rule.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import TypeVar

HEADING = re.compile(r"^### (?P<id>[A-Z][A-Z0-9_]*(?:\.[A-Z0-9_]+)+) — (?P<title>.+)$")
RULE_ID = re.compile(r"\b[A-Z][A-Z0-9_]*(?:\.[A-Z][A-Z0-9_]*)+\b")


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    releases: str
    source: str


class SpecError(ValueError):
    """The spec's own files are malformed (a heading without Releases, a duplicate ID…)."""


def spec_root() -> Traversable:
    return resources.files("deltaspec.spec")


def parse_rules(text: str, source: str) -> list[Rule]:
    rules: list[Rule] = []
    lines = text.splitlines()
    for index, line in enumerate(lines):
        match = HEADING.match(line)
        if match is None:
            if line.startswith("### ") and RULE_ID.match(line[4:]):
                raise SpecError(f"{source}:{index + 1}: malformed rule heading {line!r}")
            continue
        following = next((rest for rest in lines[index + 1 :] if rest.strip()), "")
        if not following.startswith("Releases:"):
            raise SpecError(f"{source}:{index + 1}: rule {match['id']} has no Releases line")
        releases = following.removeprefix("Releases:").strip()
        rules.append(Rule(match["id"], match["title"].strip(), releases, source))
    return rules


def load_rules(root: Traversable | None = None) -> list[Rule]:
    """Every rule in ``spec/*.md``, in file then heading order; IDs must be unique."""
    root = root or spec_root()
    rules: list[Rule] = []
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            rules.extend(parse_rules(entry.read_text(encoding="utf-8"), entry.name))
    seen: set[str] = set()
    for rule in rules:
        if rule.id in seen:
            raise SpecError(f"rule {rule.id} is defined twice")
        seen.add(rule.id)
    return rules


Implemented = TypeVar("Implemented", bound=Callable[..., object])
_IMPLEMENTATIONS: dict[str, set[str]] = {}


def rule(*ids: str) -> Callable[[Implemented], Implemented]:
    """Marks the function that implements spec rules ``ids`` (``@rule("CONFLICT.APPEND_MATCH")``).

    The marker only records ``module:qualname`` per rule (see :func:`implementations`); the
    function is returned unchanged."""

    def mark(function: Implemented) -> Implemented:
        where = f"{function.__module__}:{function.__qualname__}"
        for rule_id in ids:
            _IMPLEMENTATIONS.setdefault(rule_id, set()).add(where)
        return function

    return mark


def implementations() -> dict[str, tuple[str, ...]]:
    """Rule ID → the ``module:qualname`` of every marked function imported so far."""
    return {rule_id: tuple(sorted(where)) for rule_id, where in _IMPLEMENTATIONS.items()}


Release = tuple[int, int, int]


PRIMARY_LIVE_RELEASE = "4.4.0"
"""The delta-spark release of the in-process reference engine (the published jars, fetched by
``deltaspec engines fetch``): the release a known issue without ``releases`` was measured on, and
verified_live.json's primary."""


def release_of(text: str) -> Release:
    parts = [int(p) if p.isdigit() else 10**6 for p in text.strip().lstrip("v").split(".")]
    return (parts[0], parts[1], parts[2])


def covers(releases: str, release: Release) -> bool:
    """Whether a ``Releases:`` line (spec/README.md: ``all``, ``vX.Y.Z+``, ``vX.Y.Z–vA.B.x``,
    comma-separated) includes ``release``."""
    for part in (p.strip() for p in releases.split(",")):
        if part == "all":
            return True
        if part.endswith("+") and release >= release_of(part[:-1]):
            return True
        if "–" in part:
            low, high = part.split("–")
            if release_of(low) <= release <= release_of(high):
                return True
        elif not part.endswith("+") and part.startswith("v") and release == release_of(part):
            return True
    return False


def rule_text(rule: Rule, root: Traversable | None = None) -> str:
    """The rule's heading and prose, up to the next heading of the same or a higher level."""
    lines = ((root or spec_root()) / rule.source).read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"### {rule.id} — "))
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith(("# ", "## ", "### "))),
        len(lines),
    )
    return "\n".join(lines[start:end]).rstrip()


STRICTER_MARKER = "**Stricter than delta-spark, on purpose.**"
"""Opens the paragraph of a rule's text that says delta-spark does not make this check and the
spec does anyway: a verdict follows the rule, and delta-spark's adapters list its vectors as
``stricter`` known issues (conformance/harness/verdicts.py)."""


def stricter_than_engine(rule: Rule, root: Traversable | None = None) -> bool:
    """Whether the rule's text says the spec is stricter than delta-spark on purpose."""
    return STRICTER_MARKER in rule_text(rule, root)


LIVE_ENGINE_FILE = "verified_live.json"
"""spec/data/verified_live.json: every vector's verdict on live delta-spark, release by release,
and the rules its passing vectors verify (written by ``python -m
deltaspec.conformance.tools.verified_live record``, checked by tests/conformance); its
``primary`` release is the in-process reference engine's."""


def _live_record(root: Traversable | None) -> tuple[str, dict[str, dict[str, list[str]]]]:
    """The primary release, and release → (rule ID → the vectors citing it that pass there)."""
    entry = (root or spec_root()) / "data" / LIVE_ENGINE_FILE
    if not entry.is_file():
        return "", {}
    data = json.loads(entry.read_text(encoding="utf-8"))
    rules = {release: run.get("rules", {}) for release, run in data["releases"].items()}
    return str(data["primary"]), rules


def verified_live(root: Traversable | None = None) -> dict[str, tuple[str, ...]]:
    """Rule ID → the vectors citing it that pass on the primary, in-process reference engine."""
    primary, by_release = _live_record(root)
    rules = by_release.get(primary, {})
    return {rule: tuple(vectors) for rule, vectors in rules.items()}


def live_releases(root: Traversable | None = None) -> dict[str, tuple[str, ...]]:
    """Rule ID → the delta-spark releases on which a vector citing it passes live."""
    out: dict[str, list[str]] = {}
    for release, rules in _live_record(root)[1].items():
        for rule in rules:
            out.setdefault(rule, []).append(release)
    return {rule: tuple(releases) for rule, releases in out.items()}
