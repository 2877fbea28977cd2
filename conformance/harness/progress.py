"""Progress lines for the long runs (``deltaspec check``, ``conformance``, ``explore``,
``mutants``, an engine fetch): what runs, how many of how many, the time so far. One helper for
all of them.

Lines go to stderr, so stdout keeps the verdicts alone. A run's steps print a line at most every
``every`` seconds (10 by default): a run that ends sooner prints none, a run of slow steps
prints one per step. ``--quiet`` silences every line by setting ``DELTASPEC_QUIET``, which the
processes a run starts (a mutant's, an engine's) inherit."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

QUIET_ENV = "DELTASPEC_QUIET"
EVERY = 10.0
"""Seconds between two lines of one run's steps, by default."""


def quiet() -> bool:
    """Whether progress lines are silenced (``--quiet``)."""
    return os.environ.get(QUIET_ENV, "") not in {"", "0"}


@contextmanager
def silenced() -> Iterator[None]:
    """No progress lines while the context lasts, in this process and the ones it starts; the
    setting is restored afterwards (``main`` called in-process, as tests and embedders do,
    leaves no silence behind)."""
    before = os.environ.get(QUIET_ENV)
    os.environ[QUIET_ENV] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(QUIET_ENV, None)
        else:
            os.environ[QUIET_ENV] = before


@dataclass
class Progress:
    """One run of ``total`` steps (None: not known in advance) named ``what``."""

    what: str
    total: int | None = None
    every: float = EVERY
    """Seconds between two lines of :meth:`step` (0: a line for every step)."""
    done: int = 0
    started: float = field(default_factory=time.perf_counter)
    last: float | None = None
    """When the last line was printed (None: none yet)."""

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def due(self) -> bool:
        """Whether ``every`` seconds have passed since the last line (or the start)."""
        since = self.elapsed() if self.last is None else time.perf_counter() - self.last
        return since >= self.every

    def step(self, item: str = "", detail: str = "") -> None:
        """One more step done (``item``, with how it went); a line when one is due."""
        self.done += 1
        if self.due():
            count = f"{self.done}/{self.total}" if self.total is not None else f"{self.done}"
            self.say(f"{count}{' ' + item if item else ''}{': ' + detail if detail else ''}")

    def note(self, text: str) -> None:
        """``text`` as a line when one is due (a run whose steps are not counted)."""
        if self.due():
            self.say(text)

    def __call__(self, item: str) -> None:
        self.step(item)

    def say(self, text: str) -> None:
        """A line now: ``what: text (N s elapsed)``."""
        self.last = time.perf_counter()
        if not quiet():
            print(f"{self.what}: {text} ({self.elapsed():.0f} s elapsed)", file=sys.stderr,
                  flush=True)  # fmt: skip

    def finish(self) -> None:
        """The closing line of a run that printed any."""
        if self.last is not None:
            self.say(f"done, {self.done}" + (f"/{self.total}" if self.total is not None else ""))
