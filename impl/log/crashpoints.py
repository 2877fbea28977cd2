"""Crash points: named places where a writer process can die, and a hook to die there on purpose.

Every step of a commit, a checkpoint, log cleanup and VACUUM that leaves something on disk calls
:func:`reached` with the name of the point just passed. Normally that is a no-op (one global
check). A test process arms a point, either with :func:`arm` or through the environment variable
``DELTASPEC_CRASHPOINT=<point>[:<n>]`` (read once, at the first :func:`reached`), and the process
then kills itself with SIGKILL the ``n``-th time (default: the first) it reaches that point — no
``finally`` block, no flush, no atexit handler runs, exactly as if the machine had lost the
process there. :func:`record` instead lists the points reached, so a test can check that every
point in :data:`POINTS` is really on a code path.

The storage layer names its points after the kind of file being written (``commit.``,
``checkpoint.``, ``last_checkpoint.``); see :func:`file_kind`.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = [
    "ENV_VAR",
    "POINTS",
    "active",
    "arm",
    "disarm",
    "file_kind",
    "kill_self",
    "reached",
    "record",
]

ENV_VAR = "DELTASPEC_CRASHPOINT"
"""``<point>`` or ``<point>:<n>``: kill this process the n-th time it reaches ``point``."""

POINTS: dict[str, str] = {
    "commit.begin": "data files written, nothing in the log yet",
    "commit.temp_partial": "half of the commit's bytes in its temporary file",
    "commit.after_temp": "temporary commit file complete and fsynced, not linked",
    "commit.after_link": "commit file visible, directory not fsynced, temporary file not removed",
    "commit.after_put": "put-if-absent returned; caller not told, post-commit hooks not run",
    "checkpoint.temp_partial": "half of a checkpoint Parquet file in its temporary file",
    "checkpoint.after_temp": "temporary checkpoint file complete, not linked",
    "checkpoint.after_link": "a checkpoint file (or part) visible",
    "checkpoint.between_parts": "part 1 of a multi-part checkpoint written, later parts not",
    "checkpoint.before_last_checkpoint": "every checkpoint file written, _last_checkpoint not",
    "last_checkpoint.temp_partial": "half of the new _last_checkpoint in its temporary file",
    "last_checkpoint.after_temp": "new _last_checkpoint whole in its temporary file, not renamed",
    "checkpoint.after_last_checkpoint": "_last_checkpoint written, log cleanup not started",
    "cleanup.mid_delete": "log cleanup deleted its first expired file, not the others",
    "cleanup.mid_temp_sweep": "log cleanup removed its first stale temporary file",
    "vacuum.mid_delete": "VACUUM deleted its first data file, not the others",
}
"""Every crash point, with the state a process killed there leaves behind."""

_lock = threading.Lock()
_armed: dict[str, int] = {}  # point -> reaches left before the kill
_recorded: list[str] | None = None
_env_read = False
_active = False


def kill_self() -> None:
    """Die at once with SIGKILL (no cleanup of any kind runs)."""
    os.kill(os.getpid(), signal.SIGKILL)


_action: Callable[[], None] = kill_self


def _read_env() -> None:
    global _env_read
    _env_read = True
    value = os.environ.get(ENV_VAR, "").strip()
    if value:
        point, _, count = value.partition(":")
        arm(point, nth=int(count) if count else 1)


def _refresh() -> None:
    global _active
    _active = bool(_armed) or _recorded is not None


def active() -> bool:
    """Whether any point is armed or recorded (callers may skip work that only a hook needs)."""
    if not _env_read:
        _read_env()
    return _active


def reached(point: str) -> None:
    """Mark that this process passed ``point``: dies there if it is armed."""
    if not _env_read:
        _read_env()
    if not _active:
        return
    fire = False
    with _lock:
        if _recorded is not None:
            _recorded.append(point)
        left = _armed.get(point)
        if left is not None:
            if left <= 1:
                del _armed[point]
                fire = True
            else:
                _armed[point] = left - 1
        _refresh()
    if fire:
        _action()


def arm(point: str, *, nth: int = 1, action: Callable[[], None] | None = None) -> None:
    """Kill this process (or run ``action``) the ``nth`` time it reaches ``point``.

    ``action`` replaces the kill for every armed point (tests in one process raise instead).
    Unknown point names raise ValueError, so a typo cannot arm nothing.
    """
    global _action, _env_read
    if point not in POINTS:
        raise ValueError(f"unknown crash point {point!r}")
    if nth < 1:
        raise ValueError("nth counts from 1")
    with _lock:
        _env_read = True
        _armed[point] = nth
        if action is not None:
            _action = action
        _refresh()


def disarm() -> None:
    """Disarm every point and restore the kill action."""
    global _action
    with _lock:
        _armed.clear()
        _action = kill_self
        _refresh()


@contextmanager
def record() -> Iterator[list[str]]:
    """Collect the points reached inside the ``with`` block, in order."""
    global _recorded
    seen: list[str] = []
    with _lock:
        _recorded = seen
        _refresh()
    try:
        yield seen
    finally:
        with _lock:
            _recorded = None
            _refresh()


def file_kind(name: str) -> str:
    """The crash-point prefix for a log file name: ``commit``, ``checkpoint``,
    ``last_checkpoint``, or ``log_file`` for anything else (sidecars, checksums)."""
    if name == "_last_checkpoint":
        return "last_checkpoint"
    if ".checkpoint." in name:
        return "checkpoint"
    base = name[:-5] if name.endswith(".json") else ""
    if len(base) == 20 and base.isascii() and base.isdigit():
        return "commit"
    return "log_file"
