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

import os

from pyspark.sql import SparkSession

from deltaspec.impl.retention import vacuum as impl_vacuum
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

from . import files

__all__ = ["RETENTION_CHECK", "VACUUM_LOGGING", "vacuum"]

RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"
VACUUM_LOGGING = "spark.databricks.delta.vacuum.logging.enabled"


def _flag(spark: SparkSession, key: str, default: bool) -> bool:
    value = spark.conf.get(key, None)
    return default if value is None else str(value).strip().lower() != "false"


def _directories(root: str) -> int:
    """The directories VACUUM lists: the root and every directory under it outside
    ``_delta_log`` and hidden ones (``_x``/``.x`` that are not ``col=value``), as delta-spark's
    ``dirCounts`` (its listing's directories plus the base path)."""
    count = 1
    for _, names, _ in os.walk(root):
        names[:] = [n for n in names if not impl_vacuum.hidden_name(n)]
        count += len(names)
    return count


def _record(
    log: DeltaLog, name: str, parameters: dict[str, object], metrics: dict[str, str]
) -> int:
    """One empty commit recording ``name`` (VACUUM START / END)."""
    operation = Operation(name, dict(parameters), changes_data=False, metrics=metrics or None)
    return OptimisticTransaction(log).commit([], operation)


def vacuum(spark: SparkSession, path: str, retention_ms: int | None) -> impl_vacuum.VacuumResult:
    """VACUUM ``path`` with ``retention_ms`` (None: the table's), recorded as delta-spark
    records it (see the module)."""
    log = DeltaLog(path)
    check = _flag(spark, RETENTION_CHECK, True)
    now = log.clock()
    planned = impl_vacuum.vacuum(
        log, retention_ms=retention_ms, dry_run=True, enforce_retention=check, now_ms=now
    )
    recorded = _flag(spark, VACUUM_LOGGING, True)
    if recorded:
        default = log.snapshot().deleted_file_retention_ms
        size = sum(_size(os.path.join(log.table_path, p)) for p in planned.deleted)
        parameters: dict[str, object] = {"retentionCheckEnabled": check,
                                         "defaultRetentionMillis": default}  # fmt: skip
        if retention_ms is not None:
            parameters["specifiedRetentionMillis"] = retention_ms
        _record(log, "VACUUM START", parameters,
                {"numFilesToDelete": str(len(planned.deleted)),
                 "sizeOfDataToDelete": str(size)})  # fmt: skip
    try:
        result = impl_vacuum.vacuum(
            log, retention_ms=retention_ms, enforce_retention=check, now_ms=now
        )
        files.reclaim_staging(log.table_path, 0, result.cutoff_ms)
    except BaseException:
        if recorded:
            _record(log, "VACUUM END", {"status": "FAILED"}, {})
        raise
    if recorded:
        _record(log, "VACUUM END", {"status": "COMPLETED"},
                {"numDeletedFiles": str(len(result.deleted)),
                 "numVacuumedDirectories": str(_directories(log.table_path))})  # fmt: skip
    return result


def _size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0
