"""Which table features a protocol supports (CONFLICT.PROTOCOL, CONFLICT.METADATA_RESOLUTION)."""

from __future__ import annotations

from .actions import Protocol

TABLE_FEATURES_READER = 3
TABLE_FEATURES_WRITER = 7

_LEGACY_WRITER_FEATURES: tuple[tuple[int, str], ...] = (
    (2, "appendOnly"),
    (2, "invariants"),
    (3, "checkConstraints"),
    (4, "changeDataFeed"),
    (4, "generatedColumns"),
    (5, "columnMapping"),
    (6, "identityColumns"),
)


def supported_features(protocol: Protocol) -> frozenset[str]:
    """Explicit features for table-features protocols, implied ones for legacy versions."""
    explicit = (protocol.reader_features or frozenset()) | (protocol.writer_features or frozenset())
    implied = frozenset(
        name
        for version, name in _LEGACY_WRITER_FEATURES
        if protocol.min_writer_version >= version
        and (name != "columnMapping" or protocol.min_reader_version >= 2)
    )
    if protocol.min_writer_version >= TABLE_FEATURES_WRITER:
        return explicit
    return implied | explicit


def supports(protocol: Protocol | None, feature: str) -> bool:
    return protocol is not None and feature in supported_features(protocol)


def removes_features(new: Protocol, old: Protocol | None) -> bool:
    """True when ``new`` supports fewer features than ``old`` (a DROP FEATURE)."""
    return old is not None and not supported_features(old) <= supported_features(new)


def is_downgrade(new: Protocol, old: Protocol | None, by_features: bool) -> bool:
    """TXN.PROTOCOL_DOWNGRADE: a lower reader or writer version than the table has, or (with
    table features, v3.0.0+) a protocol that no longer supports every feature the table has."""
    if old is None:
        return False
    if by_features:
        return removes_features(new, old)
    return (
        new.min_reader_version < old.min_reader_version
        or new.min_writer_version < old.min_writer_version
    )
