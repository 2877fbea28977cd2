"""A server as a child process on a free loopback port: started, awaited until it accepts
connections (bounded), and stopped with its process group when the context ends."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = ["ServerFailedError", "free_port", "running"]

STARTUP_SECONDS = 60.0


class ServerFailedError(RuntimeError):
    """The server exited or did not accept connections within :data:`STARTUP_SECONDS`."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the kernel's choice)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@contextmanager
def running(name: str, command: Sequence[str], port: int) -> Iterator[None]:
    """Run ``command`` (which listens on ``port``) until the context ends; its output goes to a
    log file whose tail is in the error when it fails to start."""
    with tempfile.NamedTemporaryFile(prefix=f"deltaspec-{name}-", suffix=".log") as log:
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped whole, children included
        )
        try:
            deadline = time.monotonic() + STARTUP_SECONDS
            while not _accepts(port):
                if process.poll() is not None or time.monotonic() > deadline:
                    tail = Path(log.name).read_text(errors="replace")[-2000:]
                    raise ServerFailedError(f"{name} did not start on port {port}:\n{tail}")
                time.sleep(0.1)
            yield
        finally:
            _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=3)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
