"""The rule registry: every rule of spec/*.md lands on exactly one model function, and the impl
functions that implement a rule carry the model's name (``@rule`` markers, deltaspec.rules)."""

from __future__ import annotations

import pytest

from deltaspec.rules import implementations, load_rules
from deltaspec.trace import import_sides, marked, trace

RULES_WITHOUT_MODEL_FUNCTION: dict[str, str] = {
    "ACTION.LINE_FORMAT": "the model keeps actions as values; it reads and writes no JSON lines",
    "ACTION.UNKNOWN": "the model reads no files: unknown actions never reach it",
    "CHECKPOINT.LAST_CHECKPOINT": "a storage hint; the model's log knows its checkpoints",
    "RETENTION.VERIFIED_CHECKPOINT": "storage: reading a checkpoint back from the file system",
    "PATH.DATA_FILE": "paths on a file system: the model has none",
    "PATH.NO_SYMLINKS": "paths on a file system: the model has none",
    "PATH.REGULAR_FILES": "paths on a file system: the model has none",
    "PATH.STRAY_KEYS": "listings of a store: the model's log is never listed",
    "PATH.TABLE_LOCATION": "object-store URLs: the model has no storage",
    "RETRY.OUTCOME_UNKNOWN": "storage faults: the model's writes are always answered",
    "RETRY.NO_SELF_DETECTION": "an absence: the model's resolve simply has no self-detection",
    "SNAPSHOT.RELIST": "a listing racing log cleanup: the model's log is never listed",
    "TXN.DEPENDS_ON_FILES": "a field of the read set (ReadSet.depends_on_files), set by "
    "filter_files and read_whole_table, read by is_blind_append and check_legacy_write",
}
"""Rules the model does not model, with the reason. The dict only shrinks: a rule that gains a
model function must leave it."""

IMPL_NAMED_OTHERWISE: dict[str, str] = {
    "RETRY.ATTEMPT_VERSION": "the model's try_write is one step of the commit loop (the machine "
    "interleaves writers); the impl's write_with_retries runs the whole loop, which cannot be "
    "stepped",
    "CHECKPOINT.CONTENTS": "the model lists actions; the impl builds the Parquet table column by "
    "column from the snapshot's Arrow tables, never one action at a time",
    "RETENTION.LOG": "the model lists expired versions; the impl's choice is not pure: it "
    "stats only the prefix of the log that may expire and reads its new start back "
    "(RETENTION.VERIFIED_CHECKPOINT) before deleting files, not versions",
    "LOG.CONTIGUITY": "the model's Log is a tuple, contiguous by construction: its write_new "
    "refuses a gap; the impl refuses one where a listing is turned into versions (require_commits)",
    "LOG.LISTING": "the model's Log is never listed, it knows its latest_version; the impl's "
    "LogStore.list_from is the listing whose guarantee the rule states",
    "PREDICATE.TYPING": "the model types a whole partition row (partition_row) with "
    "ACTION.PARTITION_VALUES's decode_partition_value, literals too; the impl types one value "
    "for an Arrow column (typed), apart from its codec's decoder",
}
"""Rules whose impl function is deliberately named unlike the model's, with the reason."""

IMPL_SIDE_IN_TXN = ("TXN.", "CONFLICT.", "RETRY.", "ISOLATION.", "ROWTRACKING.")
"""Rule areas whose impl side lives in deltaspec.impl.txn; other areas' impl markers are not
required here yet (their folders are marked separately)."""

IMPL_TXN_UNMARKED: dict[str, str] = {
    "CONFLICT.ANY_COMMIT_V01": "no per-winner check runs: v0.1.0's lost race raises in "
    "CommitAttempts._after_collision (RETRY.NONE_V01)",
    "CONFLICT.KINDS": "one exception class per kind in deltaspec.impl.errors, checked against "
    "spec/data/conflict_kinds.json by tests/spec/test_error_kinds.py",
    "ISOLATION.LEVELS": "the impl names levels by their strings",
    "RETRY.NO_SELF_DETECTION": "an absence (the impl recognises its own commit only after a "
    "failed write, see CommitAttempts.write_with_retries)",
    "TXN.DEPENDS_ON_FILES": "a field of the impl's ReadSet, as in the model",
    "TXN.TABLE_PROPERTIES": "impl side in deltaspec.impl.table.properties",
}
"""Rules of the txn areas with no marked impl function in deltaspec.impl.txn, with the reason."""


@pytest.fixture(scope="module", autouse=True)
def every_marker() -> None:
    import_sides()


def _name(where: str) -> str:
    """The function's own name, private or public alike."""
    return where.split(":")[1].split(".")[-1].lstrip("_")


def test_markers_name_rules_that_exist() -> None:
    rule_ids = {r.id for r in load_rules()}
    assert set(implementations()) <= rule_ids
    pinned = {*RULES_WITHOUT_MODEL_FUNCTION, *IMPL_NAMED_OTHERWISE, *IMPL_TXN_UNMARKED}
    assert pinned <= rule_ids


@pytest.mark.parametrize("rule_id", [r.id for r in load_rules()])
def test_every_rule_has_exactly_one_model_function(rule_id: str) -> None:
    functions = marked(rule_id, "model")
    if rule_id in RULES_WITHOUT_MODEL_FUNCTION:
        assert functions == [], f"{rule_id} is modelled now: remove its pin"
    else:
        assert len(functions) == 1, f"{rule_id}: model functions {functions}"


@pytest.mark.parametrize("rule_id", [r.id for r in load_rules()])
def test_impl_functions_carry_the_models_name(rule_id: str) -> None:
    model, impl = marked(rule_id, "model"), marked(rule_id, "impl")
    if not model or not impl:
        return
    differing = [where for where in impl if _name(where) != _name(model[0])]
    if rule_id in IMPL_NAMED_OTHERWISE:
        assert differing, f"{rule_id}: the names agree now: remove its pin"
    else:
        assert not differing, f"{rule_id}: model {model[0]}, impl {differing}"


@pytest.mark.parametrize(
    "rule_id", [r.id for r in load_rules() if r.id.startswith(IMPL_SIDE_IN_TXN)]
)
def test_txn_rules_have_a_marked_impl_function(rule_id: str) -> None:
    impl = marked(rule_id, "impl")
    if rule_id in IMPL_TXN_UNMARKED:
        assert impl == [], f"{rule_id} is marked now: remove its pin"
    else:
        assert impl, f"{rule_id}: no impl function marked"


def test_a_trace_lands_on_one_function_per_side() -> None:
    lines = trace("CONFLICT.APPEND_MATCH")
    assert lines[0].startswith("spec: spec/conflicts.md:")
    sides = [line.split(" (")[0] for line in lines if line.startswith(("model:", "impl:"))]
    assert sides == [
        "model: deltaspec.model.conflicts:check_added_files",
        "impl: deltaspec.impl.txn.conflicts:check_added_files",
    ]
    assert any(line.startswith("test: tests/") for line in lines)
    assert any(line.startswith("vector: scenario conflict/append-match/") for line in lines)


def test_the_spec_command_traces_any_rule(capsys: pytest.CaptureFixture[str]) -> None:
    from deltaspec.cli import main

    for rule in load_rules():
        assert main(["spec", "--trace", rule.id]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0].startswith(f"spec: spec/{rule.source}:")
        assert any(line.startswith("model:") for line in lines)
        assert any(line.startswith("impl:") for line in lines)
    assert main(["spec", "--trace", "CONFLICT.APPEND_MATCHES"]) == 2
    assert "did you mean CONFLICT.APPEND_MATCH" in capsys.readouterr().err
