"""Running a script on both engines and listing how the outcomes differ."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from ..engines.spark_api import Engine
from .commits import comparable, differing, log_shape, tables
from .reference import ReferenceCache
from .scripts import SCRIPTS, table_rows


def run_both(
    spark: SparkSession,
    engines: dict[str, Engine],
    name: str,
    tmp_path: Path,
    cache: ReferenceCache | None = None,
) -> dict[str, Any]:
    """Script ``name`` on each engine, then each engine reading the other's table; delta-spark's
    own run replayed from ``cache`` where it holds one (spark_differential/reference). The
    logs are read from the tables on disk (the recorded ones when replayed), every table the
    script left (``commits.tables``), so a change to what is compared needs no new recording."""
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
        outcome[key]["rows"] = table_rows(engine.read(spark, roots[key]))
        if key == "delta" and cache is not None:
            cache.save(name, outcome[key], os.path.dirname(roots[key]))
    for key, root in roots.items():
        if "rows" in outcome[key]:
            found = tables(os.path.dirname(root))
            outcome[key]["log"] = {table: log_shape(path) for table, path in found.items()}
    if all("rows" in o for o in outcome.values()):
        # each engine reads the other's table
        outcome["ours"]["reads delta's"] = table_rows(engines["ours"].read(spark, roots["delta"]))
        outcome["delta"]["reads ours"] = table_rows(engines["delta"].read(spark, roots["ours"]))
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
    if sorted(ours["log"]) != sorted(theirs["log"]):
        found.append(f"tables: ours {sorted(ours['log'])} delta-spark {sorted(theirs['log'])}")
    for table, reference_log in theirs["log"].items():
        log = ours["log"].get(table, [])
        label = "" if table == "table" else f"{table} "
        for mine, recorded in zip(log, reference_log, strict=False):
            reference = comparable(mine, recorded)
            if mine != reference:
                diff = differing(mine, reference)
                found.append(f"{label}log v{reference['version']} (ours, delta-spark): {diff}")
        if len(log) != len(reference_log):
            found.append(f"{label}versions: ours {len(log)} delta-spark {len(reference_log)}")
    return found
