"""The delta jars of a release from Maven Central, less what Spark already ships
(:mod:`deltaspec.maven`: Maven's runtime closure, scala-library and Spark's own artifacts
dropped); Maven's failures as the engines' errors."""

from __future__ import annotations

from pathlib import Path

from deltaspec import maven
from deltaspec.maven import ALWAYS_DROPPED, MavenJar, keep, parse_dependency_list, shipped_by_spark

from .errors import CommandFailed, UnexpectedOutput
from .pins import EnginePin

__all__ = [
    "ALWAYS_DROPPED",
    "MavenJar",
    "keep",
    "parse_dependency_list",
    "resolve",
    "shipped_by_spark",
]


def resolve(pin: EnginePin, output: Path) -> list[MavenJar]:
    """Every runtime jar of the release's artifact, copied into ``output`` by Maven."""
    artifact = maven.Dependency(pin.group, pin.artifact, pin.maven_version)
    try:
        return maven.resolve(pin.artifact, [artifact], output)
    except maven.MavenError as error:
        if error.command and error.code:
            raise CommandFailed(error.command, error.code, error.output) from error
        raise UnexpectedOutput(str(error)) from error
