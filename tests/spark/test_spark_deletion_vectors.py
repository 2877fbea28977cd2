"""DV.WRITE on the live engine: tables whose deletion vectors our Spark path wrote are read the
same by delta-spark 4.4.0 and by delta-rs (deltalake's DataFusion reader: its
``to_pyarrow_table`` refuses the ``deletionVectors`` reader feature), and the reverse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from deltaspec.conformance.engines.registry import make_engines
from deltaspec.conformance.spark_differential.scripts import dv_delete, dv_merge, dv_update

pytestmark = pytest.mark.spark


def _deltars_rows(root: str) -> list[tuple[Any, ...]]:
    import deltalake
    from deltalake import QueryBuilder

    table = deltalake.DeltaTable(root)
    read = pa.table(
        QueryBuilder().register("t", table).execute("select id, p, v from t").read_all()
    )
    return sorted(zip(*(read.column(c).to_pylist() for c in ("id", "p", "v")), strict=True))


def _spark_rows(spark: Any, fmt: str, root: str) -> list[tuple[Any, ...]]:
    return sorted(
        tuple(r) for r in spark.read.format(fmt).load(root).select("id", "p", "v").collect()
    )


def _vectors(root: str) -> list[dict[str, Any]]:
    return [
        a["add"]["deletionVector"]
        for commit in sorted((Path(root) / "_delta_log").glob("*.json"))
        for a in map(json.loads, commit.read_text().splitlines())
        if "add" in a and a["add"].get("deletionVector")
    ]


@pytest.mark.rules("DV.WRITE")
@pytest.mark.parametrize("script", [dv_update, dv_merge, dv_delete], ids=lambda f: f.__name__)
def test_deletion_vectors_read_alike_everywhere(spark: Any, tmp_path: Path, script: Any) -> None:
    engines = make_engines(spark)
    roots = {name: str(tmp_path / name) for name in engines}
    for name, engine in engines.items():
        script(spark, engine, roots[name])
    ours, theirs = roots["ours"], roots["delta"]
    assert _vectors(ours) and all(v["storageType"] == "u" for v in _vectors(ours))
    expected = _spark_rows(spark, "delta", theirs)
    assert _spark_rows(spark, "delta", ours) == expected
    assert _spark_rows(spark, "deltaspec", ours) == expected
    assert _spark_rows(spark, "deltaspec", theirs) == expected
    assert _deltars_rows(ours) == expected
    assert _deltars_rows(theirs) == expected
