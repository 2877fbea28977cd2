"""Table properties the model interprets, and which values they may take (TXN.TABLE_PROPERTIES)."""

from __future__ import annotations

from collections.abc import Callable

from .actions import Metadata
from .checkpoint import interval_ms
from .outcomes import ErrorKind

LEVELS = ("Serializable", "WriteSerializable", "SnapshotIsolation")


def isolation_level_name(value: str) -> str | None:
    """ISOLATION.TABLE_DEFAULT, TXN.TABLE_PROPERTIES: the level ``value`` names, compared
    case-insensitively; None for no level."""
    return next((level for level in LEVELS if level.lower() == value.strip().lower()), None)


def _positive_int(value: str) -> bool:
    text = value.strip().lstrip("+")
    return text.isascii() and text.isdigit() and 0 < int(text) < 2**31


def _duration(value: str) -> bool:
    try:
        return interval_ms(value) >= 0
    except ValueError:
        return False


def _boolean(value: str) -> bool:
    return value.strip().lower() in ("true", "false")


_VALID: dict[str, Callable[[str], bool]] = {
    "delta.checkpointinterval": _positive_int,
    "delta.logretentionduration": _duration,
    "delta.deletedfileretentionduration": _duration,
    "delta.settransactionretentionduration": _duration,
    "delta.appendonly": _boolean,
    "delta.enableexpiredlogcleanup": _boolean,
    "delta.enableincommittimestamps": _boolean,
    "delta.enablechangedatafeed": _boolean,
    "delta.enabledeletionvectors": _boolean,
}


def invalid_property(metadata: Metadata) -> ErrorKind | None:
    """TXN.TABLE_PROPERTIES: the error for a committed metadata whose interpreted ``delta.*``
    property (keys case-insensitive) holds a value it cannot have, else None."""
    for key, value in metadata.configuration:
        lowered = key.lower()
        if lowered == "delta.isolationlevel":
            if isolation_level_name(value) is None:
                return ErrorKind.INVALID_ISOLATION_LEVEL
        elif lowered in _VALID and not _VALID[lowered](value):
            return ErrorKind.INVALID_TABLE_PROPERTY
    return None
