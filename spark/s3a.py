"""Spark on S3 through ``s3a://``: one :class:`S3Endpoint` gives both the Hadoop settings Spark's
S3A file system reads (``spark.hadoop.fs.s3a.*``) and the storage options deltaspec's log store
takes (obstore's ``endpoint``, ``access_key_id``…), so data files and commits reach the same
bucket; :func:`configure_s3` puts the s3a jars (:mod:`.s3a_jars`) and the settings on a
SparkSession builder, for our session or a live delta-spark one.

A write to an ``s3a://`` table on a running session takes its storage options from the
session's Hadoop configuration (:func:`storage_options_of`), so the session is the one place
they are set::

    spark = configure_s3(SparkSession.builder, S3Endpoint("http://127.0.0.1:9000", "k", "s"))
    DeltaWriter(df).mode("append").save("s3a://bucket/table")
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pyspark.sql import SparkSession

from ..impl.errors import UnsupportedFeatureError
from ..impl.log import location
from ..impl.log.object_store import is_object_store_url
from .errors import InvalidOptionError
from .object_files import is_s3
from .s3a_jars import s3a_jars

__all__ = [
    "S3Endpoint",
    "configure_s3",
    "local_root",
    "s3_confs",
    "storage_options_of",
    "table_location",
    "with_jars",
]

_TRUE = {"true", "1", "yes"}


@dataclass(frozen=True)
class S3Endpoint:
    """An S3 service: its endpoint URL (``http://`` means no TLS), credentials, region and
    whether buckets are addressed by path (``endpoint/bucket/key``, as S3-compatible servers
    want) rather than by host name."""

    endpoint: str
    access_key_id: str
    secret_access_key: str
    region: str = "us-east-1"
    path_style: bool = True

    def __post_init__(self) -> None:
        parts = urlsplit(self.endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise InvalidOptionError(f"an S3 endpoint is an http(s) URL, not {self.endpoint!r}")

    @property
    def ssl(self) -> bool:
        return urlsplit(self.endpoint).scheme == "https"

    def hadoop_confs(self) -> dict[str, str]:
        """S3A's settings as Spark session confs (``spark.hadoop.`` + the Hadoop key)."""
        settings = {
            "fs.s3a.endpoint": self.endpoint,
            "fs.s3a.endpoint.region": self.region,
            "fs.s3a.path.style.access": str(self.path_style).lower(),
            "fs.s3a.connection.ssl.enabled": str(self.ssl).lower(),
            "fs.s3a.access.key": self.access_key_id,
            "fs.s3a.secret.key": self.secret_access_key,
            "fs.s3a.aws.credentials.provider": (
                "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
            ),
        }
        return {f"spark.hadoop.{key}": value for key, value in settings.items()}

    def storage_options(self) -> dict[str, str]:
        """The same service as the log store's (obstore's) storage options."""
        options = {
            "endpoint": self.endpoint,
            "region": self.region,
            "access_key_id": self.access_key_id,
            "secret_access_key": self.secret_access_key,
            "virtual_hosted_style_request": str(not self.path_style).lower(),
        }
        if not self.ssl:
            options["allow_http"] = "true"
        return options

    @classmethod
    def from_storage_options(cls, options: Mapping[str, str]) -> S3Endpoint:
        """The endpoint of obstore storage options (those a test server hands out)."""
        needed = ("endpoint", "access_key_id", "secret_access_key")
        missing = [k for k in needed if k not in options]
        if missing:
            raise InvalidOptionError(f"S3 storage options lack {missing}")
        virtual = options.get("virtual_hosted_style_request", "false").lower() in _TRUE
        return cls(
            options["endpoint"],
            options["access_key_id"],
            options["secret_access_key"],
            options.get("region", "us-east-1"),
            path_style=not virtual,
        )


def with_jars(settings: Mapping[str, str], jars: list[str]) -> dict[str, str]:
    """``settings`` with ``jars`` added to its ``spark.jars`` (the jars it names kept first)."""
    named = [j for j in settings.get("spark.jars", "").split(",") if j.strip()]
    return {**settings, "spark.jars": ",".join([*named, *(j for j in jars if j not in named)])}


def s3_confs(endpoint: S3Endpoint, settings: Mapping[str, str] | None = None) -> dict[str, str]:
    """``settings`` (e.g. a delta-spark session's) plus the s3a jars (fetched on first use) and
    ``endpoint``'s Hadoop settings: the confs of a session that reads and writes ``s3a://``."""
    merged = {**(settings or {}), **endpoint.hadoop_confs()}
    return with_jars(merged, [str(jar) for jar in s3a_jars()])


B = TypeVar("B", bound=SparkSession.Builder)


def configure_s3(builder: B, endpoint: S3Endpoint) -> B:
    """``builder`` set up for ``endpoint`` (:func:`s3_confs`, the jars it names kept). Spark reads
    ``spark.jars`` when its JVM starts: configure the process's first session."""
    options: Any = getattr(builder, "_options", {})  # the settings the builder holds so far
    held = {"spark.jars": str(options.get("spark.jars", ""))}
    for key, value in s3_confs(endpoint, held).items():
        builder = builder.config(key, value)  # type: ignore[assignment]
    return builder


def storage_options_of(spark: SparkSession) -> dict[str, str]:
    """The log store's storage options for ``s3a://`` tables, from the session's Hadoop
    configuration (``fs.s3a.endpoint``, ``fs.s3a.access.key``…: what Spark's own S3A reads).
    Empty when the session sets no endpoint: the log store then takes AWS's environment."""
    hadoop = spark.sparkContext._jsc.hadoopConfiguration()

    def get(key: str) -> str | None:
        value = hadoop.get(key)
        return None if value is None else str(value)

    endpoint = get("fs.s3a.endpoint")
    key, secret = get("fs.s3a.access.key"), get("fs.s3a.secret.key")
    if not endpoint or not key or not secret:
        return {}
    if "://" not in endpoint:  # S3A takes a bare host; its TLS switch says which scheme
        ssl = (get("fs.s3a.connection.ssl.enabled") or "true").lower() in _TRUE
        endpoint = f"{'https' if ssl else 'http'}://{endpoint}"
    return S3Endpoint(
        endpoint,
        key,
        secret,
        get("fs.s3a.endpoint.region") or "us-east-1",
        path_style=(get("fs.s3a.path.style.access") or "false").lower() in _TRUE,
    ).storage_options()


def table_location(
    spark: SparkSession, path: str | os.PathLike[str]
) -> tuple[str, dict[str, str] | None]:
    """The root the Spark path writes (an absolute local path, or the canonical ``s3://``/
    ``s3a://`` URL, PATH.TABLE_LOCATION) and the log store's storage options for it (None:
    local). An S3 URL with a ``%`` escape is refused: Hadoop keeps ``%xx`` in the key where the
    log store decodes it, so the data files and the log would land under different prefixes."""
    text = os.fspath(path)
    if is_s3(text):
        root = location.table_location(text).url
        if "%" in urlsplit(text).path:
            raise UnsupportedFeatureError(
                f"a write or read through Spark of {text!r}: Hadoop and the log store read a "
                "'%' escape in an S3 key differently",
                table=root,
            )
        return root, storage_options_of(spark)
    return local_root(text, "a write or read through Spark"), None


def local_root(path: str | os.PathLike[str], what: str) -> str:
    """The absolute path of the local table at ``path``, for the operations that take local
    tables only (``what`` names it): an object-store URL is refused, typed, rather than read as
    a relative local path."""
    text = os.fspath(path)
    if is_object_store_url(text):
        raise UnsupportedFeatureError(
            f"{what} of {text!r}: the Spark path writes and reads s3:// and s3a:// tables, and "
            "does everything else on local tables only",
            table=text,
        )
    return os.path.abspath(text)
