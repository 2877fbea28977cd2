"""Every example of the PySpark guide (docs/guides/pyspark.md) runs: the page's Python blocks, in
order, in one namespace (later blocks use what earlier ones made), with the quickstart's table path
moved into a temporary directory."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from deltaspec.impl.snapshot.delta_log import DeltaLog

pytestmark = pytest.mark.spark

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "guides" / "pyspark.md"
QUICKSTART_PATH = "/tmp/deltaspec-quickstart"


def spark_blocks() -> list[str]:
    text = GUIDE.read_text(encoding="utf-8")
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_the_guide_has_the_examples() -> None:
    blocks = spark_blocks()
    assert len(blocks) >= 5
    joined = "\n".join(blocks)
    calls = ["DeltaTable.forPath", "whenNotMatchedBySourceDelete", "versionAsOf"]
    calls += ["restoreToVersion", "idempotent_writer", "withCommitHook", "atVersion"]
    assert [c for c in calls if c not in joined] == []


def test_every_example_runs(spark: Any, tmp_path: Path) -> None:
    base = str(tmp_path / "quickstart")
    namespace: dict[str, Any] = {"__name__": "pyspark_guide"}
    for block in spark_blocks():
        assert QUICKSTART_PATH not in block or block.count(QUICKSTART_PATH) == 1
        exec(compile(block.replace(QUICKSTART_PATH, base), str(GUIDE), "exec"), namespace)
    # the quickstart table went through create, overwrite, DML, MERGE, OPTIMIZE and RESTORE
    operations = [r["operation"] for r in namespace["table"].history().collect()]
    assert operations[0] == "DELETE"  # the races example, on its own table
    quickstart = namespace["DeltaTable"].forPath(namespace["spark"], base).history().collect()
    assert {"WRITE", "UPDATE", "DELETE", "MERGE", "RESTORE"} <= {r["operation"] for r in quickstart}
    assert DeltaLog(base + "-stream").latest_version() == 0


README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_quickstart_runs_as_written(spark: Any, tmp_path: Path) -> None:
    """README's PySpark snippet, as written, given the session and the table path it leaves to
    the reader: it creates the table and deletes the even ids."""
    text = README.read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, flags=re.S) if "spark" in b]
    assert len(blocks) == 1, blocks
    path = str(tmp_path / "table")
    exec(compile(blocks[0], str(README), "exec"), {"spark": spark, "path": path})
    rows = spark.read.format("deltaspec").load(path).collect()
    assert sorted(row.id for row in rows) == [1, 3]
    assert DeltaLog(path).snapshot().version == 1
