"""What a stage of ``deltaspec check`` gives back: its result, or that it cannot run here. Both
the registry (stages.py) and the stages written in their own modules (services, spark_stage)
import them from here."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class StageResult:
    passed: bool
    summary: str
    """One line: what ran and how it went."""
    report: dict[str, Any] = field(default_factory=dict)
    skipped: str | None = None
    """Why the stage did not run (then ``passed`` is True and nothing was checked)."""
    seconds: float = 0.0


class StageSkipped(Exception):
    """A stage that cannot run on this install; the message says why and what to install."""
