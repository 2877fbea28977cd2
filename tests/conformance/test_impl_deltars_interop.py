"""Tables written by deltaspec.impl are read by delta-rs (the ``deltalake`` package) with the same
files and rows: awkward partition values, null partitions, removes, and a checkpoint."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from deltaspec.impl import codec
from deltaspec.impl.actions import AddFile, Metadata, RemoveFile
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

deltalake = pytest.importorskip("deltalake")

PARTITIONS = ["a b", "100%", "x/y", "k=v", "ünï😀", "plus+at@", None]
SCHEMA = json.dumps(
    {"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}},
        {"name": "part", "type": "string", "nullable": True, "metadata": {}}]},
    separators=(",", ":"),
)  # fmt: skip


def write_data_file(root: Path, part: str | None, ids: list[int]) -> AddFile:
    """A real Parquet file in its Hive-escaped partition directory, added with a URI path."""
    relative = (
        f"{codec.partition_directory([('part', part)])}/part-{uuid.uuid4()}.c000.snappy.parquet"
    )
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}), target)
    stats = codec.encode_stats(len(ids), {"id": min(ids)}, {"id": max(ids)}, {"id": 0})
    return AddFile(codec.encode_path(relative), {"part": part}, target.stat().st_size,
                   int(target.stat().st_mtime * 1000), True, stats)  # fmt: skip


def expected_rows(files: dict[str, tuple[str | None, list[int]]]) -> list[tuple[int, str | None]]:
    return sorted(((i, part) for part, ids in files.values() for i in ids), key=repr)


@pytest.mark.rules(
    "ACTION.ADD", "ACTION.PARTITION_VALUES", "CHECKPOINT.CONTENTS", "CHECKPOINT.READ"
)
def test_delta_rs_reads_what_the_impl_writes(tmp_path: Path) -> None:
    log = DeltaLog(str(tmp_path))
    metadata = Metadata(str(uuid.uuid4()), SCHEMA, ("part",), {"delta.checkpointInterval": "3"})
    live: dict[str, tuple[str | None, list[int]]] = {}
    first = [write_data_file(tmp_path, p, [n]) for n, p in enumerate(PARTITIONS)]
    live.update({a.path: (a.partition_values["part"], [n]) for n, a in enumerate(first)})
    OptimisticTransaction(log).commit([metadata, *first], Operation("CREATE TABLE"))
    for round_ in range(1, 5):
        adds = [write_data_file(tmp_path, p, [100 * round_ + n]) for n, p in enumerate(PARTITIONS)]
        live.update({a.path: (a.partition_values["part"], [100 * round_ + n])
                     for n, a in enumerate(adds)})  # fmt: skip
        OptimisticTransaction(log).commit(adds, Operation("WRITE", {"mode": "Append"}))
    victim = first[2]
    txn = OptimisticTransaction(log)
    txn.stage([RemoveFile(victim.path, 1, True, True, victim.partition_values, victim.size)])
    version = txn.commit(operation=Operation("DELETE"))
    live.pop(victim.path)
    assert version == 5
    assert (tmp_path / "_delta_log" / f"{3:020d}.checkpoint.parquet").exists()

    ours = log.snapshot()
    assert ours.checkpoint_version == 3
    assert {f.path for f in ours.files.values()} == set(live)

    theirs = deltalake.DeltaTable(str(tmp_path))
    assert theirs.version() == 5
    # deltalake 1.x returns plain filesystem paths for a local table
    their_files = {Path(uri.removeprefix("file://")) for uri in theirs.file_uris()}
    assert all(f.is_file() for f in their_files)
    assert their_files == {tmp_path / codec.decode_path(p) for p in live}
    rows = theirs.to_pyarrow_table().to_pylist()
    assert sorted(((r["id"], r["part"]) for r in rows), key=repr) == expected_rows(live)

    # delta-rs must be able to start from our checkpoint alone
    for stale in range(3):
        (tmp_path / "_delta_log" / f"{stale:020d}.json").unlink()
    again = deltalake.DeltaTable(str(tmp_path))
    rows = again.to_pyarrow_table().to_pylist()
    assert sorted(((r["id"], r["part"]) for r in rows), key=repr) == expected_rows(live)


@pytest.mark.rules("SNAPSHOT.REPLAY", "CHECKPOINT.READ", "ACTION.PARTITION_VALUES")
def test_impl_reads_what_delta_rs_writes_and_its_checkpoint(tmp_path: Path) -> None:
    from deltaspec.impl.scan import scan

    parts = list(PARTITIONS)
    table = pa.table({"id": pa.array(range(len(parts)), pa.int64()), "part": parts})
    deltalake.write_deltalake(str(tmp_path), table, partition_by=["part"])
    for round_ in range(1, 4):
        more = pa.table({"id": pa.array([100 * round_ + n for n in range(len(parts))], pa.int64()),
                         "part": parts})  # fmt: skip
        deltalake.write_deltalake(str(tmp_path), more, mode="append")
    dt = deltalake.DeltaTable(str(tmp_path))
    dt.delete("id = 101")
    dt.optimize.compact()
    deltalake.write_deltalake(str(tmp_path), table.slice(0, 1), mode="overwrite",
                              predicate="part = 'a b'")  # fmt: skip
    dt = deltalake.DeltaTable(str(tmp_path))
    dt.create_checkpoint()

    def same(version: int | None = None) -> None:
        theirs = deltalake.DeltaTable(str(tmp_path), version=version)
        ours = DeltaLog(str(tmp_path)).snapshot(version)
        assert ours.version == theirs.version()
        actions = pa.table(theirs.get_add_actions(flatten=False))
        assert sorted(f.path for f in ours.files.values()) == sorted(
            actions.column("path").to_pylist()
        )
        rows = scan(ours, tmp_path).select(["id", "part"]).to_pylist()
        their_rows = theirs.to_pyarrow_table().select(["id", "part"]).to_pylist()
        assert sorted(map(repr, rows)) == sorted(map(repr, their_rows))

    same()
    same(2)
    latest = DeltaLog(str(tmp_path)).snapshot()
    for version in range(latest.version):  # only delta-rs's checkpoint and the last commit remain
        (tmp_path / "_delta_log" / f"{version:020d}.json").unlink()
    assert DeltaLog(str(tmp_path)).snapshot().checkpoint_version == latest.version
    same()
