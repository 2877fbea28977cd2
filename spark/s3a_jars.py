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
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from pathlib import Path

import pyspark

from deltaspec import maven

from .jvm_source import cache_root

AWS_SDK_FOR_HADOOP = {"3.5.0": "2.35.4"}
"""The AWS SDK v2 each Hadoop release is built with (``aws-java-sdk-v2.version`` in its
hadoop-project POM)."""
SDK_MODULES = ("s3", "s3-transfer-manager")
COMPLETE = ".complete"
"""Written last into a jars folder: its content is whole (the names of its jars, one a line)."""


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


def dependencies(hadoop: str) -> list[maven.Dependency]:
    """hadoop-aws without the SDK bundle, and the SDK modules S3A loads."""
    sdk = AWS_SDK_FOR_HADOOP.get(hadoop)
    if sdk is None:
        raise S3aJarsUnavailable(
            f"no AWS SDK version known for Hadoop {hadoop} (known: "
            f"{', '.join(sorted(AWS_SDK_FOR_HADOOP))}); add hadoop-project's "
            "aws-java-sdk-v2.version for it to AWS_SDK_FOR_HADOOP"
        )
    aws = maven.Dependency(
        "org.apache.hadoop", "hadoop-aws", hadoop, ("software.amazon.awssdk:bundle",)
    )
    return [aws, *(maven.Dependency("software.amazon.awssdk", m, sdk) for m in SDK_MODULES)]


def jars_dir(hadoop: str) -> Path:
    return cache_root() / "jars" / f"hadoop-aws-{hadoop}"


def _complete(folder: Path) -> list[Path] | None:
    marker = folder / COMPLETE
    if not marker.is_file():
        return None
    jars = [folder / name for name in marker.read_text(encoding="utf-8").split()]
    return jars if all(jar.is_file() for jar in jars) else None


def s3a_jars() -> list[Path]:
    """The s3a jars for the installed PySpark, fetched first when the cache has none."""
    hadoop = hadoop_version()
    target = jars_dir(hadoop)
    found = _complete(target)
    if found is not None:
        return found
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f".{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one fetch when several processes start at once
        found = _complete(target)
        if found is not None:
            return found
        with tempfile.TemporaryDirectory(prefix=".fetch-", dir=target.parent) as scratch:
            try:
                resolved = maven.resolve(
                    f"hadoop-aws-{hadoop}", dependencies(hadoop), Path(scratch) / "jars"
                )
            except maven.MavenError as error:
                raise S3aJarsUnavailable(f"{error}\n{error.output[-2000:]}") from error
            kept = sorted(jar.path.name for jar in maven.keep(resolved, spark_jars_dir()))
            staged = Path(scratch) / "jars"
            for extra in set(os.listdir(staged)) - set(kept):
                os.remove(staged / extra)
            (staged / COMPLETE).write_text("\n".join(kept) + "\n", encoding="utf-8")
            if target.exists():
                shutil.rmtree(target)
            staged.rename(target)
    found = _complete(target)
    assert found is not None
    return found


__all__ = ["S3aJarsUnavailable", "dependencies", "hadoop_version", "s3a_jars"]
