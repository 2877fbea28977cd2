"""Files handed to pyarrow as Arrow's own memory, never as Python file objects.

pyarrow's Parquet reader decodes column chunks on its thread pools. Given a Python file object,
it reads each chunk on a pool thread as a Python ``bytes`` object (``arrow::py::PyBuffer``), and
the pool thread often drops the last reference to it after the result has been handed back,
which takes the GIL. When that thread is late (on a loaded machine) and the interpreter has begun
to exit meanwhile, CPython ends the thread with ``pthread_exit`` inside Arrow's C++ frames; the
forced unwinding meets a ``noexcept`` frame and the process aborts with "terminate called
without an active exception" (SIGABRT). Memory Arrow allocated itself is released without the
GIL, on any thread, at any time: :func:`read_buffer` reads the file into such a buffer, on the
calling thread, and pyarrow reads that (``pa.BufferReader``).
"""

from __future__ import annotations

import io
from typing import BinaryIO

import pyarrow as pa

__all__ = ["read_buffer", "reader"]

_CHUNK = 8 << 20
"""Bytes copied at a time (the Python ``bytes`` in between are released here, on this thread)."""


def read_buffer(handle: BinaryIO) -> pa.Buffer:
    """The whole content of the open file ``handle``, in a buffer from Arrow's memory pool. It
    is read on this thread; OSError passes through."""
    size = handle.seek(0, io.SEEK_END)
    handle.seek(0)
    buffer = pa.allocate_buffer(size)
    filled = 0
    with memoryview(buffer) as raw, raw.cast("B") as view:
        while filled < size:
            chunk = handle.read(min(_CHUNK, size - filled))
            if not chunk:
                break  # the file shrank since: what is there
            view[filled : filled + len(chunk)] = chunk
            filled += len(chunk)
    return buffer if filled == size else buffer.slice(0, filled)


def reader(handle: BinaryIO) -> pa.BufferReader:
    """``handle``'s content as a file pyarrow reads without calling back into Python; closes
    ``handle``."""
    with handle:
        return pa.BufferReader(read_buffer(handle))
