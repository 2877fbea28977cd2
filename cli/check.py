"""``deltaspec check``: the main job. The stages of conformance/oracle/stages.py, cheapest first
(vectors on the model; vectors, fixtures and every release boundary on the impl; the
put-if-absent race; table services on real files; the log on an S3 server it starts; the
differential state machine; the Spark path against live delta-spark), each reported with its
time; one summary, a JSON report, non-zero on any failure. A stage that cannot
run here is named in the verdict (``PASS (spark skipped: why)``); ``--require-stages`` makes it a
failure. ``--quick`` runs the stages without the state machine's search and without Spark. The Spark
stage fetches its pinned engine when it is missing; ``--offline`` fetches nothing."""

from __future__ import annotations

import argparse
import json
import time
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..conformance.harness.progress import Progress
from .corpus_args import add_corpus_arguments
from .outputs import add_output
from .quiet import add_quiet_argument

if TYPE_CHECKING:
    from ..conformance.oracle.stages import StageOptions

STAGE_NAMES = ("model", "vectors", "race", "services", "store", "machine", "spark")
STORES = ("local", "s3", "azure")
"""``local`` and the object stores of conformance/servers/serving.py (a test keeps them equal)."""
"""As in conformance/oracle/stages.py (a test keeps them equal); named here so that building the
parser imports nothing heavy."""


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "check",
        help="the main job: vectors on model and impl, fixtures, table services, state machine, "
        "Spark path vs delta-spark",
    )
    add_corpus_arguments(parser)
    parser.add_argument("--quick", action="store_true",
                        help="skip the state machine and the Spark differential")  # fmt: skip
    parser.add_argument("--stage", action="append", choices=STAGE_NAMES,
                        help="run only these stages (repeatable; default all)")  # fmt: skip
    parser.add_argument("--store", choices=STORES, default="local",
                        help="where the race, services and machine stages keep the log: local "
                        "files (default), or an S3 (moto) or Azure Blob (Azurite) server this "
                        "command starts on loopback and stops; the store stage runs on that "
                        "server, or on an S3 server of its own")  # fmt: skip
    add_output(parser, "--regressions", directory=True, metavar="DIR",
               help="where a state-machine divergence is written as a vector")  # fmt: skip
    add_output(parser, "--report", default=Path("deltaspec-check.json"),
               help="the JSON report (default deltaspec-check.json)")  # fmt: skip
    parser.add_argument("--require-stages", action="store_true",
                        help="fail when a chosen stage (or the fixtures suite) could not run "
                        "here, instead of passing with it named as skipped (for CI)")  # fmt: skip
    parser.add_argument("--offline", action="store_true",
                        help="fetch nothing: without its engine in the cache the Spark stage "
                        "is skipped (named in the verdict); by default a missing engine is "
                        "fetched from Maven Central and PyPI when they answer")  # fmt: skip
    parser.add_argument("--live", action="store_true",
                        help="run delta-spark's side of every Spark script and conflict case "
                        "live (and record it), instead of replaying what an earlier run "
                        "recorded in $DELTASPEC_CACHE/spark-reference")  # fmt: skip
    add_quiet_argument(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    from ..conformance.oracle.stages import (  # lazy: CLI start-up (1.9 s)
        StageOptions,
    )

    started = time.perf_counter()
    with _server(args.store) if args.store != "local" else nullcontext() as server:
        options = StageOptions(
            args.scenarios,
            args.fixtures,
            args.regressions,
            server=server,
            offline=args.offline,
            live=args.live,
        )
        stages, reports = _run_stages(args, options)
    skipped = _skipped(stages, reports)
    failed = [s["name"] for s in stages if not s["passed"]]
    if args.require_stages:
        failed += [f"{name} skipped" for name in skipped]
    seconds = time.perf_counter() - started
    summary = {"passed": not failed, "quick": args.quick, "store": args.store,
               "seconds": round(seconds, 1),
               "skipped": skipped, "stages": stages, "reports": reports}  # fmt: skip
    args.report.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print("\n".join(_table(stages)))
    print(_reach(args.store, reports))
    verdict = _verdict(failed, skipped)
    print(f"deltaspec check: {verdict} in {seconds:.0f} s (report: {args.report})")
    return 1 if failed else 0


def _run_stages(
    args: argparse.Namespace, options: StageOptions
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The chosen stages in order, each with its heading and verdict line (a progress line on
    stderr when one is due): their rows for the report, and their reports by name. The Spark
    stage, started first in a process of its own, runs while the others do (stages.start_apart);
    its heading and verdict come in their place."""
    from ..conformance.oracle.stages import (  # lazy: CLI start-up (1.9 s)
        chosen,
        result_apart,
        run_stage,
        start_apart,
    )

    stages: list[dict[str, Any]] = []
    reports: dict[str, Any] = {}
    order = chosen(args.stage, quick=args.quick)
    progress = Progress("check", len(order))
    # the Spark stage runs in its own process beside the others, when there are others
    apart = {s.name: start_apart(s, options) for s in order if s.needs_spark and len(order) > 1}
    for stage in order:
        print(f"== {stage.name}: {stage.about}", flush=True)
        if stage.name in apart:
            result = result_apart(apart[stage.name])
        else:
            result = run_stage(stage, options)
        verdict = "SKIPPED" if result.skipped else "PASS" if result.passed else "FAIL"
        print(f"{stage.name}: {verdict} in {result.seconds:.1f} s; {result.summary}", flush=True)
        progress.step(f"stage {stage.name}", f"{verdict} in {result.seconds:.1f} s")
        reports[stage.name] = result.report
        stages.append({"name": stage.name, "passed": result.passed,
                       "skipped": result.skipped, "seconds": round(result.seconds, 1),
                       "summary": result.summary})  # fmt: skip
    return stages, reports


def _server(store: str) -> Any:
    """The object-store server for ``--store``, started now and stopped when the run ends."""
    from ..conformance.servers.serving import (  # lazy: CLI start-up (0.25 s)
        serving,
    )

    print(f"== starting the {store} server on loopback", flush=True)
    return serving(store)


def _skipped(stages: list[dict[str, Any]], reports: dict[str, Any]) -> dict[str, str]:
    """What could not run here, and why: skipped stages, and the fixtures suite of the vectors
    stage when the delta-spark fixtures are absent."""
    skipped = {s["name"]: s["skipped"] for s in stages if s["skipped"]}
    fixtures = reports.get("vectors", {}).get("fixtures_skipped")
    if fixtures:
        skipped = {"fixtures": fixtures, **skipped}
    return skipped


def _reach(store: str, reports: dict[str, Any]) -> str:
    """What the run judged: the release profiles and where the log was kept."""
    releases = reports.get("vectors", {}).get("release_boundaries", {}).get("releases", [])
    profiles = f"{len(releases)} release profiles ({', '.join(releases)})" if releases else "none"
    stores = ["local files" if store == "local" else store]
    if "server" in reports.get("store", {}):
        stores.append(f"{reports['store']['server']} (store stage)")
    return f"judged at: {profiles}; the log on: {', '.join(dict.fromkeys(stores))}"


def _verdict(failed: list[str], skipped: dict[str, str]) -> str:
    """``PASS``, ``PASS (spark skipped: why)`` when something could not run, or ``FAIL: …``."""
    if failed:
        return "FAIL: " + ", ".join(failed)
    if not skipped:
        return "PASS"
    return "PASS (" + "; ".join(f"{name} skipped: {why}" for name, why in skipped.items()) + ")"


def _table(stages: list[dict[str, Any]]) -> list[str]:
    lines = ["| stage | verdict | seconds |", "|---|---|---|"]
    for stage in stages:
        verdict = "skipped" if stage["skipped"] else "pass" if stage["passed"] else "FAIL"
        lines.append(f"| {stage['name']} | {verdict} | {stage['seconds']:.1f} |")
    return lines
