"""Runs a scenario vector through any adapter, interleaving the steps as written."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from .adapter import (
    Adapter,
    Capability,
    ChecksumSource,
    Json,
    LogCleaner,
    TableSetup,
    Unsupported,
    WriterSpec,
)
from .scenarios import RunResult, Scenario

STEP_NEEDS = {
    "try_write": Capability.COMMIT_STEPS,
    "resolve": Capability.COMMIT_STEPS,
    "clean_up_log": Capability.LOG_CLEANUP,
}


def unsupported_steps(adapter: Adapter, scenario: Scenario) -> list[str]:
    """The steps of ``scenario`` that ``adapter`` cannot take."""
    return [
        kind
        for step in scenario.data["steps"]
        for kind, needs in STEP_NEEDS.items()
        if kind in step and needs not in adapter.capabilities
    ]


def run_scenario(adapter: Adapter, scenario: Scenario) -> RunResult:
    """Drive ``adapter`` (fresh, not yet created) through ``scenario``; it is closed after."""
    missing = unsupported_steps(adapter, scenario)
    if missing:
        raise Unsupported(f"{adapter.name} cannot take {sorted(set(missing))} steps")
    data = scenario.data
    if "expect_checkpoints" in data and Capability.CHECKPOINT not in adapter.capabilities:
        raise Unsupported(f"{adapter.name} cannot list checkpoints")
    if "expect_checksums" in data and Capability.CHECKSUMS not in adapter.capabilities:
        raise Unsupported(f"{adapter.name} cannot read checksum files")
    try:
        adapter.create(TableSetup.of(data))
        outcomes: dict[str, Json] = {}
        for index, step in enumerate(data["steps"]):
            now = step.get("time", index)
            if "begin" in step:
                name = step["begin"]
                writer = data["writers"][name]
                failed = adapter.begin(name, WriterSpec.of(writer), step.get("version"), now)
                if failed is not None:
                    outcomes[name] = failed
                    continue
                for read in writer.get("reads", []):
                    adapter.read(name, read)
                adapter.stage(name, writer.get("actions", []), now)
                outcomes[name] = {"pending": True}
            elif "checkpoint" in step:
                adapter.checkpoint(step["checkpoint"], now)
            elif "clean_up_log" in step:
                cast(LogCleaner, adapter).clean_up_log(step["clean_up_log"], now)
            else:
                kind = next(k for k in ("commit", "try_write", "resolve") if k in step)
                outcomes[step[kind]] = _steps(adapter)[kind](step[kind], now)
        checkpoints = adapter.checkpoints() if "expect_checkpoints" in data else None
        checksums = {
            version: cast(ChecksumSource, adapter).checksum(int(version))
            for version in data.get("expect_checksums", {})
        }
        return RunResult(outcomes, adapter.snapshot(), checkpoints, checksums or None)
    finally:
        adapter.close()


def _steps(adapter: Adapter) -> dict[str, Callable[[str, int], Json]]:
    return {
        "commit": adapter.commit,
        "try_write": adapter.try_write,
        "resolve": lambda name, _now: adapter.resolve(name),
    }
