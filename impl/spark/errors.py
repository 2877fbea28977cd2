"""Typed errors of the Spark write path (delta-spark's error classes, reference §5)."""

from __future__ import annotations

from deltaspec.impl.errors import DeltaError


class DeltaPathExistsError(DeltaError):
    """SaveMode ErrorIfExists on an existing table."""

    error_class = "DELTA_PATH_EXISTS"
    kind = "PATH_EXISTS"


class InvalidConditionError(DeltaError):
    """A condition or replaceWhere predicate Spark cannot parse."""

    error_class = "DELTA_INVALID_CONDITION"
    kind = "INVALID_CONDITION"


class NonPartitionColumnReferenceError(DeltaError):
    """replaceWhere over a data column where only partition columns are allowed."""

    error_class = "DELTA_NON_PARTITION_COLUMN_REFERENCE"
    kind = "NON_PARTITION_COLUMN_REFERENCE"


class ReplaceWhereMismatchError(DeltaError):
    """Written data outside the replaceWhere predicate."""

    error_class = "DELTA_REPLACE_WHERE_MISMATCH"
    kind = "REPLACE_WHERE_MISMATCH"


class ReplaceWhereWithDynamicPartitionOverwriteError(DeltaError):
    error_class = "DELTA_REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE"
    kind = "REPLACE_WHERE_WITH_DYNAMIC_PARTITION_OVERWRITE"


class OverwriteSchemaWithDynamicPartitionOverwriteError(DeltaError):
    error_class = "DELTA_OVERWRITE_SCHEMA_WITH_DYNAMIC_PARTITION_OVERWRITE"
    kind = "OVERWRITE_SCHEMA_WITH_DYNAMIC_PARTITION_OVERWRITE"


class ReplaceWhereDataChangeError(DeltaError):
    """replaceWhere over data columns with dataChange=false."""

    error_class = "DELTA_REPLACE_WHERE_WITH_FILTER_DATA_CHANGE_UNSET"
    kind = "REPLACE_WHERE_WITH_FILTER_DATA_CHANGE_UNSET"


class MetadataMismatchError(DeltaError):
    """DELTA_METADATA_MISMATCH; the subclasses are its sub-errors."""

    error_class = "DELTA_METADATA_MISMATCH"
    kind = "METADATA_MISMATCH"


class SchemaMismatchError(MetadataMismatchError):
    kind = "SCHEMA_MISMATCH"


class PartitioningMismatchError(MetadataMismatchError):
    kind = "PARTITIONING_MISMATCH"


class OverwriteRequiredError(MetadataMismatchError):
    """A schema or partitioning replacement without overwriteSchema in overwrite mode."""

    kind = "OVERWRITE_REQUIRED"


class IncompatibleSchemaMergeError(DeltaError):
    """mergeSchema between incompatible types."""

    error_class = "DELTA_FAILED_TO_MERGE_FIELDS"
    kind = "FAILED_TO_MERGE_FIELDS"


class EmptyDataError(DeltaError):
    error_class = "DELTA_EMPTY_DATA"
    kind = "EMPTY_DATA"


class DataChangeFalseError(DeltaError):
    """A metadata change requested by a dataChange=false write."""

    error_class = "DELTA_DATA_CHANGE_FALSE"
    kind = "DATA_CHANGE_FALSE"


class NotNullViolationError(DeltaError):
    error_class = "DELTA_NOT_NULL_CONSTRAINT_VIOLATED"
    kind = "NOT_NULL_CONSTRAINT_VIOLATED"


class CheckConstraintViolationError(DeltaError):
    error_class = "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"
    kind = "VIOLATE_CONSTRAINT"


class MultipleSourceRowMatchError(DeltaError):
    """MERGE: one target row matched by several source rows with an update or delete clause."""

    error_class = "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"
    kind = "MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE"


class UnexpectedPartitionDirectoryError(DeltaError):
    """Spark wrote a directory whose name does not round-trip to a partition value."""

    error_class = "DELTA_UNEXPECTED_PARTITION_DIRECTORY"
    kind = "UNEXPECTED_PARTITION_DIRECTORY"


class InvalidOptionError(DeltaError):
    """A write option with a value delta-spark refuses (``dataChange='no'``, ``txnVersion=1.5``,
    an unknown save mode): never read as false or truncated."""

    error_class = "DELTA_ILLEGAL_OPTION"
    kind = "INVALID_OPTION"


class UnresolvedColumnError(InvalidConditionError):
    """A condition or assignment naming a column the table does not have (Spark's
    UNRESOLVED_COLUMN), reported with the table's own columns only."""

    error_class = "UNRESOLVED_COLUMN"
    kind = "UNRESOLVED_COLUMN"


class NonDeterministicConditionError(InvalidConditionError):
    """A DELETE/UPDATE condition that is not deterministic (``rand()``): refused, as
    delta-spark refuses it (MERGE: DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED)."""

    error_class = "INVALID_NON_DETERMINISTIC_EXPRESSIONS"
    kind = "NON_DETERMINISTIC_EXPRESSION"


class NonDeterministicMergeConditionError(NonDeterministicConditionError):
    error_class = "DELTA_NON_DETERMINISTIC_FUNCTION_NOT_SUPPORTED"


class UnsupportedSubqueryError(InvalidConditionError):
    """A DML condition with a subquery (delta-spark refuses them)."""

    error_class = "DELTA_UNSUPPORTED_SUBQUERY"
    kind = "UNSUPPORTED_SUBQUERY"


class UnsafeWritePathError(DeltaError):
    """A data file would be written through a symlink or outside the table root."""

    error_class = "DELTA_UNSAFE_PATH"
    kind = "UNSAFE_PATH"


class RestoreMissingFilesError(DeltaError):
    """RESTORE to a version whose data files are gone (VACUUMed): nothing is committed."""

    error_class = "DELTA_CANNOT_RESTORE_TABLE_VERSION"
    kind = "RESTORE_MISSING_FILES"
