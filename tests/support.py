"""Helpers shared by the test modules."""

from __future__ import annotations

from hypothesis import settings


def examples(fraction: float) -> settings:
    """A share of the active profile's example budget (``ci`` stays fast, ``deep`` goes deep)."""
    return settings(max_examples=max(10, int(settings.default.max_examples * fraction)))
