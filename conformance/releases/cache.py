"""Where fetched engines live, outside the repository (a contract with the bridge and CI):

- ``$DELTASPEC_CACHE`` (else ``~/.cache/deltaspec``) is the cache root;
- ``<cache>/delta-spark/<release>/jars/*.jar``: the delta jars Spark does not ship, the shape
  ``engines/deltaspark/bridge.py --delta-spark DIR`` reads;
- ``<cache>/pyspark/<pyspark-version>/``: a venv holding that pyspark and its py4j only.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from .errors import ChecksumMismatch, EngineNotFetched, NotPinned
from .pins import EnginePin

CACHE_ENV = "DELTASPEC_CACHE"
BRIDGE = Path(__file__).resolve().parents[1] / "engines" / "deltaspark" / "bridge.py"
"""The spec-only bridge that drives each engine in its own process (``cmd:`` protocol)."""


def cache_root() -> Path:
    given = os.environ.get(CACHE_ENV)
    return Path(given) if given else Path.home() / ".cache" / "deltaspec"


def engine_dir(release: str) -> Path:
    return cache_root() / "delta-spark" / release


def venv_dir(pyspark_version: str) -> Path:
    return cache_root() / "pyspark" / pyspark_version


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def spark_jars_dir(venv: Path) -> Path | None:
    """``site-packages/pyspark/jars`` of a venv (None: pyspark is not installed there)."""
    found = sorted(venv.glob("lib/python*/site-packages/pyspark/jars"))
    return found[0] if found else None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_sha256(path: Path, expected: str) -> None:
    got = sha256_of(path)
    if got != expected:
        raise ChecksumMismatch(path, expected, got)


@dataclass(frozen=True)
class InstalledEngine:
    """A fetched engine: its jars directory and the Python that runs the bridge."""

    pin: EnginePin
    home: Path
    python: Path

    def bridge_command(self, bridge: Path = BRIDGE) -> list[str]:
        """The bridge program's argv (a list: paths with spaces need no quoting)."""
        return [str(self.python), str(bridge), "--delta-spark", str(self.home)]


def installed(pin: EnginePin) -> InstalledEngine:
    """The engine of ``pin`` in the cache, its jars checked against engines.json.

    Raises EngineNotFetched (with the fetch command) when a jar or the venv is missing, and
    ChecksumMismatch when a jar is not the pinned one."""
    if not pin.jars:
        raise NotPinned(pin.release, "jars")
    home = engine_dir(pin.release)
    for name, expected in pin.jars:
        jar = home / "jars" / name
        if not jar.is_file():
            raise EngineNotFetched(pin.release, jar)
        verify_sha256(jar, expected)
    python = venv_python(venv_dir(pin.pyspark.version))
    if not python.exists() or spark_jars_dir(python.parents[1]) is None:
        raise EngineNotFetched(pin.release, python.parents[1])
    return InstalledEngine(pin, home, python)
