"""The ``delta.*`` table properties this implementation interprets, parsed and validated in one
place (TXN.TABLE_PROPERTIES).

A commit whose metadata sets one of them to a value it cannot have is refused before anything is
written (:func:`validate`), so that no later commit, checkpoint or cleanup meets a value it cannot
interpret: ``delta.checkpointInterval = "0"`` would otherwise make every later commit land and
then fail in its post-commit checkpoint. Readers use the same parsers (:func:`isolation_level`,
:func:`checkpoint_interval`, :func:`parse_interval_ms`, :func:`flag`).

This module never imports ``deltaspec.model``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping

from deltaspec.impl.errors import InvalidIsolationLevelError, InvalidTablePropertyError

__all__ = [
    "DEFAULT_CHECKPOINT_INTERVAL",
    "ISOLATION_LEVELS",
    "checkpoint_interval",
    "flag",
    "isolation_level",
    "parse_interval_ms",
    "validate",
]

DEFAULT_CHECKPOINT_INTERVAL = 10
"""Default of ``delta.checkpointInterval`` (CHECKPOINT.INTERVAL)."""

ISOLATION_LEVELS = ("Serializable", "WriteSerializable", "SnapshotIsolation")
"""The level names ``delta.isolationLevel`` may hold, compared case-insensitively."""

_DAY_MS = 24 * 60 * 60 * 1000
_INTERVAL_UNITS_MS: dict[str, float] = {
    "week": 7 * _DAY_MS,
    "day": _DAY_MS,
    "hour": 60 * 60 * 1000,
    "minute": 60 * 1000,
    "second": 1000,
    "millisecond": 1,
    "microsecond": 0.001,
    "nanosecond": 0.000001,
}
_INTERVAL_TOKEN = re.compile(r"([+-]?\d+(?:\.\d+)?)\s*([a-zA-Z]+)")
_INT = re.compile(r"[+-]?[0-9]+")


def parse_interval_ms(text: str) -> int:
    """Milliseconds of a Spark calendar interval such as ``interval 1 week`` or ``7 days``.

    Durations in table properties (RETENTION.*) are calendar intervals: an optional ``interval``
    keyword, then ``<number> <unit>`` pairs; days count as 24 hours. Months and years have no
    fixed length and are rejected, as delta-spark rejects them; so is anything unparseable or
    beyond any clock (ValueError).
    """
    body = text.strip()
    if body.lower().startswith("interval"):
        body = body[len("interval") :]
    body = body.strip()
    if not body:
        raise ValueError(f"not a calendar interval: {text!r}")
    total = 0.0
    position = 0
    for match in _INTERVAL_TOKEN.finditer(body):
        if body[position : match.start()].strip():
            raise ValueError(f"not a calendar interval: {text!r}")
        position = match.end()
        unit = match[2].lower().rstrip("s") or "s"
        if unit in {"month", "year", "mon"}:
            raise ValueError(f"months and years are not allowed in a duration: {text!r}")
        if unit not in _INTERVAL_UNITS_MS:
            raise ValueError(f"unknown interval unit {match[2]!r} in {text!r}")
        total += float(match[1]) * _INTERVAL_UNITS_MS[unit]
    if body[position:].strip() or position == 0:
        raise ValueError(f"not a calendar interval: {text!r}")
    if not math.isfinite(total) or abs(total) >= 2**63:
        raise ValueError(f"a duration beyond any clock: {text!r}")
    return int(total)


def isolation_level(value: str) -> str:
    """The level a ``delta.isolationLevel`` value names, compared case-insensitively
    (``serializable`` is ``Serializable``); ValueError for any other name."""
    for level in ISOLATION_LEVELS:
        if value.strip().lower() == level.lower():
            return level
    raise ValueError(f"{value!r} is not an isolation level (one of {', '.join(ISOLATION_LEVELS)})")


def checkpoint_interval(value: str | None) -> int:
    """``delta.checkpointInterval``: a positive integer, default 10 (CHECKPOINT.INTERVAL)."""
    if value is None:
        return DEFAULT_CHECKPOINT_INTERVAL
    if _INT.fullmatch(value.strip()) is None:
        raise ValueError(f"delta.checkpointInterval is not an integer: {value!r}")
    number = int(value.strip())
    if not 0 < number < 2**31:
        raise ValueError(f"delta.checkpointInterval must be a positive int, not {number}")
    return number


def flag(value: str | None, default: bool) -> bool:
    """A boolean property: ``true``/``false`` in any case, ``default`` when unset; ValueError
    for anything else."""
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError(f"not a boolean: {value!r}")
    return lowered == "true"


def _duration(value: str) -> object:
    if parse_interval_ms(value) < 0:
        raise ValueError(f"a negative duration: {value!r}")
    return None


def _flag(value: str) -> object:
    return flag(value, False)


_VALIDATORS: dict[str, Callable[[str], object]] = {
    "delta.isolationLevel": isolation_level,
    "delta.checkpointInterval": checkpoint_interval,
    "delta.logRetentionDuration": _duration,
    "delta.deletedFileRetentionDuration": _duration,
    "delta.setTransactionRetentionDuration": _duration,
    "delta.appendOnly": _flag,
    "delta.enableExpiredLogCleanup": _flag,
    "delta.enableInCommitTimestamps": _flag,
    "delta.enableChangeDataFeed": _flag,
    "delta.enableDeletionVectors": _flag,
}
"""Every ``delta.*`` key this implementation interprets, with its parser."""


def validate(
    configuration: Mapping[str, str], *, table: str | None = None, version: int | None = None
) -> None:
    """Refuse a configuration that sets an interpreted ``delta.*`` key (keys are matched
    case-insensitively, as delta-spark matches them) to a value it cannot have
    (TXN.TABLE_PROPERTIES): InvalidIsolationLevelError for ``delta.isolationLevel``,
    InvalidTablePropertyError for the others."""
    by_lower = {key.lower(): key for key in _VALIDATORS}
    for key, value in configuration.items():
        known = by_lower.get(key.lower())
        if known is None:
            continue
        try:
            _VALIDATORS[known](value)
        except ValueError as exc:
            kind = (
                InvalidIsolationLevelError
                if known == "delta.isolationLevel"
                else InvalidTablePropertyError
            )
            raise kind(f"{key} = {value[:200]!r}: {exc}", table=table, version=version) from None
