"""delta-spark's own Python package (``delta.tables.DeltaTable``, ``delta.exceptions``) of a
release, from its PyPI wheel, unpacked into ``<cache>/delta-spark/<release>/python/delta``.

The wheel is not pip-installed: its metadata caps pyspark below the patch release engines.json
runs it on (delta-spark 4.4.0 asks for ``pyspark<=4.2.0``; 4.2.1 is measured to run it), and the
in-process engine only needs ``python/`` on ``sys.path``, the shape
``engines/deltaspark/session.locate`` reads. Only the ``delta/`` files of the wheel are kept."""

from __future__ import annotations

import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

from .cache import cache_root, engine_dir, verify_sha256
from .errors import UnexpectedOutput
from .pins import EnginePin, PythonDist
from .pyenv import published_sha256, run

PACKAGE = "delta/"
STAMP = ".sha256"
"""A file in ``python/`` holding the sha256 of the wheel it was unpacked from."""


def wheel_name(release: str) -> str:
    return f"delta_spark-{release}-py3-none-any.whl"


def download(release: str, folder: Path) -> Path:
    """The release's wheel, fetched by pip (its index, its proxy settings) into ``folder``."""
    run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
         "-d", str(folder), f"delta-spark=={release}"])  # fmt: skip
    wheel = folder / wheel_name(release)
    if not wheel.is_file():
        raise UnexpectedOutput(f"pip download delta-spark=={release} brought no {wheel.name}")
    return wheel


def unpacked(release: str, dist: PythonDist) -> bool:
    """Whether ``python/`` holds the package of exactly the pinned wheel."""
    stamp = engine_dir(release) / "python" / STAMP
    return stamp.is_file() and stamp.read_text(encoding="utf-8").strip() == dist.sha256


def ensure(pin: EnginePin, *, repin: bool = False) -> PythonDist | None:
    """The release's Python package in the cache, reused when its stamp matches the pin, else
    fetched and checked against it; under ``repin`` the pin is PyPI's published digest (None
    where PyPI has no wheel)."""
    dist = pin.python_api
    if repin:
        digest = published_sha256("delta-spark", pin.release).get(wheel_name(pin.release))
        if digest is None:
            return None
        dist = PythonDist("delta-spark", pin.release, wheel_name(pin.release), digest)
    if dist is None or unpacked(pin.release, dist):
        return dist
    cache_root().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=cache_root()) as scratch:
        wheel = download(pin.release, Path(scratch))
        verify_sha256(wheel, dist.sha256)
        staging = Path(scratch) / "python"
        with zipfile.ZipFile(wheel) as archive:
            members = [m for m in archive.namelist() if m.startswith(PACKAGE)]
            if not members:
                raise UnexpectedOutput(f"{dist.file} holds no {PACKAGE} package")
            archive.extractall(staging, members)
        (staging / STAMP).write_text(dist.sha256 + "\n", encoding="utf-8")
        target = engine_dir(pin.release) / "python"
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    return dist
