"""Which table features a protocol supports (CONFLICT.PROTOCOL, CONFLICT.METADATA_RESOLUTION)."""

from __future__ import annotations

from deltaspec.releases_table import (
    TABLE_FEATURES_WRITER_VERSION,
    parse_release,
    writer_support,
)
from deltaspec.rules import rule

from .actions import Metadata, Protocol
from .profiles import Profile

TABLE_FEATURES_READER = 3
TABLE_FEATURES_WRITER = TABLE_FEATURES_WRITER_VERSION

_LEGACY_WRITER_FEATURES: tuple[tuple[int, str], ...] = (
    (2, "appendOnly"),
    (2, "invariants"),
    (3, "checkConstraints"),
    (4, "changeDataFeed"),
    (4, "generatedColumns"),
    (5, "columnMapping"),
    (6, "identityColumns"),
)


@rule("ACTION.PROTOCOL_FEATURE_LISTS")
def misplaced_feature_lists(protocol: Protocol) -> list[str]:
    """The feature lists ``protocol`` holds at versions that have none (empty: well formed):
    ``readerFeatures`` below reader version 3, ``writerFeatures`` below writer version 7."""
    misplaced = []
    if protocol.reader_features is not None and protocol.min_reader_version < TABLE_FEATURES_READER:
        misplaced.append(f"readerFeatures at minReaderVersion {protocol.min_reader_version}")
    if protocol.writer_features is not None and protocol.min_writer_version < TABLE_FEATURES_WRITER:
        misplaced.append(f"writerFeatures at minWriterVersion {protocol.min_writer_version}")
    return misplaced


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


def writes_to(protocol: Protocol | None, profile: Profile) -> bool:
    """Whether the release's writer can write a table with ``protocol``: its
    ``minWriterVersion`` is one the release takes and, at writer version 7, it supports every
    listed writer feature (spec/data/releases.json, ``writer_protocols``)."""
    if protocol is None:
        return True
    support = writer_support(profile.release)
    return not support.unsupported(protocol.min_writer_version, protocol.writer_features or ())


_LEGACY_MAX_READER_VERSION = ((parse_release("0.1.0"), 1), (parse_release("1.1.0"), 2))
"""The highest ``minReaderVersion`` a release reads before table features (delta-spark's
``Action.readerVersion``: 1 up to v1.0.x, 2 from v1.1.0, 3 from v2.3.0)."""


def unreadable(protocol: Protocol, profile: Profile) -> list[str]:
    """Why the release's reader refuses a snapshot with ``protocol`` (empty: it reads it), the
    reader check of SNAPSHOT.PROTOCOL_METADATA (whose model function is
    ``require_protocol_and_metadata``): a ``minReaderVersion`` it does not take, or (at reader
    version 3) each listed reader feature it does not support, as spec/data/releases.json states
    the release's features (so v2.3.0, which reads deletionVectors but cannot write them, is
    taken to refuse them)."""
    support = writer_support(profile.release)
    if TABLE_FEATURES_WRITER_VERSION in support.writer_versions:  # table features: 1, 2, 3
        highest = TABLE_FEATURES_READER
    else:
        highest = max(v for since, v in _LEGACY_MAX_READER_VERSION if since <= profile.release)
    if not 1 <= protocol.min_reader_version <= highest:
        return [f"minReaderVersion {protocol.min_reader_version}"]
    if protocol.min_reader_version < TABLE_FEATURES_READER:
        return []
    return sorted(set(protocol.reader_features or ()) - support.reader_features)


COMMIT_COORDINATOR_PROPERTY = "delta.coordinatedCommits.commitCoordinator-preview"


def names_commit_coordinator(metadata: Metadata) -> bool:
    """A table whose metadata names a commit coordinator takes its commits through it, not by
    put-if-absent: a writer without that coordinator cannot write it."""
    return metadata.property(COMMIT_COORDINATOR_PROPERTY) is not None
