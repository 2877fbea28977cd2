"""The Python environment of an engine: a venv holding one pyspark (and its py4j) from PyPI,
installed with ``pip install --require-hashes`` from the digests engines.json pins."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from .cache import sha256_of, venv_python
from .errors import (
    ChecksumMismatch,
    CommandFailed,
    NotPinned,
    UnexpectedOutput,
)
from .pins import PythonDist

PYPI_JSON = "https://pypi.org/pypi/{name}/json"

VERSIONS = (
    "import importlib.metadata as m, json\n"
    "print(json.dumps({n: m.version(n) for n in ('pyspark', 'py4j')}))"
)


def run(command: list[str], *, timeout: float | None = None) -> str:
    """The command's output; CommandFailed when it exits nonzero."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise CommandFailed(command, done.returncode, done.stdout + done.stderr)
    return done.stdout


def installed_versions(venv: Path) -> dict[str, str] | None:
    """The pyspark and py4j versions installed in ``venv`` (None: no venv, or either missing)."""
    python = venv_python(venv)
    if not python.exists():
        return None
    done = subprocess.run([str(python), "-c", VERSIONS], capture_output=True, text=True)
    if done.returncode != 0:
        return None
    versions: dict[str, str] = json.loads(done.stdout)
    return versions


def matches(venv: Path, pyspark: PythonDist, py4j: PythonDist | None) -> bool:
    """Whether ``venv`` already holds exactly the pinned pyspark (and py4j)."""
    versions = installed_versions(venv)
    return (
        versions is not None
        and versions["pyspark"] == pyspark.version
        and (py4j is None or versions["py4j"] == py4j.version)
    )


def create(venv: Path) -> None:
    """``python3 -m venv`` (this interpreter's base Python) unless ``venv`` exists."""
    if not venv_python(venv).exists():
        venv.parent.mkdir(parents=True, exist_ok=True)
        run([sys.executable, "-m", "venv", str(venv)])


def install(venv: Path, pyspark: PythonDist, py4j: PythonDist | None) -> None:
    """pyspark and py4j into ``venv``, every file checked against its pinned sha256."""
    if not pyspark.sha256 or py4j is None or not py4j.sha256:
        raise NotPinned(pyspark.version, "pyspark/py4j sha256")
    create(venv)
    with tempfile.TemporaryDirectory(prefix="deltaspec-pip-") as scratch:
        requirements = Path(scratch) / "requirements.txt"
        requirements.write_text(f"{pyspark.requirement()}\n{py4j.requirement()}\n")
        run([str(venv_python(venv)), "-m", "pip", "install", "--quiet", "--require-hashes",
             "-r", str(requirements)])  # fmt: skip


def published_sha256(name: str, version: str) -> dict[str, str]:
    """The files PyPI publishes for ``name==version``: file name -> sha256."""
    with urllib.request.urlopen(PYPI_JSON.format(name=name), timeout=60) as response:
        data = json.load(response)
    return {f["filename"]: f["digests"]["sha256"] for f in data["releases"].get(version, [])}


def download_pins(venv: Path, pyspark_version: str) -> tuple[PythonDist, PythonDist]:
    """The pyspark and py4j files pip picks for ``pyspark==<version>``, hashed as fetched and
    checked against the digests PyPI publishes (the maintainer's ``--pin``)."""
    create(venv)
    with tempfile.TemporaryDirectory(prefix="deltaspec-pip-") as scratch:
        run([str(venv_python(venv)), "-m", "pip", "download", "--quiet", "-d", scratch,
             f"pyspark=={pyspark_version}"])  # fmt: skip
        files = {path.name: path for path in Path(scratch).iterdir()}
        dists = []
        for name in ("pyspark", "py4j"):
            found = [f for f in files if f.lower().startswith(f"{name}-")]
            if len(found) != 1:
                raise UnexpectedOutput(f"pip download pyspark=={pyspark_version} brought "
                                       f"{sorted(files)}: not one {name} file")  # fmt: skip
            (file,) = found
            version = file.removeprefix(f"{name}-").split("-")[0].removesuffix(".tar.gz")
            got = sha256_of(files[file])
            published = published_sha256(name, version).get(file, "")
            if got != published:
                raise ChecksumMismatch(files[file], published or "(not published on PyPI)", got)
            dists.append(PythonDist(name, version, file, got))
    return dists[0], dists[1]


def import_failure(venv: Path) -> str | None:
    """Why ``import pyspark.sql`` fails in ``venv`` (None: it imports)."""
    done = subprocess.run([str(venv_python(venv)), "-c", "import pyspark.sql"],
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode == 0:
        return None
    lines = done.stderr.strip().splitlines()
    return lines[-1] if lines else f"exit code {done.returncode}"
