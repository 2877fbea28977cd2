"""Typed errors of the Spark write path, with delta-spark's error classes.

Each class states its ``error_class`` once, in its header; its neutral ``kind`` is the error
class without the ``DELTA_`` prefix unless the header names another.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from pyspark.errors import (
    AnalysisException,
    IllegalArgumentException,
    PySparkException,
    UnsupportedOperationException,
)

from ..impl.errors import DeltaConcurrentModificationException, DeltaError


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


class UnresolvedColumnError(
    InvalidConditionError, error_class="UNRESOLVED_COLUMN.WITH_SUGGESTION", kind="UNRESOLVED_COLUMN"
):
    """A condition or assignment naming a column the table does not have (Spark's
    UNRESOLVED_COLUMN.WITH_SUGGESTION), reported with the table's own columns only."""


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


class RestoreTimestampEarlierError(
    SparkPathError, error_class="DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER"
):
    """restoreToTimestamp before the first version's timestamp (time travel's
    TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION, as delta-spark's RESTORE names it)."""


class RestoreMissingFilesError(
    SparkPathError, error_class="DELTA_CANNOT_RESTORE_TABLE_VERSION", kind="RESTORE_MISSING_FILES"
):
    """RESTORE to a version whose data files are gone (VACUUMed): nothing is committed."""


# --- what a PySpark user's ``except`` catches ---------------------------------------------------

PYSPARK_EXCEPTION_OF: dict[str, type[PySparkException]] = {
    "DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE": UnsupportedOperationException,
    "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT": IllegalArgumentException,
    "DELTA_ILLEGAL_OPTION": IllegalArgumentException,
}
"""The PySpark exception delta-spark's Python API raises for an error class where it is not
``AnalysisException`` (its DeltaUnsupportedOperationException and DeltaIllegalArgumentException;
the differential script ``error_catching`` checks them against live delta-spark)."""

ON_A_PATH: dict[str, str] = {"DELTA_TABLE_NOT_FOUND": "DELTA_MISSING_DELTA_TABLE"}
"""Error classes delta-spark names otherwise for a table given by path, as the facade's always
is (LOG.NEW_TABLE: DELTA_TABLE_NOT_FOUND is for a catalog name)."""


_CATCHABLE: dict[tuple[type[DeltaError], type[PySparkException]], type[DeltaError]] = {}


def _catchable(cls: type[DeltaError], base: type[PySparkException]) -> type[DeltaError]:
    """``cls`` that is also ``base``: caught by ``except cls`` and ``except base`` alike (one
    class per pair, made once)."""
    made = _CATCHABLE.get((cls, base))
    if made is None:
        body = {
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            "__str__": BaseException.__str__,  # the DeltaError's text, not PySpark's re-prefixed
            "getSqlState": lambda self: self.sqlstate,  # PySpark's reads its own error table
        }
        made = _CATCHABLE.setdefault((cls, base), type(cls.__name__, (cls, base), body))
    return made


def as_pyspark(error: DeltaError) -> DeltaError:
    """``error`` as the facade raises it: the same error (class, message, attributes), also an
    instance of the PySpark exception delta-spark raises for its error class
    (:data:`PYSPARK_EXCEPTION_OF`, else ``AnalysisException``), with delta-spark's error class
    for a table given by path (:data:`ON_A_PATH`). Conflicts are left as they are: delta-spark's
    (``delta.exceptions.ConcurrentAppendException``, ...) are no AnalysisException either."""
    condition = ON_A_PATH.get(error.error_class, error.error_class)
    base = PYSPARK_EXCEPTION_OF.get(condition, AnalysisException)
    if isinstance(error, (base, DeltaConcurrentModificationException)):
        return error
    converted: Any = Exception.__new__(_catchable(type(error), base))
    converted.__dict__.update(error.__dict__)
    message = str(error)
    if condition != error.error_class:
        converted.error_class = condition
        message = message.replace(f"[{error.error_class}]", f"[{condition}]", 1)
    converted.args = (message,)
    # what PySparkException's own methods read (getMessage, getMessageParameters, ...)
    converted._message, converted._errorClass = message.split("] ", 1)[-1], condition
    converted._messageParameters, converted._contexts = {}, []
    return converted  # type: ignore[no-any-return]


F = TypeVar("F", bound=Callable[..., Any])


def raising_as_pyspark(function: F) -> F:
    """``function`` whose DeltaError leaves it as :func:`as_pyspark` makes it."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except DeltaError as error:
            converted = as_pyspark(error)
            if converted is error:
                raise
            raise converted.with_traceback(error.__traceback__) from error.__cause__

    return wrapper  # type: ignore[return-value]


C = TypeVar("C", bound=type)


def facade(cls: C) -> C:
    """Every public method of ``cls`` (static and class methods too) raising as PySpark does
    (:func:`raising_as_pyspark`)."""
    for name, member in list(vars(cls).items()):
        if name.startswith("_"):
            continue
        if isinstance(member, staticmethod):
            setattr(cls, name, staticmethod(raising_as_pyspark(member.__func__)))
        elif isinstance(member, classmethod):
            setattr(cls, name, classmethod(raising_as_pyspark(member.__func__)))
        elif inspect.isfunction(member):
            setattr(cls, name, raising_as_pyspark(member))
    return cls
