"""Packaging: one import root, the console script, the release build (imports:
test_import_contracts)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from types import ModuleType

import deltaspec

REPO = Path(__file__).resolve().parents[2]


def test_console_script_reports_version_and_lists_rules() -> None:
    script = Path(sys.executable).parent / "deltaspec"
    version = subprocess.run([script, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == f"deltaspec {deltaspec.__version__}"
    listing = subprocess.run([script, "spec"], capture_output=True, text=True, check=True)
    rule_lines = [line for line in listing.stdout.splitlines() if "." in line.split(" ")[0]]
    assert len(rule_lines) >= 40
    assert listing.stdout.strip().splitlines()[-1].startswith(f"{len(rule_lines)} rules")


def _dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev", REPO / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_release_build_is_warning_free_and_ships_spec_and_example_bridges(
    tmp_path: Path,
) -> None:
    """What `python3 dev.py release` builds, from this working tree: an sdist and the wheel built
    from it, without one warning (the build fails on any); the wheel has one import root, the
    spec's data and the example bridges, and, installed alone, runs a conformance case."""
    dev = _dev()
    source, dist = tmp_path / "source", tmp_path / "dist"
    source.mkdir()
    dev.export_tree(source, commit=None)
    sdist, wheel = dev.build_distributions(source, dist, Path(sys.executable))
    assert sdist.name == f"deltaspec-{deltaspec.__version__}.tar.gz" and wheel.suffix == ".whl"
    names = zipfile.ZipFile(wheel).namelist()
    roots = {name.split("/")[0] for name in names}
    assert roots == {"deltaspec", wheel.name.split("-py3")[0] + ".dist-info"}
    for expected in (
        "deltaspec/model/machine.py",
        "deltaspec/impl/__init__.py",
        "deltaspec/conformance/engines/model/adapter.py",
        "deltaspec/conformance/engines/deltaspark/bridge.py",
        "deltaspec/conformance/bridge/examples/deltars_read_table.py",
        "deltaspec/conformance/bridge/examples/java/DeltaKernelBridge.java",
        "deltaspec/conformance/bridge/examples/java/KernelWrites.java",
        "deltaspec/conformance/bridge/examples/java/KernelRows.java",
        "deltaspec/conformance/bridge/examples/java/pom.xml",
        "deltaspec/conformance/bridge/examples/java/build.sh",
        "deltaspec/spark/jvm/DeltaspecSource.java",
        "deltaspec/spark/jvm/DeltaspecCallback.java",
        "deltaspec/conformance/bridge/examples/rust/Cargo.toml",
        "deltaspec/conformance/bridge/examples/rust/Cargo.lock",
        "deltaspec/conformance/bridge/examples/rust/build.sh",
        "deltaspec/conformance/bridge/examples/rust/run.sh",
        "deltaspec/conformance/bridge/examples/rust/src/main.rs",
        "deltaspec/conformance/bridge/examples/rust/src/actions.rs",
        "deltaspec/conformance/bridge/examples/polars_read_table.py",
        "deltaspec/conformance/reports/deltars.json",
        "deltaspec/spec/scenario.schema.json",
        "deltaspec/spec/data/conflict_matrix.json",
        "deltaspec/spec/conflicts.md",
        "deltaspec/conformance/harness/known_issues/impl.json",
    ):
        assert expected in names
    assert any(n.startswith("deltaspec/spec/scenarios/matrix/") for n in names)
    assert any(n.startswith("deltaspec/spec/vectors/checkpoint/") for n in names)
    assert "deltaspec/spec/generators/log_vectors.py" in names
    assert "deltaspec/conformance/workload/matrix_vectors.py" in names
    with tarfile.open(sdist) as tar:
        in_sdist = tar.getnames()
    assert f"{sdist.name[:-7]}/conformance/engines/deltaspark/bridge.py" in in_sdist
    assert f"{sdist.name[:-7]}/conformance/bridge/examples/java/DeltaKernelBridge.java" in in_sdist
    assert f"{sdist.name[:-7]}/spark/jvm/DeltaspecSource.java" in in_sdist
    assert f"{sdist.name[:-7]}/conformance/bridge/examples/rust/src/main.rs" in in_sdist
    assert f"{sdist.name[:-7]}/LICENSE" in in_sdist

    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target",
                    str(site), str(wheel)], check=True)  # fmt: skip
    report = tmp_path / "report.json"
    ran = subprocess.run(
        [sys.executable, "-c", "import sys, deltaspec.cli; print(deltaspec.cli.__file__); "
         "sys.exit(deltaspec.cli.main(sys.argv[1:]))", "conformance", "--adapter", "model",
         "--suite", "scenarios", "--case", "conflict/app-txn/*", "--json", str(report)],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(site)},
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.splitlines()[0].startswith(str(site))  # the installed wheel, not the clone
    cases = json.loads(report.read_text())["suites"]["scenarios"]
    assert len(cases) >= 3 and all(case["verdict"] == "pass" for case in cases)
