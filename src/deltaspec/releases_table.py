"""spec/data/releases.json: which delta-spark release has which behaviour, and the release
profiles table of spec/README.md rendered from it.

The model (``deltaspec.model.profiles``) and the impl (``deltaspec.impl.table.releases``) both
read their release behaviour from here, so the three places a release is described cannot drift.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
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


def release_text(release: ReleaseNumber) -> str:
    """``(3, 1, 0)`` → ``"3.1.0"``, as a vector's ``profile`` writes it."""
    return ".".join(str(part) for part in release)


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


@dataclass(frozen=True)
class WriterSupport:
    """What one release's writer can write to (TXN.WRITER_PROTOCOL): the ``minWriterVersion``
    values it takes and, from table features on, the writer features it supports."""

    release: ReleaseNumber
    writer_versions: frozenset[int]
    features: frozenset[str]
    reader_features: frozenset[str] = frozenset()
    """The reader-writer features among ``features``: listed in ``readerFeatures`` too."""

    def unsupported(self, min_writer_version: int, writer_features: Iterable[str]) -> list[str]:
        """Why this writer cannot write a table with this protocol (empty: it can): its
        version, or (at writer version 7) each listed feature it does not support."""
        if min_writer_version not in self.writer_versions:
            return [f"minWriterVersion {min_writer_version}"]
        if min_writer_version < TABLE_FEATURES_WRITER_VERSION:
            return []
        return sorted(set(writer_features) - self.features)


TABLE_FEATURES_WRITER_VERSION = 7


def _in_spans(release: ReleaseNumber, spans: list[list[str]]) -> bool:
    return any(
        parse_release(span[0]) <= release and (len(span) == 1 or release < parse_release(span[1]))
        for span in spans
    )


@cache
def writer_support(release: ReleaseNumber) -> WriterSupport:
    """What ``release``'s writer can write to, as spec/data/releases.json states it: a path-based
    writer, so catalog-managed tables are left out."""
    data = _data()["writer_protocols"]
    supported = {
        name: entry
        for name, entry in data["features"].items()
        if _in_spans(release, entry["spans"]) and entry.get("path_based", True)
    }
    features = {name: entry["min_writer_version"] for name, entry in supported.items()}
    readers = frozenset(name for name, entry in supported.items() if entry.get("reader"))
    if release < parse_release(data["table_features_since"]):
        highest = max(
            (version for since, version in data["legacy_max_writer_version"]
             if parse_release(since) <= release),
            default=0,
        )  # fmt: skip
        return WriterSupport(release, frozenset(range(1, highest + 1)), frozenset())
    if release < parse_release(data["versions_from_features_since"]):
        versions = frozenset(range(1, TABLE_FEATURES_WRITER_VERSION + 1))
    else:
        versions = frozenset({1, *features.values()})
    return WriterSupport(release, versions, frozenset(features), readers)


def full_writer_protocol(release: ReleaseNumber) -> dict[str, Any]:
    """The protocol (as a log's JSON) supporting everything ``release``'s writer can write, as
    delta-spark's own tests create tables: with table features, reader version 3 and writer
    version 7 listing every writable feature (the reader-writer ones as reader features too);
    before, the highest writer version the release takes."""
    support = writer_support(release)
    if TABLE_FEATURES_WRITER_VERSION not in support.writer_versions:
        highest = max(support.writer_versions)
        return {"minReaderVersion": 2 if highest >= 5 else 1, "minWriterVersion": highest}
    return {
        "minReaderVersion": 3,
        "minWriterVersion": TABLE_FEATURES_WRITER_VERSION,
        "readerFeatures": sorted(support.reader_features),
        "writerFeatures": sorted(support.features),
    }


UNKNOWN_FEATURE = "unknownWriterFeature-dev"
"""A writer feature no release supports: the unwritable feature of releases that support every
writer-only feature the newest release does."""


def unwritable_feature(release: ReleaseNumber) -> str:
    """A writer-only feature the newest release supports and ``release`` does not (the first by
    name), else one no release supports."""
    newest = writer_support(described_releases()[-1])
    support = writer_support(release)
    missing = sorted(newest.features - newest.reader_features - support.features)
    return missing[0] if missing else UNKNOWN_FEATURE


def unwritable_protocol(release: ReleaseNumber, base: dict[str, Any]) -> dict[str, Any]:
    """``base`` with one thing ``release``'s writer cannot write."""
    if base["minWriterVersion"] < TABLE_FEATURES_WRITER_VERSION:
        return {**base, "minWriterVersion": base["minWriterVersion"] + 1}
    return {
        **base,
        "writerFeatures": sorted([*base["writerFeatures"], unwritable_feature(release)]),
    }


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
