"""The published bug a vector reproduces: its ``bug`` field (spec/scenarios.md, "Real bugs").

A vector of the ``real-bugs`` family carries the issue or pull request that reported or fixed
the bug (``links``), the engines and releases it affected (``affected``), and breaks the first
rule of its ``rules``. Reports carry the citation beside the verdict, so a run selected with
``-k real-bugs`` lists each bug with what the engine under test did of it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]
FAMILY = "real-bugs"
"""The family (the id's first component) of every vector that carries a ``bug``."""
LINK = re.compile(
    r"^https://github\.com/([^/]+/[^/]+)/(?:(?:issues|pull)/([0-9]+)|commit/([0-9a-f]+))$"
)


@dataclass(frozen=True)
class Affected:
    """One engine the bug was in: the releases it affected, and the first fixed one if any."""

    engine: str
    releases: str
    fixed: str | None = None

    def __str__(self) -> str:
        fixed = "" if self.fixed is None else f", fixed in {self.fixed}"
        return f"{self.engine} {self.releases}{fixed}"


@dataclass(frozen=True)
class Bug:
    links: tuple[str, ...]
    affected: tuple[Affected, ...]
    breaks: str
    """The rule the bug breaks: the vector's first rule."""

    @classmethod
    def of(cls, data: Mapping[str, Any] | None, rules: Sequence[str]) -> Bug | None:
        if data is None:
            return None
        affected = tuple(Affected(a["engine"], a["releases"], a.get("fixed"))
                         for a in data["affected"])  # fmt: skip
        return cls(tuple(data["links"]), affected, rules[0])

    @property
    def references(self) -> tuple[str, ...]:
        """The links as ``owner/repo#N``."""
        return tuple(_short(link) for link in self.links)

    def citation(self) -> str:
        """One line: the references, the engines and releases, the rule broken."""
        engines = "; ".join(str(a) for a in self.affected)
        return f"{', '.join(self.references)} ({engines}): breaks {self.breaks}"

    def as_json(self) -> Json:
        return {
            "links": list(self.links),
            "affected": [
                {"engine": a.engine, "releases": a.releases}
                | ({} if a.fixed is None else {"fixed": a.fixed})
                for a in self.affected
            ],
            "breaks": self.breaks,
        }


def _short(link: str) -> str:
    """``owner/repo#N`` for an issue or pull request, ``owner/repo@sha`` (7 digits) for a commit."""
    match = LINK.match(link)
    if match is None:
        return link
    return f"{match[1]}#{match[2]}" if match[2] else f"{match[1]}@{match[3][:7]}"
