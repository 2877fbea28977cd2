"""Running a test's work in a spawned process (a fresh JVM for a SparkSession with other jars)."""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def reported(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` with any failure re-raised as a RuntimeError carrying the child's traceback:
    a Py4J error holds locks and cannot be pickled back to the parent, which would otherwise see
    only ``MaybeEncodingError``."""

    @functools.wraps(function)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except Exception:
            raise RuntimeError(traceback.format_exc()) from None

    return run
