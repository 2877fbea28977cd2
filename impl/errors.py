"""Typed errors of the production implementation.

Every error names what it can of the table path, the version and the file
involved. ``kind`` is the neutral name used by spec/data/conflict_kinds.json
and the scenario vectors. For a kind that table lists with a delta-spark error
class, ``error_class`` and ``sqlstate`` are read from it (the one source); the
other errors name their own.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, ClassVar

KINDS_FILE = "conflict_kinds.json"


def spec_kinds() -> dict[str, dict[str, Any]]:
    """Kind → its row of spec/data/conflict_kinds.json (conflicts and errors alike)."""
    entry = resources.files("deltaspec.spec") / "data" / KINDS_FILE
    data = json.loads(entry.read_text(encoding="utf-8"))
    return {**data["conflicts"], **data["errors"]}


_SPEC_KINDS = spec_kinds()


class DeltaError(Exception):
    """Base of every error deltaspec.impl raises on purpose."""

    error_class: ClassVar[str] = "DELTA_ERROR"
    kind: ClassVar[str] = "DELTA_ERROR"
    sqlstate: ClassVar[str | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass declaring a ``kind`` with a delta-spark error class in the spec's table
        takes its ``error_class`` and ``sqlstate`` from there."""
        super().__init_subclass__(**kwargs)
        row = _SPEC_KINDS.get(cls.__dict__.get("kind", ""))
        if row is not None and row["error_class"] is not None:
            cls.error_class = row["error_class"]
            cls.sqlstate = row["sqlstate"]

    def __init__(
        self,
        message: str,
        *,
        table: str | None = None,
        version: int | None = None,
        file: str | None = None,
    ) -> None:
        self.message = message
        self.table = table
        self.version = version
        self.file = file
        where = ", ".join(
            f"{name}={value}"
            for name, value in (("table", table), ("version", version), ("file", file))
            if value is not None
        )
        super().__init__(f"[{self.error_class}] {message}" + (f" ({where})" if where else ""))

    def located(self, version: int) -> DeltaError:
        """This error naming ``version`` when it named none (a sidecar's file name carries no
        version; the reader of its checkpoint knows it)."""
        if self.version is not None:
            return self
        return type(self)(self.message, table=self.table, version=version, file=self.file)

    def getErrorClass(self) -> str:  # PySpark's name, for code written against it
        return self.error_class

    def getCondition(self) -> str:  # PySpark's name
        return self.error_class


class InvalidArgumentError(DeltaError, TypeError):
    """An API argument of the wrong type or value: a table root that is no path, a version given
    as a bool, a float or a string. Also a TypeError, which Python code expects for those."""

    kind = "INVALID_ARGUMENT"


# --- reading the log -------------------------------------------------------------------------


class TableNotFoundError(DeltaError):
    kind = "TABLE_NOT_FOUND"


class VersionNotFoundError(DeltaError):
    """Time travel to a version the log cannot reconstruct."""

    kind = "VERSION_NOT_FOUND"


class MissingVersionsError(DeltaError):
    """A gap in the commit files that no checkpoint covers (LOG.CONTIGUITY)."""

    error_class = "DELTA_VERSIONS_NOT_CONTIGUOUS"
    kind = "VERSIONS_NOT_CONTIGUOUS"


class CorruptLogError(DeltaError):
    """A commit or checkpoint file that cannot be read: bad JSON, bad UTF-8, malformed action."""

    error_class = "DELTA_CORRUPT_LOG_FILE"
    kind = "CORRUPT_LOG_FILE"


class UnsafePathError(CorruptLogError):
    """A log that would make a reader or VACUUM touch something outside the table: a file path
    that leaves the table root or points into ``_delta_log``, or a symlink inside ``_delta_log``."""

    error_class = "DELTA_UNSAFE_PATH"
    kind = "UNSAFE_PATH"


class NotRegularFileError(CorruptLogError):
    """A log file name that holds a directory, a FIFO, a device or a socket: never opened (a
    FIFO or a device would block the reader), refused with the name (PATH.REGULAR_FILES)."""

    error_class = "DELTA_NOT_A_REGULAR_FILE"
    kind = "NOT_REGULAR_FILE"


class LogFileTooLargeError(CorruptLogError):
    """A log file larger than its kind may be (PATH.REGULAR_FILES): never read whole."""

    error_class = "DELTA_LOG_FILE_TOO_LARGE"
    kind = "LOG_FILE_TOO_LARGE"


class LogAccessError(DeltaError):
    """The file system refused an operation on a table file: permission denied, a read-only
    file system, an I/O error. Nothing was changed by this operation."""

    error_class = "DELTA_LOG_ACCESS_ERROR"
    kind = "LOG_ACCESS_ERROR"


class DataFileNotFoundError(DeltaError):
    """A data or deletion-vector file that the snapshot names is not there (deleted by hand, or
    by a VACUUM with too short a retention): delta-spark's ``DELTA_FILE_NOT_FOUND_DETAILED``."""

    error_class = "DELTA_FILE_NOT_FOUND_DETAILED"
    kind = "DATA_FILE_NOT_FOUND"


class CorruptDataFileError(DeltaError):
    """A data file that cannot be read as the table's rows: not Parquet, torn, or holding a
    column that does not fit the table's schema (Spark's ``FAILED_READ_FILE``)."""

    error_class = "FAILED_READ_FILE"
    kind = "CORRUPT_DATA_FILE"


class UnsupportedLogStoreError(DeltaError):
    """A file system on which no atomic put-if-absent is possible: neither hard links nor
    ``renameat2(RENAME_NOREPLACE)`` (LOG.ATOMIC_VISIBILITY)."""

    error_class = "DELTA_UNSUPPORTED_LOG_STORE"
    kind = "UNSUPPORTED_LOG_STORE"


class InvalidTableLocationError(DeltaError, ValueError):
    """An object-store URL that is no table location (PATH.TABLE_LOCATION): a path segment that
    is empty, ``.`` or ``..`` once decoded, a malformed escape, a query, no bucket. Also a
    ValueError, which a caller passing a bad URL expects."""

    error_class = "DELTA_INVALID_TABLE_LOCATION"
    kind = "INVALID_TABLE_LOCATION"


class StorageOutcomeUnknownError(LogAccessError, OSError):
    """A write to an object store that ended without an answer (a timeout, a dropped
    connection, a server error): the object may or may not have been written. An ``OSError``, so
    the commit loop reads the version back before deciding (RETRY.ATTEMPT_VERSION)."""

    error_class = "DELTA_STORAGE_OUTCOME_UNKNOWN"
    kind = "STORAGE_OUTCOME_UNKNOWN"


class MissingProtocolOrMetadataError(DeltaError):
    """A snapshot without protocol or metadata (SNAPSHOT.PROTOCOL_METADATA)."""

    error_class = "DELTA_STATE_RECOVER_ERROR"
    kind = "MISSING_PROTOCOL_OR_METADATA"


class UnsupportedProtocolError(DeltaError):
    """A reader version or reader feature this implementation does not support."""

    error_class = "DELTA_UNSUPPORTED_FEATURES_FOR_READ"
    kind = "UNSUPPORTED_PROTOCOL"


class UnsupportedFeatureError(DeltaError):
    """Something valid that this implementation does not do (for example a scan detail)."""

    error_class = "DELTA_UNSUPPORTED_FEATURE"
    kind = "UNSUPPORTED_FEATURE"


class VersionExistsError(DeltaError):
    """Put-if-absent lost: the commit file already exists (LOG.PUT_IF_ABSENT)."""

    error_class = "DELTA_FILE_ALREADY_EXISTS"
    kind = "FILE_ALREADY_EXISTS"


# --- committing ------------------------------------------------------------------------------


class CommitValidationError(DeltaError):
    """A commit that is invalid whatever else happens (prepareCommit rules, TXN.*)."""


class MetadataAbsentError(CommitValidationError):
    kind = "METADATA_ABSENT"


class AppendOnlyViolationError(CommitValidationError):
    kind = "APPEND_ONLY_VIOLATION"


class DuplicateActionsError(CommitValidationError):
    kind = "DUPLICATE_ACTIONS"


class DuplicateSetTransactionError(CommitValidationError):
    error_class = "DELTA_DUPLICATE_SET_TRANSACTION"
    kind = "DUPLICATE_SET_TRANSACTION"


class MetadataChangedTwiceError(CommitValidationError):
    error_class = "DELTA_METADATA_CHANGED_TWICE"
    kind = "METADATA_CHANGED_TWICE"


class ProtocolChangedTwiceError(CommitValidationError):
    error_class = "DELTA_PROTOCOL_CHANGED_TWICE"
    kind = "PROTOCOL_CHANGED_TWICE"


class InvalidPartitioningSchemaError(CommitValidationError):
    kind = "INVALID_PARTITIONING_SCHEMA"


class ProtocolDowngradeError(CommitValidationError):
    kind = "PROTOCOL_DOWNGRADE"


class DomainMetadataUnsupportedError(CommitValidationError):
    kind = "DOMAIN_METADATA_UNSUPPORTED"


class DuplicateDomainMetadataError(CommitValidationError):
    kind = "DUPLICATE_DOMAIN_METADATA"


class RowIdAssignmentWithoutStatsError(CommitValidationError):
    """ROWTRACKING.FRESH_ROW_IDS: an add that needs row ids has no ``numRecords``."""

    kind = "ROW_ID_ASSIGNMENT_WITHOUT_STATS"


class DeletionVectorsDisallowedError(CommitValidationError):
    """DV.ADD_CHECKS: an add with a deletion vector on a table that does not enable them."""

    kind = "DELETION_VECTORS_DISALLOWED"


class DeletionVectorMissingNumRecordsError(CommitValidationError):
    """DV.ADD_CHECKS: an add with a deletion vector whose stats give no ``numRecords``."""

    kind = "DELETION_VECTOR_MISSING_NUM_RECORDS"


class DeletionVectorTightBoundsError(CommitValidationError):
    """DV.ADD_CHECKS: a DELETE, UPDATE or MERGE add with a deletion vector and tight bounds."""

    kind = "DELETION_VECTOR_TIGHT_BOUNDS"


class InvalidCommitActionError(CommitValidationError):
    """An action this implementation's own reader would refuse (TXN.WRITE_BOUNDARY): nothing is
    committed that the log could not be read back from."""

    error_class = "DELTA_INVALID_COMMIT_ACTION"
    kind = "INVALID_COMMIT_ACTION"


class UnsupportedWriterProtocolError(CommitValidationError):
    """A table whose protocol needs a writer version or writer features this implementation does
    not implement (ACTION.PROTOCOL, TXN.WRITE_BOUNDARY)."""

    error_class = "DELTA_UNSUPPORTED_FEATURES_FOR_WRITE"
    kind = "UNSUPPORTED_WRITE_PROTOCOL"


class InvalidTablePropertyError(CommitValidationError):
    """A ``delta.*`` table property with a value it cannot have (TXN.TABLE_PROPERTIES)."""

    kind = "INVALID_TABLE_PROPERTY"


class InvalidIsolationLevelError(InvalidTablePropertyError):
    """``delta.isolationLevel`` naming no isolation level (TXN.TABLE_PROPERTIES)."""

    kind = "INVALID_ISOLATION_LEVEL"


class CommitFailedError(DeltaError):
    """Writing the commit failed again and again; reading the log back showed that it was not
    written (nothing was committed)."""

    error_class = "DELTA_COMMIT_FAILED"
    kind = "COMMIT_FAILED"


class CommitOutcomeUnknownError(DeltaError):
    """Writing the commit failed and the log could not be read back to tell whether the commit
    landed: it may or may not be in the log (at ``version``, with this transaction's txnId)."""

    error_class = "DELTA_COMMIT_OUTCOME_UNKNOWN"
    kind = "COMMIT_OUTCOME_UNKNOWN"


class VacuumRetentionTooShortError(DeltaError):
    """VACUUM with a retention below ``delta.deletedFileRetentionDuration``, not overridden."""

    error_class = "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT"
    kind = "VACUUM_RETENTION_PERIOD_TOO_SHORT"


class VacuumRetentionInvalidError(DeltaError):
    """A VACUUM retention that is not a finite number of milliseconds (NaN, infinity, not a
    number)."""

    error_class = "DELTA_VACUUM_RETENTION_PERIOD_INVALID"
    kind = "VACUUM_RETENTION_PERIOD_INVALID"


class VacuumRetentionNegativeError(DeltaError):
    error_class = "DELTA_VACUUM_RETENTION_PERIOD_NEGATIVE"
    kind = "VACUUM_RETENTION_PERIOD_NEGATIVE"


class MaxCommitRetriesExceededError(DeltaError):
    kind = "MAX_COMMIT_RETRIES_EXCEEDED"


class DeltaConcurrentModificationException(DeltaError):
    """Base of the conflicts (CONFLICT.KINDS): a winning commit made this one invalid."""

    sqlstate: ClassVar[str | None] = "2D521"

    def __init__(
        self,
        message: str,
        *,
        table: str | None = None,
        version: int | None = None,
        file: str | None = None,
        winning_version: int | None = None,
        partition_hint: str | None = None,
        conflicting_commit: dict[str, Any] | None = None,
    ) -> None:
        self.winning_version = winning_version
        self.partition_hint = partition_hint
        self.conflicting_commit = conflicting_commit
        details = message
        if partition_hint:
            details += f" Partition: {partition_hint}."
        if conflicting_commit is not None:
            details += f"\nConflicting commit: {json.dumps(conflicting_commit, sort_keys=True)}"
        super().__init__(details, table=table, version=version, file=file)


class ProtocolChangedException(DeltaConcurrentModificationException):
    kind = "PROTOCOL_CHANGED"


class MetadataChangedException(DeltaConcurrentModificationException):
    kind = "METADATA_CHANGED"


class ConcurrentTransactionException(DeltaConcurrentModificationException):
    kind = "CONCURRENT_TRANSACTION"


class ConcurrentAppendException(DeltaConcurrentModificationException):
    kind = "CONCURRENT_APPEND"


class ConcurrentDeleteReadException(DeltaConcurrentModificationException):
    kind = "CONCURRENT_DELETE_READ"


class ConcurrentDeleteDeleteException(DeltaConcurrentModificationException):
    kind = "CONCURRENT_DELETE_DELETE"


class ConcurrentWriteException(DeltaConcurrentModificationException):
    kind = "CONCURRENT_WRITE"


class ConcurrentModificationException(DeltaConcurrentModificationException):
    """v0.1.0: any lost race (no retry)."""

    error_class = "CONCURRENT_MODIFICATION"
    kind = "CONCURRENT_MODIFICATION"
    sqlstate = None
