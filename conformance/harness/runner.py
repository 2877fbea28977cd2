"""Runs a scenario vector through any adapter, interleaving the steps as written."""

from __future__ import annotations

from typing import cast

from .adapter import Adapter, Capability, ChecksumSource, LogCleaner, Unsupported
from .outcomes import PENDING, Outcome
from .scenarios import (
    Begin,
    Checkpoint,
    CleanUpLog,
    Commit,
    Resolve,
    RunResult,
    Scenario,
    Step,
    TryWrite,
)

STEP_NEEDS: dict[type[Step], Capability] = {
    TryWrite: Capability.COMMIT_STEPS,
    Resolve: Capability.COMMIT_STEPS,
    CleanUpLog: Capability.LOG_CLEANUP,
}


def unsupported_steps(adapter: Adapter, scenario: Scenario) -> list[str]:
    """The kinds of the steps of ``scenario`` that ``adapter`` cannot take."""
    return [
        step.KIND
        for step in scenario.steps
        if (needs := STEP_NEEDS.get(type(step))) is not None and needs not in adapter.capabilities
    ]


def run_scenario(adapter: Adapter, scenario: Scenario) -> RunResult:
    """Drive ``adapter`` (fresh, not yet created) through ``scenario``; it is closed after."""
    missing = unsupported_steps(adapter, scenario)
    if missing:
        raise Unsupported(f"{adapter.name} cannot take {sorted(set(missing))} steps")
    capabilities = adapter.capabilities
    if scenario.expect_checkpoints is not None and Capability.CHECKPOINT not in capabilities:
        raise Unsupported(f"{adapter.name} cannot list checkpoints")
    if scenario.expect_checksums is not None and Capability.CHECKSUMS not in capabilities:
        raise Unsupported(f"{adapter.name} cannot read checksum files")
    try:
        adapter.create(scenario.setup)
        outcomes: dict[str, Outcome] = {}
        for index, step in enumerate(scenario.steps):
            now = step.now(index)
            if isinstance(step, Begin):
                name, writer = step.begin, scenario.writers[step.begin]
                failed = adapter.begin(name, writer.spec, step.version, now)
                if failed is not None:
                    outcomes[name] = failed
                    continue
                for read in writer.reads:
                    adapter.read(name, read)
                adapter.stage(name, writer.actions, now)
                outcomes[name] = PENDING
            elif isinstance(step, Checkpoint):
                adapter.checkpoint(step.checkpoint, now)
            elif isinstance(step, CleanUpLog):
                cast(LogCleaner, adapter).clean_up_log(step.clean_up_log, now)
            elif isinstance(step, Commit):
                outcomes[step.commit] = adapter.commit(step.commit, now)
            elif isinstance(step, TryWrite):
                outcomes[step.try_write] = adapter.try_write(step.try_write, now)
            else:
                outcomes[step.resolve] = adapter.resolve(step.resolve)
        checkpoints = adapter.checkpoints() if scenario.expect_checkpoints is not None else None
        checksums = {
            version: cast(ChecksumSource, adapter).checksum(version)
            for version in scenario.expect_checksums or {}
        }
        return RunResult(outcomes, adapter.snapshot(), checkpoints, checksums or None)
    finally:
        adapter.close()
