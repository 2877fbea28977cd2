"""An S3-compatible server on loopback: moto's server mode (``python -m moto.server``), which
honours S3's conditional writes (``If-None-Match: *`` answered ``412``) as AWS S3 does since
August 2024. It keeps its objects in memory; one bucket, :data:`BUCKET`, is created at start."""

from __future__ import annotations

import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

from .process import free_port, running

__all__ = ["BUCKET", "s3_server"]

BUCKET = "deltaspec"
REGION = "us-east-1"


@contextmanager
def s3_server() -> Iterator[dict[str, str]]:
    """Start the server; yields the obstore/delta-rs storage options that reach it."""
    port = free_port()
    command = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    with running("moto-s3", command, port):
        endpoint = f"http://127.0.0.1:{port}"
        # moto checks no signature: the bucket is made with one plain request
        request = urllib.request.Request(f"{endpoint}/{BUCKET}", method="PUT")
        with urllib.request.urlopen(request, timeout=10):
            pass
        yield {
            "endpoint": endpoint,
            "region": REGION,
            "access_key_id": "deltaspec",
            "secret_access_key": "deltaspec",
            "allow_http": "true",
        }
