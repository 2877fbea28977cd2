"""The Spark path reads only what its scan honours (TXN.WRITER_PROTOCOL's data-type features):
the log of a variant or geospatial table loads, but scanning it through Spark is refused before
any data is read. No SparkSession is needed to refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deltaspec.impl.actions import Metadata, Protocol
from deltaspec.impl.errors import UnsupportedFeatureError
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction
from deltaspec.spark.read import scan

SCHEMA = json.dumps({"type": "struct", "fields": [
    {"name": "x", "type": "long", "nullable": True, "metadata": {}}]})  # fmt: skip

pytestmark = pytest.mark.rules("TXN.WRITER_PROTOCOL")


@pytest.mark.parametrize("feature", ["variantType", "variantShredding", "geospatial"])
def test_a_data_type_table_loads_but_is_not_scanned_through_spark(tmp_path: Path, feature: str):
    log = DeltaLog(str(tmp_path / "t"))
    protocol = Protocol(3, 7, (feature,), (feature,))
    OptimisticTransaction(log).commit([protocol, Metadata("t", SCHEMA)], Operation("CREATE TABLE"))
    snapshot = DeltaLog(str(tmp_path / "t")).snapshot()
    assert snapshot.protocol == protocol
    with pytest.raises(UnsupportedFeatureError, match=feature) as refused:
        scan(None, str(tmp_path / "t"), snapshot)  # type: ignore[arg-type]
    assert refused.value.version == 0
