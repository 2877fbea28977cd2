"""What every benchmark case shares: alternating timings, ratios against a peer, the machine.

Every figure is a ratio against a peer measured in the same run: the case alternates ours and the
peer (A B, then B A, ...), each pair gives one ratio, and a :class:`Metric` reports the median
ratio with its min–max, next to both sides' medians. A metric measures one *quantity* (seconds,
commits/s, bytes...); its ratio is always ours / peer in that quantity, so for seconds lower is
better and for rates higher is better (``higher_is_better``).
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from typing import Any, Literal

Json = dict[str, Any]


def timed(function: Callable[[], object]) -> float:
    """Seconds one call of ``function`` takes (perf_counter)."""
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def alternate(
    ours: Callable[[], float],
    peer: Callable[[], float],
    rounds: int,
    warmup: int = 1,
) -> tuple[list[float], list[float]]:
    """Call ``ours`` and ``peer`` alternately ``warmup + rounds`` times each and return the
    measurements of the last ``rounds`` pairs; each call returns its own measurement, so untimed
    setup can stay inside it. The side that goes first alternates too (A B, B A, A B...), so
    neither side always runs right after the other (a garbage collection, a cache, a JIT)."""
    a: list[float] = []
    b: list[float] = []
    for i in range(warmup + rounds):
        if i % 2 == 0:
            x = ours()
            y = peer()
        else:
            y = peer()
            x = ours()
        if i >= warmup:
            a.append(x)
            b.append(y)
    return a, b


@dataclass(frozen=True)
class Target:
    """A goal from the issue: ``on`` the median ratio or ours' median, ``op`` a bound."""

    on: Literal["ratio", "ours"]
    op: Literal["<=", ">=", "<", ">"]
    value: float
    text: str

    def met(self, ratio: float, ours: float) -> bool:
        x = ratio if self.on == "ratio" else ours
        return {
            "<=": x <= self.value,
            ">=": x >= self.value,
            "<": x < self.value,
            ">": x > self.value,
        }[self.op]


@dataclass
class Metric:
    """One line of the results: ours and the peer, measured alternately, and their ratios."""

    id: str
    case: int
    title: str
    quantity: str
    higher_is_better: bool
    ours: list[float]
    peer: list[float]
    peer_name: str
    target: Target | None = None
    notes: str = ""
    curve: str | None = None
    """Metrics sharing a curve name are drawn together, ``x`` along the horizontal axis."""
    x: float | None = None
    extra: Json = field(default_factory=dict)

    @property
    def ratios(self) -> list[float]:
        return [a / b for a, b in zip(self.ours, self.peer, strict=True) if b]

    def to_json(self) -> Json:
        ratios = self.ratios
        ratio = statistics.median(ratios) if ratios else float("nan")
        ours = statistics.median(self.ours)
        out = asdict(self)
        out["target"] = None if self.target is None else asdict(self.target)
        out["summary"] = {
            "ours_median": ours,
            "ours_min": min(self.ours),
            "ours_max": max(self.ours),
            "peer_median": statistics.median(self.peer),
            "peer_min": min(self.peer),
            "peer_max": max(self.peer),
            "ratio_median": ratio,
            "ratio_min": min(ratios) if ratios else float("nan"),
            "ratio_max": max(ratios) if ratios else float("nan"),
            "pairs": len(ratios),
        }
        out["status"] = (
            None if self.target is None else ("met" if self.target.met(ratio, ours) else "missed")
        )
        return out


def seconds(
    id: str,
    case: int,
    title: str,
    pair: tuple[list[float], list[float]],
    peer_name: str,
    **rest: Any,
) -> Metric:
    """A metric in seconds (lower is better) from :func:`alternate`'s ``(ours, peer)``."""
    ours, peer = pair
    return Metric(id, case, title, "seconds", False, ours, peer, peer_name, **rest)


def _first_line(command: list[str]) -> str | None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (done.stdout or done.stderr).strip()
    return text.splitlines()[0] if text else None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as file:
            for line in file:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gb() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as file:
            for line in file:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def machine() -> Json:
    """The machine and the software the figures were measured with."""
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": _memory_gb(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
        "java": _first_line(["java", "-version"]),
        "packages": {
            name: _version(name)
            for name in ("deltaspec", "deltalake", "pyarrow", "pyspark", "hypothesis")
        },
    }
