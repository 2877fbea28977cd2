"""conformance/bridge/examples/java: a bridge to delta-kernel-java 4.4.0 written from spec/ alone.
build.sh builds it with Maven into the cache (outside the clone) once per version of its sources;
the harness then judges it on every log vector and every fixture like any other reader. Every
vector it does not pass is listed, with its reason, in known_issues/delta-kernel-java.json, and
the verdicts below are the ones measured (2026-11-29): a vector that newly fails, or newly passes,
fails this test. About 30 s on a warm cache (the first build downloads kernel and Hadoop from
Maven Central: about a minute more)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from support.bridges import not_passing, on_file, run_suite

REPO = Path(__file__).resolve().parents[2]
BRIDGE = REPO / "conformance" / "bridge" / "examples" / "java"
KNOWN = REPO / "conformance" / "harness" / "known_issues" / "delta-kernel-java.json"
NO_TOOLCHAIN = "the delta-kernel-java bridge needs java (17+) and mvn on PATH to build"

# The cases that do not pass, and how they are reported (the report's label); all others pass.
LOGS_NOT_PASSING = {
    "action/line-format/blank-lines-and-no-final-newline": "known",
    "action/line-format/two-actions-on-one-line": "spec stricter",
    "checkpoint/read/cleanup-left-a-commit-below": "known",
    "log/contiguity/hole-after-start": "known",
    "log/listing/versioned-files-that-are-not-commits": "known",
    "retention/verified-checkpoint/cleanup-passes-over-torn-checkpoint": "known",
    "retention/verified-checkpoint/empty-checkpoint-deletes-nothing": "known",
    "retention/verified-checkpoint/torn-only-checkpoint-deletes-nothing": "known",
    "snapshot/canonical-path/relative-spellings": "unsafe",
    "snapshot/data-path/inner-parent-segment": "spec stricter",
    "snapshot/data-path/inside-delta-log": "spec stricter",
    "snapshot/data-path/parent-segment": "spec stricter",
    "snapshot/relist/cleanup-between-listing-and-reads": "skipped",  # no load_interleaving
    "snapshot/relist/hinted-checkpoint-cleaned-up": "skipped",
    "snapshot/special-files/symlinked-commit": "spec stricter",
}
LOGS_COUNTS = {"pass": 44, "known": 7, "spec stricter": 5, "unsafe": 1, "skipped": 2}
FIXTURES_NOT_PASSING = {
    "fixtures/golden-checkpoint-missing-protocol/refused": "known",
    "fixtures/krs-cdf-column-mapping-dv/latest": "known",
    "fixtures/rs-cdf-ict/latest": "known",
}
FIXTURES_COUNTS = {"pass": 293, "skipped": 40, "known": 3}


def test_the_java_bridge_uses_nothing_of_deltaspec() -> None:
    """Written from spec/bridge.md, the schemas and log-vectors.md: its imports are Java's,
    Jackson's, Hadoop's and delta-kernel's only."""
    sources = sorted(BRIDGE.glob("*.java"))
    assert sources
    imports = {
        line.split()[1].rstrip(";")
        for source in sources
        for line in source.read_text(encoding="utf-8").splitlines()
        if line.startswith("import ")
    }
    roots = {".".join(name.split(".")[:2]) for name in imports}
    assert roots == {"com.fasterxml", "io.delta", "java.io", "java.nio", "java.util", "org.apache"}
    assert not any("deltaspec" in name for name in imports)


@pytest.fixture(scope="module")
def bridge_command() -> str:
    """build.sh's command line; a second run reuses the build (no Maven)."""
    if shutil.which("java") is None or shutil.which("mvn") is None:
        pytest.skip(NO_TOOLCHAIN)
    build = [str(BRIDGE / "build.sh")]
    first = subprocess.run(build, capture_output=True, text=True, check=True, timeout=1200)
    command = first.stdout.strip()
    assert re.fullmatch(r"java -cp \S+ DeltaKernelBridge", command), first.stdout
    jar = Path(command.split()[2].split(":")[0])
    assert jar.name == "delta-kernel-bridge.jar" and REPO not in jar.parents  # cached outside
    built = jar.stat().st_mtime_ns
    second = subprocess.run(build, capture_output=True, text=True, check=True, timeout=60)
    assert second.stdout == first.stdout and jar.stat().st_mtime_ns == built
    return command


@pytest.mark.slow
def test_delta_kernel_java_reads_the_log_vectors(tmp_path: Path, bridge_command: str) -> None:
    data = run_suite(tmp_path, bridge_command, "logs", KNOWN)
    assert not_passing(data, "logs") == LOGS_NOT_PASSING
    assert data["counts"]["logs"] == LOGS_COUNTS
    failing = {case for case, label in LOGS_NOT_PASSING.items() if label != "skipped"}
    assert on_file(KNOWN, failing)  # every failure has its reason on file
    timestamp_reads = "snapshot/time-travel/by-in-commit-timestamp"  # read_table_timestamp
    assert timestamp_reads not in LOGS_NOT_PASSING and any(
        r["case"] == timestamp_reads for r in data["suites"]["logs"]
    )


@pytest.mark.slow
def test_delta_kernel_java_reads_the_fixtures(
    tmp_path: Path, bridge_command: str, fixtures_dir: Path
) -> None:
    data = run_suite(tmp_path, bridge_command, "fixtures", KNOWN, "--fixtures", str(fixtures_dir))
    failing = {c: label for c, label in not_passing(data, "fixtures").items() if label != "skipped"}
    assert failing == FIXTURES_NOT_PASSING
    assert data["counts"]["fixtures"] == FIXTURES_COUNTS
    skipped = [r["details"][0] for r in data["suites"]["fixtures"] if r["verdict"] == "skipped"]
    cannot_scan = [d for d in skipped if d.endswith("cannot scan")]
    assert len(cannot_scan) == 36  # rows: the bridge reports the log-derived snapshot only
    assert any("VOID" in d for d in skipped)  # declined: kernel reads no void column


def test_build_sh_keys_its_cache_on_the_sources() -> None:
    """What the hash covers decides when a fresh machine rebuilds: every shipped source file."""
    script = (BRIDGE / "build.sh").read_text(encoding="utf-8")
    listed = re.search(r"^sources=\((.*)\)$", script, re.MULTILINE)
    assert listed is not None
    shipped = {
        p.name for p in BRIDGE.iterdir() if p.is_file() and p.suffix in {".java", ".xml", ".sh"}
    }
    # run.sh builds nothing: it runs what build.sh printed
    assert set(listed.group(1).split()) == shipped - {"run.sh"}
    assert os.access(BRIDGE / "build.sh", os.X_OK)


def test_run_sh_starts_the_built_bridge() -> None:
    """run.sh is the command the matrix's report records: it answers hello as the bridge."""
    hello = '{"id": 0, "method": "hello", "params": {"protocol": "deltaspec-bridge/1"}}\n'
    done = subprocess.run(
        ["sh", str(BRIDGE / "run.sh")], input=hello, capture_output=True, text=True, timeout=300
    )
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["result"]["protocol"] == "deltaspec-bridge/1"
    assert "read_table" in answer["result"]["capabilities"]
