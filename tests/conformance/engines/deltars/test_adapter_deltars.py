"""The delta-rs adapter and the operation translation it shares with the Spark adapter: writers
as operations (and the ones refused), vectors end to end on the ``deltalake`` package, and every
divergence listed in conformance/harness/known_issues/deltars.json reproduced."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from deltaspec.conformance.engines import operations as ops
from deltaspec.conformance.engines.deltars.adapter import (
    DELTALAKE_VERSION,
    DeltaRsAdapter,
    outcome_of,
)
from deltaspec.conformance.harness.actions import parse_action
from deltaspec.conformance.harness.adapter import Capability, TableSetup, Unsupported, WriterSpec
from deltaspec.conformance.harness.outcomes import Committed, Error, outcome_json
from deltaspec.conformance.harness.reads import parse_read
from deltaspec.conformance.harness.runner import run_scenario
from deltaspec.conformance.harness.scenarios import (
    ExpectedSnapshot,
    RunResult,
    Scenario,
    load_scenarios,
)
from deltaspec.conformance.harness.verdicts import KNOWN_ISSUES, Verdict, classify
from deltaspec.rules import load_rules

SCENARIOS = {s.id: s for s in load_scenarios()}
RULE_IDS = {rule.id for rule in load_rules()}
KNOWN = [  # scenario vectors; the log vectors' entries are checked in test_log_vectors.py
    e for e in json.loads((KNOWN_ISSUES / "deltars.json").read_text(encoding="utf-8"))
    if "scenario" in e
]  # fmt: skip
TABLE = {
    "schema": [{"name": "p", "type": "string"}, {"name": "x", "type": "long"}],
    "partition_columns": ["p"],
    "files": [
        {"path": f"p={p}/{p}{i}.parquet", "partition": {"p": p}} for p in "ab" for i in (1, 2)
    ],
}


def _view(*packs: tuple[str, ...], app_txns: dict[str, int] | None = None) -> ops.View:
    """A table partitioned by p whose data files hold the given scenario files."""
    names = [n for pack in packs for n in pack]
    return ops.View(
        version=0,
        partition_columns=("p",),
        types={"p": "string", "x": "long", "_file": "string"},
        configuration={},
        app_txns=app_txns or {},
        data_files=tuple(
            ops.DataFile(pack[0], frozenset(pack), frozenset(pack), pack) for pack in packs
        ),
        partitions={n: {"p": n.split("/")[0].removeprefix("p=")} for n in names},
    )


VIEW = _view(("p=a/a1",), ("p=a/a2",), ("p=b/b1",))


def _add(path: str, **extra: Any) -> dict[str, Any]:
    return {"add": {"path": path, "partitionValues": {"p": path[2]}, **extra}}


def _remove(path: str, **extra: Any) -> dict[str, Any]:
    return {"remove": {"path": path, **extra}}


def _translate(operation: str, reads: list[Any], actions: list[Any], view: ops.View = VIEW) -> Any:
    typed_reads = tuple(parse_read(r) for r in reads)
    typed = tuple(parse_action(a) for a in actions)
    return ops.translate(ops.Intent(operation, reads=typed_reads, actions=typed), view)


@pytest.mark.rules("PREDICATE.PARTITION_ONLY", "TXN.READ_FILES")
def test_a_rewrite_keeps_the_partition_part_and_picks_its_rows_where_skipping_cannot_see():
    reads = [{"filter": [["=", "p", "a"], [">", "x", 5]]}]
    update = _translate("UPDATE", reads, [_remove("p=a/a1"), _add("p=a/u1")]).operation
    assert update == ops.Update(
        "(p = 'a') AND (concat(_file, '') IN ('p=a/a1'))", {"p=a/a1": "p=a/u1"}
    )
    skipped = [{**reads[0], "files": ["p=a/a1"]}]
    delete = _translate("DELETE", skipped, [_remove("p=a/a1")]).operation
    assert delete == ops.Delete("(p = 'a') AND (_file IN ('p=a/a1'))")
    everything = _translate("DELETE", [{"filter": []}], [_remove(n) for n in sorted(VIEW.names)])
    assert everything.operation == ops.Delete(None)


def test_merges_pair_removes_with_adds_per_partition_and_insert_the_rest():
    actions = [_remove("p=a/a1"), _add("p=a/m1"), _add("p=a/new"), _add("p=b/new")]
    merge = _translate("MERGE", [{"filter": [["in", "p", ["a", "b"]]]}], actions).operation
    assert isinstance(merge, ops.Merge)
    assert merge.renames == {"p=a/a1": "p=a/m1"}
    assert sorted(f.name for f in merge.inserts) == ["p=a/new", "p=b/new"]
    assert merge.on() == "t._file = s.old_file AND (t.p IN ('a', 'b'))"


@pytest.mark.rules("ISOLATION.DOWNGRADE")
def test_a_compaction_names_its_new_file_after_the_rows_it_holds():
    view = _view(("p=a/a1",), ("p=a/a2",), ("p=b/b1",), ("p=b/b2",))
    actions = [_remove("p=a/a1", dataChange=False), _remove("p=a/a2", dataChange=False),
               _add("p=a/c", dataChange=False)]  # fmt: skip
    compaction = _translate("OPTIMIZE", [{"filter": [["=", "p", "a"]]}], actions, view)
    assert compaction.operation == ops.Compact(({"p": "a"},))
    assert compaction.aliases == {"p=a/c": frozenset({"p=a/a1", "p=a/a2"})}


@pytest.mark.rules("PREDICATE.TYPING", "PREDICATE.NULLS")
def test_predicates_become_typed_sql():
    types = {"d": "date", "n": "decimal(10,2)", "i": "integer", "s": "string"}
    form = ["and", ["not", ["=", "d", "2024-01-31"]], ["in", "n", ["1.5", None]],
            ["or", ["is_null", "i"], ["!=", "s", "it's"]]]  # fmt: skip
    assert ops.predicate_sql(ops.predicates.parse(form), types) == (
        "((NOT (d = CAST('2024-01-31' AS DATE))) AND (n IN (CAST('1.5' AS DECIMAL(10,2)), NULL))"
        " AND ((i IS NULL) OR (s <> 'it''s')))"
    )
    with pytest.raises(Unsupported):
        ops.predicate_sql(ops.predicates.parse(["=", "Mixed", 1]), types)


REFUSED = [
    ("WRITE", [], [{"protocol": {"minReaderVersion": 1, "minWriterVersion": 7}}], "protocol"),
    ("WRITE", [{"predicate": ["=", "p", "a"]}], [_add("p=a/n")], "predicate read"),
    ("WRITE", [{"whole_table": True}], [_add("p=a/n")], "no write records it"),
    ("DELETE", [], [_remove("p=a/a1")], "without a filtered scan"),
    ("DELETE", [{"filter": [["=", "p", "b"]]}], [_remove("p=a/a1")], "without reading"),
    ("UPDATE", [{"filter": [["=", "p", "a"]]}], [_remove("p=a/a1"), _add("p=b/n")], "pair up"),
    ("WRITE", [], [_add("p=a/n"), _add("p=a/n")], "twice"),
    ("WRITE", [], [{"add": {"path": "p=a/n", "partitionValues": {}}}], "partition values"),
    ("WRITE", [], [_add("p=a/a1")], "live"),
    ("STREAMING UPDATE", [], [{"txn": {"appId": "s", "version": 1}}, _add("p=a/n")], "lookup"),
    ("SET TBLPROPERTIES", [], [{"metaData": {"schema": [{"name": "y", "type": "long"}]}}],
     "metadata change"),
    ("OPTIMIZE", [{"filter": [["=", "p", "a"]]}],
     [_remove("p=a/a1", dataChange=False), _add("p=a/c", dataChange=False)], "every multi-file"),
    ("WRITE", [{"filter": [["=", "p", "a"]]}], [_remove("p=a/a1"), _add("p=a/n")],
     "does not remove every file"),
]  # fmt: skip


@pytest.mark.parametrize(("operation", "reads", "actions", "reason"), REFUSED)
def test_what_no_operation_expresses_is_refused_with_a_reason(operation, reads, actions, reason):
    with pytest.raises(Unsupported, match=reason):
        _translate(operation, reads, actions)


def test_writers_touching_part_of_a_data_file_are_refused():
    packed = _view(("p=a/a1", "p=a/a2"), ("p=b/b1",))
    reads = [{"filter": [["=", "p", "a"]]}]
    with pytest.raises(Unsupported, match="one data file"):
        _translate("DELETE", reads, [_remove("p=a/a1")], packed)
    assert _translate("DELETE", reads, [_remove("p=a/a1"), _remove("p=a/a2")], packed).operation


def test_overrides_and_applied_set_transactions_are_refused():
    with pytest.raises(Unsupported, match="changes_data"):
        ops.translate(ops.Intent("WRITE", changes_data=True), VIEW)
    applied = _view(("p=a/a1",), app_txns={"s": 3})
    txn = [{"app_id": "s"}], [{"txn": {"appId": "s", "version": 3}}, _add("p=a/n")]
    with pytest.raises(Unsupported, match="already applied"):
        _translate("STREAMING UPDATE", *txn, applied)


def _run(scenario: Scenario, tmp_path: Path) -> RunResult:
    return run_scenario(DeltaRsAdapter(tmp_path / "table"), scenario)


PASSING = [
    "matrix/insert-vs-update/serializable/same",
    "matrix/delete-vs-update/writeserializable/same",
    "matrix/merge-vs-merge/serializable/same",
    "matrix/update-vs-merge/writeserializable/disjoint",
    "matrix/compaction-vs-update/serializable/same",
    "matrix/insert-vs-compaction/serializable/same",
    "conflict/app-txn/duplicate-stream",
    "conflict/delete-read/data-skipping-unread-file",
    "conflict/per-winner/second-winner-conflicts",
    "conflict/append-candidates/serializable-flagged-blind",
    "predicate/partition-only/mixed-or-widens",
    "retry/max-attempts/zero-no-conflict",
    "snapshot/reconcile/remove-readd-compact",
    "txn/append-only/delete-rejected",
]


@pytest.mark.parametrize("scenario_id", PASSING)
def test_vectors_pass_on_delta_rs(scenario_id, tmp_path):
    scenario = SCENARIOS[scenario_id]
    result = classify(scenario, _run(scenario, tmp_path))
    assert result.verdict is Verdict.PASS, result.details


def _writer_verdict(scenario: Scenario, result: RunResult) -> Verdict:
    """The verdict of the writers' outcomes alone (a conflict already explains a missing file)."""
    return classify(replace(scenario, expect_snapshot=ExpectedSnapshot()), result).verdict


@pytest.mark.parametrize("entry", KNOWN, ids=[e["scenario"] for e in KNOWN])
def test_every_known_divergence_still_reproduces(entry, tmp_path):
    """When delta-rs changes, this fails and the entry must go (or be re-classified)."""
    assert entry["deltalake"] == DELTALAKE_VERSION
    assert entry["rule"] in RULE_IDS
    assert entry["scenario"] in SCENARIOS, "the vector is gone: remove its known issue"
    scenario = SCENARIOS[entry["scenario"]]
    result = _run(scenario, tmp_path)
    assert classify(scenario, result).verdict is not Verdict.PASS
    writers = _writer_verdict(scenario, result)
    assert writers.value == entry["verdict"] or (
        writers is Verdict.PASS and entry["verdict"] == "wrong"
    )


@pytest.mark.rules("CONFLICT.APPEND_MATCH", "TXN.READ_PREDICATES")
def test_a_predicate_less_overwrite_keeps_a_concurrent_append(tmp_path):
    result = _run(SCENARIOS["deltars/overwrite-vs-blind-append"], tmp_path)
    assert outcome_json(result.outcomes["loser"])["committed"] == 2
    assert result.snapshot.files == ("new.parquet", "overwritten.parquet")


@pytest.mark.rules("CONFLICT.DELETE_READ", "CONFLICT.DELETE_DELETE")
def test_concurrent_compactions_both_commit_and_duplicate_every_row(tmp_path):
    result = _run(SCENARIOS["deltars/concurrent-compactions"], tmp_path)
    assert outcome_json(result.outcomes["loser"])["committed"] == 2
    assert (result.snapshot.files or ()).count("winner-compacted.parquet") == 3  # once + 2 copies


@pytest.mark.rules("PREDICATE.PARTITION_ONLY", "CONFLICT.APPEND_MATCH")
def test_a_read_predicate_is_matched_on_file_statistics(tmp_path):
    result = _run(SCENARIOS["deltars/stats-read-predicate"], tmp_path)
    assert outcome_json(result.outcomes["loser"])["committed"] == 2


def test_outcomes_map_delta_rs_messages_to_kinds():
    assert outcome_of(Exception("Failed to commit transaction: Commit failed: a concurrent "
                                "transactions added new data.\nHelp: ...")) == {
        "conflict": "CONCURRENT_APPEND"
    }  # fmt: skip
    assert outcome_of(Exception("Failed to commit transaction: 0")) == {
        "error": "MAX_COMMIT_RETRIES_EXCEEDED"
    }
    assert outcome_of(ValueError("boom"))["error"] == "ENGINE_ERROR"


@pytest.mark.rules("SNAPSHOT.TIME_TRAVEL", "CHECKPOINT.CONTENTS")
def test_writers_begin_at_old_versions_and_checkpoints_are_written(tmp_path):
    adapter = DeltaRsAdapter(tmp_path / "table")
    assert Capability.TIME_TRAVEL in adapter.capabilities
    assert not {Capability.ACTIONS, Capability.COMMIT_STEPS} & adapter.capabilities
    adapter.create(TableSetup(table=TABLE))
    for name, version in (("first", None), ("old", 0)):
        assert adapter.begin(name, WriterSpec(), version, 0) is None
        adapter.stage(name, [parse_action(_add(f"p=a/{name}.parquet"))], 0)
    first = adapter.commit("first", 1)
    assert isinstance(first, Committed) and first.version == 1
    assert adapter.writers["old"].read_version == 0
    old = adapter.commit("old", 2)
    assert isinstance(old, Committed) and old.version == 2
    adapter.checkpoint(2, 3)
    assert adapter.checkpoints() == (2,)
    assert adapter.verify() == []
    assert len(adapter.snapshot(0).files or ()) == 4 and len(adapter.snapshot().files or ()) == 6
    assert adapter.begin("gone", WriterSpec(), 9, 0) == Error("VERSION_NOT_FOUND")
    adapter.close()
