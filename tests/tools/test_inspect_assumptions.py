"""``deltaspec inspect`` says what it assumed: a history whose commitInfos record no readVersion
or isolationLevel (delta-rs writes neither) is reported as such, not silently read as
Serializable commits each reading the version before."""

from __future__ import annotations

import pyarrow as pa
import pytest

from deltaspec.conformance.harness.logvectors import write_log
from deltaspec.conformance.tools.inspect import inspect

SCHEMA = '{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}'
CREATE = [
    {"commitInfo": {"timestamp": 0, "operation": "CREATE TABLE", "isBlindAppend": False}},
    {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}},
    {"metaData": {"id": "t", "format": {"provider": "parquet", "options": {}},
                  "schemaString": SCHEMA, "partitionColumns": [], "configuration": {}}},
]  # fmt: skip


def _append(path: str, info: dict) -> list[dict]:
    add = {"path": path, "partitionValues": {}, "size": 1, "modificationTime": 0,
           "dataChange": True}  # fmt: skip
    return [{"commitInfo": {"timestamp": 1, "operation": "WRITE", **info}}, {"add": add}]


@pytest.mark.rules("ISOLATION.RECORDED", "ACTION.COMMIT_INFO")
def test_missing_read_versions_and_levels_are_reported(tmp_path):
    recorded = {"readVersion": 0, "isolationLevel": "Serializable", "isBlindAppend": True}
    write_log(tmp_path / "full", {"00000000000000000000.json": CREATE,
                                  "00000000000000000001.json": _append("a", recorded)})  # fmt: skip
    assert inspect(tmp_path / "full").assumptions == []
    write_log(tmp_path / "silent", {
        "00000000000000000000.json": CREATE,
        "00000000000000000001.json": _append("a", {}),
        "00000000000000000002.json": _append("b", {"readVersion": 1}),
        "00000000000000000003.json": [_append("c", {})[1]],
    })  # fmt: skip
    report = inspect(tmp_path / "silent")
    assert report.ok and len(report.assumptions) == 3
    bare, unread, unleveled = report.assumptions
    assert bare.startswith("1 of 3 commits after version 0 have no commitInfo (versions 3)")
    assert unread.startswith("1 of 3 commits after version 0 record no readVersion (versions 1;")
    assert unleveled.startswith("2 of 3 commits after version 0 record no isolationLevel")
    assert report.json()["assumptions"] == report.assumptions
    assert any(line.startswith("assumed      1 of 3") for line in report.lines())


def test_a_delta_rs_history_is_flagged(tmp_path):
    import deltalake

    table = pa.table({"x": [1, 2]})
    for mode in ("error", "append", "append"):
        deltalake.write_deltalake(str(tmp_path), table, mode=mode)
    assumptions = inspect(tmp_path).assumptions
    assert [a.split(" (")[0] for a in assumptions] == [
        "2 of 2 commits after version 0 record no readVersion",
        "2 of 2 commits after version 0 record no isolationLevel",
    ]
