"""Write one engine's report of the compatibility matrix (``conformance/reports/<engine>.json``)
from a real run: what ``deltaspec matrix`` shows is only ever what an engine said.

    python -m deltaspec.conformance.tools.matrix_record record polars --suite logs \\
        --adapter "cmd:python conformance/bridge/examples/polars_read_table.py" \\
        --implementation delta-kernel-rs --package polars-deltalake
    python -m deltaspec.conformance.tools.matrix_record take REPORT.json deltars --suite logs \\
        --seconds 2 --command "deltaspec conformance --adapter deltars --suite logs --json R"
    python -m deltaspec.conformance.tools.matrix_record unavailable duckdb --reason "…"

``record`` runs ``deltaspec conformance --adapter A --suite S --json …`` and takes its report;
``take`` takes a report already made. Either replaces that suite's run in the engine's file (its
date, command, seconds, exit code, counts, every case's label) and that suite's unsafe findings,
each written from the case: the vector's description, its first rule and the rule's title, what
the spec required and what the engine gave. The engine's name, implementation, version and
adapter are kept from the file unless given again.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from ..corpus_run import fixtures_dir
from ..harness.fixtures import manifest_sha256
from .matrix import FORMAT, REPORTS, finding

Json = dict[str, Any]
DESCRIPTION = (
    "One engine's runs of the conformance suites for the compatibility matrix (deltaspec matrix), "
    "written by python -m deltaspec.conformance.tools.matrix_record from real runs."
)


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True)[:300]


def _where(failure: Json) -> str:
    if failure.get("version", 0) is None and "timestamp" not in failure:
        return "the latest version"
    keys = ("version", "timestamp", "writer", "snapshot", "step")
    return " ".join(f"{k} {failure[k]}" for k in keys if failure.get(k) is not None)


def _got(got: Any) -> str:
    """What the engine answered; an empty snapshot is a read that succeeded and reported nothing."""
    if isinstance(got, dict) and set(got) <= {"version"}:  # a row reader reports no more
        return "read it without an error" + (f" (version {got['version']})" if got else "")
    return _text(got)


def unsafe_findings(suite: str, report: Json) -> list[Json]:
    """The unsafe cases of ``suite`` in a ``--json`` report, as findings."""
    out = []
    for case in report["suites"].get(suite, []):
        if case["verdict"] != "unsafe":
            continue
        failures = [f for f in case.get("failures", []) if f.get("verdict") == "unsafe"]
        where = [_where(f) for f in failures]
        expected = "; ".join(
            f"{w}: {_text(f['expected'])}" for w, f in zip(where, failures, strict=True)
        )
        did = "; ".join(f"{w}: {_got(f['got'])}" for w, f in zip(where, failures, strict=True))
        did = did or "; ".join(case.get("details", []))
        out.append(finding(suite, case["case"], case["label"], did, expected, report["adapter"]))
    return out


def suite_run(suite: str, report: Json, command: str, seconds: float | None, code: int | None,
              date: str) -> Json:  # fmt: skip
    cases = {case["case"]: case["label"] for case in report["suites"][suite]}
    run: Json = {"date": date, "command": command, "seconds": seconds, "exit": code}
    run |= {"counts": report["counts"][suite], "cases": dict(sorted(cases.items()))}
    if suite == "fixtures":
        run["fixtures_manifest"] = manifest_sha256(fixtures_dir(None))
    return run


def load(engine: str, reports: Path = REPORTS) -> Json:
    path = reports / f"{engine}.json"
    if path.exists():
        data: Json = json.loads(path.read_text(encoding="utf-8"))
        return data
    return {"description": DESCRIPTION, "format": FORMAT, "engine": engine,
            "implementation": engine, "version": "", "adapter": "", "suites": {},
            "findings": []}  # fmt: skip


def save(engine: str, data: Json, reports: Path = REPORTS) -> Path:
    reports.mkdir(parents=True, exist_ok=True)
    path = reports / f"{engine}.json"
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def take(data: Json, suite: str, report: Json, run: Json) -> Json:
    """``data`` with ``suite``'s run and unsafe findings replaced by this one's."""
    data["suites"][suite] = run
    kept = [f for f in data["findings"] if f["suite"] != suite]
    data["findings"] = kept + unsafe_findings(suite, report)
    data["suites"] = {s: data["suites"][s] for s in sorted(data["suites"])}
    return data


def versions(packages: list[str]) -> str:
    return ", ".join(f"{p} {metadata.version(p)}" for p in packages)


def run_conformance(adapter: str, suite: str) -> tuple[Json | None, float, int, str]:
    """One real run: its report (None if it wrote none), seconds, exit code and command."""
    shown = ["deltaspec", "conformance", "--adapter", adapter, "--suite", suite]
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "report.json"
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "deltaspec", *shown[1:], "--json", str(path)],
                              check=False)  # fmt: skip
        seconds = round(time.monotonic() - started, 1)
        report = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    command = " ".join(f'"{a}"' if " " in a else a for a in shown) + " --json REPORT.json"
    return report, seconds, done.returncode, command


def _update_identity(data: Json, args: argparse.Namespace) -> None:
    for key in ("implementation", "adapter", "reports"):
        if getattr(args, key, None):
            data[key] = getattr(args, key)
    if getattr(args, "package", None):
        data["version"] = versions(args.package)
    elif getattr(args, "version", None):
        data["version"] = args.version


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m deltaspec.conformance.tools.matrix_record")
    commands = parser.add_subparsers(dest="command", required=True)
    record = commands.add_parser("record", help="run a suite on an engine and record it")
    take_ = commands.add_parser("take", help="record a run already made (its --json report)")
    take_.add_argument("report", type=Path)
    for sub in (record, take_):
        sub.add_argument("engine", help="the report's name: conformance/reports/ENGINE.json")
        sub.add_argument("--suite", choices=["scenarios", "logs", "fixtures"], required=True)
        sub.add_argument("--adapter", help="the --adapter of deltaspec conformance")
        sub.add_argument("--implementation", help="what the engine is built on")
        sub.add_argument("--package", action="append", help="its version: this installed "
                         "package's (repeatable)")  # fmt: skip
        sub.add_argument("--version", help="its version, when no package says it")
        sub.add_argument("--reports", help="what its reads report, when not everything")
    take_.add_argument("--command", required=True, help="the command that made the report")
    take_.add_argument("--seconds", type=float, help="how long it ran")
    take_.add_argument("--date", default=datetime.date.today().isoformat())
    off = commands.add_parser("unavailable", help="record an engine that cannot run here")
    off.add_argument("engine")
    off.add_argument("--reason", required=True)
    off.add_argument("--implementation")
    off.add_argument("--package", action="append")
    off.add_argument("--version")
    return parser


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    data = load(args.engine)
    _update_identity(data, args)
    if args.command == "unavailable":
        data["unavailable"] = args.reason
        print(f"wrote {save(args.engine, data)}")
        return 0
    if args.command == "take":
        report = json.loads(args.report.read_text(encoding="utf-8"))
        seconds, code, command, date = args.seconds, None, args.command, args.date
    else:
        found, seconds, code, command = run_conformance(data["adapter"], args.suite)
        if found is None:
            print(f"the run wrote no report (exit {code})", file=sys.stderr)
            return 2
        report, date = found, datetime.date.today().isoformat()
    run = suite_run(args.suite, report, command, seconds, code, date)
    path = save(args.engine, take(data, args.suite, report, run))
    print(f"{args.engine} {args.suite}: {run['counts']} in {seconds} s; wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
