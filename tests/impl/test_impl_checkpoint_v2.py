"""v2 checkpoints on write (CHECKPOINT.V2_WRITE, CHECKPOINT.LAST_CHECKPOINT): the layout
delta-spark 4.4.0 writes, read back by our impl; log compaction files on read (LOG.COMPACTION)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_impl_checkpoint import NOW, Table, metadata, rich_history, same_state

from deltaspec.impl.actions import Protocol
from deltaspec.impl.checkpoint import write_checkpoint
from deltaspec.impl.checkpoint_v2 import uses_v2_checkpoint
from deltaspec.impl.log.listing import list_log
from deltaspec.impl.log.names import commit_name, parse_checkpoint_name

V2 = Protocol(3, 7, ("v2Checkpoint",), ("v2Checkpoint", "appendOnly", "invariants"))


def v2_table(tmp_path: Path, policy: str = "v2") -> Table:
    table = Table(tmp_path)
    rich_history(table, V2, **{"delta.checkpointPolicy": policy})
    return table


@pytest.mark.rules("CHECKPOINT.V2_WRITE")
def test_policy_decides_the_kind() -> None:
    assert uses_v2_checkpoint(V2, metadata(**{"delta.checkpointPolicy": "v2"}))
    assert not uses_v2_checkpoint(V2, metadata(**{"delta.checkpointPolicy": "classic"}))
    assert not uses_v2_checkpoint(V2, metadata())
    assert not uses_v2_checkpoint(Protocol(1, 2), metadata(**{"delta.checkpointPolicy": "v2"}))


@pytest.mark.rules("CHECKPOINT.V2_WRITE", "CHECKPOINT.LAST_CHECKPOINT")
def test_v2_layout_and_hint(tmp_path: Path) -> None:
    table = v2_table(tmp_path)
    log = table.log()
    snapshot = log.snapshot()
    result = write_checkpoint(log, snapshot, now_ms=NOW)
    top, sidecar = result.files
    name = parse_checkpoint_name(top)
    assert name is not None and name.kind == "v2" and top.endswith(".json")
    assert sidecar.startswith("_sidecars/") and ".checkpoint.0000000001.0000000001." in sidecar
    lines = [json.loads(x) for x in (tmp_path / "_delta_log" / top).read_text().splitlines()]
    assert [next(iter(x)) for x in lines[:4]] == [
        "checkpointMetadata", "sidecar", "protocol", "metaData"
    ]
    tags = lines[0]["checkpointMetadata"]["tags"]
    rows = pq.read_table(tmp_path / "_delta_log" / sidecar)
    assert rows.column_names == ["add", "remove"]
    assert tags["sidecarNumActions"] == str(rows.num_rows)
    assert tags["numOfAddFiles"] == str(snapshot.num_files)
    assert lines[1]["sidecar"]["path"] == sidecar.split("/")[1]
    hint = json.loads((tmp_path / "_delta_log" / "_last_checkpoint").read_text())
    assert list(hint) == ["version", "size", "sizeInBytes", "numOfAddFiles", "v2Checkpoint"]
    assert hint["size"] == len(lines) + rows.num_rows
    v2 = hint["v2Checkpoint"]
    assert list(v2) == ["path", "sizeInBytes", "modificationTime", "nonFileActions", "sidecarFiles"]
    assert v2["path"] == top
    assert next(iter(v2["nonFileActions"][-1])) == "checkpointMetadata"
    assert v2["sidecarFiles"][0]["path"] == lines[1]["sidecar"]["path"]


@pytest.mark.rules("CHECKPOINT.V2_WRITE", "CHECKPOINT.READ")
def test_v2_reads_back_without_commits(tmp_path: Path) -> None:
    table = v2_table(tmp_path)
    replayed = table.log().snapshot()
    write_checkpoint(table.log(), replayed, now_ms=NOW)
    table.drop_commits_through(replayed.version - 1)
    ours = table.log().snapshot()
    same_state(ours, replayed)
    listing = list_log(table.store)
    assert [cp.kind for cp in listing.checkpoints[replayed.version]] == ["v2"]


@pytest.mark.rules("CHECKPOINT.V2_WRITE")
def test_classic_policy_writes_classic(tmp_path: Path) -> None:
    table = v2_table(tmp_path, policy="classic")
    result = write_checkpoint(table.log(), table.log().snapshot(), parts=3, now_ms=NOW)
    assert result.files == (f"{table.version:020d}.checkpoint.parquet",)


@pytest.mark.rules("CHECKPOINT.V2_WRITE")
def test_missing_sidecar_makes_v2_unusable(tmp_path: Path) -> None:
    table = v2_table(tmp_path)
    result = write_checkpoint(table.log(), table.log().snapshot(), now_ms=NOW)
    (tmp_path / "_delta_log" / result.files[1]).unlink()
    # the commits are still there: the reader falls back to them
    assert table.log().snapshot().version == table.version
    (tmp_path / "_delta_log" / commit_name(0)).unlink()
    with pytest.raises(Exception):
        table.log().snapshot()
