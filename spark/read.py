"""Reading a table into a Spark DataFrame: the log names the files and their partition values.

Data files are read by Spark's Parquet reader with the table's data schema given explicitly (no
inference, no partition discovery: directory names mean nothing here); each row's partition
values come from its file's ``add.partitionValues``, joined on the file path Spark reports.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import zoneinfo
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from ..impl import codec
from ..impl.actions import AddFile
from ..impl.deletion_vectors import deleted_rows
from ..impl.errors import UnsupportedFeatureError
from ..impl.snapshot.delta_log import DeltaLog
from ..impl.snapshot.state import Snapshot
from ..impl.snapshot.time_travel import version_at
from ..impl.table.features import SPARK_PATH_READER_FEATURES
from . import schema as schemas
from .errors import InvalidOptionError
from .object_files import is_s3
from .s3a import table_location

FILE_COLUMN = "__deltaspec_file"
ROW_INDEX_COLUMN = "__deltaspec_row_index"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_GLOB = re.compile(r"([\\*?\[\]{}])")
_FILE_SCHEME = re.compile(r"^file:(//)?")
_LOCAL_URI = re.compile(r"^file:///")


def table_schema(snapshot: Snapshot) -> StructType:
    return StructType.fromJson(schemas.parse(snapshot.metadata.schema_string))


def _require_readable(snapshot: Snapshot) -> None:
    unsupported = sorted(set(snapshot.protocol.reader_features or ()) - SPARK_PATH_READER_FEATURES)
    if unsupported:
        raise UnsupportedFeatureError(
            f"reading {', '.join(unsupported)} through Spark is not supported",
            table=snapshot.table_path,
            version=snapshot.version,
        )
    mode = snapshot.metadata.configuration.get("delta.columnMapping.mode", "none")
    if mode != "none":
        raise UnsupportedFeatureError(
            f"reading column mapping mode {mode!r} through Spark is not supported",
            table=snapshot.table_path,
            version=snapshot.version,
        )


def file_path(root: str, add: AddFile) -> str:
    """The absolute local path of a data file (``add.path`` is a relative or absolute URI), or
    its ``s3a://`` URL in a table on S3."""
    path = codec.decode_path(add.path)
    if is_s3(root):
        if "://" in path:
            return path
        return urlsplit(root)._replace(scheme="s3a").geturl().rstrip("/") + "/" + path
    if path.startswith("file:"):
        path = re.sub(r"^file:(//)?", "", path)
    return os.path.normpath(os.path.join(root, path))


def _spark_file_keys(data: DataFrame, paths: Sequence[str]) -> tuple[Column, dict[str, str]]:
    """The key of the file a row came from, and each of ``paths``' key: Spark's own file URI
    (``_metadata.file_path``), taken from ``inputFiles`` (which spells ``file:/x`` as
    ``file:///x``) and decoded once per file here rather than once per row. Should a path not
    be among the decoded URIs, every row's URI is decoded instead."""
    listed = data.inputFiles()
    uris = {_FILE_SCHEME.sub("", unquote(u)): _LOCAL_URI.sub("file:/", u) for u in listed}
    if all(p in uris for p in paths):
        return F.col("_metadata.file_path"), {p: uris[p] for p in paths}
    uri = F.replace(F.col("_metadata.file_path"), F.lit("+"), F.lit("%2B"))
    return F.regexp_replace(F.url_decode(uri), _FILE_SCHEME.pattern, ""), {p: p for p in paths}


def scan(
    spark: SparkSession,
    root: str,
    snapshot: Snapshot,
    files: Sequence[AddFile] | None = None,
    *,
    with_file: bool = False,
    with_row_index: bool = False,
) -> DataFrame:
    """The rows of ``files`` (default: every live file) with partition values from the log;
    ``with_file`` adds FILE_COLUMN holding each row's ``add.path``, ``with_row_index``
    ROW_INDEX_COLUMN holding its index in the file (what a deletion vector marks)."""
    chosen = list(snapshot.files.values()) if files is None else list(files)
    _require_readable(snapshot)
    root = root if is_s3(root) else os.path.abspath(root)
    full = table_schema(snapshot)
    partition_columns = list(snapshot.metadata.partition_columns)
    lowered = {c.lower() for c in partition_columns}
    data_schema = StructType([f for f in full.fields if f.name.lower() not in lowered])
    names = [f.name for f in full.fields]
    if not chosen:
        extra = [StructField(FILE_COLUMN, StringType())] if with_file else []
        extra += [StructField(ROW_INDEX_COLUMN, LongType())] if with_row_index else []
        return spark.createDataFrame([], StructType(list(full.fields) + extra))
    paths = [file_path(root, add) for add in chosen]
    data = spark.read.schema(data_schema).parquet(*(_GLOB.sub(r"\\\1", p) for p in paths))
    with_dv = [(path, add) for path, add in zip(paths, chosen, strict=True) if add.deletion_vector]
    if not partition_columns and not with_file and not with_row_index and not with_dv:
        return data.select(*names)
    key, keys = _spark_file_keys(data, paths)
    data = data.withColumn("__key", key)
    if with_row_index:
        data = data.withColumn(ROW_INDEX_COLUMN, F.col("_metadata.row_index"))
    if with_dv:
        data = _drop_deleted_rows(spark, root, data, [(keys[p], add) for p, add in with_dv])
    mapping_schema = StructType(
        [StructField("__key", StringType()), StructField(FILE_COLUMN, StringType())]
        + [StructField(f"__p{i}", StringType()) for i in range(len(partition_columns))]
    )
    rows = [
        (keys[path], add.path, *(add.partition_values.get(c) for c in partition_columns))
        for path, add in zip(paths, chosen, strict=True)
    ]
    types = {f.name: f.dataType for f in full.fields}
    mapping = spark.createDataFrame(rows, mapping_schema).select(
        "__key",
        FILE_COLUMN,
        *(F.col(f"__p{i}").cast(types[c]).alias(c) for i, c in enumerate(partition_columns)),
    )
    joined = data.join(F.broadcast(mapping), "__key", "left")
    unkeyed = F.raise_error(F.lit(f"a row of a file not read from the log of {root}"))
    joined = joined.where(F.when(F.col(FILE_COLUMN).isNull(), unkeyed).otherwise(F.lit(True)))
    columns = [*names, *([FILE_COLUMN] if with_file else [])]
    return joined.select(*columns, *([ROW_INDEX_COLUMN] if with_row_index else []))


def _drop_deleted_rows(
    spark: SparkSession, root: str, data: DataFrame, files: Sequence[tuple[str, AddFile]]
) -> DataFrame:
    """Deletion vectors applied: rows whose index in their file a DV marks are left out
    (``files``: each file's key and its add)."""
    deleted = [
        (key, index)
        for key, add in files
        if add.deletion_vector is not None
        for index in sorted(deleted_rows(Path(root), add.deletion_vector))
    ]
    schema = StructType([StructField("__key", StringType()), StructField("__row", LongType())])
    marked = F.broadcast(spark.createDataFrame(deleted, schema))
    with_index = data.withColumn("__row", F.col("_metadata.row_index"))
    return with_index.join(marked, ["__key", "__row"], "left_anti").drop("__row")


def parse_timestamp(spark: SparkSession | None, text: str, zone: str | None = None) -> int:
    """A timestamp string as delta-spark's ``timestampAsOf``/``restoreToTimestamp`` take it
    (``2026-11-01 10:00:00``, ``2026-11-01``, ISO 8601 with an offset) in ms since the epoch; a
    time without offset is in the session time zone (``spark.sql.session.timeZone``; ``zone``
    where the caller has no session but was told it, else UTC)."""
    try:
        moment = dt.datetime.fromisoformat(str(text).strip())
    except ValueError:
        raise InvalidOptionError(f"{text!r} is not a timestamp") from None
    if moment.tzinfo is None:
        if spark is not None:
            zone = spark.conf.get("spark.sql.session.timeZone", "UTC")
        moment = moment.replace(tzinfo=zoneinfo.ZoneInfo(str(zone or "UTC")))
    return (moment - _EPOCH) // dt.timedelta(milliseconds=1)


def read_table(
    spark: SparkSession,
    path: str | os.PathLike[str],
    *,
    version: int | None = None,
    timestamp_ms: int | None = None,
    timestamp: str | None = None,
) -> DataFrame:
    """The table at ``path``: latest, ``version``, or the version current at ``timestamp_ms``
    or at ``timestamp`` (a string, as delta-spark's ``timestampAsOf``)."""
    root, storage_options = table_location(spark, path)
    log = DeltaLog(root, storage_options=storage_options)
    if timestamp is not None:
        timestamp_ms = parse_timestamp(spark, timestamp)
    if version is not None and timestamp_ms is not None:
        raise ValueError("give version or timestamp_ms, not both")
    if timestamp_ms is not None:
        version = version_at(log, timestamp_ms)
    snapshot = log.snapshot(version)
    return scan(spark, root, snapshot)
