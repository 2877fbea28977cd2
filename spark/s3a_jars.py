"""The jars Spark needs to reach S3 through ``s3a://``: hadoop-aws of the installed PySpark's
Hadoop and the AWS SDK v2 modules it loads, fetched by Maven on first use into
``$DELTASPEC_CACHE/jars/hadoop-aws-<hadoop>/`` (the cache defaulting to ``~/.cache/deltaspec``,
outside the clone) and reused after.

hadoop-aws declares the SDK as ``software.amazon.awssdk:bundle``, one shaded jar of every AWS
service (over 600 MB). It is excluded; the individual modules S3A loads take its place, at the
version Hadoop was built with: ``s3`` (with its ``apache-client`` and ``netty-nio-client`` HTTP
clients, ``sts``-free auth, regions, checksums…) and ``s3-transfer-manager``. hadoop-aws's own
``analyticsaccelerator-s3`` is loaded when S3AFileSystem starts (without it:
``NoClassDefFoundError: software/amazon/s3/analyticsaccelerator/request/ObjectClient``). What
PySpark ships already (netty, httpclient, commons-codec, slf4j) is dropped, as for the delta
jars: 37 jars, 13 MB for Hadoop 3.5.0.

``s3a_jars.json`` pins, per Hadoop version, the SDK version Hadoop was built with
(``aws-java-sdk-v2.version`` in its hadoop-project POM) and the sha256 of every jar kept: a fetch
that leaves another set of jars, or a jar that differs, is refused, and so is a cached jar that
no longer matches. Re-pin by fetching into an empty cache and hashing what Maven left.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyspark

from deltaspec import maven

from .jvm_source import cache_root

PINS = Path(__file__).with_name("s3a_jars.json")
SDK_MODULES = ("s3", "s3-transfer-manager")


class S3aJarsUnavailable(RuntimeError):
    """The s3a jars cannot be had here (unknown Hadoop version, no Maven, a failed fetch)."""


def spark_jars_dir() -> Path:
    return Path(pyspark.__file__).parent / "jars"


def hadoop_version(jars_dir: Path | None = None) -> str:
    """The Hadoop version PySpark ships (``hadoop-client-api-<version>.jar``)."""
    found = sorted((jars_dir or spark_jars_dir()).glob("hadoop-client-api-*.jar"))
    if not found:
        raise S3aJarsUnavailable(f"no hadoop-client-api jar in {jars_dir or spark_jars_dir()}")
    return found[0].name.removeprefix("hadoop-client-api-").removesuffix(".jar")


def pins(hadoop: str) -> Mapping[str, Any]:
    """The pinned SDK version and jar checksums of ``hadoop`` (``s3a_jars.json``)."""
    pinned: dict[str, Any] = json.loads(PINS.read_text(encoding="utf-8"))
    if hadoop not in pinned:
        raise S3aJarsUnavailable(
            f"no s3a jars pinned for Hadoop {hadoop} (pinned: {', '.join(sorted(pinned))}); "
            f"add its aws_sdk and jar checksums to {PINS.name}"
        )
    return pinned[hadoop]  # type: ignore[no-any-return]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def mismatches(folder: Path, pinned: Mapping[str, str]) -> list[str]:
    """How the jars in ``folder`` differ from ``pinned`` (names to sha256); empty: they match."""
    present = {p.name for p in folder.glob("*.jar")}
    found = [f"unpinned {name}" for name in sorted(present - set(pinned))]
    found += [f"missing {name}" for name in sorted(set(pinned) - present)]
    found += [
        f"{name}: sha256 {_sha256(folder / name)}, pinned {digest}"
        for name, digest in sorted(pinned.items())
        if name in present and _sha256(folder / name) != digest
    ]
    return found


def dependencies(hadoop: str) -> list[maven.Dependency]:
    """hadoop-aws without the SDK bundle, and the SDK modules S3A loads."""
    sdk = str(pins(hadoop)["aws_sdk"])
    aws = maven.Dependency(
        "org.apache.hadoop", "hadoop-aws", hadoop, ("software.amazon.awssdk:bundle",)
    )
    return [aws, *(maven.Dependency("software.amazon.awssdk", m, sdk) for m in SDK_MODULES)]


def jars_dir(hadoop: str) -> Path:
    return cache_root() / "jars" / f"hadoop-aws-{hadoop}"


def s3a_jars() -> list[Path]:
    """The s3a jars for the installed PySpark, fetched first when the cache has none; each
    checked against its pinned sha256."""
    hadoop = hadoop_version()
    pinned: Mapping[str, str] = pins(hadoop)["jars"]
    target = jars_dir(hadoop)
    if target.is_dir():
        wrong = mismatches(target, pinned)
        if not wrong:
            return [target / name for name in sorted(pinned)]
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one fetch when several processes start at once
        if not (target.is_dir() and not mismatches(target, pinned)):
            _fetch(hadoop, target, pinned)
    return [target / name for name in sorted(pinned)]


def _fetch(hadoop: str, target: Path, pinned: Mapping[str, str]) -> None:
    """Resolve with Maven into a scratch folder beside ``target``, keep what Spark lacks, check
    it against the pins, and only then put it in place."""
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=target.parent) as scratch:
        staged = Path(scratch) / "jars"
        try:
            resolved = maven.resolve(f"hadoop-aws-{hadoop}", dependencies(hadoop), staged)
        except maven.MavenError as error:
            raise S3aJarsUnavailable(f"{error}\n{error.output[-2000:]}") from error
        kept = {jar.path.name for jar in maven.keep(resolved, spark_jars_dir())}
        for extra in set(os.listdir(staged)) - kept:
            os.remove(staged / extra)
        wrong = mismatches(staged, pinned)
        if wrong:
            raise S3aJarsUnavailable(
                f"the s3a jars Maven fetched for Hadoop {hadoop} are not the pinned ones: "
                + "; ".join(wrong)
            )
        if target.exists():
            shutil.rmtree(target)
        staged.rename(target)


__all__ = ["S3aJarsUnavailable", "dependencies", "hadoop_version", "mismatches", "pins", "s3a_jars"]
