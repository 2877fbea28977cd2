"""Protocol features: what a protocol supports, and what counts as removing or downgrading."""

from __future__ import annotations

from deltaspec.impl.actions import Protocol

_IMPLIED_BY_WRITER_VERSION = {
    2: ("appendOnly", "invariants"),
    3: ("checkConstraints",),
    4: ("changeDataFeed", "generatedColumns"),
    5: ("columnMapping",),
    6: ("identityColumns",),
}


def features(protocol: Protocol | None) -> frozenset[str]:
    """Explicit features of a table-features protocol (writer 7), else those its versions imply
    (columnMapping needs reader version 2 as well)."""
    if protocol is None:
        return frozenset()
    listed = set(protocol.reader_features or ()) | set(protocol.writer_features or ())
    if protocol.min_writer_version < 7:
        for version, names in _IMPLIED_BY_WRITER_VERSION.items():
            if protocol.min_writer_version >= version:
                listed.update(names)
        if protocol.min_reader_version < 2:
            listed.discard("columnMapping")
    return frozenset(listed)


def removes_features(new: Protocol, old: Protocol | None) -> bool:
    return bool(features(old) - features(new))


def is_downgrade(new: Protocol, old: Protocol | None, feature_based: bool) -> bool:
    """TXN.PROTOCOL_DOWNGRADE: lower versions (before v3.0.0) or fewer features (v3.0.0+)."""
    if old is None:
        return False
    if feature_based:
        return removes_features(new, old)
    lower_reader = new.min_reader_version < old.min_reader_version
    return lower_reader or new.min_writer_version < old.min_writer_version
