"""The benchmark runner: every case against its peer, one command (``python -m benchmarks``).

    .venv/bin/python -m benchmarks                      # all cases, recorded sizes (~10 min)
    .venv/bin/python -m benchmarks --quick              # smoke run, tiny sizes (~1 min)
    .venv/bin/python -m benchmarks run --cases snapshot,conflicts
    .venv/bin/python -m benchmarks run --save-baseline  # and record it as the baseline
    .venv/bin/python -m benchmarks compare              # vs the baseline; exit 1 on a regression
    .venv/bin/python -m benchmarks compare --confirm    # re-run flagged cases before believing
    .venv/bin/python -m benchmarks report               # re-render bench.md and the plots

Each case runs in its own spawned process (a clean interpreter: no JVM, cache or garbage from
another case), generates its own tables with fixed seeds, and returns its metrics. The run
writes ``bench.json`` (machine, command, per-case metrics), ``bench.md`` (one table) and PNG
plots to ``--out`` (default ``benchmarks/results``; ``--quick`` defaults to a temporary
directory so that a smoke run never replaces recorded figures). Running some cases into an
existing results file replaces only those cases.
"""

from __future__ import annotations

import argparse
import importlib
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from benchmarks import report
from benchmarks.harness import machine

RESULTS = Path(__file__).parent / "results"
BASELINE = RESULTS / "baseline.json"
CASES: dict[str, tuple[str, str]] = {
    "snapshot": ("benchmarks.bench_snapshot", "1-2: snapshot load and time travel vs delta-rs"),
    "commit": ("benchmarks.bench_commit", "3: commit latency and contention vs delta-rs"),
    "conflicts": ("benchmarks.bench_conflicts", "4: conflict check cost vs the naive model"),
    "spark": ("benchmarks.spark_write", "5: Spark write path vs native df.write.parquet"),
    "oracle": ("benchmarks.oracle_throughput", "6: oracle steps/s, model + impl vs model alone"),
    "checkpoint": ("benchmarks.bench_checkpoint", "7: checkpoint write vs delta-rs"),
    "datasource": (
        "benchmarks.spark_datasource_write",
        "8: format('deltaspec') write vs DeltaWriter and native df.write.parquet",
    ),
    "realistic": (
        "benchmarks.bench_realistic",
        "9: snapshot load on realistic tables, equal work, CPU and wall vs delta-rs",
    ),
    "spark_dml": (
        "benchmarks.bench_spark_dml",
        "10: Spark write, DML, OPTIMIZE, snapshot load vs live delta-spark, CPU and wall",
    ),
    "object_store": (
        "benchmarks.bench_object_store",
        "11: the log on an S3 server (moto): commit latency, snapshot load, contention vs delta-rs",
    ),
}


def _child(module: str, quick: bool, out: str) -> None:  # pragma: no cover - spawned
    try:
        metrics = importlib.import_module(module).run(quick=quick)
        payload: dict[str, Any] = {"metrics": [m.to_json() for m in metrics]}
    except BaseException:
        payload = {"metrics": [], "error": traceback.format_exc(limit=8)}
    Path(out).write_text(json.dumps(payload))


def run_case(name: str, quick: bool, timeout: float) -> dict[str, Any]:
    """One case in a spawned process; its metrics, or the error that stopped it."""
    module = CASES[name][0]
    context = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="deltaspec-bench-case-") as work:
        out = Path(work) / "case.json"
        load = [round(x, 2) for x in os.getloadavg()]
        start = time.monotonic()
        process = context.Process(target=_child, args=(module, quick, str(out)))
        process.start()
        process.join(timeout)
        if process.is_alive():
            process.terminate()
            process.join()
            found: dict[str, Any] = {"metrics": [], "error": f"timed out after {timeout:.0f} s"}
        elif not out.exists():
            found = {"metrics": [], "error": f"the case process exited with {process.exitcode}"}
        else:
            found = json.loads(out.read_text())
    found["seconds"] = round(time.monotonic() - start, 1)
    found["load_average_before"] = load
    found["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return found


def _print_case(name: str, case: dict[str, Any]) -> None:
    print(f"{name}: {case['seconds']:.0f} s", flush=True)
    if case.get("error"):
        print(f"  FAILED: {case['error']}", flush=True)
    for metric in case["metrics"]:
        summary = metric["summary"]
        status = f"  [{metric['status']}]" if metric.get("status") else ""
        print(
            f"  {metric['id']:<36} ratio {summary['ratio_median']:.3f} "
            f"({summary['ratio_min']:.3f}-{summary['ratio_max']:.3f}){status}",
            flush=True,
        )


def write_outputs(results: dict[str, Any], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(results, indent=1) + "\n")
    (out / "bench.md").write_text(report.markdown(results))
    return [out / "bench.json", out / "bench.md", *report.plot(results, out)]


def command_run(args: argparse.Namespace) -> int:
    names = list(CASES) if not args.cases else [c.strip() for c in args.cases.split(",")]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        print(f"unknown cases {unknown}; known: {', '.join(CASES)}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else None
    if out is None:
        out = Path(tempfile.mkdtemp(prefix="deltaspec-bench-quick-")) if args.quick else RESULTS
    command = "python -m benchmarks run" + (" --quick" if args.quick else "")
    if args.cases:
        command += f" --cases {args.cases}"
    results: dict[str, Any] = {"command": command, "quick": args.quick, "cases": {}}
    previous = out / "bench.json"
    if args.cases and previous.exists():
        earlier = json.loads(previous.read_text())
        if earlier.get("quick") == args.quick:
            results["cases"] = earlier.get("cases", {})
            results["command"] = "python -m benchmarks run" + (" --quick" if args.quick else "")
    results["machine"] = machine()
    started = time.monotonic()
    for name in names:
        print(f"case {CASES[name][1]} ...", flush=True)
        case = run_case(name, args.quick, args.timeout)
        results["cases"][name] = case
        _print_case(name, case)
    results["seconds"] = round(time.monotonic() - started, 1)
    results["cases"] = {n: results["cases"][n] for n in CASES if n in results["cases"]}
    written = write_outputs(results, out)
    print("wrote " + ", ".join(str(p) for p in written))
    if args.save_baseline:
        shutil.copyfile(out / "bench.json", BASELINE)
        print(f"recorded as the baseline: {BASELINE}")
    failed = [n for n in names if results["cases"][n].get("error")]
    return 1 if failed else 0


def command_compare(args: argparse.Namespace) -> int:
    baseline = json.loads(Path(args.baseline).read_text())
    current = json.loads(Path(args.current).read_text())
    lines, regressions = report.compare(baseline, current, args.threshold)
    print("\n".join(lines))
    if regressions and args.confirm:
        regressions = _confirm(baseline, current, regressions, args)
    verdict = "regression" if len(regressions) == 1 else "regressions"
    print(
        f"{len(regressions)} {verdict} of {args.threshold:.0%} or more in a ratio against its peer"
        + (f": {', '.join(regressions)}" if regressions else "")
    )
    return 1 if regressions else 0


def _confirm(
    baseline: dict[str, Any], current: dict[str, Any], flagged: list[str], args: argparse.Namespace
) -> list[str]:
    """Run the cases of the flagged metrics again; keep only the metrics flagged both times (on
    a shared machine a ratio's median moves by up to a third between two runs of one code)."""
    cases = sorted(
        name
        for name, case in current["cases"].items()
        if any(m["id"] in flagged for m in case.get("metrics", []))
    )
    print(f"re-running {', '.join(cases)} to confirm ...", flush=True)
    again = {**current, "cases": {n: run_case(n, bool(current.get("quick")), 900) for n in cases}}
    lines, second = report.compare(baseline, again, args.threshold)
    print("\n".join(line for line in lines if "not measured" not in line))
    confirmed = [id for id in flagged if id in second]
    for id in flagged:
        if id not in confirmed:
            print(f"{id}: not confirmed by the second run (noise)")
    return confirmed


def command_report(args: argparse.Namespace) -> int:
    path = Path(args.current)
    written = write_outputs(json.loads(path.read_text()), path.parent)
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="python -m benchmarks", description="deltaspec against its peers, as ratios"
    )
    commands = main.add_subparsers(dest="command")
    run = commands.add_parser("run", help="run the cases (the default command)")
    run.add_argument("--quick", action="store_true", help="tiny sizes: a ~1 minute smoke run")
    run.add_argument("--cases", help=f"comma-separated subset of: {', '.join(CASES)}")
    run.add_argument("--out", help="results directory (default benchmarks/results)")
    run.add_argument("--timeout", type=float, default=900, help="seconds per case")
    run.add_argument("--save-baseline", action="store_true", help="also record as the baseline")
    run.set_defaults(handler=command_run)
    compare = commands.add_parser("compare", help="compare results with the baseline")
    compare.add_argument("--baseline", default=str(BASELINE))
    compare.add_argument("--current", default=str(RESULTS / "bench.json"))
    compare.add_argument("--threshold", type=float, default=0.15)
    compare.add_argument(
        "--confirm",
        action="store_true",
        help="re-run the cases of flagged metrics; report only regressions seen twice",
    )
    compare.set_defaults(handler=command_compare)
    render = commands.add_parser("report", help="re-render bench.md and the plots from JSON")
    render.add_argument("--current", default=str(RESULTS / "bench.json"))
    render.set_defaults(handler=command_report)
    return main


def main(argv: list[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] not in {"run", "compare", "report", "-h", "--help"}:
        arguments.insert(0, "run")
    args = parser().parse_args(arguments)
    handler = args.handler
    return int(handler(args))
