"""The fixtures suite: tables delta-spark wrote (../shared/fixtures/delta-spark) read by an
implementation and compared with independent expectations.

Expectations, none of them produced by the reader under test:
- the manifest's latest version, and the error kind each negative table documents;
- the snapshot JSON at every version that ``expected_states`` gives for a table (files,
  protocol, properties, partition columns, app ids, domains): the caller passes the model's replay
  of the JSON commits (``engines.model.reader.model_states``), as this suite sees neither side;
- the rows Spark read at the labelled versions (``_expected/<table>/<label>/table_content``).

A reader that crashes (a bridge process that exits) fails that one check as an error; the next
check runs (the bridge driver starts a new process). A snapshot is judged on the keys it reports.

The corpus is pinned by the SHA-256 of its MANIFEST.json, as DAT consumers pin theirs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from .json_rows import JsonRows, decode_rows
from .reading import ReadFailure, TableReader
from .verdicts import CaseResult, Verdict

Json = dict[str, Any]
ExpectedStates = Callable[[Path], Iterable[Json]]
"""A table's expected snapshot JSON at each version (none: nothing to compare)."""
PINNED_MANIFEST_SHA256 = "c747eccc75b2ce807d7567e47c3fa29c3714b85baac6908ab365788a25f0d197"
COMPARED = ("files", "protocol", "properties", "partition_columns", "app_txns", "domains")

NEGATIVE_KINDS: dict[str, str] = {
    "golden-versions-not-contiguous": "VERSIONS_NOT_CONTIGUOUS",
    "golden-invalid-protocol-version": "UNSUPPORTED_PROTOCOL",
    "golden-checkpoint-missing-protocol": "MISSING_PROTOCOL_OR_METADATA",
    "rs-errlog-gap-after-checkpoint": "VERSIONS_NOT_CONTIGUOUS",
}
"""The error kind each negative table must be refused with (the manifest's notes)."""

STATE_NOT_COMPARABLE: dict[str, str] = {
    "krs-multipart-checkpoint-txn": "its checkpoint parts were post-processed by the "
    "delta-kernel-rs authors and disagree with the JSON commits the model replays",
}
ROWS_NOT_COMPARABLE: dict[str, str] = {
    "golden-partition-values-all-types": "a zone-less timestamp partition value written in a "
    "UTC-7 session: the expected row depends on the reader's session zone",
}


class ManifestMismatch(Exception):
    """The fixtures directory is not the corpus this suite was pinned to."""


@dataclass(frozen=True)
class FixtureTable:
    name: str
    category: str
    latest_version: int
    labels: tuple[str, ...]


def manifest_sha256(directory: Path) -> str:
    return hashlib.sha256((directory / "MANIFEST.json").read_bytes()).hexdigest()


def load_manifest(
    directory: Path, *, pinned: str | None = PINNED_MANIFEST_SHA256
) -> list[FixtureTable]:
    digest = manifest_sha256(directory)
    if pinned is not None and digest != pinned:
        raise ManifestMismatch(
            f"{directory}/MANIFEST.json has SHA-256 {digest}, the suite is pinned to {pinned} "
            "(pass --fixtures-sha256 to accept another corpus)"
        )
    tables = json.loads((directory / "MANIFEST.json").read_text(encoding="utf-8"))["tables"]
    return [
        FixtureTable(
            t["name"],
            t["category"],
            t["latest_version"],
            tuple(v["label"] for v in t["expected"].get("versions", []))
            if t["expected"].get("provided")
            else (),
        )
        for t in tables
    ]


def _label_version(label: str) -> int | None:
    return None if label == "latest" else int(label[1:])


def _rows(table: pa.Table, names: list[str]) -> list[str]:
    columns = [table.column(n).to_pylist() for n in names]
    return sorted(repr(row) for row in zip(*columns, strict=True)) if columns else []


def _same_rows(ours: pa.Table, expected: pa.Table) -> bool:
    names = expected.column_names
    if not set(names) <= set(ours.column_names) or ours.num_rows != expected.num_rows:
        return False
    if not ours.num_rows:
        return True
    cast = pa.table({n: ours.column(n).cast(expected.schema.field(n).type) for n in names})
    return _rows(cast, names) == _rows(expected, names)


def _crashed(case: str, error: Exception) -> CaseResult:
    """A reader that raised something other than ReadFailure (a bridge that exited, a bug)."""
    return CaseResult(case, Verdict.ERROR, (f"{type(error).__name__}: {error}"[:500],))


def check_table(
    reader: TableReader, directory: Path, table: FixtureTable, expected_states: ExpectedStates
) -> list[CaseResult]:
    """Every check of one fixture table; case ids are ``fixtures/<table>/<what>``."""
    root = directory / table.name
    case = f"fixtures/{table.name}"
    if table.category == "negative":
        want = NEGATIVE_KINDS.get(table.name, "ANY")
        try:
            reader.read(root, None)
        except ReadFailure as failure:
            if want in {"ANY", failure.kind}:
                return [CaseResult(f"{case}/refused", Verdict.PASS)]
            return [CaseResult(f"{case}/refused", Verdict.WRONG_KIND,
                               (f"expected {want}, got {failure.kind}",))]  # fmt: skip
        except Exception as error:
            return [_crashed(f"{case}/refused", error)]
        return [
            CaseResult(f"{case}/refused", Verdict.UNSAFE, (f"read a table that must fail {want}",))
        ]
    results: list[CaseResult] = []
    latest: Json | None
    try:
        latest = reader.read(root, None)
    except ReadFailure as failure:
        verdict = Verdict.SKIPPED if failure.kind == "UNSUPPORTED_FEATURE" else Verdict.WRONG
        return [CaseResult(f"{case}/latest", verdict, (str(failure),))]
    except Exception as error:  # the other checks still run, on a restarted bridge
        latest = None
        results.append(_crashed(f"{case}/latest", error))
    if latest is not None:  # judged on the keys it reports (log-vectors.md): a row reader has none
        results.append(_judge_latest(case, latest, table.latest_version))
    for expected in expected_states(root):
        version = expected["version"]
        if table.name in STATE_NOT_COMPARABLE:
            reason = STATE_NOT_COMPARABLE[table.name]
            results.append(CaseResult(f"{case}/v{version}", Verdict.SKIPPED, (reason,)))
            continue
        results.append(_compare_state(reader, root, f"{case}/v{version}", version, expected))
    for label in table.labels:
        results.append(_compare_rows(reader, directory, table, label))
    return results


def _judge_latest(case: str, latest: Json, want: int) -> CaseResult:
    if latest.get("version", want) == want:
        return CaseResult(f"{case}/latest", Verdict.PASS)
    why = f"version {latest['version']}, expected {want}"
    return CaseResult(f"{case}/latest", Verdict.WRONG, (why,))


def _compare_state(
    reader: TableReader, root: Path, case: str, version: int, expected: Json
) -> CaseResult:
    try:
        ours = reader.read(root, version)
    except ReadFailure as failure:
        if failure.kind in {"VERSION_NOT_FOUND", "UNSUPPORTED_FEATURE"}:
            return CaseResult(case, Verdict.SKIPPED, (str(failure),))
        return CaseResult(case, Verdict.WRONG, (str(failure),))
    except Exception as error:
        return _crashed(case, error)
    details, verdict = [], Verdict.PASS
    for key in COMPARED:
        if key not in ours:
            continue
        if ours[key] != expected.get(key):
            details.append(f"{key}: model {expected.get(key)!r}, reader {ours[key]!r}")
            verdict = max(verdict, Verdict.UNSAFE if key == "files" else Verdict.WRONG,
                          key=lambda v: v.severity)  # fmt: skip
    return CaseResult(case, verdict, tuple(details))


def _compare_rows(
    reader: TableReader, directory: Path, table: FixtureTable, label: str
) -> CaseResult:
    case = f"fixtures/{table.name}/rows@{label}"
    if table.name in ROWS_NOT_COMPARABLE:
        return CaseResult(case, Verdict.SKIPPED, (ROWS_NOT_COMPARABLE[table.name],))
    expected = pq.read_table(directory / "_expected" / table.name / label / "table_content")
    try:
        ours = reader.rows(directory / table.name, _label_version(label))
    except ReadFailure as failure:
        verdict = Verdict.SKIPPED if failure.kind == "UNSUPPORTED_FEATURE" else Verdict.WRONG
        return CaseResult(case, verdict, (str(failure),))
    except Exception as error:
        return _crashed(case, error)
    if ours is None:
        return CaseResult(case, Verdict.SKIPPED, (f"{reader.name} cannot scan",))
    if isinstance(ours, JsonRows):  # a bridge's read_rows: typed by the expected columns
        try:
            ours = decode_rows(ours, expected.schema)
        except (ValueError, TypeError, KeyError, pa.ArrowException) as error:
            why = f"rows not in the JSON of spec/bridge.md: {type(error).__name__}: {error}"
            return CaseResult(case, Verdict.ERROR, (why[:500],))
    if _same_rows(ours, expected):
        return CaseResult(case, Verdict.PASS)
    return CaseResult(
        case, Verdict.UNSAFE, (f"{ours.num_rows} rows, expected {expected.num_rows}",)
    )


def run_fixtures(
    reader: TableReader,
    directory: Path,
    *,
    expected_states: ExpectedStates,
    pinned: str | None = PINNED_MANIFEST_SHA256,
    progress: Callable[[str], None] | None = None,
    tables: Sequence[FixtureTable] | None = None,
) -> list[CaseResult]:
    """Every check of ``tables`` (default: every table of the manifest)."""
    results = []
    for table in load_manifest(directory, pinned=pinned) if tables is None else tables:
        if progress is not None:
            progress(table.name)
        results.extend(check_table(reader, directory, table, expected_states))
    return results
