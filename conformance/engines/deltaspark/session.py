"""The live reference engine: a local SparkSession running real delta-spark.

Where delta-spark comes from is one setting, ``DELTASPEC_DELTA_SPARK`` (or the ``location``
argument):

- a directory holding ``jars/*.jar`` and, optionally, ``python/delta`` (delta-spark's Python
  package): a maintainer's own build, such as ``../shared/delta-spark`` (4.4.0 built from source
  for pyspark 4.3.0, which needs that pyspark in the environment);
- unset: the published delta-spark of ``PRIMARY_LIVE_RELEASE`` as ``deltaspec engines fetch``
  leaves it in the cache (its Maven jars and its PyPI Python package), on the pyspark the
  project's ``dev`` dependencies pin for it;
- ``maven:GROUP:ARTIFACT:VERSION`` (e.g. ``maven:io.delta:delta-spark_2.13:4.4.0``): the published
  jar through ``spark.jars.packages``, with the ``delta-spark`` pip package for the Python API.

Only delta-spark's public APIs are used on top of this session (``DeltaLog.forTable``,
``OptimisticTransaction``, ``Action.fromJson``, ``DeltaTable``, SQL), so the same code runs on the
published jar. One session per process: Spark cannot add jars to a running session, so the first
session a process starts must be this one (``tests/conftest.py`` starts it once per worker).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deltaspec.rules import PRIMARY_LIVE_RELEASE

from ...releases.cache import engine_dir

ENV = "DELTASPEC_DELTA_SPARK"
MAVEN_PREFIX = "maven:"
RELEASE = PRIMARY_LIVE_RELEASE
"""The delta-spark release the engine is expected to be; vectors of other releases are declined."""

DEFAULT_LOCATION = engine_dir(PRIMARY_LIVE_RELEASE)
"""The published engine in the cache; ``deltaspec engines fetch`` puts it there."""

EXTENSION_CONFS: Mapping[str, str] = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}


LOCAL_CONFS: Mapping[str, str] = {
    "spark.databricks.delta.snapshotPartitions": "2",
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "2",
}
"""Sized for a local[2] session with small tables instead of a cluster; results do not depend on
either. delta-spark rebuilds table state in 50 shuffle partitions by default: that was most of
every command's time (RESTORE on a three-commit table: 244 s with 50, 52 s with 2, at load 2-4).
Its VACUUM lists the table in as many tasks as the partition discovery parallelism, 10,000 by
default: 115 of the 129 s of the differential's vacuum_history script (13 s with 2, at load
3-5)."""


class DeltaSparkUnavailable(RuntimeError):
    """delta-spark cannot be found or started; the message says where it looked."""


@dataclass(frozen=True)
class DeltaSparkHome:
    """Where the engine's jars (or Maven coordinates) and its Python package are."""

    jars: tuple[Path, ...] = ()
    packages: str | None = None
    python: Path | None = None

    def confs(self) -> dict[str, str]:
        """The session settings that load delta-spark."""
        settings = dict(EXTENSION_CONFS)
        if self.jars:
            settings["spark.jars"] = ",".join(str(jar) for jar in self.jars)
        if self.packages:
            settings["spark.jars.packages"] = self.packages
        return settings


def locate(location: str | os.PathLike[str] | None = None) -> DeltaSparkHome:
    """The engine named by ``location``, else ``$DELTASPEC_DELTA_SPARK``, else the default."""
    spec = str(location) if location is not None else os.environ.get(ENV, "")
    if spec.startswith(MAVEN_PREFIX):
        return DeltaSparkHome(packages=spec.removeprefix(MAVEN_PREFIX))
    folder = Path(spec) if spec else DEFAULT_LOCATION
    jars = tuple(sorted((folder / "jars").glob("*.jar")))
    if not jars:
        fetch = f"run `deltaspec engines fetch {RELEASE}`, or " if not spec else ""
        raise DeltaSparkUnavailable(
            f"no delta-spark jars in {folder.resolve()}/jars ({fetch}set {ENV} to a directory "
            f"with jars/ and python/, or to {MAVEN_PREFIX}io.delta:delta-spark_2.13:{RELEASE})"
        )
    python = folder / "python"
    return DeltaSparkHome(jars=jars, python=python if (python / "delta").is_dir() else None)


def available(location: str | os.PathLike[str] | None = None) -> bool:
    try:
        locate(location)
    except DeltaSparkUnavailable:
        return False
    return True


def import_python_api(home: DeltaSparkHome) -> None:
    """Make ``import delta`` (``delta.tables.DeltaTable``, ``delta.exceptions``) work."""
    if home.python is not None and str(home.python) not in sys.path:
        sys.path.insert(0, str(home.python))
    try:
        import delta.tables  # noqa: F401  # lazy: delta-spark's Python package is optional
    except ImportError as error:
        raise DeltaSparkUnavailable(
            f"delta-spark's Python package is not importable ({error}); "
            f"install delta-spark=={RELEASE} or point {ENV} at a directory with python/delta"
        ) from error


def delta_session(
    master: str = "local[2]",
    app_name: str = "deltaspec-deltaspark",
    *,
    location: str | os.PathLike[str] | None = None,
    confs: Mapping[str, str] | None = None,
) -> Any:
    """This process's SparkSession with delta-spark loaded (started once, then reused).

    ``confs`` may name more ``spark.jars`` (the s3a jars of ``deltaspec.spark.s3a.s3_confs``,
    for one): they are added to delta-spark's.

    Raises ``DeltaSparkUnavailable`` when the engine cannot be found, or when a session without
    delta-spark is already running in this process.
    """
    from ....spark.s3a import with_jars  # lazy: pyspark is optional
    from ....spark.session import local_session  # lazy: pyspark is optional

    home = locate(location)
    import_python_api(home)
    extra = dict(confs or {})
    jars = [jar for jar in extra.pop("spark.jars", "").split(",") if jar.strip()]
    settings = with_jars({**LOCAL_CONFS, **home.confs(), **extra}, jars)
    session = local_session(master, app_name, confs=settings)
    if not has_delta(session):
        raise DeltaSparkUnavailable(
            "a SparkSession without delta-spark is already running in this process; "
            "start the delta-spark session first (Spark cannot add jars to a running session)"
        )
    quiet(session)
    return session


def quiet(session: Any) -> None:
    """Silence the engine's own logging of failures: on this session a failure is an outcome
    (a conflict, an error kind, a verdict) and reaches the caller as the exception, with its
    Java stack; Spark would also print each one, stack and all, to the console."""
    session.sparkContext.setLogLevel("OFF")
    try:
        from pyspark.logger import PySparkLogger  # lazy: pyspark is optional
    except ImportError:  # pyspark before 4.0 has no structured query-context loggers
        return
    for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        PySparkLogger.getLogger(name).disabled = True


def has_delta(session: Any) -> bool:
    """Whether ``session`` has delta-spark's classes and SQL extension."""
    extensions = session.conf.get("spark.sql.extensions", "") or ""
    if "io.delta.sql.DeltaSparkSessionExtension" not in extensions:
        return False
    from py4j.java_gateway import JavaClass  # lazy: pyspark is optional

    # spark.jars live in Spark's class loader, which py4j's JVM view searches (Class.forName
    # on the system loader would not see them)
    return isinstance(session._jvm.org.apache.spark.sql.delta.DeltaLog, JavaClass)


def engine_version(session: Any) -> str:
    """The delta-spark version the session runs (``io.delta.VERSION``)."""
    return str(session._jvm.io.delta.package.VERSION())
