"""spec/data/releases.json: which delta-spark release has which behaviour, and the release
profiles table of spec/README.md rendered from it.

The model (``deltaspec.model.profiles``) and the impl (``deltaspec.impl.table.releases``) both
read their release behaviour from here, so the three places a release is described cannot drift.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

RELEASES_FILE = "releases.json"
TABLE_HEADER = (
    "| Profile | Isolation level selection | Winning-commit checks, in order | Retry | "
    "Other differences |",
    "|---|---|---|---|---|",
)
TABLE_COLUMNS = ("releases", "isolation", "checks", "retry", "other")

ReleaseNumber = tuple[int, int, int]


def parse_release(text: str) -> ReleaseNumber:
    """``"3.1.0"`` (or ``"v3.1.0"``) → ``(3, 1, 0)``."""
    major, minor, patch = (int(part) for part in text.strip().lstrip("v").split("."))
    return (major, minor, patch)


@dataclass(frozen=True)
class Behaviour:
    """A behaviour that holds from release ``since`` up to, not including, ``until``."""

    name: str
    since: ReleaseNumber
    until: ReleaseNumber | None
    rules: tuple[str, ...]
    summary: str

    def holds_in(self, release: ReleaseNumber) -> bool:
        return self.since <= release and (self.until is None or release < self.until)


def _data() -> dict[str, Any]:
    entry = resources.files("deltaspec.spec") / "data" / RELEASES_FILE
    data: dict[str, Any] = json.loads(entry.read_text(encoding="utf-8"))
    return data


@cache
def behaviours() -> dict[str, Behaviour]:
    """Behaviour name → when it holds, as spec/data/releases.json states it."""
    return {
        name: Behaviour(
            name,
            parse_release(entry["since"]),
            parse_release(entry["until"]) if "until" in entry else None,
            tuple(entry["rules"]),
            entry["summary"],
        )
        for name, entry in _data()["behaviours"].items()
    }


@cache
def latest_release() -> ReleaseNumber:
    """The newest release the spec describes (a vector's default profile)."""
    return parse_release(_data()["latest"])


@cache
def described_releases() -> tuple[ReleaseNumber, ...]:
    """Every minor release whose source the spec was read at, oldest first."""
    return tuple(parse_release(text) for text in _data()["releases"])


def profile_rows() -> list[dict[str, str]]:
    """The rows of the release profiles table: one per rule set, oldest first."""
    rows: list[dict[str, str]] = _data()["profiles"]
    return rows


def render_table() -> str:
    """The release profiles table of spec/README.md, as Markdown."""
    body = ("| " + " | ".join(row[c] for c in TABLE_COLUMNS) + " |" for row in profile_rows())
    return "\n".join((*TABLE_HEADER, *body))


def with_table(readme: str) -> str:
    """``readme`` (spec/README.md) with its release profiles table replaced by
    :func:`render_table`."""
    lines = readme.splitlines()
    start = lines.index(TABLE_HEADER[0])
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("|")), len(lines))
    rendered = [*lines[:start], *render_table().splitlines(), *lines[end:]]
    return "\n".join(rendered) + ("\n" if readme.endswith("\n") else "")


if __name__ == "__main__":  # python -m deltaspec.releases_table: regenerate the README table
    entry = resources.files("deltaspec.spec") / "README.md"
    with resources.as_file(entry) as path:
        path.write_text(with_table(path.read_text(encoding="utf-8")), encoding="utf-8")
