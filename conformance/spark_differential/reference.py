"""delta-spark's side of the differential, recorded once and replayed.

Our Spark path changes from commit to commit and from mutant to mutant; delta-spark does not:
the reference side of a script (its observations, log shape, rows and the table it wrote, which
our engine reads back) and of a conflict case (its outcome) is the same as long as the
differential's source, the delta-spark jars and pyspark are. So it is recorded once and replayed:

- ``deltaspec check`` keeps it in ``$DELTASPEC_CACHE/spark-reference`` (``auto``): a script or
  case recorded there is replayed, one that is not runs delta-spark live and is recorded, so the
  first run on a machine (or after a change to any of the keyed sources) is live and the later
  ones replay. ``deltaspec check --live`` always runs delta-spark (``record``: and refreshes the
  recording). Either way delta-spark itself still reads every table our engine wrote, live.
- ``deltaspec mutants`` runs its unmutated baseline on the same folder (``auto``) and each
  mutant's process replays it (``replay``; a missing entry runs the engine as usual).

A process is told by one environment variable, ``DELTASPEC_SPARK_REFERENCE=MODE:DIR`` (MODE
``record``, ``replay`` or ``auto``), which wins over the default. An entry is keyed by the
differential's own source (scripts, conflict cases, and the engines and hand-driven loser they
run on, in ``engines``), the delta-spark jars and the pyspark version, so a change to any of
them misses the cache and is recorded anew. The comparison (compare.py, commits.py) is not in
the key: a script's recording is what the script observed, the rows delta-spark read and the
tables it wrote, and every run reads the logs it compares from those tables, so comparing more
(or less) of a commit replays the same recording.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engines.deltaspark.session import locate
from ..releases.cache import cache_root

ENV = "DELTASPEC_SPARK_REFERENCE"
MODES = ("record", "replay", "auto")
FOLDER = "spark-reference"
"""Under the engines cache (``$DELTASPEC_CACHE``)."""
_SOURCES = (
    "spark_differential/scripts.py",
    "spark_differential/conflicts.py",
    "spark_differential/reference.py",
    "engines/spark_api.py",
    "engines/deltaspark/spark_api.py",
    "engines/spark/spark_api.py",
    "engines/deltaspark/loser.py",
    "engines/deltaspark/jvm.py",
)
"""The differential's source, relative to the conformance package: its scripts, the recording
itself and the conflict cases, and the engines and the hand-driven loser they run on
(conformance/engines)."""


@dataclass(frozen=True)
class ReferenceCache:
    mode: str
    """``record`` (always live, then recorded), ``replay`` (recorded, else live) or ``auto``
    (recorded, else live and then recorded)."""
    folder: Path
    replayed: list[str] = field(default_factory=list, compare=False)
    """The names this cache gave back, in order: the rest of a run was live."""

    def _entry(self, name: str) -> Path:
        return self.folder / f"{_fingerprint()}-{name.replace(' ', '-')}"

    @property
    def records(self) -> bool:
        """Whether a live outcome is recorded (``save`` does nothing otherwise)."""
        return self.mode in {"record", "auto"}

    def load(self, name: str, table_parent: str | None = None) -> Any | None:
        """The recorded outcome of ``name`` (None: not recorded, or always live); its table is
        copied back to ``table_parent``."""
        if self.mode == "record":
            return None
        entry = self._entry(name)
        try:
            outcome = pickle.loads((entry / "outcome.pickle").read_bytes())
        except FileNotFoundError:
            return None
        if table_parent is not None:
            shutil.copytree(entry / "table", table_parent, dirs_exist_ok=True)
        self.replayed.append(name)
        return outcome

    def save(self, name: str, outcome: Any, table_parent: str | None = None) -> None:
        """Record ``outcome`` (and the directory ``table_parent``), replacing any older record
        atomically; under ``replay``, nothing."""
        if not self.records:
            return
        entry = self._entry(name)
        self.folder.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.folder))
        if table_parent is not None:
            shutil.copytree(table_parent, staging / "table")
        (staging / "outcome.pickle").write_bytes(pickle.dumps(outcome))
        shutil.rmtree(entry, ignore_errors=True)
        try:
            os.replace(staging, entry)
        except OSError:  # another run recorded the same entry meanwhile: one of them is kept
            shutil.rmtree(staging, ignore_errors=True)


def from_environment() -> ReferenceCache | None:
    """The cache ``DELTASPEC_SPARK_REFERENCE`` names, or None."""
    value = os.environ.get(ENV, "")
    mode, _, folder = value.partition(":")
    if mode not in MODES or not folder:
        return None
    return ReferenceCache(mode, Path(folder))


def default_folder() -> Path:
    """Where ``deltaspec check`` and ``deltaspec mutants`` keep the recorded side."""
    return cache_root() / FOLDER


def for_check(*, live: bool = False) -> ReferenceCache:
    """The cache a run of the Spark stage uses: the environment's when set (a mutant's
    process), else the default folder, ``auto`` (``live``: ``record``)."""
    return from_environment() or ReferenceCache("record" if live else "auto", default_folder())


def setting(mode: str, folder: Path) -> str:
    return f"{mode}:{folder}"


_FINGERPRINT: list[str] = []


def _fingerprint() -> str:
    """The differential's source, delta-spark's jars (names and sizes) and pyspark's version."""
    if not _FINGERPRINT:
        import pyspark  # lazy: pyspark is optional

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
