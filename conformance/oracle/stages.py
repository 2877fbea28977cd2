"""The stages of the main job, cheapest first: one registry for ``deltaspec check`` (runs them
all, or with ``--quick`` the cheap ones, and reports each with its time) and ``deltaspec mutants``
(runs the stages that exercise the impl in this order; the first failure kills the mutant).

| stage | what | quick |
|---|---|---|
| ``model`` | the scenario and log vectors on the model | yes |
| ``vectors`` | the scenario and log vectors, and the delta-spark fixtures, on the impl | yes |
| ``race`` | put-if-absent under a real thread race | yes |
| ``services`` | VACUUM, log cleanup, retention and time travel by timestamp on real files | yes |
| ``store`` | the log on an S3 server on loopback: races, keys and listings, services | yes |
| ``machine`` | the differential state machine, ``ci`` profile, model vs impl | no |
| ``spark`` | our Spark path against live delta-spark on the same scripts | no (Spark) |

``--quick`` is every stage with fixed inputs that needs no SparkSession: what is left out is the
state machine's search and the Spark differential. A stage's result and its skip are in
stage_result.py, which the stages in their own modules (services, spark_stage) import too.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING

from deltaspec.releases_table import parse_release
from deltaspec.rules import spec_root

from ...impl.log.local_store import LocalLogStore
from ...impl.table.releases import CURRENT
from ..corpus_run import Corpus, RunOptions, missing_prerequisite, print_report, run_suites
from ..engines.impl.adapter import ImplAdapter, ObjectStoreImplAdapter
from ..harness.fixtures import PINNED_MANIFEST_SHA256
from ..harness.scenarios import Scenario, load_scenarios
from ..harness.selection import Selection
from .differential import Divergence
from .driver_race import StoreReplay, replay
from .machine import ORACLE_PROFILES, race_put_if_absent, run_oracle
from .object_store_stage import run_object_store
from .release_boundaries import judge_boundaries
from .services import run_services
from .spark_stage import run_spark_differential
from .stage_result import StageResult, StageSkipped
from .store_race import race_processes

if TYPE_CHECKING:
    from ..servers.serving import ObjectStoreServer


@dataclass(frozen=True)
class StageOptions:
    """What the command line gives the stages."""

    scenario_dirs: list[Path] = field(default_factory=list)
    fixtures: Path | None = None
    regressions: Path | None = None
    shrink: bool = True
    """Shrink a state-machine divergence (``deltaspec check``); mutants do not."""
    fixtures_pinned: bool = True
    verbose: bool = True
    """Print the vectors' verdict tables (``deltaspec check``); mutants print nothing."""
    fail_fast: bool = False
    """Stop a stage at its first failing case (a mutant needs one to die), where it can."""
    rule: str | None = None
    """Only the scenario and log vectors citing this rule (as ``-k RULE`` selects them; the
    fixture tables cite none): a mutant's run tries those first."""
    server: ObjectStoreServer | None = None
    """The object-store server the race, services and machine stages run the log on
    (``deltaspec check --store s3|azure``); None: local files."""
    offline: bool = False
    """Fetch nothing: the Spark stage is skipped when its engine is not in the cache."""
    live: bool = False
    """Run delta-spark's side of every Spark script live (and record it) instead of replaying
    the recorded reference (spark_differential/reference)."""


@dataclass(frozen=True)
class Stage:
    name: str
    run: Callable[[StageOptions], StageResult]
    needs_spark: bool
    in_quick: bool
    on_impl: bool = True
    """Whether a bug in the impl can make it fail (a mutant's run skips the others)."""
    about: str = ""


def _model(options: StageOptions) -> StageResult:
    result = _suites("model", ["scenarios", "logs"], options)
    written = _profiles(load_scenarios(options.scenario_dirs))
    return replace(result, summary=f"{result.summary}; {written}")


def _profiles(vectors: list[Scenario]) -> str:
    """The release profiles the scenario vectors are written for, each named."""
    written = {v.profile or CURRENT for v in vectors}
    ordered = sorted(written, key=parse_release)
    return f"scenarios written for {len(ordered)} release profiles: {', '.join(ordered)}"


def _vectors(options: StageOptions) -> StageResult:
    missing = missing_prerequisite("fixtures", options.fixtures)
    if options.rule is not None:
        return _suites("impl", ["scenarios", "logs"], options)
    chosen = ["scenarios", "logs"] + (["fixtures"] if missing is None else [])
    result = _suites("impl", chosen, options)
    if not result.passed and options.fail_fast:
        return result
    result = _with_boundaries(result, options)
    if missing is None:
        return result
    report = {**result.report, "fixtures_skipped": missing}
    return replace(
        result, report=report, summary=f"{result.summary}; fixtures suite skipped: {missing}"
    )


def _with_boundaries(result: StageResult, options: StageOptions) -> StageResult:
    """``result`` and the release boundaries judged on model and impl (release_boundaries.py)."""
    vectors = load_scenarios(options.scenario_dirs)
    boundaries = judge_boundaries(vectors, options.fail_fast)
    summary = f"{result.summary}; {_profiles(vectors)}; {boundaries.line()}"
    if boundaries.disagreements:
        first = boundaries.disagreements[0]
        summary += f"; {len(boundaries.disagreements)} disagreeing: {first}"[:400]
    report = {
        **result.report,
        "release_boundaries": {
            "runs": boundaries.runs,
            "releases": list(boundaries.releases),
            "witnessed": list(boundaries.witnessed),
            "unwitnessed": list(boundaries.unwitnessed),
            "disagreements": list(boundaries.disagreements),
        },
    }
    passed = result.passed and not boundaries.disagreements
    return replace(result, passed=passed, summary=summary, report=report)


def _suites(adapter: str, chosen: list[str], options: StageOptions) -> StageResult:
    pinned = PINNED_MANIFEST_SHA256 if options.fixtures_pinned else None
    # strict: the reference must give the exact conflict or error kind, and never a spurious
    # failure; what the conformance gate forgives another engine, the main job does not
    corpus = Corpus(options.scenario_dirs, options.fixtures, pinned, True, None)
    # a seeded bug's run (fail_fast) ends at the first failing vector
    run_options = RunOptions(
        selection=Selection(keyword=options.rule), stop_at_first_failure=options.fail_fast
    )
    report = run_suites(adapter, chosen, corpus, run_options)
    if options.verbose:
        print_report(report)
    failures = report.failures()
    counts = ", ".join(f"{len(results)} {suite}" for suite, results in report.suites.items())
    summary = f"{adapter}: {counts}" + (f"; {len(failures)} failing" if failures else "")
    if failures:
        first = failures[0]
        summary += f": {first.case}: {first.details[0] if first.details else first.verdict}"[:300]
    return StageResult(not failures, summary, report.as_json())


def _race(options: StageOptions) -> StageResult:
    rounds = 200
    if options.server is not None:
        return _object_store_race(options.server, rounds)
    won = race_put_if_absent(LocalLogStore, rounds=rounds)
    return StageResult(won == rounds, f"{won}/{rounds} races had exactly one winner")


def _object_store_race(server: ObjectStoreServer, rounds: int) -> StageResult:
    """On the server: the thread race, then processes racing with the conditional store (no
    commit may be lost) and with the single-writer store (the loss it is refused for, shown)."""
    won = race_put_if_absent(server.log_store, rounds=rounds)
    conditional = race_processes(server.table_url("race"), server.options)
    unsafe = race_processes(server.table_url("race"), server.options, conditional_writes=False)
    drivers = _drivers_race(server)
    passed = (
        won == rounds
        and conditional.many_winners == 0
        and conditional.lost == 0
        and all(r.lost == 0 for r in drivers if r.store == "conditional")
    )
    summary = (
        f"{server.kind}: {won}/{rounds} thread races had exactly one winner; "
        f"{conditional.line('conditional store')}; {unsafe.line('single-writer store')}; "
        f"transactions of {RACED_VECTOR} from two driver processes, "
        + "; ".join(f"{r.store} store: {r.lost}/{r.rounds} rounds lost a commit" for r in drivers)
    )
    report = {
        "threads": won,
        "conditional": vars(conditional),
        "single_writer": vars(unsafe),
        "drivers": {"vector": RACED_VECTOR, "stores": [vars(r) for r in drivers]},
    }
    return StageResult(passed, summary, report)


RACED_VECTOR = "log/put-if-absent/losing-writer-retries-next-version"
"""The vector whose two commits the race stage runs at once from two drivers on a server."""


def _drivers_race(server: ObjectStoreServer) -> list[StoreReplay]:
    """:data:`RACED_VECTOR` replayed by one driver process per writer, its commits racing, with
    the store that checks then writes and with the conditional store (driver_race.py)."""
    vector = spec_root().joinpath("scenarios", *f"{RACED_VECTOR}.json".split("/"))
    return replay(server, vector.read_text(encoding="utf-8"), rounds=10)


def _services(options: StageOptions) -> StageResult:
    return run_services(server=options.server)


def _store(options: StageOptions) -> StageResult:
    return run_object_store(options.server)


def _machine(options: StageOptions) -> StageResult:
    profile = ORACLE_PROFILES["ci"]
    profile = profile if options.shrink else replace(profile, shrink=False)
    server = options.server
    factory: Callable[[Path], ImplAdapter] = ImplAdapter
    if server is not None:
        factory = lambda root: ObjectStoreImplAdapter(root, server.log_store(root))  # noqa: E731
    try:
        oracle = run_oracle([factory], profile, regressions=options.regressions)
    except Divergence as divergence:
        return StageResult(False, divergence.message, {"divergence": divergence.message})
    where = "" if server is None else f", the impl's log on {server.kind}"
    drawn = ", ".join(oracle.releases)
    summary = f"{oracle.steps} steps, model vs impl{where}, at release profiles {drawn}"
    return StageResult(True, summary, {"steps": oracle.steps, "releases": dict(oracle.releases)})


def _spark(options: StageOptions) -> StageResult:
    return run_spark_differential(
        stop_at_first=options.fail_fast,
        verbose=options.verbose,
        offline=options.offline,
        live=options.live,
    )


STAGES: tuple[Stage, ...] = (
    Stage("model", _model, needs_spark=False, in_quick=True, on_impl=False,
          about="scenario and log vectors on the model"),
    Stage("vectors", _vectors, needs_spark=False, in_quick=True,
          about="scenario and log vectors and the delta-spark fixtures on the impl"),
    Stage("race", _race, needs_spark=False, in_quick=True,
          about="put-if-absent under a real race"),
    Stage("services", _services, needs_spark=False, in_quick=True,
          about="VACUUM, log cleanup, retention, time travel by timestamp on real files"),
    Stage("store", _store, needs_spark=False, in_quick=True,
          about="the log on an object store server on loopback (S3 unless --store names one)"),
    Stage("machine", _machine, needs_spark=False, in_quick=False,
          about="the differential state machine, ci profile, model vs impl"),
    Stage("spark", _spark, needs_spark=True, in_quick=False,
          about="our Spark path against live delta-spark on the same scripts"),
)  # fmt: skip

STAGE_NAMES: tuple[str, ...] = tuple(stage.name for stage in STAGES)
IMPL_STAGE_NAMES: tuple[str, ...] = tuple(stage.name for stage in STAGES if stage.on_impl)


def chosen(names: tuple[str, ...] | list[str] | None = None, *, quick: bool = False) -> list[Stage]:
    """The stages named (all when None), in registry order; ``quick`` keeps the cheap ones."""
    unknown = set(names or ()) - set(STAGE_NAMES)
    if unknown:
        raise ValueError(f"no such stages: {sorted(unknown)}; known: {', '.join(STAGE_NAMES)}")
    return [
        stage
        for stage in STAGES
        if (names is None or stage.name in names) and (stage.in_quick or not quick)
    ]


def run_stage(stage: Stage, options: StageOptions) -> StageResult:
    """Run one stage and time it; a stage that cannot run here comes back skipped, one that
    raises comes back failed with the error."""
    started = time.perf_counter()
    try:
        result = stage.run(options)
    except StageSkipped as why:
        result = StageResult(True, f"skipped: {why}", {"skipped": str(why)}, skipped=str(why))
    except Exception as failure:  # any error of a stage fails it (and kills a mutant)
        lines = str(failure).splitlines()
        detail = f"{type(failure).__name__}: {lines[0] if lines else ''}"[:300]
        result = StageResult(False, detail, {"error": detail})
    return replace(result, seconds=time.perf_counter() - started)


def start_apart(stage: Stage, options: StageOptions) -> Future[StageResult]:
    """``stage`` started now in a process of its own (spawned: a SparkSession's JVM is never
    forked), to run beside the stages this process runs; :func:`result_apart` waits for it.
    The Spark stage is one: its JVM and the Python stages each keep a core of a 2-core machine
    busy (``deltaspec check``: 187 s one after the other, idle, against about 155 s beside).
    The object-store server is not passed (it lives in this process; no such stage uses it)."""
    pool = ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn"))
    future = pool.submit(run_stage, stage, replace(options, server=None))
    pool.shutdown(wait=False)  # the submitted stage still runs; the pool goes when it ends
    return future


def result_apart(future: Future[StageResult]) -> StageResult:
    """The result of a stage :func:`start_apart` started (waiting for it); a process that died
    under it fails the stage, saying so."""
    try:
        return future.result()
    except Exception as failure:  # BrokenProcessPool, or the result failing to unpickle
        detail = f"its process ended without a result: {type(failure).__name__}: {failure}"
        return StageResult(False, detail[:300], {"error": detail[:300]})
