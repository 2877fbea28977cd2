"""The pytest plugin (pytest11 entry point): the corpus as parametrised tests against an adapter,
run in a separate pytest process as a user would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
               "--pyargs", "deltaspec.pytest_corpus", *args]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=300)


def test_the_corpus_runs_as_parametrised_tests(tmp_path):
    run = _pytest(tmp_path, "--deltaspec-adapter", "model", "-k", "app-txn or checkpoint")
    assert run.returncode == 0, run.stdout[-2000:]
    summary = run.stdout.strip().splitlines()[-1]
    passed = int(summary.split(" passed")[0].split()[-1])
    assert passed >= 12  # scenario and log vectors, each one test


def test_a_failing_vector_fails_its_test_and_a_declined_one_is_skipped(tmp_path):
    program = tmp_path / "drops_files.py"
    program.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    r = json.loads(line)\n"
        "    if r['method'] == 'hello':\n"
        "        res = {'protocol': 'deltaspec-bridge/1', 'name': 'x',\n"
        "               'capabilities': ['actions']}\n"
        "        print(json.dumps({'id': r['id'], 'result': res}), flush=True)\n"
        "    elif r['method'] == 'commit':\n"
        "        print(json.dumps({'id': r['id'], 'result': {'committed': 99}}), flush=True)\n"
        "    elif r['method'] == 'snapshot':\n"
        "        print(json.dumps({'id': r['id'], 'result': {'version': 99, 'files': []}}),"
        " flush=True)\n"
        "    else:\n"
        "        print(json.dumps({'id': r['id'], 'result': None}), flush=True)\n"
    )
    run = _pytest(tmp_path, "--deltaspec-adapter", f"cmd:{sys.executable} {program}",
                  "-k", "duplicate-stream or empty-log", "-rfs")  # fmt: skip
    assert run.returncode == 1
    assert "FAILED" in run.stdout and "conflict/app-txn/duplicate-stream" in run.stdout
    assert "deltaspec spec CONFLICT.APP_TXN" in run.stdout
    assert "no read_table" in run.stdout  # the log vector is skipped with its reason


def test_without_an_adapter_the_corpus_is_one_skipped_test(tmp_path):
    run = _pytest(tmp_path)
    assert run.returncode == 0 and "1 skipped" in run.stdout
