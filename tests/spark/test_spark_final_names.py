"""deltaspec's commit protocol on local files (the same class the S3 writes use): each task's
file at its final name and the list handed to the driver; every other write of the session goes
to Spark's own protocol unchanged; a session set to another protocol is refused, typed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from deltaspec.spark import final_names
from deltaspec.spark.final_names import PROTOCOL, PROTOCOL_CONF, CommitProtocolError

pytestmark = pytest.mark.spark


@pytest.fixture
def restored(spark: Any) -> Iterator[Any]:
    """The session, its commit protocol conf put back afterwards."""
    before = spark.conf.get(PROTOCOL_CONF, None)
    yield spark
    if before is None:
        spark.conf.unset(PROTOCOL_CONF)
    else:
        spark.conf.set(PROTOCOL_CONF, before)


def _tree(root: Path) -> set[str]:
    """The files under ``root``, but the ``.crc`` files Hadoop's local file system writes beside
    each file (a reason local tables keep their staging directory)."""
    return {
        os.path.relpath(os.path.join(folder, name), root)
        for folder, _, names in os.walk(root)
        for name in names
        if not name.endswith(".crc")
    }


def test_files_are_written_at_their_final_names(restored: Any, tmp_path: Path) -> None:
    df = restored.createDataFrame([(1, "a"), (2, "b"), (3, "a b")], "id long, p string")
    root = tmp_path / "table"
    made = final_names.write_at_final_names(df.repartition(2), str(root), ["p"])
    assert restored.conf.get(PROTOCOL_CONF) == PROTOCOL
    assert _tree(root) == {f.relative for f in made}  # no _temporary, no _SUCCESS
    assert {f.relative.split("/")[0] for f in made} == {"p=a", "p=b", "p=a b"}  # Hive escaping
    for f in made:
        assert (root / f.relative).stat().st_size == f.size > 0
        assert f.relative.split("/")[1].startswith("part-")
    rows = restored.read.parquet(*(str(root / f.relative) for f in made)).collect()
    assert sorted(r.id for r in rows) == [1, 2, 3]

    # another write of the same session: Spark's own protocol, its staging and its output
    other = tmp_path / "plain"
    restored.range(3).write.parquet(str(other))
    assert sorted(r.id for r in restored.read.parquet(str(other)).collect()) == [0, 1, 2]
    assert not (other / "_temporary").exists()


def test_a_session_set_to_another_protocol_is_refused(restored: Any, tmp_path: Path) -> None:
    theirs = "org.apache.spark.internal.io.HadoopMapReduceCommitProtocol"
    restored.conf.set(PROTOCOL_CONF, theirs)  # Spark takes only a loadable FileCommitProtocol
    df = restored.createDataFrame([(1, "a")], "id long, p string")
    with pytest.raises(CommitProtocolError, match=theirs):
        final_names.write_at_final_names(df, str(tmp_path / "t"), ["p"])
    assert not (tmp_path / "t").exists()
