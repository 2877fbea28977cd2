"""The documentation site builds with ``mkdocs build --strict`` (every link and nav entry
resolves), and its generated pages are complete: the CLI reference has every subcommand's
``--help`` and the rule catalogue every rule of spec/."""

from __future__ import annotations

import argparse
import html
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deltaspec.cli import build_parser
from deltaspec.rules import load_rules

ROOT = Path(__file__).resolve().parents[2]


def commands(parser: argparse.ArgumentParser) -> list[str]:
    """Every command line that has its own parser: ``deltaspec``, ``deltaspec engines fetch``…"""
    found = [parser.prog]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found.extend(commands(child))
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    mkdocs = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(mkdocs, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out


def text_of(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def test_the_cli_reference_has_every_subcommands_help(site: Path) -> None:
    page = text_of(site / "reference" / "cli" / "index.html")
    names = commands(build_parser())
    assert {"deltaspec check", "deltaspec engines fetch", "deltaspec inspect"} <= set(names)
    for name in names:
        assert f"usage: {name}" in page, f"no --help of {name!r} in the CLI reference"


def test_the_rule_catalogue_has_every_rule(site: Path) -> None:
    page = text_of(site / "reference" / "rules" / "index.html")
    rules = load_rules()
    assert len(rules) > 50
    missing = [r.id for r in rules if not re.search(rf"(?<![\w.]){re.escape(r.id)}(?![\w.])", page)]
    assert missing == []


def test_the_pages_name_no_pypi_package(site: Path) -> None:
    """There is no deltaspec on PyPI: the site and README install from the repository."""
    pages = [text_of(page) for page in site.rglob("*.html")]
    pages.append((ROOT / "README.md").read_text(encoding="utf-8"))
    claims = [p for p in pages if re.search(r"pip install ['\"]?deltaspec\b(?!\S* @)", p)]
    assert claims == []
