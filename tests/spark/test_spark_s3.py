"""Spark on S3 through ``s3a://``, against moto's S3 server on loopback (a real OS process) and
live delta-spark (the published PRIMARY_LIVE_RELEASE from the engines cache).

Our Spark path writes a table of several versions on the server (partitioned appends, an
overwrite, a dynamic partition overwrite, a write through ``format("deltaspec")``), each data
file at its final name; delta-spark reads every version. delta-spark writes a table of several
versions on the same server; our impl (``DeltaLog`` over the ``s3://`` URL) and our Spark read
path read every version. The session that holds the s3a jars is started in a spawned process:
Spark cannot add jars to a running session (this worker's may be the ``spark`` fixture's).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
from pyarrow import fs
from support.spawned import reported

from deltaspec.conformance.servers.serving import ObjectStoreServer, serving
from deltaspec.impl import codec
from deltaspec.impl.errors import UnsupportedFeatureError
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.spark import DeltaTable, s3a, s3a_jars, stats
from deltaspec.spark.errors import InvalidOptionError
from deltaspec.spark.object_files import filesystem, object_path

Rows = list[tuple[Any, ...]]

# (how our path writes, the rows): every version of the table our Spark path writes
OUR_WRITES: list[tuple[str, Rows]] = [
    ("append", [(1, "a"), (2, "b")]),
    ("append", [(3, "a"), (4, "c")]),
    ("overwrite", [(5, "b"), (6, "a")]),
    ("append", [(7, None), (8, "x y/z")]),  # the null partition and a value Hive escapes
    ("dynamic", [(9, "b")]),  # replaces partition b only
    ("format", [(10, "c")]),  # df.write.format("deltaspec").mode("append")
]


def expected_versions(writes: list[tuple[str, Rows]]) -> list[Rows]:
    """The rows of the table after each write (the oracle of what our path wrote)."""
    table: Rows = []
    versions = []
    for how, rows in writes:
        if how == "overwrite":
            table = list(rows)
        elif how == "dynamic":
            written = {p for _, p in rows}
            table = [r for r in table if r[1] not in written] + list(rows)
        else:
            table = table + list(rows)
        versions.append(sorted(table, key=repr))
    return versions


def _rows(frame: Any) -> Rows:
    return sorted((tuple(r) for r in frame.collect()), key=repr)


@reported
def interop(  # pragma: no cover - spawned
    options: dict[str, str], ours: str, theirs: str
) -> dict[str, Any]:
    """In a fresh process: one session with delta-spark, the s3a jars and our JVM classes; our
    path writes ``ours`` and delta-spark reads it back; delta-spark writes ``theirs`` and our
    Spark read path reads it back. Returns what each reader saw."""
    from deltaspec.conformance.engines.deltaspark.session import delta_session, engine_version
    from deltaspec.spark import DeltaWriter, read_table

    spark = delta_session(confs=s3a.s3_confs(s3a.S3Endpoint.from_storage_options(options)))
    schema = "id long, p string"
    for how, rows in OUR_WRITES:
        df = spark.createDataFrame(rows, schema)
        if how == "format":
            df.write.format("deltaspec").mode("append").save(ours)
            continue
        writer = DeltaWriter(df).partitionBy("p")
        if how == "dynamic":
            writer = writer.mode("overwrite").option("partitionOverwriteMode", "dynamic")
        else:
            writer = writer.mode(how)
        writer.save(ours)
    delta_read = [
        _rows(spark.read.format("delta").option("versionAsOf", v).load(ours))
        for v in range(len(OUR_WRITES))
    ]
    frame = spark.createDataFrame([(1, "a"), (2, "b"), (3, None)], schema)
    frame.write.format("delta").partitionBy("p").save(theirs)
    spark.createDataFrame([(4, "a")], schema).write.format("delta").mode("append").save(theirs)
    spark.sql(f"DELETE FROM delta.`{theirs}` WHERE id = 2")
    spark.createDataFrame([(5, "c")], schema).write.format("delta").mode("overwrite").save(theirs)
    versions = [spark.read.format("delta").option("versionAsOf", v).load(theirs) for v in range(4)]
    their_rows = [_rows(frame) for frame in versions]
    their_files = [sorted(frame.inputFiles()) for frame in versions]
    our_read = [_rows(read_table(spark, theirs, version=v)) for v in range(len(versions))]
    return {
        "release": engine_version(spark),
        "delta_read": delta_read,
        "their_rows": their_rows,
        "their_files": their_files,
        "our_read": our_read,
    }


@pytest.fixture(scope="module")
def server() -> Iterator[ObjectStoreServer]:
    with serving("s3") as running:
        yield running


@pytest.mark.spark
def test_delta_spark_and_our_spark_path_read_each_others_s3_tables(
    server: ObjectStoreServer,
) -> None:
    s3a_jars.s3a_jars()  # fetched here, once, rather than in the child under its timeout
    ours = server.table_url("ours").replace("s3://", "s3a://")
    theirs = server.table_url("theirs").replace("s3://", "s3a://")
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        seen = pool.apply(interop, (server.options, ours, theirs))

    assert seen["delta_read"] == expected_versions(OUR_WRITES), seen["release"]
    # our table: every file at its final name, nothing staged, nothing left over
    log = DeltaLog(ours.replace("s3a://", "s3://"), storage_options=server.options)
    latest = log.snapshot()
    assert latest.version == len(OUR_WRITES) - 1
    # statistics from the footers read in the bucket
    counted = [stats.num_records(a.stats) for a in latest.files.values()]
    assert sum(c or 0 for c in counted) == len(expected_versions(OUR_WRITES)[-1]) and all(counted)
    assert all('"minValues":{"id":' in (a.stats or "") for a in latest.files.values())
    listed = filesystem(server.options).get_file_info(
        fs.FileSelector(object_path(ours, ""), recursive=True)
    )
    data = {i.path.split("/", 2)[2] for i in listed if i.type == fs.FileType.File}
    data = {name for name in data if not name.startswith("_delta_log/")}
    every_add = {
        codec.decode_path(a.path)
        for v in range(latest.version + 1)
        for a in log.snapshot(v).files.values()
    }
    assert data == every_add  # no _delta_staging, no _temporary, no _SUCCESS, nothing orphaned

    # delta-spark's table, version by version: the same files through our log, the same rows
    # through our Spark read path
    log = DeltaLog(theirs.replace("s3a://", "s3://"), storage_options=server.options)
    for version, (rows, files, our_rows) in enumerate(
        zip(seen["their_rows"], seen["their_files"], seen["our_read"], strict=True)
    ):
        snapshot = log.snapshot(version)
        ours_listed = sorted(
            f"{theirs}/{codec.decode_path(a.path)}" for a in snapshot.files.values()
        )
        assert ours_listed == sorted(unquote(f) for f in files), version
        assert our_rows == rows, version
        assert sum(stats.num_records(a.stats) or 0 for a in snapshot.files.values()) == len(rows)


def test_endpoint_settings_reach_the_same_service() -> None:
    endpoint = s3a.S3Endpoint("http://127.0.0.1:9000", "key", "secret", "eu-west-1")
    confs = endpoint.hadoop_confs()
    assert confs["spark.hadoop.fs.s3a.endpoint"] == "http://127.0.0.1:9000"
    assert confs["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "false"
    assert confs["spark.hadoop.fs.s3a.path.style.access"] == "true"
    options = endpoint.storage_options()
    assert options["allow_http"] == "true" and options["region"] == "eu-west-1"
    assert s3a.S3Endpoint.from_storage_options(options) == endpoint
    secure = s3a.S3Endpoint("https://s3.example.com", "k", "s", path_style=False)
    assert "allow_http" not in secure.storage_options()
    assert secure.hadoop_confs()["spark.hadoop.fs.s3a.connection.ssl.enabled"] == "true"


@pytest.mark.parametrize("endpoint", ["127.0.0.1:9000", "ftp://host", "http://"])
def test_an_endpoint_is_an_http_url(endpoint: str) -> None:
    with pytest.raises(InvalidOptionError, match="http"):
        s3a.S3Endpoint(endpoint, "k", "s")


def test_storage_options_without_credentials_are_refused() -> None:
    with pytest.raises(InvalidOptionError, match="access_key_id"):
        s3a.S3Endpoint.from_storage_options({"endpoint": "http://127.0.0.1:1"})


def test_the_s3a_jars_are_added_to_the_jars_already_named() -> None:
    merged = s3a.with_jars({"spark.jars": "/a.jar,/b.jar", "x": "1"}, ["/b.jar", "/c.jar"])
    assert merged == {"spark.jars": "/a.jar,/b.jar,/c.jar", "x": "1"}


def test_hadoop_aws_comes_without_the_sdk_bundle() -> None:
    hadoop = s3a_jars.hadoop_version()
    aws, *sdk = s3a_jars.dependencies(hadoop)
    assert (aws.artifact, aws.version) == ("hadoop-aws", hadoop)
    assert aws.exclusions == ("software.amazon.awssdk:bundle",)
    assert {d.artifact for d in sdk} == {"s3", "s3-transfer-manager"}
    with pytest.raises(s3a_jars.S3aJarsUnavailable, match=r"no s3a jars pinned for Hadoop 2\.7\.1"):
        s3a_jars.dependencies("2.7.1")


def test_jars_other_than_the_pinned_ones_are_found(tmp_path: Path) -> None:
    pinned = dict(s3a_jars.pins(s3a_jars.hadoop_version())["jars"])
    assert len(pinned) == 37 and any(n.startswith("hadoop-aws-") for n in pinned)
    first, second, *_ = sorted(pinned)
    (tmp_path / first).write_bytes(b"not the jar")
    (tmp_path / "extra-1.0.jar").write_bytes(b"")
    wrong = s3a_jars.mismatches(tmp_path, {first: pinned[first], second: pinned[second]})
    assert wrong[:2] == ["unpinned extra-1.0.jar", f"missing {second}"]
    assert wrong[2].startswith(f"{first}: sha256 ") and len(wrong) == 3


def test_the_spark_path_refuses_object_stores_other_than_s3() -> None:
    with pytest.raises(UnsupportedFeatureError, match="s3a://"):
        s3a.table_location(None, "az://container/table")  # type: ignore[arg-type]


@pytest.mark.parametrize("url", ["s3a://bucket/t", "s3://bucket/t", "az://container/t"])
def test_what_takes_local_tables_only_refuses_a_url_typed(url: str) -> None:
    """DML, OPTIMIZE, RESTORE, DeltaTable…: a URL is refused, not read as a relative path."""
    with pytest.raises(UnsupportedFeatureError, match="local tables only"):
        s3a.local_root(url, "DML")
    with pytest.raises(UnsupportedFeatureError, match="DeltaTable"):
        DeltaTable.forPath(None, url)  # type: ignore[arg-type]
