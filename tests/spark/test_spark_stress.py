"""The Spark path under SIGKILL, mixed with impl writers on one table.

Impl workers (spawned processes) append files of ids (some negative: "poison") to partitions b and c
and checkpoint (tests/reliability/test_reliability_stress.py adds impl compactions); a Spark worker
(mostly on partition a: a DML racing appends into its own partition would lose every time, as it
does in delta-spark), with its own SparkSession, runs DELETE of poison rows, row-preserving UPDATE
(``id = id``) and MERGE (matched rows set to themselves) that rewrite files, and compaction. The
parent SIGKILLs random impl workers every 0.2-0.6 s and the Spark worker (its JVM dies with it) at
random moments, restarting each. At the end: every acknowledged commit is in the log at its version
with its operation, no transaction committed twice, the log checks and the isolation checker pass,
delta-rs agrees, every live file exists, the non-poison rows are exactly the rows every committed
append wrote (nothing lost, nothing duplicated by a rewrite), and the staging directories killed
Spark writes left are reclaimed without touching a live file.

``DELTASPEC_SPARK_STRESS_SECONDS`` (default 45, after the Spark worker is ready);
``DELTASPEC_SPARK_STRESS_RESULTS=PATH`` writes the figures (benchmarks/results/spark_stress.json).
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import random
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from support import (
    create_reliability_table,
    deltalake_view,
    log_problems,
    txn_ids_in_log,
    write_data_file,
)

from deltaspec.conformance.isolation.checker import check
from deltaspec.conformance.tools.inspect import history_from_log
from deltaspec.impl import errors
from deltaspec.impl.actions import AddFile, CommitInfo
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

pytest.importorskip("deltalake")
pytestmark = pytest.mark.spark

IMPL_WORKERS = 3
SECONDS = float(os.environ.get("DELTASPEC_SPARK_STRESS_SECONDS", "45"))
SPARK_KINDS = ["delete", "update", "merge", "compact"]


def _recorder(acks: str) -> Any:
    side = open(acks, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the worker

    def record(**fields: object) -> None:
        side.write(json.dumps(fields) + "\n")
        side.flush()

    return record


def impl_worker(root: str, acks: str, deadline: Any, seed: int) -> None:  # pragma: no cover
    logging.disable(logging.CRITICAL)
    from support import run_operation

    rng = random.Random(seed)
    log = DeltaLog(root)
    record = _recorder(acks)
    Path(acks + ".ready").touch()
    while not deadline.value:  # the clock starts when the Spark worker is up
        time.sleep(0.05)
    while time.time() < deadline.value:
        time.sleep(rng.uniform(0.1, 0.4))  # a few commits/s over all impl workers
        kind = rng.choice(["append"] * 6 + ["checkpoint"])
        try:
            if kind == "append":
                ids = [rng.randrange(-50, 1000) for _ in range(rng.randrange(1, 4))]
                add = write_data_file(root, rng.choice("bc"), ids)  # 'a' is Spark's (below)
                txn = OptimisticTransaction(log, clock=log.clock)
                version = txn.commit([add], Operation("WRITE", {"mode": "Append"}))
                record(kind=kind, version=version, txn=txn.txn_id)
                continue
            done, version = run_operation(log, kind, rng)
        except errors.DeltaConcurrentModificationException as conflict:
            record(kind="conflict", error=type(conflict).__name__)
            continue
        if done is not None:
            record(kind=kind, version=version, txn=done.txn_id)


def spark_worker(root: str, acks: str, deadline: Any, seed: int) -> None:  # pragma: no cover
    logging.disable(logging.CRITICAL)
    from deltaspec.spark import MergeClause, compact, delete, local_session, merge, update

    spark = local_session("local[1]", "deltaspec-spark-stress")
    spark.range(1).count()  # the JVM warmed up before the clock starts
    rng = random.Random(seed)
    record = _recorder(acks)
    Path(acks + ".ready").touch()
    while not deadline.value or time.time() < deadline.value:
        # mostly partition a, which impl appends leave alone: a DML reading a partition while
        # appends land in it loses (ConcurrentAppendException, as in delta-spark)
        kind, part = rng.choice(SPARK_KINDS), rng.choice("aaab")
        try:
            if kind == "delete":
                result: Any = delete(spark, root, f"p = '{part}' AND id < 0")
            elif kind == "update":
                k = rng.randrange(2, 4)
                result = update(spark, root, {"id": "id"}, f"p = '{part}' AND id % {k} = 0")
            elif kind == "merge":
                source = spark.createDataFrame([(rng.randrange(1, 4), part)], "id long, p string")
                clause = MergeClause("update", assignments={"id": "s.id"})
                # the target-only conjunct narrows what MERGE reads to partition `part`
                on = f"t.id = s.id AND t.p = '{part}'"
                result = merge(spark, root, source, on, [clause])
            else:
                result = compact(spark, root, target_files=1, retry=True)
        except errors.DeltaConcurrentModificationException as conflict:
            record(kind="spark-conflict", error=type(conflict).__name__)
            continue
        except Exception as error:  # anything else is a finding: recorded, the test fails
            record(kind="spark-error", error=f"{type(error).__name__}: {error}"[:500])
            continue
        if result.version is not None:
            record(kind=f"spark-{kind}", version=result.version)


def run_stress(root: Path, acks_dir: Path, seconds: float, seed: int) -> dict[str, Any]:
    log = create_reliability_table(root, **{"delta.checkpointInterval": "5"})
    for part in "abcabc":
        add = write_data_file(root, part, [1, 2, 3, -1])
        OptimisticTransaction(log).commit([add], Operation("WRITE", {"mode": "Append"}))
    acks_dir.mkdir()
    context = multiprocessing.get_context("spawn")
    rng = random.Random(seed)
    shared_deadline = context.Value("d", 0.0)
    spawned = 0

    def spawn(target: Any) -> tuple[Any, Path]:
        nonlocal spawned
        spawned += 1
        acks = acks_dir / f"{spawned}.jsonl"
        process = context.Process(
            target=target, args=(str(root), str(acks), shared_deadline, seed + spawned)
        )
        process.start()
        return process, Path(f"{acks}.ready")

    impl = [spawn(impl_worker) for _ in range(IMPL_WORKERS)]
    spark_process, spark_ready = spawn(spark_worker)
    limit = time.time() + 600
    while not (spark_ready.exists() and all(r.exists() for _, r in impl)):
        if time.time() > limit:
            raise TimeoutError("the workers did not start")
        time.sleep(0.1)
    started = time.time()
    deadline = started + seconds
    shared_deadline.value = deadline
    kills = {"impl": 0, "spark": 0}
    spark_acks = Path(str(spark_ready).removesuffix(".ready"))
    next_spark_kill = started + rng.uniform(0.2, 0.4) * seconds
    while time.time() < deadline - 0.5:
        time.sleep(rng.uniform(0.2, 0.6))
        # the Spark worker dies at a random moment once it has done some work (its restart
        # takes a JVM start, so a short run kills it once)
        done = spark_acks.read_text().count('"version"') if spark_acks.exists() else 0
        working = done >= 3
        if time.time() >= next_spark_kill and working and spark_process.is_alive():
            os.kill(spark_process.pid, signal.SIGKILL)
            spark_process.join(10)
            kills["spark"] += 1
            spark_process, spark_ready = spawn(spark_worker)
            spark_acks = Path(str(spark_ready).removesuffix(".ready"))
            next_spark_kill = time.time() + rng.uniform(30, 90)
            continue
        index = rng.randrange(IMPL_WORKERS)
        victim, ready = impl[index]
        if ready.exists() and victim.is_alive():
            os.kill(victim.pid, signal.SIGKILL)
            victim.join(10)
            kills["impl"] += 1
            impl[index] = spawn(impl_worker)
    for process, _ in [*impl, (spark_process, spark_ready)]:
        process.join(120)
        if process.is_alive():  # a Spark worker still starting when the time was up
            os.kill(process.pid, signal.SIGKILL)
            process.join(10)
    records = [
        json.loads(line)
        for path in sorted(acks_dir.glob("*.jsonl"))
        for line in path.read_text().splitlines()
        if line.endswith("}")
    ]
    return {"records": records, "kills": kills, "seconds": time.time() - started}


def _operation(log: DeltaLog, version: int) -> str:
    info = next(a for a in log.read_commit(version) if isinstance(a, CommitInfo))
    return str(info.get("operation"))


def _rows(root: Path, paths: list[tuple[str, str]]) -> Counter[tuple[str, int]]:
    """(partition, id) of every row of the files (relative path, partition value)."""
    found: Counter[tuple[str, int]] = Counter()
    for path, part in paths:
        for value in pq.read_table(root / path).column("id").to_pylist():
            found[(part, value)] += 1
    return found


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "LOG.CONTIGUITY", "LOG.ATOMIC_VISIBILITY")
def test_spark_dml_and_compaction_with_impl_writers_under_sigkill_lose_nothing(
    tmp_path: Path,
) -> None:
    root = tmp_path / "t"
    result = run_stress(root, tmp_path / "acks", SECONDS, seed=19)
    records: list[dict[str, Any]] = result["records"]
    log = DeltaLog(str(root))
    in_log = txn_ids_in_log(root)
    assert all(len(v) == 1 for v in in_log.values()), "a transaction committed twice"
    expected_operation = {"append": "WRITE", "spark-delete": "DELETE",
                          "spark-update": "UPDATE", "spark-merge": "MERGE",
                          "spark-compact": "OPTIMIZE"}  # fmt: skip
    acknowledged = [r for r in records if "version" in r and r["kind"] in expected_operation]
    for record in acknowledged:
        assert _operation(log, record["version"]) == expected_operation[record["kind"]], record
        if "txn" in record:
            assert in_log.get(record["txn"]) == [record["version"]], record
    assert [r for r in records if r["kind"] == "spark-error"] == []
    versions = [r["version"] for r in acknowledged]
    assert len(versions) == len(set(versions))
    assert log_problems(root) == []
    assert check(history_from_log(str(root))) == ()
    snapshot = log.snapshot()
    assert deltalake_view(root) == (snapshot.version, sorted(p for p, _ in snapshot.files))
    live = [(f.path, str(f.partition_values["p"])) for f in snapshot.files.values()]
    assert all((root / path).is_file() for path, _ in live), "a live file is gone"
    # every row an append committed is there once (poison rows may have been deleted)
    appended = []
    for version in log.list_commit_versions(-1):
        actions = log.read_commit(version)
        if _operation(log, version) == "WRITE":
            appended += [
                (a.path, a.partition_values["p"]) for a in actions if isinstance(a, AddFile)
            ]
    wanted = _rows(root, appended)
    have = _rows(root, live)
    assert +Counter({k: n for k, n in have.items() if k[1] >= 0}) == +Counter(
        {k: n for k, n in wanted.items() if k[1] >= 0}
    )
    assert all(have[k] <= wanted[k] for k in have)
    # killed Spark writes' staging directories: reclaimed, live files untouched
    from deltaspec.spark.files import STAGING_DIR, reclaim_staging

    left = list((root / STAGING_DIR).iterdir()) if (root / STAGING_DIR).exists() else []
    reclaimed = reclaim_staging(str(root), 0, int(time.time() * 1000) + 1000)
    assert sorted(reclaimed) == sorted(p.name for p in left)
    assert _rows(root, live) == have
    spark_commits = Counter(r["kind"] for r in acknowledged if r["kind"].startswith("spark-"))
    assert sum(spark_commits.values()) >= 3, spark_commits
    assert result["kills"]["impl"] >= 3 and result["kills"]["spark"] >= 1

    figures = {
        "command": f"DELTASPEC_SPARK_STRESS_SECONDS={SECONDS:g} "
        "DELTASPEC_SPARK_STRESS_RESULTS=PATH .venv/bin/python -m pytest -n 0 "
        "tests/spark/test_spark_stress.py",
        "seconds": round(result["seconds"], 1),
        "sigkills": result["kills"],
        "commits_in_log": snapshot.version,
        "acknowledged_spark_commits": dict(spark_commits),
        "acknowledged_impl_commits": dict(
            Counter(r["kind"] for r in acknowledged if not r["kind"].startswith("spark-"))
        ),
        "conflicts": dict(Counter(r["error"] for r in records if "error" in r)),
        "staging_directories_reclaimed": len(reclaimed),
        "poison_rows_deleted": sum(wanted[k] - have[k] for k in wanted if k[1] < 0),
        "lost_rows": 0,
        "isolation_anomalies": 0,
    }
    out = os.environ.get("DELTASPEC_SPARK_STRESS_RESULTS")
    if out:
        Path(out).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
