"""Live delta-spark 4.4.0 against our in-commit timestamps and checksum files
(spec/timestamps.md): delta-spark reads and validates the tables our impl writes, and the
checksum it writes equals ours for the same table contents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from deltaspec.impl import checksum
from deltaspec.impl.actions import AddFile, Metadata, Protocol
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

pytestmark = pytest.mark.spark

SCHEMA = '{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}'
ICT = Protocol(1, 7, None, ("appendOnly", "inCommitTimestamp", "invariants"))
DIFFERING = ("allFiles", "txnId")
"""Fields of delta-spark's checksum that legitimately differ from ours: ``allFiles`` (optional,
written by delta-spark for small tables only; ours omits it) and ``txnId`` (each side's own
transaction). Every other field must be equal."""


def _engine_log(spark: Any, path: Path) -> Any:
    jvm = spark._jvm
    delta = jvm.org.apache.spark.sql.delta
    delta.DeltaLog.clearCache()
    return delta.DeltaLog.forTable(spark._jsparkSession, str(path))


def _none(spark: Any) -> Any:
    return getattr(getattr(spark._jvm.scala, "None$"), "MODULE$")


@pytest.mark.rules("CHECKSUM.WRITE", "CHECKSUM.VERIFY", "ICT.ASSIGN")
def test_delta_spark_validates_our_checksums_and_its_equal_ours(spark: Any, tmp_path: Path) -> None:
    log = DeltaLog(str(tmp_path))
    OptimisticTransaction(log).commit(
        [ICT, Metadata("t", SCHEMA, (), {"delta.enableInCommitTimestamps": "true"}),
         AddFile("a", {}, 100, 0, True), AddFile("b", {}, 9_000, 0, True)],
        Operation("CREATE TABLE"),
    )  # fmt: skip
    OptimisticTransaction(log).commit([AddFile("c", {}, 7, 0, True)])
    engine = _engine_log(spark, tmp_path)
    none = _none(spark)
    snapshot = engine.update(False, none, none)
    empty = spark._jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(
        spark._jvm.java.util.HashMap()
    )
    assert snapshot.validateChecksum(empty)  # delta-spark accepts our 1.crc
    assert int(snapshot.numOfFiles()) == 3 and int(snapshot.timestamp()) == log.snapshot().timestamp
    # delta-spark commits version 2; our checksum of version 2 must equal its, field by field
    txn = engine.startTransaction(none, spark._jvm.scala.Option.apply(snapshot))
    add = spark._jvm.org.apache.spark.sql.delta.actions.Action.fromJson(
        json.dumps({"add": {"path": "d", "partitionValues": {}, "size": 1, "modificationTime": 0,
                            "dataChange": True}})
    )  # fmt: skip
    java_list = spark._jvm.java.util.ArrayList()
    java_list.add(add)
    manual = getattr(
        getattr(spark._jvm.org.apache.spark.sql.delta, "DeltaOperations$ManualUpdate$"), "MODULE$"
    )
    txn.commit(spark._jvm.org.apache.spark.api.python.PythonUtils.toSeq(java_list), manual)
    theirs = json.loads((tmp_path / "_delta_log" / checksum.checksum_name(2)).read_text())
    ours = checksum.version_checksum(DeltaLog(str(tmp_path)).snapshot(2))
    assert "inCommitTimestampOpt" in theirs
    assert {k: v for k, v in theirs.items() if k not in DIFFERING} == {
        k: v for k, v in ours.items() if k not in DIFFERING
    }
    assert checksum.verify_checksum(DeltaLog(str(tmp_path)))
