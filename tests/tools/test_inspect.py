"""``deltaspec inspect``: every delta-spark fixture, and small tables with one problem each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from deltaspec.conformance.harness.scenarios import schema_string
from deltaspec.conformance.tools.inspect import Severity, inspect, path_problem
from deltaspec.impl import codec
from deltaspec.impl.actions import AddFile, Metadata, RemoveFile
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.log.names import classic_checkpoint_name, commit_name
from deltaspec.impl.predicates import parse
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

SCRIPT = Path(sys.executable).parent / "deltaspec"
SCHEMA = schema_string([{"name": "p", "type": "string"}, {"name": "x", "type": "long"}])

Expected = tuple[bool, set[tuple[str, str, str | None]]]
PROBLEMS: dict[str, Expected] = {
    # NEGATIVE (MANIFEST.json): loading must fail the way the source test documents
    "golden-versions-not-contiguous": (False, {
        ("error", "LOG.CONTIGUITY", None),
        ("error", "LOG.CONTIGUITY", "VERSIONS_NOT_CONTIGUOUS")}),
    "rs-errlog-gap-after-checkpoint": (False, {
        ("error", "LOG.CONTIGUITY", None),
        ("error", "LOG.CONTIGUITY", "VERSIONS_NOT_CONTIGUOUS")}),
    "golden-invalid-protocol-version": (False, {
        ("error", "SNAPSHOT.PROTOCOL_METADATA", "UNSUPPORTED_PROTOCOL")}),
    "golden-checkpoint-missing-protocol": (False, {
        ("error", "SNAPSHOT.PROTOCOL_METADATA", "MISSING_PROTOCOL_OR_METADATA"),
        ("warning", "CHECKPOINT.READ", "MISSING_PROTOCOL_OR_METADATA")}),
    # edge tables: loadable, with what the manifest's notes say is odd about them
    "golden-corrupted-last-checkpoint": (True, {
        ("warning", "CHECKPOINT.LAST_CHECKPOINT", None)}),
    "rs-errlog-gap-before-checkpoint": (True, {("warning", "LOG.CONTIGUITY", None)}),
    # post-processed by the delta-kernel-rs authors: its checkpoint holds another table's
    # metadata (id, schema, configuration) than commits 0..1 replay to
    "krs-multipart-checkpoint-txn": (False, {("error", "CHECKPOINT.CONTENTS", None)}),
}  # fmt: skip
"""Every fixture that is not clean, and what ``inspect`` reports on it (notes left out)."""


def problems(report_findings: list) -> set[tuple[str, str, str | None]]:
    return {
        (f.severity.value, f.rule, f.kind) for f in report_findings if f.severity != Severity.NOTE
    }


@pytest.mark.rules("LOG.CONTIGUITY", "CHECKPOINT.CONTENTS", "CHECKPOINT.LAST_CHECKPOINT")
def test_every_fixture_is_inspected_and_only_the_documented_ones_have_problems(
    fixtures_dir: Path,
) -> None:
    tables = json.loads((fixtures_dir / "MANIFEST.json").read_text())["tables"]
    found = {}
    compared = 0
    for table in tables:
        report = inspect(fixtures_dir / table["name"])
        found[table["name"]] = (report.ok, problems(report.findings))
        compared += len(report.checked_checkpoints)
        if table["category"] == "negative":
            assert not report.ok and report.errors[-1].kind, table["name"]
        else:
            assert report.snapshot is not None and report.history is not None, table["name"]
            assert report.snapshot.version == table["latest_version"]
            assert not report.anomalies
    assert {n: f for n, f in found.items() if f != (True, set())} == PROBLEMS
    assert compared >= 15  # checkpoints compared with a replay from version 0


@pytest.mark.rules("CHECKPOINT.READ", "CHECKPOINT.CONTENTS")
def test_a_summary_of_a_checkpointed_table(fixtures_dir: Path) -> None:
    report = inspect(fixtures_dir / "golden-basic-inserts-deletes-checkpoint")
    assert report.ok and report.checked_checkpoints == (10,)
    assert report.commits == tuple(range(14))
    assert report.operations == {"WRITE": 8, "DELETE": 6}
    text = "\n".join(report.lines())
    assert "snapshot     version 13 from checkpoint 10" in text
    assert "checkpoints  10: equal to replaying the commits from version 0" in text
    assert text.endswith("verdict      OK (0 errors, 0 warnings)")
    data = report.json()
    assert data["ok"] and data["checkpoints_equal_replay"] == [10] and data["findings"] == []


def _table(root: Path) -> DeltaLog:
    log = DeltaLog(str(root))
    seed = [AddFile(f"p=a/a{i}.parquet", {"p": "a"}, 10, 0, True) for i in range(2)]
    OptimisticTransaction(log).commit(
        [Metadata("t", SCHEMA, ("p",)), *seed], Operation("CREATE TABLE")
    )
    return log


def _force(log: DeltaLog, version: int, fields: dict, actions: list) -> None:
    """Write a commit as given, with no conflict checks."""
    info = codec.make_commit_info({"timestamp": version, "operationParameters": {}, **fields})
    log.store.write_new(commit_name(version), codec.encode_commit([info, *actions]))


@pytest.mark.rules("ACTION.ADD")
def test_unsafe_paths_and_inconsistent_commit_infos_are_errors(tmp_path: Path) -> None:
    log = _table(tmp_path)
    adds = [AddFile(path, {"p": "a"}, 1, 0, True)
            for path in ("../escape.parquet", "/abs/x.parquet", "_delta_log/x.parquet",
                         "p=a/bad%zz.parquet", "p=a/fine%20name.parquet")]  # fmt: skip
    victim = RemoveFile("p=a/a0.parquet", 1, True, True, {"p": "a"}, 10)
    _force(log, 1, {"operation": "WRITE", "readVersion": 1, "isBlindAppend": True,
                    "isolationLevel": "Snapshot"}, [*adds, victim])  # fmt: skip
    report = inspect(tmp_path)
    assert not report.ok
    messages = sorted(f.message for f in report.findings if f.rule == "ACTION.ADD")
    assert messages == [
        "add path '../escape.parquet' has a '..' segment",
        "add path '/abs/x.parquet' is absolute",
        "add path '_delta_log/x.parquet' points into _delta_log",
        "add path 'p=a/bad%zz.parquet' does not decode: malformed percent escape in path "
        "'p=a/bad%zz.parquet'",
    ]
    rules = {f.rule for f in report.findings}
    assert {"ACTION.COMMIT_INFO", "TXN.BLIND_APPEND", "ISOLATION.RECORDED"} <= rules
    assert path_problem("p=a/part-0.parquet") is None
    assert path_problem("s3://bucket/x.parquet") == "is absolute"


@pytest.mark.rules("ISOLATION.LEVELS")
def test_a_lost_update_in_a_real_log_is_reported_and_drawn(tmp_path: Path) -> None:
    table = tmp_path / "t"
    log = _table(table)
    victim = RemoveFile("p=a/a0.parquet", 1, True, True, {"p": "a"}, 10)
    first = OptimisticTransaction(log)
    first.filter_files([parse(["=", "p", "a"])])
    first.stage([victim, AddFile("p=a/u1.parquet", {"p": "a"}, 10, 0, True)])
    assert first.commit(operation=Operation("DELETE")) == 1
    _force(log, 2, {"operation": "DELETE", "readVersion": 0, "isolationLevel": "Serializable",
                    "isBlindAppend": False},
           [victim, AddFile("p=a/u2.parquet", {"p": "a"}, 10, 0, True)])  # fmt: skip
    report = inspect(table)
    (anomaly,) = report.anomalies
    assert [f.message.split(":")[0] for f in report.errors] == ["LOST_UPDATE"]
    dot = tmp_path / "history.dot"
    done = subprocess.run([SCRIPT, "inspect", str(table), "--dot", str(dot)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 1
    assert "error        ISOLATION.LEVELS: LOST_UPDATE: lost update:" in done.stdout
    assert dot.read_text().startswith("digraph history {") and "color=red" in dot.read_text()
    assert anomaly.kind.value == "LOST_UPDATE"


@pytest.mark.rules("CHECKPOINT.CONTENTS")
def test_a_checkpoint_that_does_not_replay_is_an_error(tmp_path: Path) -> None:
    log = _table(tmp_path)
    for name in ("b1", "b2"):
        txn = OptimisticTransaction(log)
        txn.stage([AddFile(f"p=b/{name}.parquet", {"p": "b"}, 10, 0, True)])
        txn.commit(operation=Operation("WRITE"))
    write_checkpoint(log, log.snapshot(2), now_ms=0)
    # version 2's state, under the name of version 1's checkpoint
    log.store.write_new(classic_checkpoint_name(1), log.store.read(classic_checkpoint_name(2)))
    report = inspect(tmp_path)
    (error,) = report.errors
    assert error.rule == "CHECKPOINT.CONTENTS"
    assert error.message.startswith(
        "checkpoint 1 differs from replaying commits 0..1: live files (only in the checkpoint: "
        "[('p=b/b2.parquet', None)]"
    )
    assert report.checked_checkpoints == (2,)


def test_the_inspect_command(fixtures_dir: Path, tmp_path: Path) -> None:
    good = subprocess.run([SCRIPT, "inspect", str(fixtures_dir / "dat-multi-partitioned"),
                           "--json"], capture_output=True, text=True)  # fmt: skip
    assert good.returncode == 0, good.stderr
    data = json.loads(good.stdout)
    assert data["ok"] and data["version"] == data["commits"][-1]
    bad = subprocess.run([SCRIPT, "inspect", str(fixtures_dir / "golden-versions-not-contiguous")],
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 1 and "[VERSIONS_NOT_CONTIGUOUS]" in bad.stdout
    missing = subprocess.run([SCRIPT, "inspect", str(tmp_path)], capture_output=True, text=True)
    assert missing.returncode == 1 and "no _delta_log directory" in missing.stdout
