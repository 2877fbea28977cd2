"""Deletion vectors on write (DV.WRITE): the serialised bitmap, the ``u`` file layout, Z85, and
which files a DV update keeps, against the model."""

from __future__ import annotations

import json
import random
import struct
import zlib
from dataclasses import replace
from pathlib import Path

import pytest

from deltaspec.impl import deletion_vectors as dvs
from deltaspec.impl import errors
from deltaspec.impl.actions import Action, AddFile, DeletionVector, Metadata, Protocol
from deltaspec.impl.codec.z85 import z85_decode, z85_encode
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.table import paths
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction
from deltaspec.model import deletion_vectors as model
from deltaspec.spark import rewrite
from deltaspec.spark.deletion_vectors import loose_stats, mark_deleted

SETS = [
    {0},
    {1, 5, 9},
    set(range(5000)),  # a bitmap container
    set(random.Random(7).sample(range(1 << 20), 3000)) | {(1 << 33) + 5, 1 << 40},
]


@pytest.mark.parametrize("rows", SETS, ids=["one", "few", "dense", "sparse-64bit"])
def test_serialised_rows_read_back(rows: set[int]) -> None:
    assert dvs.roaring_array(dvs.serialize_rows(rows)) == rows


def test_serialisation_matches_delta_spark_bytes() -> None:
    """The bytes delta-spark 4.4.0 wrote for rows {2, 3, 5} (its DV file, size field and CRC
    stripped)."""
    theirs = "d1d339640100000000000000000000003a300000010000000000020010000000020003000500"
    assert dvs.serialize_rows({2, 3, 5}).hex() == theirs


def test_z85_round_trip() -> None:
    data = bytes(range(40))
    assert z85_decode(z85_encode(data)) == data


def test_inline_vector_reads_back(tmp_path: Path) -> None:
    dv = dvs.inline_deletion_vector({3, 4})
    assert dv.storage_type == "i" and dv.cardinality == 2
    assert dvs.deleted_rows(tmp_path, dv) == {3, 4}


@pytest.mark.rules("DV.WRITE")
def test_vector_file_layout(tmp_path: Path) -> None:
    first, second = dvs.write_deletion_vectors(str(tmp_path), [{1}, {2, 7}])
    (written,) = tmp_path.glob("deletion_vector_*.bin")
    data = written.read_bytes()
    assert data[0] == dvs.DV_FILE_FORMAT_VERSION and first.offset == 1
    assert paths.deletion_vector_location(first) == written.name
    (size,) = struct.unpack_from(">i", data, 1)
    blob = data[5 : 5 + size]
    assert struct.unpack_from(">I", data, 5 + size)[0] == zlib.crc32(blob)
    assert second.offset == 1 + 4 + size + 4
    assert dvs.deleted_rows(tmp_path, second) == {2, 7}
    assert (first.storage_type, first.cardinality, second.cardinality) == ("u", 1, 2)


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :]


@pytest.mark.rules("DV.WRITE")
@pytest.mark.parametrize("damage", ["a byte of the bitmap", "the CRC", "the size"])
def test_a_vector_file_that_does_not_check_out_is_corrupt(tmp_path: Path, damage: str) -> None:
    """delta-spark checks the stored size against ``sizeInBytes`` and the CRC-32 against the
    bytes; a mismatch was read as if it were the vector."""
    (dv,) = dvs.write_deletion_vectors(str(tmp_path), [{2, 7}])
    (written,) = tmp_path.glob("deletion_vector_*.bin")
    data = written.read_bytes()
    at = {"a byte of the bitmap": 5 + dv.size_in_bytes - 1, "the CRC": len(data) - 1, "the size": 4}
    written.write_bytes(_flip(data, at[damage]))
    with pytest.raises(errors.CorruptLogError) as corrupt:
        dvs.deleted_rows(tmp_path, dv)
    assert (corrupt.value.table, corrupt.value.file) == (str(tmp_path), written.name)


def _add(path: str, records: int) -> AddFile:
    stats = json.dumps({"numRecords": records, "minValues": {"id": 0}, "tightBounds": True})
    return AddFile(
        path=path, partition_values={}, size=10, modification_time=1, data_change=True, stats=stats
    )


@pytest.mark.rules("DV.WRITE")
def test_dv_update_keeps_the_path_and_loosens_bounds(tmp_path: Path) -> None:
    files = [_add("a.parquet", 4), _add("b.parquet", 2), _add("c.parquet", 3)]
    first = mark_deleted(str(tmp_path), files, {"a.parquet": {1}, "b.parquet": {0, 1}}, 5)
    assert [r.path for r in first.removes] == ["a.parquet", "b.parquet"]
    (a,) = first.adds
    assert a.path == "a.parquet" and a.deletion_vector is not None
    assert json.loads(a.stats or "")["tightBounds"] is False
    assert [r.stats for r in first.removes] == ['{"numRecords":4}', '{"numRecords":2}']
    assert (first.files_removed, first.vectors_added, first.deleted_rows) == (1, 1, 3)
    second = mark_deleted(str(tmp_path), [a], {"a.parquet": {1, 2}}, 6)
    (again,) = second.adds
    assert second.removes[0].deletion_vector == a.deletion_vector
    assert again.deletion_vector is not None and again.deletion_vector.cardinality == 2
    assert (second.vectors_updated, second.vectors_removed, second.deleted_rows) == (1, 1, 1)


@pytest.mark.rules("DV.WRITE")
def test_impl_agrees_with_the_model(tmp_path: Path) -> None:
    rng = random.Random(3)
    files = [_add(f"f{i}.parquet", rng.randint(1, 6)) for i in range(8)]
    marked = {
        f.path: set(rng.sample(range(stats), rng.randint(0, stats)))
        for f in files
        if (stats := json.loads(f.stats or "")["numRecords"])
    }
    changes = mark_deleted(str(tmp_path), files, marked, 1)
    expected = model.mark_deleted(
        tuple(model.MarkedFile(f.path, json.loads(f.stats or "")["numRecords"]) for f in files),
        {k: frozenset(v) for k, v in marked.items()},
    )
    kept = {
        a.path: dvs.deleted_rows(tmp_path, a.deletion_vector)
        for a in changes.adds
        if a.deletion_vector
    }
    assert {r.path for r in changes.removes} == {o.path for o in expected}
    assert kept == {o.path: set(o.deleted) for o in expected if o.deleted is not None}


def test_loose_stats() -> None:
    assert json.loads(loose_stats('{"numRecords":1,"tightBounds":true}') or "") == {
        "numRecords": 1,
        "tightBounds": False,
    }


SCHEMA = '{"type":"struct","fields":[{"name":"x","type":"long","nullable":true,"metadata":{}}]}'
ENABLED = {"delta.enableDeletionVectors": "true"}
DV_PROTOCOL = Protocol(3, 7, ("deletionVectors",), ("deletionVectors",))


def _dv_table(root: Path, configuration: dict[str, str]) -> DeltaLog:
    log = DeltaLog(str(root))
    OptimisticTransaction(log).commit([DV_PROTOCOL, Metadata("t", SCHEMA, (), configuration)])
    OptimisticTransaction(log).commit([_add("a.parquet", 4)])
    return log


def _dv_update(stats: str | None) -> list[Action]:
    old = _add("a.parquet", 4)
    dv = dvs.inline_deletion_vector({1})
    return [rewrite.remove(old, 5), replace(old, deletion_vector=dv, stats=stats)]


@pytest.mark.rules("DV.ADD_CHECKS")
@pytest.mark.parametrize(
    ("configuration", "stats", "refused"),
    [
        ({}, '{"numRecords":4,"tightBounds":false}', errors.DeletionVectorsDisallowedError),
        (ENABLED, '{"tightBounds":false}', errors.DeletionVectorMissingNumRecordsError),
        (ENABLED, None, errors.DeletionVectorMissingNumRecordsError),
        (ENABLED, '{"numRecords":4,"tightBounds":true}', errors.DeletionVectorTightBoundsError),
    ],
    ids=["not-enabled", "no-num-records", "no-stats", "tight-bounds"],
)
def test_a_bad_deletion_vector_add_is_refused_naming_table_version_and_file(
    tmp_path: Path, configuration: dict[str, str], stats: str | None, refused: type[Exception]
) -> None:
    log = _dv_table(tmp_path, configuration)
    with pytest.raises(refused) as raised:
        OptimisticTransaction(log).commit(_dv_update(stats), Operation("DELETE"))
    error = raised.value
    assert isinstance(error, errors.DeltaError)
    assert (error.table, error.version, error.file) == (str(tmp_path), 2, "a.parquet")
    assert log.snapshot().version == 1  # nothing written


@pytest.mark.rules("DV.ADD_CHECKS")
def test_a_well_formed_deletion_vector_add_commits(tmp_path: Path) -> None:
    log = _dv_table(tmp_path, {"delta.enableDeletionVectors": "true"})
    OptimisticTransaction(log).commit(
        _dv_update('{"numRecords":4,"tightBounds":false}'), Operation("DELETE")
    )
    (live,) = log.snapshot().files.values()
    assert live.deletion_vector is not None and live.deletion_vector.cardinality == 1
    # tight bounds are refused for DML only
    OptimisticTransaction(log).commit(
        _dv_update('{"numRecords":4,"tightBounds":true}'), Operation("OPTIMIZE")
    )


_ROWS_1_2 = dvs.serialize_rows({1, 2})
BAD_INLINE = {
    "not-z85": DeletionVector("i", "~~~~~" * 4, 16, 2),
    "length-not-a-multiple-of-5": DeletionVector("i", z85_encode(_ROWS_1_2)[:-1], 16, 2),
    "shorter-than-size-in-bytes": DeletionVector("i", z85_encode(_ROWS_1_2), 64, 2),
    "bad-magic": DeletionVector("i", z85_encode(b"\0" * 12), 12, 0),
    "truncated-bitmap": DeletionVector("i", z85_encode(_ROWS_1_2[:20]), 20, 2),
    "cardinality-not-its-rows": DeletionVector("i", z85_encode(_ROWS_1_2), len(_ROWS_1_2), 3),
}


@pytest.mark.parametrize("dv", BAD_INLINE.values(), ids=BAD_INLINE.keys())
def test_a_bad_inline_vector_is_a_corrupt_log_naming_the_table(tmp_path: Path, dv: DeletionVector):
    with pytest.raises(errors.CorruptLogError) as raised:
        dvs.deleted_rows(tmp_path, dv)
    assert raised.value.table == str(tmp_path)


@pytest.mark.parametrize("dv", BAD_INLINE.values(), ids=BAD_INLINE.keys())
def test_a_bad_inline_vector_is_never_committed(tmp_path: Path, dv: DeletionVector) -> None:
    log = _dv_table(tmp_path, ENABLED)
    old = _add("a.parquet", 4)
    update = [rewrite.remove(old, 5), replace(old, deletion_vector=dv, stats='{"numRecords":4}')]
    with pytest.raises(errors.InvalidCommitActionError) as raised:
        OptimisticTransaction(log).commit(update, Operation("DELETE"))
    assert (raised.value.table, raised.value.version) == (str(tmp_path), 2)
    assert log.snapshot().version == 1  # nothing written
