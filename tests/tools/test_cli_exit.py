"""Short CLI runs end cleanly: no abort at interpreter exit (issue 33, item 5).

The reported failure: ``deltaspec describe PATH --json`` died with "terminate called without an
active exception" (SIGABRT) now and then on a loaded machine. The cause was Python-owned memory
handed to pyarrow's thread pools: the Parquet reader, given a Python file object, wraps each chunk
it reads in a Python ``bytes`` object, and the pool thread that decoded a column chunk dropped the
last reference to it after the result was back, taking the GIL; a late thread met an interpreter
already exiting and was ended inside Arrow's C++ frames (``pthread_exit``), which aborts. The
first test checks the mechanism deterministically, the second the symptom with real processes.
"""

from __future__ import annotations

import io
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

import pytest

from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.snapshot.delta_log import DeltaLog

SCRIPT = Path(sys.executable).parent / "deltaspec"
CHECKPOINTED = (
    "golden-basic-overwrite-restore",
    "golden-basic-inserts-deletes-checkpoint",
    "golden-multi-part-checkpoint",
    "golden-v2-checkpoint-parquet",
    "krs-v2-checkpoints-json-sidecars",
    "dat-stats-as-struct",
)
"""Tables loaded from a Parquet checkpoint (classic, multi-part, v2 with sidecars)."""


class _Threads:
    """On which threads a log file's bytes were read, and released as Python objects."""

    def __init__(self) -> None:
        self.read_on: list[int] = []
        self.released_on: list[int] = []


class _Chunk(bytes):
    """A chunk read from a log file, which says on which thread it was released."""

    threads: _Threads

    def __del__(self) -> None:
        self.threads.released_on.append(threading.get_ident())


class _SpyFile(io.RawIOBase):
    """A log file whose reads are recorded and hand out :class:`_Chunk` objects."""

    def __init__(self, inner: BinaryIO, threads: _Threads) -> None:
        self._inner = inner
        self._threads = threads

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._inner.seek(offset, whence)

    def tell(self) -> int:
        return self._inner.tell()

    def read(self, size: int | None = -1) -> bytes:
        self._threads.read_on.append(threading.get_ident())
        chunk = _Chunk(self._inner.read(-1 if size is None else size))
        chunk.threads = self._threads
        return chunk

    def readinto(self, buffer: object) -> int:
        data = self.read(len(memoryview(buffer)))  # type: ignore[arg-type]
        memoryview(buffer).cast("B")[: len(data)] = data  # type: ignore[arg-type]
        return len(data)

    def close(self) -> None:
        self._inner.close()
        super().close()


class _SpyStore(LocalLogStore):
    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.threads = _Threads()
        self.opened: list[str] = []

    def open_file(self, name: str) -> BinaryIO:
        self.opened.append(name)
        return _SpyFile(super().open_file(name), self.threads)  # type: ignore[return-value]


@pytest.mark.rules("CHECKPOINT.READ")
@pytest.mark.parametrize("name", CHECKPOINTED)
def test_pyarrow_threads_never_read_or_release_a_checkpoints_python_bytes(
    fixtures_dir: Path, name: str
) -> None:
    """What a checkpoint read leaves to pyarrow is Arrow's own memory: the file is read, and
    every Python object made from its bytes released, on the loading thread; none on a pyarrow
    pool thread, which would need the GIL (perhaps while the interpreter exits). Given the file
    object itself, pyarrow read each column chunk on a pool thread, every time (the reads are
    the deterministic half; which thread drops a chunk last is a race)."""
    root = str(fixtures_dir / name)
    store = _SpyStore(root)
    snapshot = DeltaLog(root, store, cache=False).snapshot()
    assert snapshot.checkpoint_version is not None and store.opened, "no checkpoint was read"
    here = threading.get_ident()
    threads = store.threads
    assert threads.read_on, "the checkpoint was not read through open_file"
    assert all(t == here for t in threads.read_on), f"read on other threads: {threads.read_on}"
    assert all(t == here for t in threads.released_on), "chunks released on other threads"


COMMANDS = (
    ("describe", "{table}", "--json"),
    ("inspect", "{table}", "--json"),
)
RUNS_PER_COMMAND = 12
BAD = ("terminate called", "Fatal Python error", "Traceback (most recent call last)")


@contextmanager
def _cpu_burner() -> Iterator[None]:
    """One process spinning on a core, as on the loaded machine of the report."""
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        burner.kill()
        burner.wait()


@pytest.mark.slow  # 15-35 s: 24 CLI processes, four at a time, next to a CPU burner
@pytest.mark.rules("CHECKPOINT.READ")
def test_many_short_cli_runs_all_exit_cleanly(fixtures_dir: Path) -> None:
    tables = [fixtures_dir / n for n in CHECKPOINTED]
    runs = [
        tuple(part.format(table=tables[i % len(tables)]) for part in command)
        for command in COMMANDS
        for i in range(RUNS_PER_COMMAND)
    ]

    def run(args: tuple[str, ...]) -> tuple[tuple[str, ...], int, str]:
        done = subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=120)
        return args, done.returncode, done.stderr

    with _cpu_burner(), ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, runs))
    bad = [(a, code, err) for a, code, err in results if code != 0 or any(m in err for m in BAD)]
    assert not bad, f"{len(bad)} of {len(results)} runs did not end cleanly: {bad[:3]}"
