"""A fault-injecting HTTP proxy on loopback, in front of an object-store server.

Every request is forwarded to the server as it came (method, path, headers, body) and the
server's answer returned, except where a fault says otherwise. The one fault so far is the
**delayed PUT** of a commit (``stall_commit_puts``): the proxy holds a ``PUT`` of a
``_delta_log/<20 digits>.json`` key for that many seconds and only then forwards it, whether or not
the client is still waiting. A client whose timeout is shorter sees no answer; the server stores
the commit later all the same. That is the "lost response" a writer must survive: a commit that
landed must never be reported as failed (RETRY.OUTCOME_UNKNOWN).
"""

from __future__ import annotations

import http.client
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

__all__ = ["FaultProxy", "fault_proxy"]

_COMMIT_KEY = re.compile(r"/_delta_log/[0-9]{20}\.json(\?|$)")


@dataclass
class FaultProxy:
    """A running proxy: its endpoint and the faults it injects now (change them at will)."""

    endpoint: str
    stall_commit_puts: float = 0.0
    """Seconds a commit PUT is held before it is forwarded (0: forwarded at once)."""
    stalled: int = 0
    """How many commit PUTs were held so far."""

    def options(self, server_options: dict[str, str]) -> dict[str, str]:
        """``server_options`` with the endpoint moved to the proxy (the account path kept)."""
        path = urlsplit(server_options["endpoint"]).path
        return {**server_options, "endpoint": self.endpoint + path}


def _handler(upstream: tuple[str, int], proxy: FaultProxy) -> type[BaseHTTPRequestHandler]:
    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _forward(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            stall = proxy.stall_commit_puts
            if self.command == "PUT" and stall > 0 and _COMMIT_KEY.search(self.path):
                proxy.stalled += 1
                time.sleep(stall)  # the client may give up meanwhile: the PUT still lands
            connection = http.client.HTTPConnection(*upstream, timeout=30)
            try:
                connection.request(self.command, self.path, body, dict(self.headers.items()))
                answer = connection.getresponse()
                data = answer.read()
            finally:
                connection.close()
            try:
                self.send_response(answer.status, answer.reason)
                dropped: tuple[str, ...] = ("transfer-encoding", "connection")
                if self.command != "HEAD":  # a HEAD's length is the object's, not its body's
                    dropped += ("content-length",)
                for name, value in answer.getheaders():
                    if name.lower() not in dropped:
                        self.send_header(name, value)
                if self.command != "HEAD":
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up: its loss, the server has the write
                self.close_connection = True

        do_GET = do_PUT = do_HEAD = do_DELETE = do_POST = _forward

        def log_message(self, format: str, *args: object) -> None:
            return

    return Forward


@contextmanager
def fault_proxy(server_endpoint: str) -> Iterator[FaultProxy]:
    """A proxy in front of the server at ``server_endpoint`` (``http://127.0.0.1:port[/…]``)."""
    target = urlsplit(server_endpoint)
    upstream = (target.hostname or "127.0.0.1", target.port or 80)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    proxy = FaultProxy(f"http://127.0.0.1:{httpd.server_address[1]}")
    httpd.RequestHandlerClass = _handler(upstream, proxy)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, name="fault-proxy", daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        httpd.shutdown()
        httpd.server_close()
