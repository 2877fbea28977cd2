"""Jars from Maven Central: a runtime closure resolved by Maven, less what Spark already ships.

Maven resolves the closure (``dependency:copy-dependencies``, which sees the machine's mirror
where Ivy's ``spark.jars.packages`` may not); a jar is kept unless it is scala-library or its
artifactId is already in pyspark's ``jars/`` (Spark's own jackson, hadoop, netty, parquet,
log4j… win, as they would on a cluster). Used by the engines cache (delta-spark releases) and by
the Spark path's s3a jars; it imports nothing of deltaspec."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

__all__ = [
    "ALWAYS_DROPPED",
    "Dependency",
    "MavenError",
    "MavenJar",
    "keep",
    "parse_dependency_list",
    "pom",
    "resolve",
    "shipped_by_spark",
]

ALWAYS_DROPPED = frozenset({"scala-library"})
"""Spark ships its own Scala; a second scala-library on the class path breaks it."""


class MavenError(RuntimeError):
    """``mvn`` failed (``command``, ``code`` and its ``output`` kept) or said what it did not do."""

    def __init__(
        self, message: str, command: Sequence[str] = (), code: int = 0, output: str = ""
    ) -> None:
        super().__init__(message)
        self.command = list(command)
        self.code = code
        self.output = output


@dataclass(frozen=True)
class Dependency:
    """One ``<dependency>`` of the resolving POM; ``exclusions`` are ``group:artifact`` names."""

    group: str
    artifact: str
    version: str
    exclusions: tuple[str, ...] = ()

    def xml(self) -> str:
        excluded = "".join(
            f"<exclusion><groupId>{escape(g)}</groupId><artifactId>{escape(a)}</artifactId>"
            "</exclusion>"
            for g, _, a in (name.partition(":") for name in self.exclusions)
        )
        return (
            f"<dependency><groupId>{escape(self.group)}</groupId>"
            f"<artifactId>{escape(self.artifact)}</artifactId>"
            f"<version>{escape(self.version)}</version>"
            + (f"<exclusions>{excluded}</exclusions>" if excluded else "")
            + "</dependency>"
        )


def pom(name: str, dependencies: Sequence[Dependency]) -> str:
    """A POM whose only content is ``dependencies`` (its own group is ``deltaspec.fetch``)."""
    body = "\n    ".join(d.xml() for d in dependencies)
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>deltaspec.fetch</groupId>
  <artifactId>fetch-{escape(name)}</artifactId>
  <version>1</version>
  <dependencies>
    {body}
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


def resolve(name: str, dependencies: Sequence[Dependency], output: Path) -> list[MavenJar]:
    """Every runtime jar of ``dependencies``, copied into ``output`` by Maven."""
    with tempfile.TemporaryDirectory(prefix="deltaspec-mvn-") as scratch:
        project = Path(scratch)
        (project / "pom.xml").write_text(pom(name, dependencies), encoding="utf-8")
        listing = project / "dependencies.txt"
        command = [
            "mvn", "-q", "-B", "dependency:copy-dependencies", "dependency:list",
            "-DincludeScope=runtime", f"-DoutputDirectory={output}", f"-DoutputFile={listing}",
        ]  # fmt: skip
        try:
            done = subprocess.run(command, cwd=project, capture_output=True, text=True)
        except FileNotFoundError as error:
            raise MavenError(f"no `mvn` on PATH to fetch {name}", command) from error
        if done.returncode != 0:
            raise MavenError(
                f"mvn failed ({done.returncode}) fetching {name}",
                command,
                done.returncode,
                done.stdout + done.stderr,
            )
        jars = parse_dependency_list(listing.read_text(encoding="utf-8"), output)
    missing = [jar.path.name for jar in jars if not jar.path.is_file()]
    if missing:
        raise MavenError(f"Maven listed jars it did not copy: {missing}")
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
