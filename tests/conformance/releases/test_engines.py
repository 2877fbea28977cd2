"""The pinned live delta-spark engines (conformance/releases): engines.json is consistent with the
releases the spec knows, ``deltaspark@X.Y.Z`` resolves to the spec-only bridge in that release's
own venv (judged as that release), and fetching fails with typed errors. No network here."""

from __future__ import annotations

import hashlib
import json
import re
from importlib import resources
from pathlib import Path

import pytest

from deltaspec.cli import build_parser, main
from deltaspec.cli import conformance as conformance_cli
from deltaspec.conformance import corpus_run
from deltaspec.conformance.engines.registry import (
    UnknownAdapter,
    bridge_command,
    release_profile,
)
from deltaspec.conformance.harness import verdicts
from deltaspec.conformance.releases import cache, jars, pins
from deltaspec.conformance.releases.errors import (
    ChecksumMismatch,
    EngineNotFetched,
    NotRunnable,
)
from deltaspec.conformance.releases.fetch import Status, fetch
from deltaspec.conformance.releases.pins import EnginePin, Pins, PythonDist, load_pins, write_pins

PINS = load_pins()
SHA256 = re.compile(r"^[0-9a-f]{64}$")


def _release_lines() -> set[tuple[int, int]]:
    data = resources.files("deltaspec.spec") / "data" / "releases.json"
    releases = json.loads(data.read_text(encoding="utf-8"))["releases"]
    lines = {(int(r.split(".")[0]), int(r.split(".")[1])) for r in releases}
    return {line for line in lines if (2, 1) <= line <= (4, 4)}


def test_every_release_line_from_2_1_to_4_4_has_one_pinned_engine():
    pinned = [(int(e.release.split(".")[0]), int(e.release.split(".")[1])) for e in PINS.engines]
    assert sorted(pinned) == sorted(_release_lines())


@pytest.mark.parametrize("engine", PINS.engines, ids=lambda e: e.release)
def test_engine_pin_is_consistent(engine: EnginePin):
    group, artifact, version = engine.maven.split(":")
    assert (group, version) == ("io.delta", engine.release)
    assert artifact.rsplit("_", 1) == [artifact.rsplit("_", 1)[0], engine.scala]
    assert engine.scala == {"3": "2.12", "4": "2.13"}[engine.pyspark.version.split(".")[0]]
    assert engine.pyspark.version.split(".")[:2] == engine.spark.split(".")[:2]
    assert engine.java == 17
    assert engine.py4j is not None
    for dist in (engine.pyspark, engine.py4j):
        assert SHA256.match(dist.sha256), f"{dist.name} of {engine.release} is not pinned"
        assert dist.file.startswith(f"{dist.name}-{dist.version}")
    assert f"{artifact}-{version}.jar" in engine.jar_sha256
    assert all(SHA256.match(sha) for _, sha in engine.jars)
    assert not any(name.startswith("scala-library") for name in engine.jar_sha256)
    assert engine.runs or engine.why_not


def test_engines_json_is_written_back_unchanged(tmp_path):
    copy = tmp_path / "engines.json"
    write_pins(PINS, copy)
    assert copy.read_text(encoding="utf-8") == pins.ENGINES_JSON.read_text(encoding="utf-8")
    assert load_pins(copy) == PINS


def test_requirement_line_pins_the_hash():
    dist = PythonDist("pyspark", "3.5.7", "pyspark-3.5.7.tar.gz", "ab" * 32)
    assert dist.requirement() == f"pyspark==3.5.7 --hash=sha256:{'ab' * 32}"


# --- the registry: deltaspark@X.Y.Z ------------------------------------------------------------


def _fake_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EnginePin:
    """A pinned release 9.9.0 whose jars (small files) and venv are in a cache at tmp_path."""
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv(cache.CACHE_ENV, str(cache_dir))
    jar_dir = cache_dir / "delta-spark" / "9.9.0" / "jars"
    jar_dir.mkdir(parents=True)
    jar = jar_dir / "delta-spark_2.13-9.9.0.jar"
    jar.write_bytes(b"not really a jar")
    venv = cache_dir / "pyspark" / "4.2.1"
    (venv / "lib" / "python3.11" / "site-packages" / "pyspark" / "jars").mkdir(parents=True)
    (venv / "bin").mkdir()
    (venv / "bin" / "python").write_text("")
    engine = EnginePin(
        release="9.9.0",
        maven="io.delta:delta-spark_2.13:9.9.0",
        scala="2.13",
        spark="4.2.0",
        java=17,
        pyspark=PythonDist("pyspark", "4.2.1"),
        jars=((jar.name, hashlib.sha256(jar.read_bytes()).hexdigest()),),
    )
    engines_json = tmp_path / "engines.json"
    write_pins(Pins((engine,)), engines_json)
    monkeypatch.setattr(pins, "ENGINES_JSON", engines_json)
    return engine


def test_pinned_release_runs_the_bridge_in_its_own_venv(tmp_path, monkeypatch):
    _fake_engine(tmp_path, monkeypatch)
    home = tmp_path / "cache" / "delta-spark" / "9.9.0"
    python = tmp_path / "cache" / "pyspark" / "4.2.1" / "bin" / "python"
    assert bridge_command("deltaspark@9.9.0") == [
        str(python),
        str(Path(__file__).resolve().parents[3] / "conformance/engines/deltaspark/bridge.py"),
        "--delta-spark",
        str(home),
    ]
    assert cache.BRIDGE.is_file()


def test_adapter_names_map_to_bridges_and_profiles():
    assert bridge_command("cmd:prog --flag") == "prog --flag"
    assert bridge_command("deltaspark") is None
    assert bridge_command("impl") is None
    assert release_profile("deltaspark@3.3.2") == "3.3.2"
    assert release_profile("deltaspark") is None
    assert release_profile("cmd:deltaspark@3.3.2") is None


def test_unknown_release_lists_the_pinned_ones():
    with pytest.raises(UnknownAdapter) as raised:
        bridge_command("deltaspark@9.8.7")
    assert "deltaspark@3.3.2" in str(raised.value)
    assert "deltaspark@4.4.0" in str(raised.value)


def test_unfetched_release_says_how_to_fetch_it(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    with pytest.raises(EngineNotFetched) as raised:
        bridge_command("deltaspark@3.3.2")
    assert "deltaspec engines fetch 3.3.2" in str(raised.value)
    assert isinstance(raised.value, OSError)  # the CLI's set-up errors (exit 2) catch it


def test_fetched_jars_but_no_venv_is_not_fetched(tmp_path, monkeypatch):
    _fake_engine(tmp_path, monkeypatch)
    (tmp_path / "cache" / "pyspark" / "4.2.1" / "bin" / "python").unlink()
    with pytest.raises(EngineNotFetched, match=r"pyspark/4\.2\.1"):
        bridge_command("deltaspark@9.9.0")


def test_a_changed_jar_is_a_checksum_mismatch(tmp_path, monkeypatch):
    engine = _fake_engine(tmp_path, monkeypatch)
    jar = tmp_path / "cache" / "delta-spark" / "9.9.0" / "jars" / "delta-spark_2.13-9.9.0.jar"
    jar.write_bytes(b"tampered")
    with pytest.raises(ChecksumMismatch) as raised:
        bridge_command("deltaspark@9.9.0")
    error = raised.value
    assert (error.path, error.expected) == (jar, engine.jars[0][1])
    assert error.got == hashlib.sha256(b"tampered").hexdigest()
    assert str(jar) in str(error) and error.expected in str(error) and error.got in str(error)


def test_checksum_mismatch_names_file_expected_and_got(tmp_path):
    small = tmp_path / "small.bin"
    small.write_bytes(b"abc")
    cache.verify_sha256(small, hashlib.sha256(b"abc").hexdigest())
    with pytest.raises(ChecksumMismatch, match=r"small\.bin") as raised:
        cache.verify_sha256(small, "0" * 64)
    assert raised.value.expected == "0" * 64
    assert raised.value.got == hashlib.sha256(b"abc").hexdigest()


def test_release_pinned_as_not_running_is_refused_and_not_fetched(tmp_path, monkeypatch):
    engine = _fake_engine(tmp_path, monkeypatch)
    stopped = EnginePin(**{**engine.__dict__, "runs": False, "why_not": "measured: no"})
    write_pins(Pins((stopped,)), pins.ENGINES_JSON)
    with pytest.raises(NotRunnable, match="measured: no"):
        bridge_command("deltaspark@9.9.0")
    result = fetch(stopped)
    assert (result.status, result.detail) == (Status.NOT_RUNNABLE, "measured: no")


def test_conformance_judges_deltaspark_at_release_with_that_profile(monkeypatch):
    seen = []

    def run_suites(adapter, chosen, corpus, options):
        seen.append(options.gate.profile)

    monkeypatch.setattr(corpus_run, "run_suites", run_suites)  # the command imports it when run
    for argv, profile in [
        (["--adapter", "deltaspark@3.3.2"], "3.3.2"),
        (["--adapter", "deltaspark@3.3.2", "--profile", "3.2.0"], "3.2.0"),
        (["--adapter", "deltaspark"], None),
    ]:
        args = build_parser().parse_args(["conformance", "--suite", "scenarios", *argv])
        conformance_cli._run_or_explain(args, ["scenarios"])
        assert seen.pop() == profile


def test_a_pinned_release_takes_the_known_issues_whose_releases_cover_it(tmp_path, monkeypatch):
    """One list per engine: an entry names the releases it was measured on; one without them
    belongs to the in-process engine's release (4.4.0)."""
    monkeypatch.setattr(verdicts, "KNOWN_ISSUES", tmp_path)
    assert verdicts.load_known_issues("deltaspark@3.3.2") == {}
    old = {"scenario": "old", "verdict": "wrong", "reason": "r", "releases": "v3.0.0–v3.2.x"}
    both = {"scenario": "both", "verdict": "wrong", "reason": "r", "releases": "v3.1.0+"}
    primary = {"scenario": "primary", "verdict": "wrong", "reason": "r"}
    (tmp_path / "deltaspark.json").write_text(json.dumps([old, both, primary]))
    assert sorted(verdicts.load_known_issues("deltaspark@3.1.0")) == ["both", "old"]
    assert sorted(verdicts.load_known_issues("deltaspark@3.3.2")) == ["both"]
    assert sorted(verdicts.load_known_issues("deltaspark")) == ["both", "primary"]
    assert sorted(verdicts.load_known_issues("deltaspark@4.4.0")) == ["both", "primary"]


# --- jars: Maven's closure less what Spark ships -----------------------------------------------


def test_dependency_list_is_parsed_into_jar_files(tmp_path):
    listing = """
The following files have been resolved:
   io.delta:delta-spark_2.13:jar:4.4.0:compile
   com.github.luben:zstd-jni:jar:1.5.7-3:compile -- module com.github.luben.zstd_jni
   org.example:native:jar:linux-x86_64:1.0:runtime
   org.example:parent:pom:1.0:compile
"""
    parsed = jars.parse_dependency_list(listing, tmp_path)
    assert [(j.group, j.artifact, j.version, j.path.name) for j in parsed] == [
        ("io.delta", "delta-spark_2.13", "4.4.0", "delta-spark_2.13-4.4.0.jar"),
        ("com.github.luben", "zstd-jni", "1.5.7-3", "zstd-jni-1.5.7-3.jar"),
        ("org.example", "native", "1.0", "native-1.0-linux-x86_64.jar"),
    ]


def test_jar_filter_keeps_delta_and_what_spark_lacks(tmp_path):
    spark_jars = tmp_path / "pyspark" / "jars"
    spark_jars.mkdir(parents=True)
    for name in ["jackson-core-2.15.2.jar", "hadoop-client-api-3.3.4.jar",
                 "log4j-api-2.20.0.jar", "antlr4-runtime-4.13.1.jar",
                 "jackson-core-asl-1.9.13.jar"]:  # fmt: skip
        (spark_jars / name).write_text("")

    def jar(group: str, artifact: str, version: str) -> jars.MavenJar:
        return jars.MavenJar(group, artifact, version, tmp_path / f"{artifact}-{version}.jar")

    resolved = [
        jar("io.delta", "delta-spark_2.13", "4.4.0"),
        jar("io.delta", "delta-storage", "4.4.0"),
        jar("org.scala-lang", "scala-library", "2.13.17"),
        jar("com.fasterxml.jackson.core", "jackson-core", "2.13.5"),
        jar("org.apache.hadoop", "hadoop-client-api", "3.4.2"),
        jar("org.apache.logging.log4j", "log4j-api", "2.25.3"),
        jar("org.antlr", "antlr4-runtime", "4.9.3"),
        jar("io.unitycatalog", "unitycatalog-client", "0.6.0"),
    ]
    kept = [j.artifact for j in jars.keep(resolved, spark_jars)]
    assert kept == ["delta-spark_2.13", "delta-storage", "unitycatalog-client"]


# --- the command -------------------------------------------------------------------------------


def test_engines_list_shows_unfetched_releases(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    assert main(["engines", "list"]) == 0
    out = capsys.readouterr().out
    assert out.count("not fetched") == len(PINS.engines)
    assert str(tmp_path / "delta-spark" / "4.4.0" / "jars") in out


def test_engines_fetch_of_an_unknown_release_is_a_usage_error(capsys):
    assert main(["engines", "fetch", "9.8.7"]) == 2
    assert "9.8.7 is not pinned" in capsys.readouterr().err


def test_the_default_live_engine_is_the_published_primary_release() -> None:
    """Item 6 of issue 30: the in-process engine is published delta-spark PRIMARY_LIVE_RELEASE
    from the cache, with its Python package pinned, on the pyspark the dev extra pins for it."""
    import tomllib

    from deltaspec.conformance.engines.deltaspark import session as deltaspark_session
    from deltaspec.rules import PRIMARY_LIVE_RELEASE

    pin = load_pins().by_release[PRIMARY_LIVE_RELEASE]
    assert cache.engine_dir(PRIMARY_LIVE_RELEASE) == deltaspark_session.DEFAULT_LOCATION
    assert pin.python_api is not None and len(pin.python_api.sha256) == 64
    assert pin.python_api.file == f"delta_spark-{PRIMARY_LIVE_RELEASE}-py3-none-any.whl"
    project = tomllib.loads(
        (Path(__file__).resolve().parents[3] / "pyproject.toml").read_text(encoding="utf-8")
    )
    dev = project["project"]["optional-dependencies"]["dev"]
    assert f"pyspark=={pin.pyspark.version}" in dev


def test_an_unpacked_python_package_is_reused_only_for_its_pinned_wheel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deltaspec.conformance.releases import python_api

    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    dist = PythonDist("delta-spark", "9.9.9", python_api.wheel_name("9.9.9"), "a" * 64)
    assert not python_api.unpacked("9.9.9", dist)
    stamp = cache.engine_dir("9.9.9") / "python" / python_api.STAMP
    stamp.parent.mkdir(parents=True)
    stamp.write_text("a" * 64 + "\n")
    assert python_api.unpacked("9.9.9", dist)
    assert not python_api.unpacked("9.9.9", PythonDist("delta-spark", "9.9.9", "", "b" * 64))
