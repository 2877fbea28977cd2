"""delta-spark's side of the differential, recorded once and replayed, for mutant runs only.

A mutant changes our Spark path, never delta-spark: the reference side of a script (its
observations, log shape, rows and the table it wrote, which our engine reads back) and of a
conflict case (its outcome) is the same for every mutant. ``deltaspec mutants`` records it in
its unmutated baseline (``record``) and each mutant's process replays it (``replay``; a missing
entry runs the engine as usual). ``deltaspec check`` never sets this: it always runs both sides.

The setting is one environment variable, ``DELTASPEC_SPARK_REFERENCE=record:DIR|replay:DIR``. An
entry is keyed by the differential's own source (scripts, comparison, conflict cases, and the
engines and hand-driven loser they run on, in ``adapters``), the delta-spark jars and the pyspark
version, so a change to any of them misses the cache.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENV = "DELTASPEC_SPARK_REFERENCE"
MODES = ("record", "replay")
_SOURCES = (
    "spark_differential/scripts.py",
    "spark_differential/compare.py",
    "spark_differential/conflicts.py",
    "spark_differential/reference.py",
    "adapters/spark_engines.py",
    "adapters/deltaspark_loser.py",
    "adapters/deltaspark_jvm.py",
)
"""The differential's source, relative to the conformance package: its scripts, comparison and
conflict cases, and the engines and the hand-driven loser they run on (adapters)."""


@dataclass(frozen=True)
class ReferenceCache:
    mode: str
    folder: Path

    def _entry(self, name: str) -> Path:
        return self.folder / f"{_fingerprint()}-{name.replace(' ', '-')}"

    def load(self, name: str, table_parent: str | None = None) -> Any | None:
        """The recorded outcome of ``name`` (None: not recorded, or recording); its table is
        copied back to ``table_parent``."""
        if self.mode != "replay":
            return None
        entry = self._entry(name)
        try:
            outcome = pickle.loads((entry / "outcome.pickle").read_bytes())
        except FileNotFoundError:
            return None
        if table_parent is not None:
            shutil.copytree(entry / "table", table_parent, dirs_exist_ok=True)
        return outcome

    def save(self, name: str, outcome: Any, table_parent: str | None = None) -> None:
        """Record ``outcome`` (and the directory ``table_parent``), replacing any older record
        atomically."""
        entry = self._entry(name)
        self.folder.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.folder))
        if table_parent is not None:
            shutil.copytree(table_parent, staging / "table")
        (staging / "outcome.pickle").write_bytes(pickle.dumps(outcome))
        shutil.rmtree(entry, ignore_errors=True)
        os.replace(staging, entry)


def from_environment() -> ReferenceCache | None:
    """The cache ``DELTASPEC_SPARK_REFERENCE`` names, or None (run delta-spark every time)."""
    value = os.environ.get(ENV, "")
    mode, _, folder = value.partition(":")
    if mode not in MODES or not folder:
        return None
    return ReferenceCache(mode, Path(folder))


def setting(mode: str, folder: Path) -> str:
    return f"{mode}:{folder}"


_FINGERPRINT: list[str] = []


def _fingerprint() -> str:
    """The differential's source, delta-spark's jars (names and sizes) and pyspark's version."""
    if not _FINGERPRINT:
        import pyspark

        from ..adapters.deltaspark_session import locate

        digest = hashlib.sha256(pyspark.__version__.encode())
        here = Path(__file__).parents[1]
        for source in _SOURCES:
            digest.update((here / source).read_bytes())
        home = locate()
        digest.update(str(home.packages).encode())
        for jar in home.jars:
            digest.update(f"{jar.name}:{jar.stat().st_size}".encode())
        _FINGERPRINT.append(digest.hexdigest()[:16])
    return _FINGERPRINT[0]
