"""Running a script on both engines and listing how the outcomes differ."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from ..engines.spark_api import Engine
from .reference import ReferenceCache
from .scripts import SCRIPTS

_EXPR_ID = re.compile(r"#\d+L?")
_QUALIFIER = re.compile(r"\b[A-Za-z_]\w*\.(?=[A-Za-z_`])")
_NULL_TEST = re.compile(r"\((\w+) IS (NOT )?NULL\)")
_TYPED_LITERAL = re.compile(r"\b(?:TIMESTAMP|TIMESTAMP_NTZ|DATE) (?=\d)")
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$")


def _normalised(value: Any) -> Any:
    """A parameter value with what legitimately varies taken out: expression ids, qualifiers and
    quotes in predicates (delta-spark prints resolved expressions, ``(id#12L = b)``; we print
    Spark's SQL, ``(t.id = 'b')``), JSON spacing, the wall-clock time of a timestamp."""
    if not isinstance(value, str):
        return value
    if _TIMESTAMP.match(value):
        return "<timestamp>"
    try:
        decoded = json.loads(value)
    except ValueError:
        decoded = None
    if isinstance(decoded, list | dict):
        return _normalised_json(decoded)
    text = _QUALIFIER.sub("", _EXPR_ID.sub("", value)).replace("'", "")
    # Spark's SQL prints a typed literal and a null test as TIMESTAMP '…' and (x IS NULL);
    # delta-spark's resolved expression as the bare value and isnull(x)
    text = _NULL_TEST.sub(lambda m: f"is{(m[2] or '').replace(' ', '').lower()}null({m[1]})", text)
    return _TYPED_LITERAL.sub("", text)


def _normalised_json(value: Any) -> Any:
    if isinstance(value, list):
        return [_normalised_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalised_json(v) for k, v in value.items()}
    return _normalised(value)


def log_shape(root: str) -> list[dict[str, Any]]:
    """Per version: operation, parameters, action kinds with dataChange and partition values,
    the blind-append flag and the table properties of a metaData; metric names apart (see
    metric_names)."""
    shape = []
    log = Path(root) / "_delta_log"
    for commit in sorted(log.glob("*.json")):
        actions = [json.loads(line) for line in commit.read_text().splitlines() if line.strip()]
        info = next(a["commitInfo"] for a in actions if "commitInfo" in a)
        files = sorted(
            {
                (
                    kind,
                    a[kind].get("dataChange"),
                    json.dumps(a[kind].get("partitionValues")),
                    a[kind]["path"].rpartition("/")[0],  # the partition directory, as escaped
                )
                for a in actions
                for kind in ("add", "remove")
                if kind in a
            }
        )
        others = sorted(
            {
                f"{k}({','.join(sorted(a[k]))})" if k == "txn" else k
                for a in actions
                for k in a
                if k not in {"add", "remove", "commitInfo"}
            }
        )
        shape.append(
            {
                "version": int(commit.stem),
                "operation": info.get("operation"),
                "parameters": {
                    k: _normalised(v) for k, v in info.get("operationParameters", {}).items()
                },
                "files": files,
                "others": others,
                "isBlindAppend": info.get("isBlindAppend"),
                "properties": [
                    a["metaData"].get("configuration") for a in actions if "metaData" in a
                ],
            }
        )
    return shape


def metric_names(root: str) -> list[set[str]]:
    log = Path(root) / "_delta_log"
    out = []
    for commit in sorted(log.glob("*.json")):
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "commitInfo" in action:
                out.append(set(action["commitInfo"].get("operationMetrics", {})))
    return out


def _rows(df: DataFrame) -> list[tuple[Any, ...]]:
    return sorted((tuple(r) for r in df.collect()), key=repr)


def run_both(
    spark: SparkSession,
    engines: dict[str, Engine],
    name: str,
    tmp_path: Path,
    cache: ReferenceCache | None = None,
) -> dict[str, Any]:
    """Script ``name`` on each engine, then each engine reading the other's table; delta-spark's
    own run replayed from ``cache`` where it holds one (spark_differential/reference)."""
    roots = {key: str(tmp_path / key / "table") for key in engines}
    outcome: dict[str, Any] = {}
    for key, engine in engines.items():
        os.makedirs(os.path.dirname(roots[key]), exist_ok=True)
        if key == "delta" and cache is not None:
            recorded = cache.load(name, os.path.dirname(roots[key]))
            if recorded is not None:
                outcome[key] = recorded
                continue
        try:
            outcome[key] = {"observed": SCRIPTS[name](spark, engine, roots[key])}
        except Exception as error:  # the difference is reported, not raised
            outcome[key] = {"error": f"{type(error).__name__}: {error}"[:300]}
            continue
        outcome[key]["log"] = log_shape(roots[key])
        outcome[key]["rows"] = _rows(engine.read(spark, roots[key]))
        if key == "delta" and cache is not None:
            cache.save(name, outcome[key], os.path.dirname(roots[key]))
    if all("rows" in o for o in outcome.values()):
        # each engine reads the other's table
        outcome["ours"]["reads delta's"] = _rows(engines["ours"].read(spark, roots["delta"]))
        outcome["delta"]["reads ours"] = _rows(engines["delta"].read(spark, roots["ours"]))
        outcome["metrics missing"] = [
            sorted(o - t)
            for o, t in zip(metric_names(roots["ours"]), metric_names(roots["delta"]), strict=False)
        ]
    for root in roots.values():
        shutil.rmtree(os.path.dirname(root), ignore_errors=True)
    return outcome


def differences(outcome: dict[str, Any]) -> list[str]:
    ours, theirs = outcome["ours"], outcome["delta"]
    found = []
    if "error" in ours or "error" in theirs:
        return [f"ours: {ours.get('error')}; delta-spark: {theirs.get('error')}"]
    if ours["rows"] != theirs["rows"]:
        found.append(f"rows: ours {ours['rows']} delta-spark {theirs['rows']}")
    if ours["reads delta's"] != theirs["rows"] or theirs["reads ours"] != ours["rows"]:
        found.append("cross-read rows differ")
    if ours["observed"] != theirs["observed"]:
        found.append(f"observed: ours {ours['observed']} delta-spark {theirs['observed']}")
    for mine, reference in zip(ours["log"], theirs["log"], strict=False):
        if mine != reference:
            found.append(f"log v{reference['version']}: ours {mine} delta-spark {reference}")
    if len(ours["log"]) != len(theirs["log"]):
        found.append(f"versions: ours {len(ours['log'])} delta-spark {len(theirs['log'])}")
    if any(outcome["metrics missing"]):
        found.append(f"metrics ours has and delta-spark not: {outcome['metrics missing']}")
    return found
