"""MkDocs hooks (``hooks:`` in mkdocs.yml): the pages that must never go stale are built from
their sources at every ``mkdocs build``, not written by hand.

- ``<!-- generated: cli -->`` in a page becomes the ``--help`` of ``deltaspec`` and of every
  subcommand (and sub-subcommand), rendered from the argparse parsers ``deltaspec.cli`` builds.
- ``<!-- generated: matrix -->`` becomes the compatibility matrix (docs/matrix.md): engines ×
  suites and each unsafe finding, from conformance/reports/ and spec/data/verified_live.json.
- ``<!-- generated: rules -->`` becomes the rule catalogue: every rule ``deltaspec.rules``
  parses from ``spec/*.md`` (id, title, releases), grouped by spec file.
- The repository's own documents are mounted into the site as they are in the checkout, so the
  pages link to them instead of copying them: ``spec/*.md`` (at ``spec/``), ARCHITECTURE.md,
  CHANGELOG.md, benchmarks/README.md (at ``benchmarks/method.md``), the benchmark runner's
  generated ``benchmarks/results/bench.md`` and its plots.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page

ROOT = Path(__file__).resolve().parents[1]
HELP_WIDTH = "100"

MOUNTS: dict[str, str] = {
    "ARCHITECTURE.md": "architecture.md",
    "CHANGELOG.md": "changelog.md",
    "benchmarks/README.md": "benchmarks/method.md",
    "benchmarks/results/bench.md": "benchmarks/results/bench.md",
}
"""Repository file -> its path in the site (spec/*.md and the plots are added by pattern)."""


def _mounts() -> dict[str, Path]:
    mounts = {site: ROOT / repo for repo, site in MOUNTS.items()}
    for document in sorted((ROOT / "spec").glob("*.md")):
        mounts[f"spec/{document.name}"] = document
    for plot in sorted((ROOT / "benchmarks" / "results").glob("*.png")):
        mounts[f"benchmarks/results/{plot.name}"] = plot
    return mounts


def on_files(files: Files, config: MkDocsConfig, **kwargs: Any) -> Files:
    for site_path, source in _mounts().items():
        files.append(File.generated(config, site_path, abs_src_path=str(source)))
    return files


@contextmanager
def _help_width() -> Iterator[None]:
    """argparse wraps help to $COLUMNS: fix it so the page is the same on every machine."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        yield
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def _subcommands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.extend(dict.fromkeys(action.choices.values()))
    return found


def _help_sections(parser: argparse.ArgumentParser, level: int) -> Iterator[str]:
    yield f"{'#' * level} `{parser.prog}`\n\n```text\n{parser.format_help().rstrip()}\n```\n"
    for child in _subcommands(parser):
        yield from _help_sections(child, level + 1)


def cli_reference() -> str:
    """Every parser's ``--help``: ``deltaspec`` first, then each subcommand in its order."""
    from deltaspec.cli import build_parser

    with _help_width():
        return "\n".join(_help_sections(build_parser(), 2))


def rule_catalogue() -> str:
    """Every rule of ``spec/*.md`` (this checkout's), grouped by the file that defines it."""
    from deltaspec.rules import load_rules

    rules = load_rules(ROOT / "spec")
    sources = list(dict.fromkeys(rule.source for rule in rules))
    parts = [f"{len(rules)} rules in {len(sources)} spec files.\n"]
    for source in sources:
        parts.append(f"## [{source}](../spec/{source})\n")
        parts.append("| rule | title | releases |\n|---|---|---|")
        for rule in (r for r in rules if r.source == source):
            title, releases = (text.replace("|", "\\|") for text in (rule.title, rule.releases))
            parts.append(f"| `{rule.id}` | {title} | {releases} |")
        parts.append("")
    return "\n".join(parts)


def compatibility_matrix() -> str:
    """The compatibility matrix and its unsafe findings, from the committed reports only."""
    from deltaspec.conformance.tools.matrix import engines, markdown

    return markdown(engines())


GENERATORS = {
    "<!-- generated: cli -->": cli_reference,
    "<!-- generated: rules -->": rule_catalogue,
    "<!-- generated: matrix -->": compatibility_matrix,
}


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **kwargs: Any) -> str:
    for marker, generate in GENERATORS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown
