"""The DataFrameWriter options and save modes a Delta write takes, read as delta-spark's
DeltaOptions reads them: keys case-insensitive, values checked (never read as false or truncated).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import SparkSession

from ..impl.table.properties import canonical_key
from .errors import (
    InvalidOptionError,
    OverwriteSchemaWithDynamicPartitionOverwriteError,
    ReplaceWhereWithDynamicPartitionOverwriteError,
)

MODES = {"append": "Append", "overwrite": "Overwrite", "errorifexists": "ErrorIfExists",
         "error": "ErrorIfExists", "default": "ErrorIfExists", "ignore": "Ignore"}  # fmt: skip
# Spark writer options passed through to the Parquet writer.
_PASSTHROUGH = {"maxrecordsperfile": "maxRecordsPerFile", "compression": "compression"}
# The Parquet codecs Spark 4 knows (ParquetCompressionCodec, names in any case).
PARQUET_CODECS = frozenset(
    {"none", "uncompressed", "snappy", "gzip", "lzo", "brotli", "lz4", "lz4_raw", "zstd"}
)
_LONG = re.compile(r"[+-]?[0-9]+")
_LONGS = range(-(2**63), 2**63)


def _bool_option(name: str, value: Any, default: bool) -> bool:
    """A boolean option as DeltaOptions reads it: 'true' or 'false' (any case), else an error,
    never read as false."""
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in {"true", "false"}:
        raise InvalidOptionError(
            f"Invalid value '{value}' for option '{name}', must be 'true' or 'false'"
        )
    return text == "true"


def _version_option(name: str, value: Any) -> int:
    """A non-negative integer option (txnVersion): '1.5', '-1', 'x' or True are errors, never
    truncated."""
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit() or not text.isascii():
        raise InvalidOptionError(
            f"Invalid value '{value}' for option '{name}', must be a non-negative integer"
        )
    return int(text)


def _text_option(name: str, value: Any) -> str | None:
    """A string option (replaceWhere, userMetadata): a string or absent, never another value
    turned into its Python repr."""
    if value is None or isinstance(value, str):
        return value
    raise InvalidOptionError(
        f"Invalid value {value!r} for option '{name}', must be a string, not {type(value).__name__}"
    )


def _parquet_option(name: str, value: Any) -> str:
    """A Parquet writer option as Spark reads it, checked before anything is written: a codec
    Spark knows, a ``maxRecordsPerFile`` that is a long."""
    text = value if isinstance(value, str) else None
    if name == "compression" and (text is None or text.strip().lower() not in PARQUET_CODECS):
        raise InvalidOptionError(
            f"Invalid value {value!r} for option 'compression', must be one of "
            + ", ".join(sorted(PARQUET_CODECS))
        )
    if name == "maxRecordsPerFile":
        if isinstance(value, int) and not isinstance(value, bool):
            text = str(value)
        if text is None or not _LONG.fullmatch(text) or int(text) not in _LONGS:
            raise InvalidOptionError(
                f"Invalid value {value!r} for option 'maxRecordsPerFile', must be a long"
            )
    return str(text)


PARTITION_OVERWRITE_MODE = "spark.sql.sources.partitionOverwriteMode"


@dataclass(frozen=True)
class WriteOptions:
    """The DataFrameWriter options delta-spark reads (DeltaOptions), keys case-insensitive."""

    replace_where: str | None = None
    dynamic_partition_overwrite: bool | None = None
    merge_schema: bool = False
    overwrite_schema: bool = False
    user_metadata: str | None = None
    txn_app_id: str | None = None
    txn_version: int | None = None
    data_change: bool = True
    # replaceWhere over data columns (v1.1.0+), the default as in delta-spark
    replace_where_data_columns: bool = True
    table_properties: Mapping[str, str] = field(default_factory=dict)
    parquet: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, options: Mapping[str, Any]) -> WriteOptions:
        lowered = {k.lower(): (k, v) for k, v in options.items()}
        get = {k: v for k, (_, v) in lowered.items()}
        mode = get.get("partitionoverwritemode")
        if mode is not None and str(mode).lower() not in {"static", "dynamic"}:
            raise InvalidOptionError(f"partitionOverwriteMode must be static or dynamic: {mode!r}")
        app, version = get.get("txnappid"), get.get("txnversion")
        if (app is None) != (version is None):
            raise InvalidOptionError("txnAppId and txnVersion go together")
        return cls(
            replace_where=_text_option("replaceWhere", get.get("replacewhere")),
            dynamic_partition_overwrite=None if mode is None else str(mode).lower() == "dynamic",
            merge_schema=_bool_option("mergeSchema", get.get("mergeschema"), False),
            overwrite_schema=_bool_option("overwriteSchema", get.get("overwriteschema"), False),
            user_metadata=_text_option("userMetadata", get.get("usermetadata")),
            txn_app_id=None if app is None else str(app),
            txn_version=None if version is None else _version_option("txnVersion", version),
            data_change=_bool_option("dataChange", get.get("datachange"), True),
            replace_where_data_columns=_bool_option(
                "replaceWhere.dataColumns.enabled",
                get.get("replacewhere.datacolumns.enabled"),
                True,
            ),
            table_properties={
                canonical_key(key): str(v)
                for key, v in options.items()
                if key.lower().startswith("delta.")
            },
            parquet={
                _PASSTHROUGH[k]: _parquet_option(_PASSTHROUGH[k], v)
                for k, (_, v) in lowered.items()
                if k in _PASSTHROUGH
            },
        )


def save_mode(mode: str) -> str:
    """The SaveMode a ``mode`` string names (any case): Append, Overwrite, ErrorIfExists or
    Ignore."""
    resolved = MODES.get(mode.lower())
    if resolved is None:
        raise InvalidOptionError(
            f'The specified save mode "{mode}" is invalid. Valid save modes include "append", '
            '"overwrite", "ignore", "error", "errorifexists", and "default".'
        )
    return resolved


def dynamic_mode_recorded(spark: SparkSession, opts: WriteOptions) -> bool:
    """Whether a WRITE records ``isDynamicPartitionOverwrite``: its partition-overwrite mode
    (the option, else the session's ``spark.sql.sources.partitionOverwriteMode``) is dynamic.
    Live delta-spark 4.4.0 records it so in any save mode (an append too), on an unpartitioned
    table and beside replaceWhere, where the mode changes nothing
    (:func:`dynamic_partition_overwrite` says when it does)."""
    if opts.dynamic_partition_overwrite is not None:
        return opts.dynamic_partition_overwrite
    return str(spark.conf.get(PARTITION_OVERWRITE_MODE, "static")).lower() == "dynamic"


def dynamic_partition_overwrite(
    spark: SparkSession, opts: WriteOptions, mode: str, table: str
) -> bool:
    """Whether an overwrite replaces only the partitions it writes: the option, else the
    session's ``spark.sql.sources.partitionOverwriteMode``; never with replaceWhere (the option
    and replaceWhere together are an error; replaceWhere wins over the session's mode), never with
    overwriteSchema."""
    dynamic = opts.dynamic_partition_overwrite
    if dynamic is None:
        conf = spark.conf.get(PARTITION_OVERWRITE_MODE, "static")
        dynamic = str(conf).lower() == "dynamic"
    elif dynamic and opts.replace_where is not None:
        raise ReplaceWhereWithDynamicPartitionOverwriteError(
            "replaceWhere and partitionOverwriteMode=dynamic cannot both be set", table=table
        )
    if opts.replace_where is not None:
        dynamic = False
    if dynamic and opts.overwrite_schema and mode == "Overwrite":
        raise OverwriteSchemaWithDynamicPartitionOverwriteError(
            "overwriteSchema cannot be used with dynamic partition overwrite", table=table
        )
    return dynamic
