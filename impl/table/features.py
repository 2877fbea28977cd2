"""Protocol features: what this reader supports, what a protocol supports, and what counts as
removing or downgrading.
"""

from __future__ import annotations

from dataclasses import replace

from deltaspec.releases_table import writer_support

from ..actions import Metadata, Protocol
from ..errors import UnsupportedProtocolError, UnsupportedWriterProtocolError
from .releases import Profile

__all__ = [
    "DATA_TYPE_FEATURES",
    "MAX_READER_VERSION",
    "SPARK_PATH_READER_FEATURES",
    "SPARK_PATH_WRITER_FEATURES",
    "SUPPORTED_READER_FEATURES",
    "WRITER_FEATURES",
    "check_reader_protocol",
    "features",
    "is_downgrade",
    "removes_features",
    "require_no_commit_coordinator",
    "require_writable",
]

DATA_TYPE_FEATURES = frozenset(
    {
        "variantType",
        "variantType-preview",
        "variantShredding",
        "variantShredding-preview",
        "geospatial",
        "geospatial-dev",
    }
)
"""Features of column types only: the log is read and written as any other; the Spark path,
which does not handle these types, refuses them."""

SUPPORTED_READER_FEATURES = frozenset(
    {
        # the log: file keys with deletion vectors, v2 checkpoints with sidecars
        "deletionVectors",
        "v2Checkpoint",
        # only VACUUM must care; reading is unaffected
        "vacuumProtocolCheck",
        # scans: physical column names / field ids, TIMESTAMP_NTZ, widened column types
        "columnMapping",
        "timestampNtz",
        "typeWidening",
        "typeWidening-preview",
    }
    | DATA_TYPE_FEATURES
)
"""Reader features this implementation reads correctly.

The log-level ones (``deletionVectors``, ``v2Checkpoint``) change how the log is replayed and are
implemented by :mod:`deltaspec.impl.replay`; the others only change how data files are
interpreted, which the snapshot exposes (schema, partition values, deletion vector descriptors)
for the scan to apply (variant and geospatial columns: the Spark path refuses them,
:data:`SPARK_PATH_READER_FEATURES`). Catalog-managed tables are refused.
"""

SPARK_PATH_READER_FEATURES = SUPPORTED_READER_FEATURES - DATA_TYPE_FEATURES
"""The reader features the Spark path's scan honours: not variant or geospatial data."""

MAX_READER_VERSION = 3


WRITER_FEATURES = frozenset(
    {
        "appendOnly",
        "invariants",
        "checkConstraints",
        "changeDataFeed",
        "generatedColumns",
        "columnMapping",
        "identityColumns",
        "deletionVectors",
        "rowTracking",
        "timestampNtz",
        "domainMetadata",
        "v2Checkpoint",
        "icebergCompatV1",
        "icebergCompatV2",
        "icebergCompatV3",
        "clustering",
        "vacuumProtocolCheck",
        "typeWidening",
        "typeWidening-preview",
        "inCommitTimestamp",
        "inCommitTimestamp-preview",
        "allowColumnDefaults",
        # binds only log cleanup, which retention/log_cleanup.py follows
        # (RETENTION.CHECKPOINT_PROTECTION)
        "checkpointProtection",
        # only while no commit coordinator is named (require_no_commit_coordinator)
        "coordinatedCommits-preview",
        # data-file layout: the Spark path's, which refuses it
        "materializePartitionColumns",
    }
    | DATA_TYPE_FEATURES
)
"""Writer features of the Delta protocol that this writer knows and keeps: the log-level ones
are implemented here (appendOnly, domainMetadata, v2Checkpoint, deletionVectors keys,
inCommitTimestamp, rowTracking, checkpointProtection...), the data-level ones are the callers'
(the Spark path, which refuses those it does not honour). A table with any other writer feature
(an unknown one, ``catalogManaged``) is refused for writing (TXN.WRITER_PROTOCOL)."""

COMMIT_COORDINATOR_PROPERTY = "delta.coordinatedCommits.commitCoordinator-preview"
"""A table whose metadata sets this takes its commits through that coordinator, not by
put-if-absent in ``_delta_log`` (TXN.WRITER_PROTOCOL)."""

SPARK_PATH_WRITER_FEATURES = frozenset(
    {"appendOnly", "invariants", "checkConstraints", "timestampNtz", "deletionVectors"}
)
"""The writer features the Spark path honours when it writes data (a subset of
:data:`WRITER_FEATURES`): the others need work on the data that path does not do yet, so a table
with them is refused for Spark writes."""


def check_reader_protocol(
    protocol: Protocol,
    *,
    table: str | None = None,
    version: int | None = None,
    file: str | None = None,
) -> None:
    """Refuse a protocol this reader does not support (SNAPSHOT.PROTOCOL_METADATA).

    ``minReaderVersion`` above 3, or (at reader version 3) a ``readerFeatures`` entry outside
    :data:`SUPPORTED_READER_FEATURES`, raises :class:`UnsupportedProtocolError`.
    """
    if protocol.min_reader_version > MAX_READER_VERSION or protocol.min_reader_version < 1:
        raise UnsupportedProtocolError(
            f"minReaderVersion {protocol.min_reader_version} is not supported "
            f"(this reader supports 1 to {MAX_READER_VERSION})",
            table=table,
            version=version,
            file=file,
        )
    if protocol.min_reader_version == MAX_READER_VERSION:
        unsupported = sorted(set(protocol.reader_features or ()) - SUPPORTED_READER_FEATURES)
        if unsupported:
            raise UnsupportedProtocolError(
                f"unsupported reader features {unsupported}",
                table=table,
                version=version,
                file=file,
            )


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


def require_writable(
    protocol: Protocol,
    profile: Profile,
    *,
    table: str | None = None,
    version: int | None = None,
) -> None:
    """UnsupportedWriterProtocolError for a protocol the configured release cannot write
    (spec/data/releases.json, ``writer_protocols``), or that needs a writer feature this writer
    does not implement (:data:`WRITER_FEATURES`)."""
    support = writer_support(profile.release)
    kept = replace(support, features=support.features & WRITER_FEATURES)
    why = kept.unsupported(protocol.min_writer_version, protocol.writer_features or ())
    if why:
        raise UnsupportedWriterProtocolError(
            f"release {profile} cannot write a table with protocol "
            f"({protocol.min_reader_version}, {protocol.min_writer_version}): "
            f"unsupported {', '.join(why)}",
            table=table,
            version=version,
        )


def require_no_commit_coordinator(
    metadata: Metadata | None, *, table: str | None = None, version: int | None = None
) -> None:
    """UnsupportedWriterProtocolError for a table whose metadata names a commit coordinator:
    its commits go through that coordinator, which this writer does not drive."""
    configuration = {} if metadata is None else metadata.configuration
    coordinator = configuration.get(COMMIT_COORDINATOR_PROPERTY)
    if coordinator is not None:
        raise UnsupportedWriterProtocolError(
            f"the table's commits go through the commit coordinator {coordinator!r} "
            f"({COMMIT_COORDINATOR_PROPERTY})",
            table=table,
            version=version,
        )
