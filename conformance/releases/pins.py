"""engines.json: one pinned entry per delta-spark release line that runs live, each in its own
process and Python environment (the delta jars from Maven Central, pyspark from PyPI)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ENGINES_JSON = Path(__file__).resolve().parent / "engines.json"


@dataclass(frozen=True)
class PythonDist:
    """One distribution file pip installs, pinned by its sha256 (empty until --pin)."""

    name: str
    version: str
    file: str = ""
    sha256: str = ""

    def requirement(self) -> str:
        """Its line in a ``pip install --require-hashes`` requirements file."""
        return f"{self.name}=={self.version} --hash=sha256:{self.sha256}"


@dataclass(frozen=True)
class EnginePin:
    """A delta-spark release: its Maven coordinate, the Spark it was built for, the pyspark that
    runs it, the sha256 of every jar kept, and whether it runs here (measured)."""

    release: str
    maven: str
    scala: str
    spark: str
    java: int
    pyspark: PythonDist
    py4j: PythonDist | None = None
    python_api: PythonDist | None = None
    """delta-spark's Python package (the PyPI wheel), for the in-process engine."""
    jars: tuple[tuple[str, str], ...] = ()
    runs: bool = True
    why_not: str | None = None

    @property
    def artifact(self) -> str:
        return self.maven.split(":")[1]

    @property
    def group(self) -> str:
        return self.maven.split(":")[0]

    @property
    def maven_version(self) -> str:
        return self.maven.split(":")[2]

    @property
    def jar_sha256(self) -> dict[str, str]:
        return dict(self.jars)


@dataclass(frozen=True)
class Pins:
    """engines.json as loaded: its description and the entries in release order."""

    engines: tuple[EnginePin, ...]
    description: str = ""
    by_release: dict[str, EnginePin] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_release", {e.release: e for e in self.engines})

    def releases(self) -> list[str]:
        return [e.release for e in self.engines]


def _dist(data: dict[str, Any], name: str) -> PythonDist:
    return PythonDist(name, data["version"], data.get("file", ""), data.get("sha256", ""))


def _engine(data: dict[str, Any]) -> EnginePin:
    py4j = data.get("py4j")
    python_api = data.get("python_api")
    return EnginePin(
        release=data["release"],
        maven=data["maven"],
        scala=data["scala"],
        spark=data["spark"],
        java=int(data["java"]),
        pyspark=_dist(data["pyspark"], "pyspark"),
        py4j=_dist(py4j, "py4j") if py4j else None,
        python_api=_dist(python_api, "delta-spark") if python_api else None,
        jars=tuple(sorted(data.get("jars", {}).items())),
        runs=bool(data.get("runs", True)),
        why_not=data.get("why_not"),
    )


def load_pins(path: Path | None = None) -> Pins:
    """engines.json (or ``path``)."""
    data = json.loads((path or ENGINES_JSON).read_text(encoding="utf-8"))
    return Pins(tuple(_engine(e) for e in data["engines"]), data.get("description", ""))


def _dist_json(dist: PythonDist) -> dict[str, str]:
    return {"version": dist.version, "file": dist.file, "sha256": dist.sha256}


def engine_json(pin: EnginePin) -> dict[str, Any]:
    data: dict[str, Any] = {
        "release": pin.release,
        "maven": pin.maven,
        "scala": pin.scala,
        "spark": pin.spark,
        "java": pin.java,
        "pyspark": _dist_json(pin.pyspark),
    }
    if pin.py4j is not None:
        data["py4j"] = _dist_json(pin.py4j)
    if pin.python_api is not None:
        data["python_api"] = _dist_json(pin.python_api)
    data["jars"] = dict(pin.jars)
    data["runs"] = pin.runs
    if pin.why_not is not None:
        data["why_not"] = pin.why_not
    return data


def write_pins(pins: Pins, path: Path | None = None) -> None:
    """Rewrite engines.json (or ``path``) in place: the same file, which an editable install
    links to."""
    data = {"description": pins.description, "engines": [engine_json(e) for e in pins.engines]}
    (path or ENGINES_JSON).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
