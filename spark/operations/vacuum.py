"""VACUUM through the Spark path, as delta-spark 4.4's ``DeltaTable.vacuum`` runs it.

The deletion itself is :func:`deltaspec.impl.retention.vacuum.vacuum` (never a live file, never
outside the root, never a symlink). Around it, what delta-spark adds on a Spark session:

- ``spark.databricks.delta.retentionDurationCheck.enabled = false`` lets a retention shorter
  than the table's ``delta.deletedFileRetentionDuration`` through (VacuumCommand's
  ``checkRetentionPeriodSafety``); a negative one is refused either way.
- The run is recorded in the log (VacuumCommand.logVacuumStart / logVacuumEnd): an empty
  commit ``VACUUM START`` (parameters ``retentionCheckEnabled``, ``defaultRetentionMillis`` and,
  when a retention was given, ``specifiedRetentionMillis``; metrics ``numFilesToDelete``,
  ``sizeOfDataToDelete``) before anything is deleted, then ``VACUUM END`` (``status``
  ``COMPLETED`` with ``numDeletedFiles`` and ``numVacuumedDirectories``, or ``FAILED`` when the
  deletion raised). ``spark.databricks.delta.vacuum.logging.enabled`` turns that off or on;
  unset, delta-spark records it on the file systems it knows, local files among them.
"""

from __future__ import annotations

from pyspark.sql import SparkSession

from ...impl.retention import vacuum as impl_vacuum
from ...impl.snapshot.delta_log import DeltaLog
from ...impl.txn.transaction import Operation, OptimisticTransaction
from .. import files

__all__ = ["RETENTION_CHECK", "VACUUM_LOGGING", "vacuum"]

RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"
VACUUM_LOGGING = "spark.databricks.delta.vacuum.logging.enabled"


def _flag(spark: SparkSession, key: str, default: bool) -> bool:
    value = spark.conf.get(key, None)
    return default if value is None else str(value).strip().lower() != "false"


def _record(
    log: DeltaLog, name: str, parameters: dict[str, object], metrics: dict[str, str]
) -> int:
    """One empty commit recording ``name`` (VACUUM START / END)."""
    operation = Operation(name, dict(parameters), changes_data=False, metrics=metrics or None)
    return OptimisticTransaction(log).commit([], operation)


def vacuum(spark: SparkSession, path: str, retention_ms: int | None) -> impl_vacuum.VacuumResult:
    """VACUUM ``path`` with ``retention_ms`` (None: the table's), recorded as delta-spark
    records it (see the module): VACUUM START once the files to delete are known, VACUUM END
    after, FAILED when the deletion raised. A retention the check refuses records nothing."""
    log = DeltaLog(path)
    check = _flag(spark, RETENTION_CHECK, True)
    recorded = _flag(spark, VACUUM_LOGGING, True)
    started = False

    def record_start(planned: impl_vacuum.VacuumResult) -> None:
        nonlocal started
        parameters: dict[str, object] = {
            "retentionCheckEnabled": check,
            "defaultRetentionMillis": planned.table_retention_ms,
        }
        if retention_ms is not None:
            parameters["specifiedRetentionMillis"] = retention_ms
        _record(log, "VACUUM START", parameters,
                {"numFilesToDelete": str(len(planned.deleted)),
                 "sizeOfDataToDelete": str(planned.deleted_bytes)})  # fmt: skip
        started = True

    try:
        result = impl_vacuum.vacuum(
            log,
            retention_ms=retention_ms,
            enforce_retention=check,
            before_delete=record_start if recorded else None,
        )
        files.reclaim_staging(log.table_path, 0, result.cutoff_ms)
    except BaseException:
        if started:
            _record(log, "VACUUM END", {"status": "FAILED"}, {})
        raise
    if recorded:
        _record(log, "VACUUM END", {"status": "COMPLETED"},
                {"numDeletedFiles": str(len(result.deleted)),
                 "numVacuumedDirectories": str(result.directories)})  # fmt: skip
    return result
