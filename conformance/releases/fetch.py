"""Fetching one pinned engine into the cache: its pyspark venv, its delta jars, an import check
and (optionally) the smoke check. A fetched and verified engine is reused, not fetched again.

With ``repin`` (the maintainer's ``--pin``) the checksums are taken from what was fetched (pip's
files cross-checked against PyPI's digests) and whether it runs is measured, not assumed."""

from __future__ import annotations

import contextlib
import enum
import fcntl
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from . import jars, pyenv, python_api
from .cache import (
    cache_root,
    engine_dir,
    installed,
    sha256_of,
    spark_jars_dir,
    venv_dir,
    verify_sha256,
)
from .errors import (
    CommandFailed,
    EngineError,
    EngineNotFetched,
    NotPinned,
    UnexpectedJars,
)
from .pins import EnginePin
from .smoke import smoke


class Status(enum.Enum):
    OK = "ok"
    NOT_RUNNABLE = "not runnable"
    FAILED = "FAILED"


@dataclass(frozen=True)
class FetchResult:
    """One release's fetch: its status, time, the jars and venv it left, and why not ok.
    ``pin`` is the entry as fetched (the new checksums and measured runs under --pin)."""

    pin: EnginePin
    status: Status
    seconds: float
    jars: tuple[Path, ...] = ()
    venv: Path | None = None
    detail: str = ""


def java_major() -> int:
    """The major version of the machine's default ``java`` (8 for 1.8)."""
    done = subprocess.run(["java", "-version"], capture_output=True, text=True)
    match = re.search(r'version "(\d+)(?:\.(\d+))?', done.stderr)
    if done.returncode != 0 or match is None:
        raise CommandFailed(["java", "-version"], done.returncode, done.stderr)
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


@contextlib.contextmanager
def fetch_lock() -> Iterator[None]:
    """One fetch at a time per cache (test workers each make sure of the same engine)."""
    cache_root().mkdir(parents=True, exist_ok=True)
    with (cache_root() / ".fetch.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def fetch(pin: EnginePin, *, repin: bool = False, check: bool = False) -> FetchResult:
    """Fetch (or reuse) the engine of ``pin``; ``check`` runs the smoke check too."""
    start = time.monotonic()
    if not pin.runs and not repin:
        return FetchResult(pin, Status.NOT_RUNNABLE, 0.0, detail=pin.why_not or "")
    try:
        with fetch_lock():
            return _fetch(pin, repin, check, start)
    except EngineError as error:
        return FetchResult(pin, Status.FAILED, time.monotonic() - start, detail=str(error))


def _fetch(pin: EnginePin, repin: bool, check: bool, start: float) -> FetchResult:
    java = java_major()
    if java != pin.java:
        why = f"needs Java {pin.java}; the default java here is {java}"
        return FetchResult(pin, Status.FAILED, time.monotonic() - start, detail=why)
    venv = venv_dir(pin.pyspark.version)
    if repin:
        pyspark, py4j = pyenv.download_pins(venv, pin.pyspark.version)
        pin = replace(pin, pyspark=pyspark, py4j=py4j)
    if not pyenv.matches(venv, pin.pyspark, pin.py4j):
        pyenv.install(venv, pin.pyspark, pin.py4j)
    failure = pyenv.import_failure(venv)
    if failure is not None:
        why = (f"pyspark {pin.pyspark.version} does not import on Python "
               f"{sys.version_info.major}.{sys.version_info.minor}: {failure}")  # fmt: skip
        return _not_running(pin, repin, why, venv, start)
    shipped = spark_jars_dir(venv)
    if shipped is None:
        raise EngineNotFetched(pin.release, venv)
    pin = replace(pin, jars=_ensure_jars(pin, shipped, repin))
    pin = replace(pin, python_api=python_api.ensure(pin, repin=repin))
    engine = installed(pin)
    kept = tuple(engine.home / "jars" / name for name, _ in pin.jars)
    if check:
        seen = smoke(engine)
        if not seen.ok:
            return _not_running(pin, repin, f"smoke check failed: {seen.detail}", venv, start)
        if repin:
            pin = replace(pin, runs=True, why_not=None)
        detail = f"smoke ok in {seen.seconds:.0f} s: {seen.detail}"
    else:
        detail = ""
    return FetchResult(pin, Status.OK, time.monotonic() - start, kept, venv, detail)


def _not_running(pin: EnginePin, repin: bool, why: str, venv: Path, start: float) -> FetchResult:
    """Under --pin, a measured reason to pin the release as not runnable; else a failure."""
    seconds = time.monotonic() - start
    if repin:
        return FetchResult(replace(pin, runs=False, why_not=why), Status.NOT_RUNNABLE, seconds,
                           venv=venv, detail=why)  # fmt: skip
    return FetchResult(pin, Status.FAILED, seconds, venv=venv, detail=why)


def _verified(pin: EnginePin, folder: Path) -> bool:
    """Whether ``folder`` holds exactly the pinned jars, each with its pinned sha256."""
    if not pin.jars or not folder.is_dir():
        return False
    if sorted(p.name for p in folder.glob("*.jar")) != sorted(pin.jar_sha256):
        return False
    return all(sha256_of(folder / name) == expected for name, expected in pin.jars)


def _ensure_jars(pin: EnginePin, shipped: Path, repin: bool) -> tuple[tuple[str, str], ...]:
    """The release's jars in ``<cache>/delta-spark/<release>/jars``: reused when verified, else
    resolved by Maven, filtered, checked (or, under --pin, hashed) and moved into place."""
    target = engine_dir(pin.release) / "jars"
    if not repin and _verified(pin, target):
        return pin.jars
    if not repin and not pin.jars:
        raise NotPinned(pin.release, "jars")
    cache_root().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=cache_root()) as scratch:
        resolved = jars.resolve(pin, Path(scratch) / "maven")
        kept = jars.keep(resolved, shipped)
        names = sorted(jar.path.name for jar in kept)
        if repin:
            pinned = tuple((jar.path.name, sha256_of(jar.path)) for jar in kept)
        else:
            if names != sorted(pin.jar_sha256):
                extra = [n for n in names if n not in pin.jar_sha256]
                raise UnexpectedJars(pin.release, extra, [n for n in pin.jar_sha256
                                                          if n not in names])  # fmt: skip
            for jar in kept:
                verify_sha256(jar.path, pin.jar_sha256[jar.path.name])
            pinned = pin.jars
        pinned = tuple(sorted(pinned))
        if not _verified(replace(pin, jars=pinned), target):  # in place already: left alone
            _move_into(target, [jar.path for jar in kept], Path(scratch) / "jars")
    return pinned


def _move_into(target: Path, files: list[Path], staging: Path) -> None:
    """``files`` as the whole content of ``target``, through ``staging`` on its file system."""
    staging.mkdir()
    for file in files:
        shutil.move(file, staging / file.name)
    if target.exists():
        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging.rename(target)
