"""TXN.READ_VERSION_RETAINED on live delta-spark 4.4.0: a transaction that read a version log
cleanup later removed commits into the cleaned-up version, and no snapshot contains it. Our impl
refuses the same commit. Should a delta-spark release start refusing it too, this test fails and
the spec's note on delta-spark must change."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from deltaspec.impl import errors
from deltaspec.impl.actions import AddFile, Metadata, Protocol
from deltaspec.impl.checkpoint.policy import checkpoint_version
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

pytestmark = pytest.mark.spark

SCHEMA = '{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}'


def _table(root: Path) -> DeltaLog:
    log = DeltaLog(str(root))
    create = [Protocol(1, 2), Metadata("t", SCHEMA, (), {}), AddFile("a", {}, 1, 0, True)]
    OptimisticTransaction(log).commit(create, Operation("CREATE TABLE"))
    for name in ("b", "c"):
        OptimisticTransaction(log).commit([AddFile(name, {}, 1, 0, True)])
    return log


def _clean_up_below(root: Path, version: int) -> None:
    """What log cleanup leaves after a checkpoint at ``version``: no file of an older version."""
    for name in os.listdir(root / "_delta_log"):
        if name[:20].isdigit() and int(name[:20]) < version:
            os.remove(root / "_delta_log" / name)


@pytest.mark.rules("TXN.READ_VERSION_RETAINED")
def test_delta_spark_commits_into_a_cleaned_up_version_and_ours_refuses(
    spark: Any, tmp_path: Path
) -> None:
    theirs_root, ours_root = tmp_path / "theirs", tmp_path / "ours"
    _table(theirs_root)
    jvm = spark._jvm
    delta = jvm.org.apache.spark.sql.delta
    delta.DeltaLog.clearCache()
    engine = delta.DeltaLog.forTable(spark._jsparkSession, str(theirs_root))
    none = getattr(getattr(jvm.scala, "None$"), "MODULE$")
    read = engine.getSnapshotAt(0, none, none, False)
    stale = engine.startTransaction(none, jvm.scala.Option.apply(read))
    engine.update(False, none, none)
    engine.checkpoint()
    _clean_up_below(theirs_root, 2)
    add = delta.actions.Action.fromJson(
        json.dumps({"add": {"path": "e", "partitionValues": {}, "size": 1,
                            "modificationTime": 0, "dataChange": True}})
    )  # fmt: skip
    actions = jvm.java.util.ArrayList()
    actions.add(add)
    manual = getattr(getattr(delta, "DeltaOperations$ManualUpdate$"), "MODULE$")
    version = stale.commit(jvm.org.apache.spark.api.python.PythonUtils.toSeq(actions), manual)
    assert version == 1 and (theirs_root / "_delta_log" / commit_name(1)).exists()
    delta.DeltaLog.clearCache()
    latest = delta.DeltaLog.forTable(spark._jsparkSession, str(theirs_root)).update(
        False, none, none
    )
    assert latest.version() == 2 and latest.numOfFiles() == 3  # the committed "e" is nowhere

    log = _table(ours_root)
    ours = OptimisticTransaction(DeltaLog(str(ours_root)), log.snapshot(0))
    checkpoint_version(log, 2, now_ms=0)
    _clean_up_below(ours_root, 2)
    with pytest.raises(errors.VersionNotFoundError, match="no longer in the log"):
        ours.commit([AddFile("e", {}, 1, 0, True)])
    assert not (ours_root / "_delta_log" / commit_name(1)).exists()
