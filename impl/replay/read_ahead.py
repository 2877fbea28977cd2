"""Reading large commits ahead of their replay, on a second thread (SNAPSHOT.REPLAY).

A bulk commit's decoding is mostly pyarrow's JSON reader, which releases the GIL: reading the
next commits while the current one is applied uses another core. What the replay sees is what
reading one by one gives: it takes each commit's actions, or its error, in version order, and
the reads ahead of an error are waited for and dropped. Only commits of at least
:data:`READ_AHEAD_BYTES` are read ahead, at most :data:`WINDOW` at a time, so a log of small
commits is read as before and memory stays bounded.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

__all__ = ["READ_AHEAD_BYTES", "WINDOW", "ReadAhead"]

READ_AHEAD_BYTES = 256 << 10
"""The size from which a commit file is read ahead (a few hundred adds with statistics)."""
WINDOW = 4
"""Reads ahead in flight at most."""
_THREADS = 2

T = TypeVar("T")


class ReadAhead(Generic[T]):
    """``read`` for any version, with ``versions`` (ascending) read ahead in threads; call
    :meth:`close` when done (it waits for the reads in flight)."""

    def __init__(self, read: Callable[[int], T], versions: Sequence[int]) -> None:
        self._read = read
        self._queue = deque(versions)
        self._pending: dict[int, Future[T]] = {}
        self._pool = (
            ThreadPoolExecutor(_THREADS, thread_name_prefix="deltaspec-read-ahead")
            if len(versions) >= 2
            else None
        )
        self._fill()

    def _fill(self) -> None:
        while self._pool is not None and self._queue and len(self._pending) < WINDOW:
            version = self._queue.popleft()
            self._pending[version] = self._pool.submit(self._read, version)

    def __call__(self, version: int) -> T:
        future = self._pending.pop(version, None)
        if future is None:
            return self._read(version)
        self._fill()
        return future.result()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._pending.clear()
