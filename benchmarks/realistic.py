"""Benchmark tables shaped like real ones: wide schemas with delta-spark-shaped statistics.

Real tables carry 300 B to over 1 KB of ``stats`` per file across many columns of every type,
are written in bulk (1k–10k adds per commit) or by streams (many small commits) and checkpoint
every 10 or 100 commits. :func:`schema_of` and :func:`stats_maker` give a ``TableWriter``
(``benchmarks.tables``) such a schema and statistics: the columns cycle through every primitive
type delta-spark collects statistics for (integers, floats, decimals, dates, timestamps, strings
of 32 characters, its default prefix length), booleans (null counts only, as delta-spark writes
them) and a nested struct. Everything comes from the writer's seeded random generator, so the
same call writes the same bytes.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.tables import TableWriter, build

Json = dict[str, Any]
_LETTERS = string.ascii_letters + string.digits
_START = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Column:
    """A column of the benchmark schema: its name, Delta type and a (min, max) generator."""

    name: str
    type: Any
    bounds: Callable[[random.Random], tuple[Any, Any]] | None
    """None: no min/max (booleans); a nested struct's bounds are dicts of its fields."""


def _ints(top: int) -> Callable[[random.Random], tuple[Any, Any]]:
    def bounds(rng: random.Random) -> tuple[Any, Any]:
        low = rng.randrange(top // 2)
        return low, low + rng.randrange(top // 2)

    return bounds


def _floats(rng: random.Random) -> tuple[Any, Any]:
    low = round(rng.uniform(-1e6, 1e6), 6)
    return low, round(low + rng.uniform(0, 1e6), 6)


def _decimals(rng: random.Random) -> tuple[Any, Any]:
    low = rng.randrange(10_000_000)
    return float(f"{low / 100:.2f}"), float(f"{(low + rng.randrange(10_000_000)) / 100:.2f}")


def _text(rng: random.Random) -> str:
    return "".join(rng.choices(_LETTERS, k=32))


def _strings(rng: random.Random) -> tuple[Any, Any]:
    a, b = sorted((_text(rng), _text(rng)))
    return a, b


def _dates(rng: random.Random) -> tuple[Any, Any]:
    low = _START + timedelta(days=rng.randrange(365))
    high = low + timedelta(days=rng.randrange(30))
    return low.strftime("%Y-%m-%d"), high.strftime("%Y-%m-%d")


def _timestamps(rng: random.Random) -> tuple[Any, Any]:
    low = _START + timedelta(milliseconds=rng.randrange(365 * 86_400_000))
    high = low + timedelta(milliseconds=rng.randrange(3_600_000))
    low_text, high_text = (
        t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z" for t in (low, high)
    )
    return low_text, high_text


def _nested(rng: random.Random) -> tuple[Any, Any]:
    os_low, os_high = _strings(rng)
    version_low, version_high = _ints(1_000)(rng)
    lat_low, lat_high = _floats(rng)
    return (
        {"os": os_low, "version": version_low, "geo": {"lat": lat_low}},
        {"os": os_high, "version": version_high, "geo": {"lat": lat_high}},
    )


_NESTED_TYPE = {
    "type": "struct",
    "fields": [
        {"name": "os", "type": "string", "nullable": True, "metadata": {}},
        {"name": "version", "type": "integer", "nullable": True, "metadata": {}},
        {
            "name": "geo",
            "type": {
                "type": "struct",
                "fields": [{"name": "lat", "type": "double", "nullable": True, "metadata": {}}],
            },
            "nullable": True,
            "metadata": {},
        },
    ],
}

_CYCLE: tuple[tuple[str, Any, Callable[[random.Random], tuple[Any, Any]] | None], ...] = (
    ("id", "long", _ints(10**12)),
    ("event_time", "timestamp", _timestamps),
    ("name", "string", _strings),
    ("amount", "decimal(18,2)", _decimals),
    ("score", "double", _floats),
    ("count", "integer", _ints(10**6)),
    ("day", "date", _dates),
    ("flag", "boolean", None),
    ("device", _NESTED_TYPE, _nested),
    ("ratio", "float", _floats),
    ("code", "short", _ints(30_000)),
    ("level", "byte", _ints(100)),
)


def columns(count: int) -> list[Column]:
    """``count`` columns cycling through every type (names made unique by a suffix)."""
    out = []
    for i in range(count):
        name, kind, bounds = _CYCLE[i % len(_CYCLE)]
        out.append(Column(name if i < len(_CYCLE) else f"{name}_{i}", kind, bounds))
    return out


def schema_of(cols: list[Column]) -> str:
    """The table's schema string: the partition column ``p`` and ``cols``."""
    fields = [{"name": "p", "type": "integer", "nullable": True, "metadata": {}}]
    fields += [{"name": c.name, "type": c.type, "nullable": True, "metadata": {}} for c in cols]
    return json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"))


def _null_counts(col: Column, rng: random.Random) -> Any:
    if isinstance(col.type, dict):
        return {"os": rng.randrange(3), "version": 0, "geo": {"lat": rng.randrange(2)}}
    return rng.randrange(3)


def stats_maker(cols: list[Column]) -> Callable[[random.Random], str]:
    """A function of the writer's random generator making one add's ``stats`` string."""

    def stats(rng: random.Random) -> str:
        low: Json = {}
        high: Json = {}
        nulls: Json = {}
        for col in cols:
            if col.bounds is not None:
                low[col.name], high[col.name] = col.bounds(rng)
            nulls[col.name] = _null_counts(col, rng)
        document = {
            "numRecords": rng.randrange(1_000, 1_000_000),
            "minValues": low,
            "maxValues": high,
            "nullCount": nulls,
        }
        return json.dumps(document, separators=(",", ":"))

    return stats


def realistic_writer(root: Path, width: int, *, seed: int = 0, partitions: int = 10) -> TableWriter:
    """A writer of a table with ``width`` stats-bearing columns (plus the partition column)."""
    cols = columns(width)
    return TableWriter(
        root,
        seed=seed,
        partitions=partitions,
        schema_string=schema_of(cols),
        stats=stats_maker(cols),
    )


def build_realistic(
    root: Path,
    *,
    width: int,
    commits: int,
    adds_per_commit: int,
    checkpoint_every: int | None = None,
    initial_files: int = 0,
    initial_commits: int = 0,
    seed: int = 0,
) -> TableWriter:
    """A realistic table: ``initial_files`` over ``initial_commits`` bulk commits, then
    ``commits`` commits of ``adds_per_commit`` adds (every fourth one also removing a file), a
    classic checkpoint every ``checkpoint_every`` versions."""
    writer = realistic_writer(root, width, seed=seed)
    last = initial_commits + commits
    every = checkpoint_every or 0
    return build(
        root,
        commits=commits,
        adds_per_commit=adds_per_commit,
        checkpoint_at=list(range(every, last + 1, every)) if every else [],
        initial_files=initial_files,
        initial_commits=initial_commits,
        writer=writer,
    )
