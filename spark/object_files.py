"""The driver's access to a table's data files on S3 (``s3://``/``s3a://``): Parquet footers
for statistics and deleting files never committed, through pyarrow's S3 file system configured
from the same storage options as the table's log store."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from urllib.parse import urlsplit

from pyarrow import fs

from ..impl.errors import UnsupportedFeatureError

S3_SCHEMES = ("s3", "s3a")
_TRUE = {"true", "1", "yes"}


def is_s3(root: str) -> bool:
    return urlsplit(root).scheme.lower() in S3_SCHEMES


def filesystem(options: Mapping[str, str]) -> fs.S3FileSystem:
    """pyarrow's S3 client for obstore-style storage options (empty: AWS's environment)."""
    endpoint = options.get("endpoint")
    parts = urlsplit(endpoint) if endpoint else None
    return fs.S3FileSystem(
        access_key=options.get("access_key_id"),
        secret_key=options.get("secret_access_key"),
        region=options.get("region"),
        endpoint_override=parts.netloc if parts else None,
        scheme=parts.scheme if parts else "https",
        force_virtual_addressing=options.get("virtual_hosted_style_request", "false").lower()
        in _TRUE,
    )


def object_path(root: str, relative: str) -> str:
    """``bucket/key`` of the file ``relative`` to the table at the S3 URL ``root``."""
    parts = urlsplit(root)
    if parts.scheme.lower() not in S3_SCHEMES or not parts.netloc:
        raise UnsupportedFeatureError(
            f"data files of {root!r}: the Spark path writes local tables and s3:// or s3a:// ones",
            table=root,
        )
    return "/".join(p for p in (parts.netloc, parts.path.strip("/"), relative) if p)


def delete(root: str, relatives: list[str], options: Mapping[str, str]) -> None:
    """Delete files written but never committed (a missing one is no error)."""
    s3 = filesystem(options)
    for relative in relatives:
        with contextlib.suppress(FileNotFoundError):
            s3.delete_file(object_path(root, relative))
