"""``deltaspec explore``: bounded exhaustive exploration of interleavings over the model.

Pins what the explorer must find (the lost write without put-if-absent, the UPDATE that
misses an INSERT when the append check is dropped under Serializable), what it must prove
safe (small configurations under the correct rules), the exact state counts (a change in
the explorer or the model shows up here), and the exported vectors: schema-valid, and
passing on the model and on the impl.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deltaspec.conformance.engines.impl.adapter import run_in
from deltaspec.conformance.engines.model.adapter import run
from deltaspec.conformance.explore.export import cover, export, tier, write_violation
from deltaspec.conformance.explore.faults import FAULTS, OverwritingLog, faulted
from deltaspec.conformance.explore.search import ExploreConfig, Explorer, Progress, explore
from deltaspec.conformance.harness.adapter import Unsupported
from deltaspec.conformance.harness.judge import judge, run_all
from deltaspec.conformance.harness.outcomes import outcome_json
from deltaspec.conformance.harness.scenarios import TryWrite, load_scenarios
from deltaspec.conformance.isolation.checker import AnomalyKind
from deltaspec.conformance.workload import alphabet as explore_ops
from deltaspec.conformance.workload.alphabet import ExploreError
from deltaspec.model import conflicts
from deltaspec.model.log import Log

SCRIPT = Path(sys.executable).parent / "deltaspec"
EXPLORED = Path(__file__).resolve().parents[3] / "spec" / "scenarios" / "explored"
FAULT = "no-append-check-under-serializable"
UPDATE_VS_INSERT = ("append", "update")
AUD = ("append", "update", "delete")


def counts(**config: object) -> tuple[int, int, int, int]:
    _, report = explore(ExploreConfig(**config))  # type: ignore[arg-type]
    assert report.complete
    return report.states, report.transitions, report.depth, report.terminal


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_without_put_if_absent_the_lost_write_is_found_at_depth_four() -> None:
    _, report = explore(ExploreConfig(writers=2, ops=1, put_if_absent=False))
    violation = report.violation
    assert violation is not None
    assert (violation.problem.rule, violation.problem.kind) == ("LOG.PUT_IF_ABSENT", "lost write")
    assert (violation.depth, violation.states) == (4, 142)
    assert violation.problem.message == (
        "w1-1 was told it committed version 1, but version 1 holds w2-1's commit"
    )
    lines = violation.lines()
    assert [line.split()[1:3] for line in lines] == [
        ["w1-1", "begin"], ["w2-1", "begin"], ["w1-1", "try_write:"], ["w2-1", "try_write:"],
    ]  # fmt: skip
    assert lines[-1].endswith("committed 1 (over an existing commit)")
    # the alphabet TLC's spec has (blind appends only): 8 distinct states, as TLC's 9
    _, appends = explore(ExploreConfig(2, 1, alphabet=("append",), put_if_absent=False))
    assert appends.violation is not None
    assert (appends.violation.depth, appends.states) == (4, 8)


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_the_overwriting_store_replaces_a_commit_and_keeps_the_later_ones() -> None:
    log = OverwritingLog.of(Log())
    for version in range(3):
        written = log.write_new(version, (), version)
        assert isinstance(written, OverwritingLog)
        log = written
    over = log.write_new(1, (), 42)
    assert isinstance(over, OverwritingLog)
    assert [c.timestamp for c in over.commits] == [0, 42, 2]
    assert [s.version for s in over.snapshots] == [0, 1, 2]


@pytest.mark.rules("CONFLICT.APPEND_MATCH", "CONFLICT.APPEND_CANDIDATES", "ISOLATION.LEVELS")
def test_dropping_the_append_check_under_serializable_lets_an_update_miss_an_insert() -> None:
    config = ExploreConfig(2, 1, alphabet=UPDATE_VS_INSERT, isolation="Serializable")
    assert counts(**config.__dict__) == (30, 34, 6, 8)  # the correct rules: safe
    explorer, report = explore(ExploreConfig(**{**config.__dict__, "fault": FAULT}))
    violation = report.violation
    assert violation is not None
    anomaly = violation.problem.anomaly
    assert anomaly is not None and anomaly.kind is AnomalyKind.SERIALIZATION_ORDER
    assert (violation.depth, violation.states) == (6, 30)
    assert "w2-1 (v2) read v0 where" in violation.problem.message
    assert [line.split(maxsplit=2)[2] for line in violation.lines()] == [
        "begin append(p=0)", "begin update(p=0)", "try_write: committed 1",
        "try_write: pending", "resolve: pending", "try_write: committed 2",
    ]  # fmt: skip
    # WriteSerializable lets an update miss a blind append: the fault breaks nothing there
    ws = ExploreConfig(2, 1, alphabet=UPDATE_VS_INSERT, isolation="WriteSerializable")
    assert explore(ExploreConfig(**{**ws.__dict__, "fault": FAULT}))[1].safe
    # the fault is gone after the run
    assert conflicts.check_added_files.__name__ == "check_added_files"
    assert explorer.config.fault == FAULT


def test_a_fault_is_swapped_in_for_the_block_only() -> None:
    original = conflicts.check_added_files
    with faulted(FAULT):
        assert conflicts.check_added_files is not original
    assert conflicts.check_added_files is original
    with pytest.raises(ExploreError), faulted("no-such-fault"):
        pass
    assert set(FAULTS) == {FAULT}


@pytest.mark.rules(
    "CONFLICT.PER_WINNER", "RETRY.NEXT_VERSION", "RETRY.ATTEMPT_VERSION", "RETRY.MAX_ATTEMPTS"
)
@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"writers": 2, "ops": 1}, (269, 316, 6, 85)),
        ({"writers": 2, "ops": 1, "symmetry": False}, (529, 604, 6, 169)),
        ({"writers": 3, "ops": 1}, (6035, 8542, 10, 1186)),
        ({"writers": 2, "ops": 2, "alphabet": AUD}, (3289, 4076, 14, 815)),
        ({"writers": 2, "ops": 1, "isolation": "WriteSerializable"}, (275, 322, 6, 85)),
        ({"writers": 2, "ops": 1, "partitions": 2}, (916, 1068, 6, 289)),
        ({"writers": 2, "ops": 1, "profile": "0.8.0"}, (312, 346, 6, 98)),
        ({"writers": 2, "ops": 1, "profile": "0.1.0"}, (239, 273, 4, 98)),
        ({"writers": 2, "ops": 2, "alphabet": UPDATE_VS_INSERT, "max_commit_attempts": 0},
         (584, 676, 8, 176)),
        ({"writers": 2, "ops": 2, "alphabet": UPDATE_VS_INSERT, "max_commit_attempts": 1},
         (974, 1130, 14, 236)),
    ],
)  # fmt: skip
def test_small_configurations_are_proved_safe_with_pinned_counts(
    config: dict[str, object], expected: tuple[int, int, int, int]
) -> None:
    """(distinct states, transitions, depth, terminal states); no violation in any of them."""
    assert counts(**config) == expected


def test_symmetry_reduction_only_merges_renamings_of_writers() -> None:
    """Every state without reduction is a renaming of one with it: two writers give at most
    twice the states, and the same set of final logs up to the writer names."""
    reduced, _ = explore(ExploreConfig(2, 1, alphabet=("append", "delete", "compact")))
    full, _ = explore(ExploreConfig(2, 1, alphabet=("append", "delete", "compact"), symmetry=False))
    assert len(reduced.seen) < len(full.seen) <= 2 * len(reduced.seen)

    def shapes(explorer: Explorer) -> set[object]:
        return {tuple(e[1:] for e in explorer.nodes_of[k].entries) for k in explorer.terminals}

    assert shapes(reduced) == shapes(full)


def test_the_same_configuration_gives_the_same_search() -> None:
    config = ExploreConfig(2, 1, alphabet=("read_write", "metadata", "set_txn"), partitions=2)
    first, a = explore(config)
    second, b = explore(config)
    assert (a.states, a.transitions, a.terminal) == (b.states, b.transitions, b.terminal)
    assert [first.trace(k) for k in first.terminals] == [second.trace(k) for k in second.terminals]


def test_progress_is_reported_and_configurations_are_checked() -> None:
    seen: list[Progress] = []
    _, report = explore(ExploreConfig(2, 1, alphabet=("append",)), seen.append)
    assert seen and seen[-1].states == report.states and seen[-1].depth == report.depth
    _, cut = explore(ExploreConfig(2, 2, max_states=50))
    assert not cut.complete and not cut.safe and cut.states == 50
    for bad in ({"writers": 0}, {"isolation": "SnapshotIsolation"}, {"fault": "x"}):
        with pytest.raises(ExploreError):
            ExploreConfig(**bad)  # type: ignore[arg-type]
    with pytest.raises(explore_ops.AlphabetError):
        explore_ops.check_alphabet(["append", "truncate"])


@pytest.mark.rules("TXN.EMPTY_COMMIT", "CONFLICT.APP_TXN", "CONFLICT.METADATA")
def test_every_terminal_interleaving_exports_as_a_vector_that_model_and_impl_pass(
    tmp_path: Path,
) -> None:
    explorer, report = explore(ExploreConfig(2, 1))
    exported = export(explorer, tmp_path / "exported", prefix="exported")
    assert len(exported.paths) == report.terminal == 85
    assert exported.tiers() == {"tier1": 85}
    # the spec ships this export: regenerating it gives the same vectors
    committed = sorted(p.name for p in (EXPLORED / "tier1").glob("*.json"))
    assert sorted(p.name for p in exported.paths) == committed
    scenarios = load_scenarios([tmp_path])  # schema-checked; ids unique across the corpus
    explored = [s for s in scenarios if s.id.startswith("exported/tier1/w2k1p1-")]
    assert len(explored) == 85
    assert all(v.passed for v in run_all(explored, run))
    outcomes = {
        next(iter(set(outcome_json(o.one_of[0])) & {"committed", "conflict", "skipped"}))
        for s in explored
        for o in s.expect.values()
    }
    assert outcomes == {"committed", "conflict", "skipped"}
    for scenario in explored:
        verdict = judge(scenario, run_in(tmp_path / scenario.id.rsplit("/", 1)[1], scenario))
        assert verdict.passed, (scenario.id, verdict.failures)


@pytest.mark.rules("RETRY.NEXT_VERSION")
def test_interleaved_commit_loops_keep_their_steps_and_the_impl_skips_them(tmp_path: Path) -> None:
    explorer, _ = explore(ExploreConfig(2, 2, alphabet=("append", "update"), partitions=0))
    exported = export(explorer, tmp_path, limit=40, prefix="exported")
    assert len(exported.paths) == 40 < exported.terminal
    assert set(exported.tiers()) <= {"tier1", "tier2", "tier3"}
    scenarios = load_scenarios([tmp_path])
    mine = [s for s in scenarios if s.id.startswith("exported/")]
    assert len(mine) == 40 and all(v.passed for v in run_all(mine, run))
    stepped = [s for s in mine if any(isinstance(step, TryWrite) for step in s.steps)]
    assert stepped, "some exported loops are interleaved with another writer's steps"
    with pytest.raises(Unsupported):
        run_in(tmp_path / "impl", stepped[0])
    assert cover(explorer, 40) == cover(explorer, 40)
    assert [tier(n) for n in (4, 6, 7, 12, 13, 24, 25)] == [1, 1, 2, 2, 3, 3, 4]


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "CONFLICT.APPEND_MATCH")
def test_a_violation_is_written_with_the_correct_rules_expectations(tmp_path: Path) -> None:
    for config in (
        ExploreConfig(2, 1, put_if_absent=False),
        ExploreConfig(2, 1, alphabet=UPDATE_VS_INSERT, isolation="Serializable", fault=FAULT),
    ):
        _, report = explore(config)
        assert report.violation is not None
        path = write_violation(config, report.violation.problem, report.violation.trace, tmp_path)
        data = json.loads(path.read_text())
        assert data["steps"] == [{"begin": "w1-1"}, {"begin": "w2-1"},
                                 {"commit": "w1-1"}, {"commit": "w2-1"}]  # fmt: skip
        assert report.violation.problem.rule in data["rules"]
    scenarios = [s for s in load_scenarios([tmp_path]) if s.id.startswith("regressions/explore")]
    assert len(scenarios) == 2 and all(v.passed for v in run_all(scenarios, run))
    expected = {outcome_json(s.expect["w2-1"].one_of[0]).get("conflict") for s in scenarios}
    assert expected == {None, "CONCURRENT_APPEND"}  # the retry commits; the update conflicts


def test_the_explore_command(tmp_path: Path) -> None:
    found = subprocess.run(
        [SCRIPT, "explore", "--writers", "2", "--ops", "1", "--no-put-if-absent", "--quiet",
         "--regressions", str(tmp_path / "r"), "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert found.returncode == 1, found.stderr
    assert "VIOLATION of LOG.PUT_IF_ABSENT (lost write) at depth 4" in found.stdout
    assert "  4. w2-1   try_write: committed 1 (over an existing commit)" in found.stdout
    assert len(list((tmp_path / "r").glob("*.json"))) == 1
    assert json.loads((tmp_path / "r.json").read_text())["violation"]["depth"] == 4
    safe = subprocess.run(
        [SCRIPT, "explore", "--writers", "2", "--ops", "1", "--alphabet", "append,update",
         "--no-symmetry", "--export", str(tmp_path / "x")],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert safe.returncode == 0, safe.stderr
    assert "safe: every interleaving" in safe.stdout
    assert "exported 16 of 16 terminal interleavings" in safe.stdout
    assert safe.stderr == ""  # progress lines only after 10 s (tests/.../test_progress.py)
    bad = subprocess.run([SCRIPT, "explore", "--alphabet", "truncate"], capture_output=True)
    assert bad.returncode == 2


def test_explore_leaves_the_current_directory_alone(tmp_path: Path) -> None:
    """Without --regressions a violation's vector goes to the cache, not the working directory
    (a checkout would get an untracked explore-regressions/)."""
    cache = tmp_path / "cache"
    found = subprocess.run(
        [SCRIPT, "explore", "--writers", "2", "--ops", "1", "--no-put-if-absent", "--quiet"],
        capture_output=True, text=True, cwd=tmp_path,
        env={**os.environ, "DELTASPEC_CACHE": str(cache)},
    )  # fmt: skip
    assert found.returncode == 1, found.stderr
    written = list((cache / "explore-regressions").glob("*.json"))
    assert len(written) == 1
    assert f"vector (the correct rules' outcomes for this schedule): {written[0]}" in found.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]
