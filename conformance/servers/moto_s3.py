"""An S3-compatible server on loopback: moto's server mode, which honours S3's conditional writes
(``If-None-Match: *`` answered ``412``) as AWS S3 does since August 2024. It keeps its objects in
memory; one bucket, :data:`BUCKET`, is created at start.

moto checks ``If-None-Match`` and then stores the object, with no lock between the two: two
threads of ``python -m moto.server`` can both pass the check, and both writers are told they
created the object (seen here: the race stage's thread race, 2 winners at round 195 of 200 on a
loaded machine). AWS S3 decides a conditional PUT atomically. :func:`serve` (this module's
``__main__``, which the tests and ``deltaspec check --store s3`` start) is moto's server with
one request handled at a time, so its conditional PUT is atomic as S3's is; connections stay
concurrent, and a check-then-write store's separate HEAD and PUT still interleave."""

from __future__ import annotations

import sys
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .process import free_port, running

__all__ = ["BUCKET", "s3_server"]

BUCKET = "deltaspec"
REGION = "us-east-1"


@contextmanager
def s3_server() -> Iterator[dict[str, str]]:
    """Start the server; yields the obstore/delta-rs storage options that reach it."""
    port = free_port()
    command = [sys.executable, "-m", __name__, str(port)]
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


def serve(port: int) -> None:
    """moto's S3 server on ``127.0.0.1:port``, one request at a time (see the module docstring)."""
    from moto.moto_server.werkzeug_app import (  # lazy: moto is optional (extra servers)
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import run_simple  # lazy: moto's werkzeug is optional (extra servers)

    app = DomainDispatcherApplication(create_backend_app)
    one_at_a_time = threading.Lock()

    def serial(environ: Any, start_response: Any) -> list[bytes]:
        with one_at_a_time:
            return list(app(environ, start_response))

    run_simple("127.0.0.1", port, serial, threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    serve(int(sys.argv[1]))
