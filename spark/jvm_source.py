"""``format("deltaspec")`` as a JVM data source, so that ``df.write.format("deltaspec")`` takes
every save mode and ``.partitionBy(...)`` as delta-spark's ``format("delta")`` does.

Why a JVM class: PySpark's Python data sources are written through DataSource V2, where Spark
(4.2.1) refuses the default save mode (ErrorIfExists) and ``ignore`` before the source runs
(``UNSUPPORTED_DATA_SOURCE_SAVE_MODE``), and ``.partitionBy`` on a source that cannot declare a
table's partitioning (``IllegalArgumentException: requirement failed: The provided partitioning
or clustering columns do not match the existing table's``, no error class). A JVM
``CreatableRelationProvider`` is written through DataSource V1's ``SaveIntoDataSourceCommand``,
which hands it the save mode, the options (``partitionBy`` as ``__partition_columns``) and the
DataFrame. Spark looks a format name up in the JVM's registered sources first
(``DataSource.lookupDataSource``: a ``DataSourceRegister`` whose ``shortName`` matches; a Python
data source only when none does), and refuses a Python data source named as a JVM one
(``DATA_SOURCE_ALREADY_EXISTS``), so with the class loaded the Python data source is registered
as ``deltaspec_python`` and the JVM class reads through it.

The class (``spark/jvm/DeltaspecSource.java``) hands a write to a Py4J callback
(``datasource._JvmWriter``), which runs :class:`~deltaspec.spark.write.DeltaWriter` on the
driver: the same plan, files and commit as ``DeltaWriter(df).mode(m).partitionBy(...).save``.

The jar is built here from the shipped sources with the JDK's ``javac`` and ``jar`` against the
installed PySpark's jars, once, into ``$DELTASPEC_CACHE/spark-jvm/<sha256>/deltaspec-spark.jar``
(the cache defaulting to ``~/.cache/deltaspec``; the hash covers the sources and the PySpark
version). Without a JDK there is no jar, and ``format("deltaspec")`` is the Python data source
alone (``append``/``overwrite``, ``option("partitionBy", ...)``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, TypeVar

import pyspark
from pyspark.sql import SparkSession

SOURCES = Path(__file__).with_name("jvm")
PROVIDER = "deltaspec.spark.jvm.DeltaspecSource"
SERVICES = "META-INF/services/org.apache.spark.sql.sources.DataSourceRegister"
JAR_NAME = "deltaspec-spark.jar"


class JvmSourceUnavailable(RuntimeError):
    """The JVM data source cannot be built here (no JDK, or javac failed); the message says why."""


def cache_root() -> Path:
    """``$DELTASPEC_CACHE``, else ``~/.cache/deltaspec`` (as the engines cache)."""
    given = os.environ.get("DELTASPEC_CACHE")
    return Path(given) if given else Path.home() / ".cache" / "deltaspec"


def _java_files() -> list[Path]:
    return sorted(SOURCES.glob("*.java"))


def fingerprint() -> str:
    """sha256 of the Java sources and the PySpark version they are compiled against."""
    digest = hashlib.sha256(f"pyspark {pyspark.__version__}\n".encode())
    for path in _java_files():
        digest.update(f"{path.name}\n".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _tool(name: str) -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).is_file():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if found is None:
        raise JvmSourceUnavailable(
            f"no `{name}` (a JDK) on PATH or in $JAVA_HOME/bin: format('deltaspec') is the "
            "Python data source alone (append/overwrite; DeltaWriter takes every save mode)"
        )
    return found


def jar_path() -> Path:
    """The built jar, built first if the cache has none for these sources and this PySpark."""
    target = cache_root() / "spark-jvm" / fingerprint() / JAR_NAME
    if target.is_file():
        return target
    javac, jar = _tool("javac"), _tool("jar")
    classpath = str(Path(pyspark.__file__).parent / "jars" / "*")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        classes = Path(work) / "classes"
        services = classes / SERVICES
        services.parent.mkdir(parents=True)
        services.write_text(PROVIDER + "\n", encoding="utf-8")
        sources = [str(p) for p in _java_files()]
        for command in (
            [javac, "-nowarn", "--release", "17", "-cp", classpath, "-d", str(classes), *sources],
            [jar, "cf", str(Path(work) / JAR_NAME), "-C", str(classes), "."],
        ):
            done = subprocess.run(command, capture_output=True, text=True)
            if done.returncode != 0:
                raise JvmSourceUnavailable(
                    f"building {JAR_NAME} failed: {' '.join(command[:1])}: "
                    + (done.stderr or done.stdout)[-2000:]
                )
        os.replace(Path(work) / JAR_NAME, target)  # atomic: a concurrent build writes the same
    return target


B = TypeVar("B", bound=SparkSession.Builder)


def configure(builder: B) -> B:
    """``builder`` with the JVM data source added to ``spark.jars`` (the jars it names already
    kept); ``session.configure`` documents it. Raises :class:`JvmSourceUnavailable` without a
    JDK."""
    options: Any = getattr(builder, "_options", {})  # the settings the builder holds so far
    jars = [j for j in str(options.get("spark.jars", "")).split(",") if j.strip()]
    jar = str(jar_path())
    if jar not in jars:
        jars.append(jar)
    return builder.config("spark.jars", ",".join(jars))  # type: ignore[return-value]


__all__ = ["JvmSourceUnavailable", "configure", "fingerprint", "jar_path"]
