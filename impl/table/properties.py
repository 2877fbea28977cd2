"""The ``delta.*`` table properties this implementation interprets, parsed and validated in one
place (TXN.TABLE_PROPERTIES).

A commit whose metadata sets one of them to a value it cannot have is refused before anything is
written (:func:`validate`), so that no later commit, checkpoint or cleanup meets a value it cannot
interpret: ``delta.checkpointInterval = "0"`` would otherwise make every later commit land and
then fail in its post-commit checkpoint. Readers get the properties of a table's metadata as one
typed :class:`TableProperties`, each parsed by the same parsers on first use.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from functools import cached_property

from ..errors import InvalidIsolationLevelError, InvalidTablePropertyError

__all__ = [
    "DAY_MS",
    "DEFAULT_CHECKPOINT_INTERVAL",
    "DEFAULT_DELETED_FILE_RETENTION",
    "DEFAULT_LOG_RETENTION",
    "ISOLATION_LEVELS",
    "TableProperties",
    "canonical_key",
    "checkpoint_interval",
    "flag",
    "isolation_level",
    "parse_interval_ms",
    "validate",
]

DEFAULT_CHECKPOINT_INTERVAL = 10
"""Default of ``delta.checkpointInterval`` (CHECKPOINT.INTERVAL)."""

DEFAULT_DELETED_FILE_RETENTION = "interval 1 week"
"""Default of ``delta.deletedFileRetentionDuration`` (RETENTION.TOMBSTONES)."""

DEFAULT_LOG_RETENTION = "interval 30 days"
"""Default of ``delta.logRetentionDuration`` (RETENTION.LOG)."""

ISOLATION_LEVELS = ("Serializable", "WriteSerializable", "SnapshotIsolation")
"""The level names ``delta.isolationLevel`` may hold, compared case-insensitively."""

DAY_MS = 24 * 60 * 60 * 1000
_INTERVAL_UNITS_MS: dict[str, float] = {
    "week": 7 * DAY_MS,
    "day": DAY_MS,
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

_DELTA_SPARK_KEYS = (
    "appendOnly", "autoOptimize.autoCompact", "autoOptimize.optimizeWrite",
    "checkpoint.writeStatsAsJson", "checkpoint.writeStatsAsStruct", "checkpointInterval",
    "checkpointPolicy", "checkpointRetentionDuration", "columnMapping.maxColumnId",
    "columnMapping.mode", "compatibility.symlinkFormatManifest.enabled",
    "dataSkippingNumIndexedCols", "dataSkippingStatsColumns", "deletedFileRetentionDuration",
    "enableChangeDataFeed", "enableDeletionVectors", "enableExpiredLogCleanup",
    "enableInCommitTimestamps", "enableRowTracking", "enableTypeWidening",
    "inCommitTimestampEnablementTimestamp", "inCommitTimestampEnablementVersion",
    "isolationLevel", "logRetentionDuration", "minReaderVersion", "minWriterVersion",
    "randomizeFilePrefixes", "randomPrefixLength", "setTransactionRetentionDuration",
    "universalFormat.enabledFormats",
)  # fmt: skip
"""delta-spark's table properties (DeltaConfigs) this implementation may meet, in their
canonical spelling without the ``delta.`` prefix."""
_CANONICAL = {f"delta.{key}".lower(): f"delta.{key}" for key in _DELTA_SPARK_KEYS}


def canonical_key(key: str) -> str:
    """A table property's key as delta-spark stores it (TXN.TABLE_PROPERTIES): a known
    ``delta.*`` key in its canonical case, whatever case it was given in (Spark lowercases
    DataFrameWriter options), a ``delta.feature.*`` key lowercased, anything else as given."""
    lowered = key.lower()
    if lowered.startswith("delta.feature."):
        return lowered
    return _CANONICAL.get(lowered, key)


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


def _lenient_flag(value: str | None, default: bool) -> bool:
    """A boolean property as a reader takes it: ``true`` in any case is true, anything else
    false, ``default`` when unset."""
    return default if value is None else value.strip().lower() == "true"


class TableProperties:
    """The ``delta.*`` properties of one table's metadata, typed; each is parsed once, on first
    use, so a malformed value only fails the readers that need it (ValueError)."""

    def __init__(self, configuration: Mapping[str, str]) -> None:
        self.configuration = configuration

    @cached_property
    def checkpoint_interval(self) -> int:
        """``delta.checkpointInterval``, default 10 (CHECKPOINT.INTERVAL)."""
        return checkpoint_interval(self.configuration.get("delta.checkpointInterval"))

    @cached_property
    def deleted_file_retention_ms(self) -> int:
        """``delta.deletedFileRetentionDuration``, default one week (RETENTION.TOMBSTONES)."""
        text = self.configuration.get(
            "delta.deletedFileRetentionDuration", DEFAULT_DELETED_FILE_RETENTION
        )
        return parse_interval_ms(text)

    @cached_property
    def log_retention_ms(self) -> int:
        """``delta.logRetentionDuration``, default 30 days (RETENTION.LOG)."""
        text = self.configuration.get("delta.logRetentionDuration", DEFAULT_LOG_RETENTION)
        return parse_interval_ms(text)

    @cached_property
    def set_transaction_retention_ms(self) -> int | None:
        """``delta.setTransactionRetentionDuration``; None (never expire) when unset
        (RETENTION.SET_TRANSACTION)."""
        text = self.configuration.get("delta.setTransactionRetentionDuration")
        return None if text is None else parse_interval_ms(text)

    @cached_property
    def expired_log_cleanup(self) -> bool:
        """``delta.enableExpiredLogCleanup``, default true (RETENTION.LOG)."""
        return _lenient_flag(self.configuration.get("delta.enableExpiredLogCleanup"), True)

    @cached_property
    def checkpoint_protected_before(self) -> int:
        """``delta.requireCheckpointProtectionBeforeVersion``, default 0: the version below which
        a table with ``checkpointProtection`` keeps its history whole
        (RETENTION.CHECKPOINT_PROTECTION)."""
        return int(self.configuration.get("delta.requireCheckpointProtectionBeforeVersion", "0"))

    @cached_property
    def in_commit_timestamps(self) -> bool:
        """``delta.enableInCommitTimestamps``, default false (SNAPSHOT.REPLAY)."""
        return _lenient_flag(self.configuration.get("delta.enableInCommitTimestamps"), False)

    @cached_property
    def column_mapping_mode(self) -> str:
        """``delta.columnMapping.mode``, default ``none``."""
        return self.configuration.get("delta.columnMapping.mode", "none")
