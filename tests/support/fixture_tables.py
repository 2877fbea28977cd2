"""The tables delta-spark wrote (../shared/fixtures/delta-spark, or $DELTASPEC_FIXTURES) as the
manifest describes them: the impl's and the Spark reader's fixture tests both read them."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
_FIXTURES = Path(
    os.environ.get("DELTASPEC_FIXTURES", REPO.parent / "shared" / "fixtures" / "delta-spark")
)


def _manifest_tables() -> list[dict[str, Any]]:
    path = _FIXTURES / "MANIFEST.json"
    if not path.exists():
        return []  # the fixtures_dir fixture reports the missing corpus
    tables: list[dict[str, Any]] = json.loads(path.read_text())["tables"]
    return tables


TABLES = {table["name"]: table for table in _manifest_tables()}
LOADABLE = sorted(name for name, t in TABLES.items() if t["category"] != "negative")
EXPECTED = sorted(
    (name, version["label"])
    for name, t in TABLES.items()
    if t["expected"].get("provided")
    for version in t["expected"]["versions"]
)

SCAN_SESSION_ZONE: dict[str, tuple[timedelta, str]] = {
    "golden-partition-values-all-types": (
        timedelta(hours=-7),
        "the timestamp partition value '2021-09-08 11:11:11' has no zone; the generator's "
        "session zone was UTC-7, so Spark's expected row holds 2021-09-08T18:11:11Z",
    ),
}
"""Tables whose zone-less timestamp partition values were written in a non-UTC session zone."""


def label_version(name: str, label: str) -> int | None:
    """The version a manifest label names: ``latest`` is None, ``vN`` is N."""
    return None if label == "latest" else int(label[1:])
