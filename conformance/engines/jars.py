"""The delta jars of a release from Maven Central, less what Spark already ships.

Maven resolves the artifact's runtime closure (``dependency:copy-dependencies``, which sees the
machine's mirror where Ivy's ``spark.jars.packages`` may not); a jar is kept unless it is
scala-library or its artifactId is already in pyspark's ``jars/`` (Spark's own jackson, hadoop,
parquet, log4j, antlr… win, as they would on a cluster)."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from .errors import CommandFailed, UnexpectedOutput
from .pins import EnginePin

ALWAYS_DROPPED = frozenset({"scala-library"})
"""Spark ships its own Scala; a second scala-library on the class path breaks it."""

POM = """<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>deltaspec.engines</groupId>
  <artifactId>fetch-{artifact}</artifactId>
  <version>{version}</version>
  <dependencies>
    <dependency>
      <groupId>{group}</groupId>
      <artifactId>{artifact}</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
</project>
"""


@dataclass(frozen=True)
class MavenJar:
    """One resolved jar: its coordinate and the file copy-dependencies wrote."""

    group: str
    artifact: str
    version: str
    path: Path


def parse_dependency_list(text: str, directory: Path) -> list[MavenJar]:
    """The jars of ``mvn dependency:list`` output (``group:artifact:type[:classifier]:version:
    scope`` lines), each at ``directory/<artifact>-<version>[-<classifier>].jar``."""
    jars = []
    for line in text.splitlines():
        fields = line.strip().split(" ")[0].split(":")
        if len(fields) not in (5, 6) or fields[2] != "jar":
            continue
        group, artifact, version = fields[0], fields[1], fields[-2]
        classifier = f"-{fields[3]}" if len(fields) == 6 else ""
        jars.append(MavenJar(group, artifact, version, directory / f"{artifact}-{version}"
                             f"{classifier}.jar"))  # fmt: skip
    return jars


def resolve(pin: EnginePin, output: Path) -> list[MavenJar]:
    """Every runtime jar of the release's artifact, copied into ``output`` by Maven."""
    with tempfile.TemporaryDirectory(prefix="deltaspec-mvn-") as scratch:
        project = Path(scratch)
        (project / "pom.xml").write_text(
            POM.format(group=pin.group, artifact=pin.artifact, version=pin.maven_version),
            encoding="utf-8",
        )
        listing = project / "dependencies.txt"
        command = [
            "mvn", "-q", "-B", "dependency:copy-dependencies", "dependency:list",
            "-DincludeScope=runtime", f"-DoutputDirectory={output}", f"-DoutputFile={listing}",
        ]  # fmt: skip
        done = subprocess.run(command, cwd=project, capture_output=True, text=True)
        if done.returncode != 0:
            raise CommandFailed(command, done.returncode, done.stdout + done.stderr)
        jars = parse_dependency_list(listing.read_text(encoding="utf-8"), output)
    missing = [jar.path.name for jar in jars if not jar.path.is_file()]
    if missing:
        raise UnexpectedOutput(f"Maven listed jars it did not copy: {missing}")
    return jars


def shipped_by_spark(artifact: str, spark_jars: Iterable[str]) -> bool:
    """Whether a jar named ``<artifact>-<version>….jar`` is among Spark's own jars."""
    prefix = f"{artifact}-"
    return any(name.startswith(prefix) and name[len(prefix) : len(prefix) + 1].isdigit()
               for name in spark_jars)  # fmt: skip


def keep(jars: Iterable[MavenJar], spark_jars_dir: Path) -> list[MavenJar]:
    """The jars Spark lacks: not scala-library and no artifactId Spark's ``jars/`` holds."""
    shipped = [jar.name for jar in spark_jars_dir.glob("*.jar")]
    return [
        jar
        for jar in jars
        if jar.artifact not in ALWAYS_DROPPED and not shipped_by_spark(jar.artifact, shipped)
    ]
