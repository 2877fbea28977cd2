"""Typed errors of the Spark write path, with delta-spark's error classes.

Each class states its ``error_class`` once, in its header; its neutral ``kind`` is the error
class without the ``DELTA_`` prefix unless the header names another.
"""

from __future__ import annotations

from typing import Any

from deltaspec.impl.errors import DeltaError


class SparkPathError(DeltaError):
    """Base of the Spark path's errors: ``class X(SparkPathError, error_class=..., kind=...)``."""

    def __init_subclass__(
        cls, *, error_class: str | None = None, kind: str | None = None, **rest: Any
    ) -> None:
        super().__init_subclass__(**rest)
        if error_class is not None:
            cls.error_class = error_class
        if kind is not None or error_class is not None:
            cls.kind = kind or cls.error_class.removeprefix("DELTA_")


class DeltaPathExistsError(SparkPathError, error_class="DELTA_PATH_EXISTS"):
    """SaveMode ErrorIfExists on an existing table."""


class InvalidConditionError(SparkPathError, error_class="DELTA_INVALID_CONDITION"):
    """A condition or replaceWhere predicate Spark cannot parse."""


class UpdateValueError(SparkPathError, kind="UPDATE_VALUE_DOES_NOT_FIT"):
    """An UPDATE assignment whose value cannot be stored in its column's type (a string that is
    no number, a number out of the column's range): Spark's ANSI cast refuses it
    (``CAST_INVALID_INPUT``, ``CAST_OVERFLOW``, named in the message), before any file is
    written."""


class NonPartitionColumnReferenceError(
    SparkPathError, error_class="DELTA_NON_PARTITION_COLUMN_REFERENCE"
):
    """replaceWhere over a data column where only partition columns are allowed."""


class ReplaceWhereMismatchError(SparkPathError, error_class="DELTA_REPLACE_WHERE_MISMATCH"):
    """Written data outside the replaceWhere predicate."""


class ReplaceWhereWithDynamicPartitionOverwriteError(
    SparkPathError, error_class="DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE"
):
    """replaceWhere together with partitionOverwriteMode=dynamic."""


class OverwriteSchemaWithDynamicPartitionOverwriteError(
    SparkPathError, error_class="DELTA_OVERWRITE_SCHEMA_WITH_DYNAMIC_PARTITION_OVERWRITE"
):
    """overwriteSchema in a dynamic partition overwrite."""


class ReplaceWhereDataChangeError(
    SparkPathError, error_class="DELTA_REPLACE_WHERE_WITH_FILTER_DATA_CHANGE_UNSET"
):
    """replaceWhere over data columns with dataChange=false."""


class MetadataMismatchError(SparkPathError, error_class="DELTA_METADATA_MISMATCH"):
    """DELTA_METADATA_MISMATCH; the subclasses are its sub-errors."""


class SchemaMismatchError(MetadataMismatchError, kind="SCHEMA_MISMATCH"):
    """Data whose schema the table's does not accept."""


class PartitioningMismatchError(MetadataMismatchError, kind="PARTITIONING_MISMATCH"):
    """Partition columns other than the table's, or not in the data."""


class OverwriteRequiredError(MetadataMismatchError, kind="OVERWRITE_REQUIRED"):
    """A schema or partitioning replacement without overwriteSchema in overwrite mode."""


class IncompatibleSchemaMergeError(SparkPathError, error_class="DELTA_FAILED_TO_MERGE_FIELDS"):
    """mergeSchema between incompatible types."""


class EmptyDataError(SparkPathError, error_class="DELTA_EMPTY_DATA"):
    """A table created from data without columns."""


class DataChangeFalseError(SparkPathError, error_class="DELTA_DATA_CHANGE_FALSE"):
    """A metadata change requested by a dataChange=false write."""


class NotNullViolationError(SparkPathError, error_class="DELTA_NOT_NULL_CONSTRAINT_VIOLATED"):
    """A null written to a NOT NULL column."""


class CheckConstraintViolationError(
    SparkPathError, error_class="DELTA_VIOLATE_CONSTRAINT_WITH_VALUES", kind="VIOLATE_CONSTRAINT"
):
    """A row a CHECK constraint rejects."""


class MultipleSourceRowMatchError(
    SparkPathError, error_class="DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"
):
    """MERGE: one target row matched by several source rows, unless the only WHEN MATCHED clause
    is one unconditional delete."""


class UnexpectedPartitionDirectoryError(
    SparkPathError, error_class="DELTA_UNEXPECTED_PARTITION_DIRECTORY"
):
    """Spark wrote a directory whose name does not round-trip to a partition value."""


class InvalidOptionError(SparkPathError, error_class="DELTA_ILLEGAL_OPTION", kind="INVALID_OPTION"):
    """A write option with a value delta-spark refuses (``dataChange='no'``, ``txnVersion=1.5``,
    an unknown save mode): never read as false or truncated."""


class UnresolvedColumnError(InvalidConditionError, error_class="UNRESOLVED_COLUMN"):
    """A condition or assignment naming a column the table does not have (Spark's
    UNRESOLVED_COLUMN), reported with the table's own columns only."""


class NonDeterministicConditionError(
    InvalidConditionError,
    error_class="INVALID_NON_DETERMINISTIC_EXPRESSIONS",
    kind="NON_DETERMINISTIC_EXPRESSION",
):
    """A DELETE/UPDATE condition that is not deterministic (``rand()``): refused, as
    delta-spark refuses it (MERGE: DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED)."""


class NonDeterministicMergeConditionError(
    NonDeterministicConditionError,
    error_class="DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED",
    kind=NonDeterministicConditionError.kind,
):
    """The MERGE spelling of NonDeterministicConditionError."""


class UnsupportedSubqueryError(InvalidConditionError, error_class="DELTA_UNSUPPORTED_SUBQUERY"):
    """A DML condition with a subquery (delta-spark refuses them)."""


class UnsafeWritePathError(SparkPathError, error_class="DELTA_UNSAFE_PATH"):
    """A data file would be written through a symlink or outside the table root."""


class RestoreMissingFilesError(
    SparkPathError, error_class="DELTA_CANNOT_RESTORE_TABLE_VERSION", kind="RESTORE_MISSING_FILES"
):
    """RESTORE to a version whose data files are gone (VACUUMed): nothing is committed."""
