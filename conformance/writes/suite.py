"""The writes suite: what an engine writes for common operations, compared field by field with
what delta-spark (3.x/4.x) wrote for the same operations in the fixtures.

Compared per operation (``WRITE`` by save mode, ``DELETE``, ``UPDATE``, ``MERGE``,
``OPTIMIZE``): the action kinds of the commit, each action's field set, the commitInfo field set
and ``operationParameters`` keys, the stats keys, path and partition-value encoding, and the
checkpoint's Parquet schema. Each difference is one case ``writes/<op>/<where>``; a difference
that is accepted carries its reason in ``known_issues/writes-<adapter>.json``.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq

from ...impl import codec
from ...impl.checkpoint.policy import checkpoint_version
from ...impl.snapshot.delta_log import DeltaLog
from ..engines.deltaspark.session import delta_session
from ..harness.verdicts import (
    KNOWN_ISSUES,
    CaseResult,
    Verdict,
    apply_known,
    load_known_issues,
)
from .commits import Json, read_commit

MODERN = re.compile(r"Delta-Lake/[34]\.")
STATS_KEYS = {"numRecords", "minValues", "maxValues", "nullCount", "tightBounds"}


def _label(commit_info: Json) -> str:
    operation = str(commit_info.get("operation"))
    if operation == "WRITE":
        return f"WRITE {commit_info.get('operationParameters', {}).get('mode')}"
    return operation


def reference_shapes(fixtures: Path) -> dict[str, dict[str, set[str]]]:
    """Per operation label: the fields delta-spark wrote for each action kind (``kind``: the union
    over the modern fixtures; ``always:kind``: those in every instance), plus the
    ``operationParameters`` keys and the action ``kinds``."""
    shapes: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for log in sorted(fixtures.glob("*/_delta_log")):
        for path in sorted(log.glob("*.json")):
            lines = read_commit(path)
            info = next((line["commitInfo"] for line in lines if "commitInfo" in line), None)
            if info is None or not MODERN.search(str(info.get("engineInfo", ""))):
                continue
            shape = shapes[_label(info)]
            for line in lines:
                for kind, body in line.items():
                    if isinstance(body, dict):
                        shape["kinds"].add(kind)
                        always = f"always:{kind}"
                        shape[always] = (
                            set(body) if kind not in shape else shape[always] & set(body)
                        )
                        shape[kind].update(body)
            for key, value in info.get("operationParameters", {}).items():
                shape["operationParameters"].add(key)
                shape[f"type:{key}"].add(type(value).__name__)
    return {label: dict(shape) for label, shape in shapes.items()}


def reference_checkpoint_columns(fixtures: Path) -> dict[str, set[str]]:
    """Top-level checkpoint columns and the fields of ``add`` in delta-spark's checkpoints."""
    columns: dict[str, set[str]] = defaultdict(set)
    for path in sorted(fixtures.glob("*/_delta_log/*.checkpoint.parquet")):
        schema = pq.read_schema(path)
        columns["columns"].update(schema.names)
        if "add" in schema.names:
            columns["add"].update(f.name for f in schema.field("add").type)
    return dict(columns)


Writer = Callable[[Path], list[Path]]


def spark_writer(root: Path) -> list[Path]:
    """Canonical operations through deltaspec.spark; returns their commit files."""
    from ...spark import (  # lazy: pyspark is optional
        MergeClause,
        compact,
        delete,
        local_session,
        merge,
        update,
        write_delta,
    )

    spark = local_session()
    schema = "id long, p string, v string"
    rows = [(i, ["a b", "x/y", None][i % 3], f"v{i}") for i in range(12)]
    df = spark.createDataFrame(rows, schema)
    write_delta(df.repartition(2), root, partition_by=["p"])
    write_delta(df.repartition(2), root, mode="append")
    delete(spark, root, "id = 4")
    update(spark, root, {"v": "'u'"}, "id < 3")
    source = spark.createDataFrame([(1, "a b", "m"), (99, "x/y", "n")], schema)
    merge(
        spark,
        root,
        source,
        "t.id = s.id",
        [MergeClause("update", assignments="*"), MergeClause("insert", assignments="*")],
    )
    compact(spark, root, target_files=1)
    write_delta(df, root, mode="overwrite")
    return sorted((root / "_delta_log").glob("*.json"))


def compare(commits: list[Path], reference: dict[str, dict[str, set[str]]]) -> list[CaseResult]:
    results: list[CaseResult] = []
    seen: set[str] = set()
    for path in commits:
        lines = read_commit(path)
        info = next(line["commitInfo"] for line in lines if "commitInfo" in line)
        label = _label(info)
        shape = reference.get(label)
        if shape is None:
            results.append(
                CaseResult(
                    f"writes/{label}",
                    Verdict.SKIPPED,
                    ("no delta-spark commit of this operation in the fixtures",),
                )
            )
            continue
        for line in lines:
            for kind, body in line.items():
                if kind not in shape.get("kinds", set()):
                    _add(
                        results, seen, f"writes/{label}/{kind}", "delta-spark writes no such action"
                    )
                    continue
                for name in sorted(set(body) - shape[kind]):
                    _add(
                        results,
                        seen,
                        f"writes/{label}/{kind}.{name}",
                        "delta-spark never writes it",
                    )
                for name in sorted(shape.get(f"always:{kind}", set()) - set(body)):
                    case = f"writes/{label}/{kind}.{name} (missing)"
                    _add(results, seen, case, "delta-spark always writes it")
                if kind in {"add", "remove"}:
                    _check_file_action(results, seen, label, kind, body)
        params = set(info.get("operationParameters", {}))
        for name in sorted(params - shape.get("operationParameters", set())):
            _add(
                results,
                seen,
                f"writes/{label}/operationParameters.{name}",
                "delta-spark never records this parameter",
            )
        for name, value in sorted(info.get("operationParameters", {}).items()):
            types = shape.get(f"type:{name}", set())
            if types and type(value).__name__ not in types:
                case = f"writes/{label}/operationParameters.{name} (type)"
                _add(results, seen, case, f"delta-spark writes it as {sorted(types)}")
        for name in sorted(shape.get("operationParameters", set()) - params):
            _add(
                results,
                seen,
                f"writes/{label}/operationParameters.{name} (missing)",
                "delta-spark records this parameter",
            )
    if not results:
        results.append(CaseResult("writes/all", Verdict.PASS))
    return results


def _check_file_action(
    results: list[CaseResult], seen: set[str], label: str, kind: str, body: Json
) -> None:
    path = str(body.get("path", ""))
    if codec.encode_path(codec.decode_path(path)) != path:
        _add(results, seen, f"writes/{label}/{kind}.path", f"{path!r} is not URI-encoded")
    values = body.get("partitionValues") or {}
    directory = codec.partition_directory(list(values.items())) if values else ""
    if directory and not codec.decode_path(path).startswith(directory + "/"):
        _add(
            results,
            seen,
            f"writes/{label}/{kind}.partitionValues",
            f"{path!r} is not under {directory!r}",
        )
    if kind == "add" and body.get("stats"):
        extra = set(json.loads(body["stats"])) - STATS_KEYS
        if extra:
            _add(results, seen, f"writes/{label}/add.stats", f"unknown stats keys {sorted(extra)}")


def _add(results: list[CaseResult], seen: set[str], case: str, why: str) -> None:
    if case not in seen:
        seen.add(case)
        results.append(CaseResult(case, Verdict.WRONG, (why,)))


def compare_checkpoint(root: Path, reference: dict[str, set[str]]) -> list[CaseResult]:
    log = DeltaLog(str(root))
    checkpoint_version(log, log.latest_version(), now_ms=log.clock())
    path = next(iter(sorted((root / "_delta_log").glob("*.checkpoint.parquet"))))
    schema = pq.read_schema(path)
    results: list[CaseResult] = []
    seen: set[str] = set()
    for name in sorted(set(schema.names) - reference.get("columns", set())):
        _add(
            results,
            seen,
            f"writes/checkpoint/{name}",
            "delta-spark checkpoints have no such column",
        )
    if "add" in schema.names:
        fields = {f.name for f in schema.field("add").type}
        for name in sorted(fields - reference.get("add", set())):
            _add(results, seen, f"writes/checkpoint/add.{name}", "delta-spark never writes it")
    return results or [CaseResult("writes/checkpoint", Verdict.PASS)]


WRITERS: dict[str, Writer] = {"impl": spark_writer, "spark": spark_writer}


def run_writes(adapter: str, fixtures: Path) -> list[CaseResult]:
    """``deltaspark-ops``: the live mode (our Spark path against the live engine); otherwise the
    adapter's writes against the fixtures."""
    if adapter == "deltaspark-ops":
        from .live import run_live_writes  # lazy: pyspark is optional

        with tempfile.TemporaryDirectory(prefix="deltaspec-writes-live-") as scratch:
            return run_live_writes(delta_session(), Path(scratch))
    writer = WRITERS.get(adapter)
    if writer is None:
        return [CaseResult("writes", Verdict.SKIPPED, (f"no operation writer for {adapter}",))]
    reference = reference_shapes(fixtures)
    with tempfile.TemporaryDirectory(prefix="deltaspec-writes-") as scratch:
        root = Path(scratch) / "table"
        results = compare(writer(root), reference)
        results += compare_checkpoint(root, reference_checkpoint_columns(fixtures))
    accepted = load_known_issues(adapter, KNOWN_ISSUES / f"writes-{adapter}.json")
    return apply_known(results, accepted)
