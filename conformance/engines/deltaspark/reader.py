"""Live delta-spark as a reader of tables on disk (the fixtures suite): its ``DeltaLog`` through
py4j in the session of ``session.delta_session()``; its errors given the neutral kinds."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pyarrow as pa

from ...harness.adapter import Json
from ...harness.reading import ReadFailure
from .jvm import delta_log, java_throwable, java_view, jvm, scala_none
from .session import delta_session

SNAPSHOT_PARTITIONS = "spark.databricks.delta.snapshotPartitions"


class DeltaSparkReader:
    """Live delta-spark: ``DeltaLog.forTable(spark, path)`` and ``getSnapshotAt(v)`` /
    ``update()`` in the session of ``engines.deltaspark.session.delta_session()``."""

    name = "deltaspark"

    def __init__(self, spark: Any = None) -> None:
        self._spark = spark

    @property
    def spark(self) -> Any:
        if self._spark is None:
            self._spark = delta_session()
        return self._spark

    def read(self, root: Path, version: int | None) -> Json:
        # a log vector's state is a handful of rows: one partition instead of 50 Spark tasks
        previous = self.spark.conf.get(SNAPSHOT_PARTITIONS, None)
        self.spark.conf.set(SNAPSHOT_PARTITIONS, "1")
        try:
            log, none = delta_log(self.spark, str(root)), scala_none(self.spark)
            if version is None:
                snapshot = log.update(False, none, none)
            else:
                # as delta-spark's own time travel (versionAsOf, VERSION AS OF) does first:
                # getSnapshotAt alone skips the range check and fails otherwise
                history = log.history()
                history.checkVersionExists(
                    version,
                    none,
                    getattr(history, "checkVersionExists$default$3")(),  # mustBeRecreatable
                    getattr(history, "checkVersionExists$default$4")(),  # allowOutOfRange
                )
                snapshot = log.getSnapshotAt(version, none, none, False)
            return self._snapshot_json(snapshot)
        except _engine_errors() as error:
            raise _read_failure(error) from error
        finally:
            if previous is None:
                self.spark.conf.unset(SNAPSHOT_PARTITIONS)
            else:
                self.spark.conf.set(SNAPSHOT_PARTITIONS, previous)

    def clean_up_expired_logs(self, root: Path) -> None:
        """delta-spark's own log cleanup as its checkpoint path runs it after writing
        ``_last_checkpoint``: ``MetadataCleanup.doLogCleanup`` on the latest snapshot."""
        try:
            log, none = delta_log(self.spark, str(root)), scala_none(self.spark)
            log.doLogCleanup(log.update(False, none, none), none)
        except _engine_errors() as error:
            raise _read_failure(error) from error

    def read_at_timestamp(self, root: Path, timestamp: int) -> Json:
        """ICT.TIME_TRAVEL through delta-spark's DeltaHistoryManager.getActiveCommitAtTime."""
        try:
            log, none = delta_log(self.spark, str(root)), scala_none(self.spark)
            moment = jvm(self.spark).java.sql.Timestamp(timestamp)
            commit = log.history().getActiveCommitAtTime(moment, none, False, True, False)
        except _engine_errors() as error:
            raise _read_failure(error) from error
        return self.read(root, int(commit.version()))

    def _snapshot_json(self, snapshot: Any) -> Json:
        from pyspark.sql import DataFrame  # lazy: pyspark is optional

        def java(scala_collection: Any) -> Any:
            return java_view(self.spark, scala_collection)

        version = snapshot.version()
        if version < 0:
            return {"version": -1, "files": [], "tombstones": [], "app_txns": {}, "domains": {}}
        files = DataFrame(snapshot.allFiles().toDF(), self.spark).select("path").collect()
        tombstones = DataFrame(snapshot.tombstones().toDF(), self.spark).select("path").collect()
        txns = java(snapshot.setTransactions())
        domains = java(snapshot.domainMetadata())
        protocol, metadata = snapshot.protocol(), snapshot.metadata()
        out_protocol: Json = {
            "minReaderVersion": protocol.minReaderVersion(),
            "minWriterVersion": protocol.minWriterVersion(),
        }
        for key, option in (("readerFeatures", protocol.readerFeatures()),
                            ("writerFeatures", protocol.writerFeatures())):  # fmt: skip
            if option.isDefined():
                out_protocol[key] = sorted(java(option.get()))
        return {
            "version": version,
            "files": sorted(r["path"] for r in files),
            "tombstones": sorted(r["path"] for r in tombstones),
            "app_txns": {t.appId(): t.version() for t in txns},
            "domains": {d.domain(): d.configuration() for d in domains if not d.removed()},
            "properties": dict(java(metadata.configuration())),
            "partition_columns": list(java(metadata.partitionColumns())),
            "protocol": out_protocol,
        }

    def rows(self, root: Path, version: int | None) -> pa.Table | None:
        return None


@cache
def _engine_errors() -> tuple[type[Exception], ...]:
    """What a call into delta-spark raises: a Py4JJavaError, or (for the error classes pyspark
    knows, e.g. AnalysisException) pyspark's converted exception, which is not one."""
    try:
        from py4j.protocol import Py4JJavaError  # lazy: pyspark (and py4j) is optional
        from pyspark.errors.exceptions.captured import CapturedException  # lazy: optional
    except ImportError:  # no pyspark: nothing here can be raised
        return ()
    return (Py4JJavaError, CapturedException)


def _read_failure(error: Exception) -> ReadFailure:
    text = str(java_throwable(error) or error)
    return ReadFailure(_deltaspark_kind(text), text[:800])


def _deltaspark_kind(text: str) -> str:
    for marker, kind in (
        ("TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION", "TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"),
        ("DELTA_TIMESTAMP_GREATER_THAN_COMMIT", "TIMESTAMP_GREATER_THAN_COMMIT"),
        ("URISyntaxException", "UNSAFE_PATH"),
        ("DELTA_VERSIONS_NOT_CONTIGUOUS", "VERSIONS_NOT_CONTIGUOUS"),
        ("DELTA_TRUNCATED_TRANSACTION_LOG", "VERSIONS_NOT_CONTIGUOUS"),
        ("DELTA_STATE_RECOVER_ERROR", "MISSING_PROTOCOL_OR_METADATA"),
        ("VersionNotFoundException", "VERSION_NOT_FOUND"),
        ("DELTA_VERSION_NOT_FOUND", "VERSION_NOT_FOUND"),
        ("DELTA_CANNOT_TIME_TRAVEL", "VERSION_NOT_FOUND"),
        ("Trying to load a non-existent version", "VERSION_NOT_FOUND"),
        ("DELTA_LOG_FILE_NOT_FOUND", "VERSION_NOT_FOUND"),
        ("DELTA_EMPTY_DIRECTORY", "TABLE_NOT_FOUND"),
        ("DELTA_NO_COMMITS_FOUND", "TABLE_NOT_FOUND"),
        ("DELTA_MISSING_DELTA_TABLE", "TABLE_NOT_FOUND"),
        ("DELTA_TABLE_NOT_FOUND", "TABLE_NOT_FOUND"),
        ("DELTA_UNSUPPORTED_FEATURES", "UNSUPPORTED_FEATURE"),
        ("DELTA_INVALID_PROTOCOL_VERSION", "UNSUPPORTED_PROTOCOL"),
        ("DELTA_CORRUPT_LOG_FILE", "CORRUPT_LOG_FILE"),
    ):
        if marker in text:
            return kind
    if "FAILED_READ_FILE.NO_HINT" in text and "_delta_log/" in text and ".json" in text:
        return "CORRUPT_LOG_FILE"  # a commit whose JSON does not parse (ACTION.LINE_FORMAT)
    return f"DELTASPARK:{text.split(':')[0][:120]}"
