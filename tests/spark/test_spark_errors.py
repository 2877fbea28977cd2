"""The facade's errors as a PySpark user's ``except`` sees them (issue 34): the same typed error,
also the PySpark exception delta-spark raises for its error class. (Live delta-spark's side is
the differential script ``error_catching``.)"""

from __future__ import annotations

import pytest
from pyspark.errors import (
    AnalysisException,
    IllegalArgumentException,
    UnsupportedOperationException,
)

from deltaspec.impl.errors import (
    ConcurrentAppendException,
    TableNotFoundError,
    VersionNotFoundError,
)
from deltaspec.spark.errors import MultipleSourceRowMatchError, as_pyspark, raising_as_pyspark


def test_an_error_is_also_the_pyspark_exception_delta_spark_raises() -> None:
    missing = as_pyspark(VersionNotFoundError("no version 7", table="/t", version=7))
    assert isinstance(missing, VersionNotFoundError) and isinstance(missing, AnalysisException)
    assert (missing.getCondition(), missing.table, missing.version) == (
        "DELTA_VERSION_NOT_FOUND", "/t", 7)  # fmt: skip
    assert str(missing) == "[DELTA_VERSION_NOT_FOUND] no version 7 (table=/t, version=7)"
    twice = as_pyspark(MultipleSourceRowMatchError("matched twice", table="/t"))
    assert isinstance(twice, UnsupportedOperationException)
    assert not isinstance(twice, AnalysisException)


def test_a_missing_table_on_a_path_is_delta_sparks_missing_delta_table() -> None:
    error = as_pyspark(TableNotFoundError("no table", table="/t"))
    assert isinstance(error, TableNotFoundError) and isinstance(error, AnalysisException)
    assert error.getCondition() == error.getErrorClass() == "DELTA_MISSING_DELTA_TABLE"
    assert str(error).startswith("[DELTA_MISSING_DELTA_TABLE] no table")
    assert error.getSqlState() == "42P01"


def test_conflicts_stay_delta_sparks_own_exceptions() -> None:
    conflict = ConcurrentAppendException("a concurrent append", table="/t")
    assert as_pyspark(conflict) is conflict
    assert not isinstance(conflict, AnalysisException)


def test_a_wrapped_function_raises_the_catchable_error_with_its_traceback() -> None:
    @raising_as_pyspark
    def vacuum() -> None:
        from deltaspec.impl.errors import VacuumRetentionTooShortError

        raise VacuumRetentionTooShortError("retention 0 is below 168 hours", table="/t")

    with pytest.raises(IllegalArgumentException) as raised:
        vacuum()
    assert raised.value.getCondition() == "DELTA_VACUUM_RETENTION_PERIOD_TOO_SHORT"
    assert raised.traceback[-1].name == "vacuum"
