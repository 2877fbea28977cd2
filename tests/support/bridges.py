"""Helpers of the tests that run a spec-only bridge (conformance/bridge/examples/) over a suite."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def run_suite(tmp_path: Path, command: str, suite: str, known: Path, *extra: str) -> Any:
    """``deltaspec conformance --adapter cmd:COMMAND --suite SUITE`` with the known issues at
    ``known``: its JSON report."""
    from deltaspec.cli import main

    report = tmp_path / f"{suite}.json"
    main(["conformance", "--adapter", f"cmd:{command}", "--suite", suite, "--known-issues",
          str(known), *extra, "--json", str(report)])  # fmt: skip
    return json.loads(report.read_text())


def not_passing(data: Any, suite: str) -> dict[str, str]:
    """Each case of ``suite`` that did not pass, with its label."""
    return {r["case"]: r["label"] for r in data["suites"][suite] if r["verdict"] != "pass"}


def on_file(known: Path, failing: Iterable[str]) -> bool:
    """Whether every case of ``failing`` has its reason in the known issues at ``known``."""
    listed = {entry["case"] for entry in json.loads(known.read_text(encoding="utf-8"))}
    return set(failing) <= listed


def assert_pinned(
    data: Any, suite: str, pinned: dict[str, str], counts: dict[str, int], known: Path
) -> None:
    """The run of ``suite`` fails exactly the ``pinned`` cases (case -> label) with ``counts``,
    and every one that is not a skip has its reason in the known issues at ``known``."""
    assert not_passing(data, suite) == pinned
    assert data["counts"][suite] == counts
    failing = {case for case, label in pinned.items() if label != "skipped"}
    assert on_file(known, failing)  # every failure has its reason on file
