"""What a commit can come to: a version, a conflict, a rejection, or nothing (CONFLICT.KINDS)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from deltaspec.rules import rule


@rule("CONFLICT.KINDS")
class ConflictKind(Enum):
    """CONFLICT.KINDS: one per delta-spark concurrent-modification exception."""

    PROTOCOL_CHANGED = "PROTOCOL_CHANGED"
    METADATA_CHANGED = "METADATA_CHANGED"
    CONCURRENT_TRANSACTION = "CONCURRENT_TRANSACTION"
    CONCURRENT_APPEND = "CONCURRENT_APPEND"
    CONCURRENT_DELETE_READ = "CONCURRENT_DELETE_READ"
    CONCURRENT_DELETE_DELETE = "CONCURRENT_DELETE_DELETE"
    CONCURRENT_WRITE = "CONCURRENT_WRITE"
    CONCURRENT_MODIFICATION = "CONCURRENT_MODIFICATION"


class ErrorKind(Enum):
    """Rejections that are not conflicts: the commit is invalid whatever else happens."""

    MAX_COMMIT_RETRIES_EXCEEDED = "MAX_COMMIT_RETRIES_EXCEEDED"
    APPEND_ONLY_VIOLATION = "APPEND_ONLY_VIOLATION"
    METADATA_ABSENT = "METADATA_ABSENT"
    DUPLICATE_ACTIONS = "DUPLICATE_ACTIONS"
    DUPLICATE_SET_TRANSACTION = "DUPLICATE_SET_TRANSACTION"
    METADATA_CHANGED_TWICE = "METADATA_CHANGED_TWICE"
    PROTOCOL_CHANGED_TWICE = "PROTOCOL_CHANGED_TWICE"
    INVALID_PARTITIONING_SCHEMA = "INVALID_PARTITIONING_SCHEMA"
    PROTOCOL_DOWNGRADE = "PROTOCOL_DOWNGRADE"
    DOMAIN_METADATA_UNSUPPORTED = "DOMAIN_METADATA_UNSUPPORTED"
    DUPLICATE_DOMAIN_METADATA = "DUPLICATE_DOMAIN_METADATA"
    TABLE_NOT_FOUND = "TABLE_NOT_FOUND"
    VERSION_NOT_FOUND = "VERSION_NOT_FOUND"
    INVALID_TABLE_PROPERTY = "INVALID_TABLE_PROPERTY"
    INVALID_ISOLATION_LEVEL = "INVALID_ISOLATION_LEVEL"
    ROW_ID_ASSIGNMENT_WITHOUT_STATS = "ROW_ID_ASSIGNMENT_WITHOUT_STATS"
    DELETION_VECTORS_DISALLOWED = "DELETION_VECTORS_DISALLOWED"
    DELETION_VECTOR_MISSING_NUM_RECORDS = "DELETION_VECTOR_MISSING_NUM_RECORDS"
    DELETION_VECTOR_TIGHT_BOUNDS = "DELETION_VECTOR_TIGHT_BOUNDS"
    INVALID_COMMIT_ACTION = "INVALID_COMMIT_ACTION"
    UNSUPPORTED_WRITE_PROTOCOL = "UNSUPPORTED_WRITE_PROTOCOL"


@dataclass(frozen=True)
class Committed:
    version: int


@dataclass(frozen=True)
class Conflict:
    kind: ConflictKind
    winner: int
    """The version of the winning commit whose check failed."""


@dataclass(frozen=True)
class Rejected:
    kind: ErrorKind


@dataclass(frozen=True)
class Skipped:
    """TXN.EMPTY_COMMIT: nothing to record, no version consumed."""


@dataclass(frozen=True)
class Pending:
    """The writer is still inside its commit loop (fine-grained steps)."""


Outcome = Committed | Conflict | Rejected | Skipped | Pending
