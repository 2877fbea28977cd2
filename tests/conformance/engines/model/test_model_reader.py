"""The model as a reader of tables on disk (conformance/engines/model/reader.py ``ModelReader``):
a protocol it must refuse, and a v2 checkpoint under the classic name whose files are in a
sidecar. Both were missed before: the fixtures suite labelled the model unsafe on
golden-invalid-protocol-version and krs-v2-classic-checkpoint-parquet. The tables are written
here with pyarrow and plain JSON, the expectations stated from the rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deltaspec.conformance.engines.model.reader import ModelReader
from deltaspec.conformance.harness.logvectors import CHECKPOINT_SCHEMA, write_log
from deltaspec.conformance.harness.reading import ReadFailure
from deltaspec.model.actions import Protocol
from deltaspec.model.features import unreadable
from deltaspec.model.profiles import profile

Json = dict[str, Any]
METADATA: Json = {
    "id": "00000000-0000-0000-0000-000000000000",
    "format": {"provider": "parquet", "options": {}},
    "schemaString": '{"type":"struct","fields":[]}',
    "partitionColumns": [],
    "configuration": {},
    "createdTime": 0,
}
V2_PROTOCOL: Json = {
    "minReaderVersion": 3,
    "minWriterVersion": 7,
    "readerFeatures": ["v2Checkpoint"],
    "writerFeatures": ["v2Checkpoint"],
}
V2_SCHEMA = CHECKPOINT_SCHEMA.append(
    pa.field("checkpointMetadata", pa.struct([("version", pa.int64())]))
).append(
    pa.field(
        "sidecar",
        pa.struct(
            [("path", pa.string()), ("sizeInBytes", pa.int64()), ("modificationTime", pa.int64())]
        ),
    )
)
SIDECAR = "00000000000000000001.checkpoint.0000000001.0000000001.0a1b2c3d.parquet"


def _add(path: str) -> Json:
    return {"add": {"path": path, "partitionValues": {}, "size": 1, "modificationTime": 0,
                    "dataChange": True}}  # fmt: skip


def _table(root: Path, protocol: Json) -> None:
    write_log(root, {"00000000000000000000.json": [
        {"commitInfo": {"timestamp": 0, "operation": "WRITE"}},
        {"protocol": protocol}, {"metaData": METADATA}, _add("a.parquet"),
    ]})  # fmt: skip


@pytest.mark.rules("SNAPSHOT.PROTOCOL_METADATA")
@pytest.mark.parametrize(
    "protocol",
    [
        {
            "minReaderVersion": 99,
            "minWriterVersion": 7,
            "readerFeatures": [],
            "writerFeatures": [],
        },  # golden-invalid-protocol-version
        {"minReaderVersion": 4, "minWriterVersion": 2},
        {**V2_PROTOCOL, "readerFeatures": ["v2Checkpoint", "noSuchReaderFeature"]},
    ],
)
def test_the_model_reader_refuses_a_protocol_it_cannot_read(tmp_path: Path, protocol: Json):
    _table(tmp_path, protocol)
    with pytest.raises(ReadFailure) as refused:
        ModelReader().read(tmp_path, None)
    assert refused.value.kind == "UNSUPPORTED_PROTOCOL"


@pytest.mark.rules("SNAPSHOT.PROTOCOL_METADATA")
def test_the_model_reader_reads_a_protocol_it_supports(tmp_path: Path):
    _table(tmp_path, V2_PROTOCOL)
    assert ModelReader().read(tmp_path, None)["files"] == ["a.parquet"]


@pytest.mark.rules("SNAPSHOT.PROTOCOL_METADATA")
def test_which_reader_protocols_a_release_reads():
    def refused(release: str, reader: int, features: tuple[str, ...] | None = None) -> list[str]:
        writer = 7 if features is not None else 2
        protocol = Protocol(reader, writer, None if features is None else frozenset(features),
                            None if features is None else frozenset())  # fmt: skip
        return unreadable(protocol, profile(release))

    # delta-spark's Action.readerVersion: 1 up to v1.0.x, 2 from v1.1.0, 3 from v2.3.0
    assert refused("1.0.0", 2) == ["minReaderVersion 2"]
    assert refused("1.1.0", 2) == []
    assert refused("2.2.0", 3, ()) == ["minReaderVersion 3"]
    assert refused("2.3.0", 3, ("columnMapping",)) == []
    assert refused("4.4.0", 0) == ["minReaderVersion 0"]
    assert refused("4.4.0", 99, ()) == ["minReaderVersion 99"]
    # reader features as the release supports them (v2Checkpoint from v3.0.0)
    assert refused("2.4.0", 3, ("v2Checkpoint",)) == ["v2Checkpoint"]
    assert refused("4.4.0", 3, ("deletionVectors", "v2Checkpoint")) == []
    assert refused("4.4.0", 3, ("x", "deletionVectors")) == ["x"]


def _classic_v2_checkpoint(root: Path) -> None:
    """Versions 0 and 1 (a.parquet, then b.parquet), and at 1 a v2 checkpoint under the classic
    name: checkpointMetadata, one sidecar (holding both adds), protocol, metadata."""
    _table(root, V2_PROTOCOL)
    write_log(root, {"00000000000000000001.json": [
        {"commitInfo": {"timestamp": 1, "operation": "WRITE"}}, _add("b.parquet"),
    ]})  # fmt: skip
    log = root / "_delta_log"
    (log / "_sidecars").mkdir()
    adds = [a["add"] for a in (_add("a.parquet"), _add("b.parquet"))]
    pq.write_table(pa.Table.from_pylist([{"add": a} for a in adds], schema=CHECKPOINT_SCHEMA),
                   log / "_sidecars" / SIDECAR)  # fmt: skip
    rows = [
        {"checkpointMetadata": {"version": 1}},
        {"sidecar": {"path": SIDECAR, "sizeInBytes": 1, "modificationTime": 0}},
        {"protocol": V2_PROTOCOL},
        {
            "metaData": {
                **METADATA,
                "format": {"provider": "parquet", "options": []},
                "configuration": [("delta.checkpointPolicy", "v2")],
            }
        },
    ]
    pq.write_table(pa.Table.from_pylist(rows, schema=V2_SCHEMA),
                   log / "00000000000000000001.checkpoint.parquet")  # fmt: skip
    (log / "_last_checkpoint").write_text(json.dumps({"version": 1, "size": 4}))


@pytest.mark.rules("CHECKPOINT.READ", "CHECKPOINT.V2_WRITE")
def test_a_classic_named_v2_checkpoint_is_read_with_its_sidecars(tmp_path: Path):
    _classic_v2_checkpoint(tmp_path)
    (tmp_path / "_delta_log" / "00000000000000000000.json").unlink()  # cleaned up: only the
    # checkpoint, through its sidecar, holds a.parquet
    for version in (None, 1):
        read = ModelReader().read(tmp_path, version)
        assert (read["version"], read["files"]) == (1, ["a.parquet", "b.parquet"])


@pytest.mark.rules("CHECKPOINT.READ")
def test_a_checkpoint_whose_sidecar_is_missing_is_not_complete(tmp_path: Path):
    _classic_v2_checkpoint(tmp_path)
    (tmp_path / "_delta_log" / "_sidecars" / SIDECAR).unlink()
    # an older start: the commits from version 0
    assert ModelReader().read(tmp_path, None)["files"] == ["a.parquet", "b.parquet"]
    (tmp_path / "_delta_log" / "00000000000000000000.json").unlink()
    with pytest.raises(ReadFailure) as refused:
        ModelReader().read(tmp_path, None)
    assert refused.value.kind == "VERSIONS_NOT_CONTIGUOUS"
