"""The stages of the main job (conformance/oracle/stages.py): one registry for ``deltaspec check``
and ``deltaspec mutants``, and the table-services stage judged by the model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from deltaspec.cli import check, main
from deltaspec.conformance.oracle import mutants, services
from deltaspec.conformance.oracle.catalog import Mutant, by_id
from deltaspec.conformance.oracle.mutation import apply
from deltaspec.conformance.oracle.stage_result import StageResult, StageSkipped
from deltaspec.conformance.oracle.stages import (
    IMPL_STAGE_NAMES,
    STAGE_NAMES,
    STAGES,
    Stage,
    StageOptions,
    chosen,
    result_apart,
    run_stage,
    start_apart,
)


def test_one_registry_names_the_stages_everywhere() -> None:
    assert STAGE_NAMES == check.STAGE_NAMES
    assert mutants.STAGES == IMPL_STAGE_NAMES
    assert STAGE_NAMES[-1] == "spark" and all(s.needs_spark == (s.name == "spark") for s in STAGES)


def _pid_stage(options: StageOptions) -> StageResult:
    return StageResult(True, str(os.getpid()))


def _dying_stage(options: StageOptions) -> StageResult:
    os._exit(3)


def test_a_stage_apart_runs_in_a_process_of_its_own_and_its_death_fails_it() -> None:
    """What ``deltaspec check`` does with the Spark stage (stages.start_apart): the stage runs
    in another process, its result comes back whole; a process that dies fails the stage."""
    apart = Stage("pid", _pid_stage, needs_spark=True, in_quick=False)
    result = result_apart(start_apart(apart, StageOptions()))
    assert result.passed and result.summary.isdigit() and int(result.summary) != os.getpid()
    assert result.seconds > 0  # timed by run_stage, in the stage's process
    dying = Stage("dies", _dying_stage, needs_spark=True, in_quick=False)
    died = result_apart(start_apart(dying, StageOptions()))
    assert not died.passed and "its process ended without a result" in died.summary


def test_quick_leaves_out_the_state_machine_and_spark() -> None:
    quick = [s.name for s in chosen(quick=True)]
    assert quick == ["model", "vectors", "race", "services", "store"]
    assert not any(s.needs_spark for s in chosen(quick=True))
    assert [s.name for s in chosen(["spark", "race"])] == ["race", "spark"]  # registry order
    with pytest.raises(ValueError, match="no such stages"):
        chosen(["nope"])


def test_a_stage_that_raises_fails_and_one_that_cannot_run_is_skipped() -> None:
    def boom(options: StageOptions) -> StageResult:
        raise AssertionError("diverged\nmore")

    def absent(options: StageOptions) -> StageResult:
        raise StageSkipped("needs pyspark")

    failed = run_stage(Stage("x", boom, False, True), StageOptions())
    assert not failed.passed and failed.summary == "AssertionError: diverged"
    skipped = run_stage(Stage("y", absent, True, False), StageOptions())
    assert skipped.passed and skipped.skipped == "needs pyspark"


@pytest.mark.rules(
    "RETENTION.LOG", "RETENTION.TOMBSTONES", "RETENTION.SET_TRANSACTION",
    "RETENTION.CHECKPOINT_PROTECTION", "CHECKSUM.WRITE", "CHECKPOINT.V2_WRITE", "LOG.COMPACTION",
)  # fmt: skip
def test_the_services_agree_with_the_model_on_real_tables(tmp_path: Path) -> None:
    for seed in range(4):
        counts = services.run_scenario(seed, tmp_path)
        assert set(counts) == {
            "strays",
            "compaction reads",
            "checksums",
            "time travel",
            "retention",
            "vacuum",
            "checkpoints",
            "cleanup",
        }


def test_cleanup_deletes_something_in_some_scenarios(tmp_path: Path) -> None:
    """The cleanup probes are not vacuous: some scenarios expire commits."""
    from deltaspec.model.checkpoint import expired_log_versions

    expired = 0
    for seed in range(8):
        table = services.build_table(tmp_path / str(seed), seed)
        model = services.model_snapshot(table, len(table.times) - 1)
        far = table.times[-1] + 10 * services.DAY
        expired += bool(expired_log_versions(table.times, table.checkpoints[-1], far,
                                             model.metadata, table.checkpoints[:-1]))  # fmt: skip
    assert expired >= 4


@pytest.mark.rules("RETENTION.CHECKPOINT_PROTECTION")
def test_protected_tables_tell_chunked_cleanup_from_one_go(tmp_path: Path) -> None:
    """The protected scenarios are not vacuous: with every commit expired, some tables lose
    commits below the protected version as the newest release cleans up and none as 3.3.2
    does, and some protect a version their cleanup reaches (both releases delete)."""
    from deltaspec.model.checkpoint import expired_log_versions
    from deltaspec.model.profiles import profile

    chunks_only = one_go = 0
    for seed in range(8):
        table = services.build_table(tmp_path / str(seed), seed)
        model = services.model_snapshot(table, len(table.times) - 1)
        if "checkpointProtection" not in (model.protocol.writer_features or ()):
            continue
        far = table.times[-1] + 10 * services.DAY
        newest, old = (expired_log_versions(table.times, table.checkpoints[-1], far,
                                            model.metadata, table.checkpoints[:-1],
                                            model.protocol, profile(release))
                       for release in (None, services.ONE_GO_RELEASE))  # fmt: skip
        chunks_only += bool(newest) and not old
        one_go += bool(old) and old == newest
    assert chunks_only >= 3 and one_go >= 1, (chunks_only, one_go)


SERVICE_BUGS = [
    by_id("cleanup-cutoff-exclusive"),
    by_id("vacuum-deletes-at-cutoff"),
    by_id("checkpoint-protection-blocks-chunks"),
    Mutant("time-travel-times-not-monotonic", "", "ICT.TIME_TRAVEL", "moment = previous + 1",
           "pass", "services", function="snapshot.timestamps:commit_timestamps"),
]  # fmt: skip


def _services_in_child(mutant: Mutant) -> bool:
    apply(mutant)
    return services.run_services(scenarios=8).passed


@pytest.mark.parametrize("mutant", SERVICE_BUGS, ids=lambda m: m.id)
def test_the_services_stage_catches_boundary_bugs(mutant: Mutant) -> None:
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        assert pool.submit(_services_in_child, mutant).result() is False


def test_check_reports_each_stage_with_its_time(tmp_path: Path) -> None:
    report = tmp_path / "check.json"
    assert main(["check", "--stage", "race", "--stage", "spark", "--quick",
                       "--report", str(report)]) == 0  # fmt: skip
    data = json.loads(report.read_text())
    assert [s["name"] for s in data["stages"]] == ["race"]
    assert data["passed"] and data["quick"] and data["stages"][0]["seconds"] >= 0


def test_a_mutant_named_in_the_environment_reaches_a_fresh_process() -> None:
    """Spark's Python workers are processes the oracle does not start: the mutant must reach
    them through the environment, applied when its module is first imported there."""
    import os
    import subprocess
    import sys

    from deltaspec.conformance.oracle.catalog import by_id
    from deltaspec.conformance.oracle.mutant_env import MUTANT_ENV, worker_environment

    mutant = by_id("stats-nan-unquoted")
    module, qualname = mutant.target.split(":")
    probe = f"import {module} as m; print(m.{qualname}.__code__.co_filename)"
    env = {**os.environ, **worker_environment(mutant.id, mutant.target)}
    mutated = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                             text=True, check=True)  # fmt: skip
    assert mutated.stdout.startswith(f"<mutant {mutant.id}>")
    env.pop(MUTANT_ENV)
    plain = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                           text=True, check=True)  # fmt: skip
    assert plain.stdout.strip().endswith(".py")
