"""v2 checkpoints on write (CHECKPOINT.V2_WRITE, CHECKPOINT.LAST_CHECKPOINT): the layout
delta-spark 4.4.0 writes, read back by our impl; log compaction files on read (LOG.COMPACTION)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from test_impl_checkpoint import NOW, Table, add, metadata, rich_history, same_state

from deltaspec.impl import codec
from deltaspec.impl.actions import CommitInfo, Protocol
from deltaspec.impl.checkpoint.stats import checkpoint_stats_columns
from deltaspec.impl.checkpoint.v2 import uses_v2_checkpoint
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.errors import CorruptLogError, DeltaError, MissingVersionsError
from deltaspec.impl.log.listing import compacted_deltas_for_segment, list_log
from deltaspec.impl.log.names import (
    commit_name,
    compaction_name,
    parse_checkpoint_name,
    parse_commit_name,
    parse_compaction_name,
)
from deltaspec.impl.table.releases import Profile
from deltaspec.model import actions as model_actions
from deltaspec.model import checkpoint as model_checkpoint
from deltaspec.model import log as model_log
from deltaspec.model.profiles import Profile as ModelProfile

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
        "checkpointMetadata",
        "sidecar",
        "protocol",
        "metaData",
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
    with pytest.raises(DeltaError):
        table.log().snapshot()


# --- log compaction files (LOG.COMPACTION) -------------------------------------------------------


def compacted_table(tmp_path: Path) -> Table:
    """Commits 0-4; a compaction file of 1..3 that also adds EXTRA (so its use shows), as
    delta-spark 4.4.0 was seen to use such a file."""
    table = Table(tmp_path)
    table.commit(Protocol(1, 2), metadata(), add("part=a/f0"))
    for i in (1, 2, 3, 4):
        table.commit(add(f"part=a/f{i}"))
    compacted = [add(f"part=a/f{i}") for i in (1, 2, 3)] + [add("part=a/EXTRA")]
    (tmp_path / "_delta_log" / compaction_name(1, 3)).write_bytes(codec.encode_commit(compacted))
    return table


def paths(table: Table, version: int | None = None) -> set[str]:
    return set(table.log().snapshot(version).files_table().column("path").to_pylist())


@pytest.mark.rules("LOG.COMPACTION")
def test_compaction_used_where_delta_spark_uses_it(tmp_path: Path) -> None:
    table = compacted_table(tmp_path)
    assert "part=a/EXTRA" in paths(table)
    assert "part=a/EXTRA" in paths(table, 3)
    assert "part=a/EXTRA" not in paths(table, 2)  # time travel into its range: commits


@pytest.mark.rules("LOG.COMPACTION", "LOG.CONTIGUITY")
def test_compaction_never_stands_for_a_missing_commit(tmp_path: Path) -> None:
    table = compacted_table(tmp_path)
    (tmp_path / "_delta_log" / commit_name(2)).unlink()
    with pytest.raises(MissingVersionsError):
        table.log().snapshot()


@pytest.mark.rules("LOG.COMPACTION")
def test_malformed_compaction_is_a_typed_error(tmp_path: Path) -> None:
    table = compacted_table(tmp_path)
    (tmp_path / "_delta_log" / compaction_name(1, 3)).write_text('{"add":{"path":\n')
    with pytest.raises(CorruptLogError) as corrupt:
        table.log().snapshot()
    assert corrupt.value.table == str(tmp_path)
    assert (corrupt.value.version, corrupt.value.file) == (1, compaction_name(1, 3))
    assert "part=a/EXTRA" not in paths(table, 2)  # not used there, so not read


@pytest.mark.rules("LOG.COMPACTION")
def test_compaction_names() -> None:
    assert compaction_name(1, 3) == "00000000000000000001.00000000000000000003.compacted.json"
    assert parse_compaction_name(compaction_name(1, 3)) == (1, 3)
    assert parse_compaction_name(compaction_name(3, 3)) is None
    assert parse_commit_name(compaction_name(1, 3)) is None


CASES = [
    # start, target, commits, compactions
    (-1, 4, range(5), [(1, 3)]),
    (-1, 2, range(5), [(1, 3)]),
    (1, 4, range(5), [(1, 3)]),
    (0, 6, range(7), [(1, 3), (1, 2), (3, 5), (4, 6)]),
    (0, 6, range(7), [(2, 4), (5, 6)]),
    (2, 6, range(7), [(1, 4), (3, 6), (3, 4)]),
    (-1, 3, range(4), []),
]


@pytest.mark.rules("LOG.COMPACTION")
@pytest.mark.parametrize(("start", "target", "commits", "compactions"), CASES)
def test_selection_matches_model(
    start: int, target: int, commits: range, compactions: list[tuple[int, int]]
) -> None:
    ours = compacted_deltas_for_segment(start, target, list(commits), compactions)
    model = model_log.compacted_deltas_for_segment(start, target, list(commits), compactions)
    assert tuple(ours) == model
    assert [v for a, b in ours for v in range(a, b + 1)] == list(range(start + 1, target + 1))


def test_selection_examples() -> None:
    select = compacted_deltas_for_segment
    assert select(-1, 4, range(5), [(1, 3)]) == [(0, 0), (1, 3), (4, 4)]
    assert select(0, 6, range(7), [(1, 3), (1, 2), (3, 5)]) == [(1, 2), (3, 5), (6, 6)]
    assert select(2, 6, range(7), [(1, 4), (3, 4)]) == [(3, 4), (5, 5), (6, 6)]


# --- stats as JSON and as structs (CHECKPOINT.STATS_AS_STRUCT) ------------------------------------


@pytest.mark.rules("CHECKPOINT.STATS_AS_STRUCT")
@pytest.mark.parametrize(
    ("release", "conf", "expected"),
    [
        ("4.4.0", {}, (True, True)),
        ("3.0.0", {}, (True, True)),
        ("2.4.0", {}, (True, False)),
        ("2.4.0", {"delta.checkpoint.writeStatsAsStruct": "true"}, (True, True)),
        ("4.4.0", {"delta.checkpoint.writeStatsAsStruct": "false"}, (True, False)),
        ("2.4.0", {"delta.checkpoint.writeStatsAsJson": "false"}, (False, False)),
        ("4.4.0", {"delta.checkpoint.writeStatsAsJson": "false"}, (False, True)),
    ],
)
def test_stats_columns_match_model(
    release: str, conf: dict[str, str], expected: tuple[bool, bool]
) -> None:
    """writeStatsAsStruct defaults to true since v3.0.0 (stats_as_struct_by_default)."""
    impl_profile = Profile.parse(release)
    assert checkpoint_stats_columns(metadata(**conf), impl_profile) == expected
    model_metadata = model_actions.Metadata("t", "{}", configuration=tuple(conf.items()))
    model_profile = ModelProfile(release=impl_profile.release)
    assert model_checkpoint.checkpoint_stats_columns(model_metadata, model_profile) == expected


@pytest.mark.rules("CHECKPOINT.STATS_AS_STRUCT")
def test_stats_parsed_written_and_read_back(tmp_path: Path) -> None:
    table = Table(tmp_path)
    rich_history(table, **{"delta.checkpoint.writeStatsAsStruct": "true"})
    replayed = table.log().snapshot()
    result = write_checkpoint(table.log(), replayed, now_ms=NOW)
    adds = pq.read_table(tmp_path / "_delta_log" / result.files[0]).column("add")
    names = [f.name for f in adds.type]
    assert names[-3:] == ["stats", "partitionValues_parsed", "stats_parsed"]
    rows = [r for r in adds.to_pylist() if r is not None]
    by_path = {r["path"]: r for r in rows}
    assert by_path["part=a/f3"]["stats_parsed"] == {
        "numRecords": 3,
        "minValues": {"id": 1},
        "maxValues": {"id": 3},
        "nullCount": {"id": 0},
    }
    assert by_path["part=a/f3"]["partitionValues_parsed"] == {"part": "a"}
    assert by_path["x"]["partitionValues_parsed"] == {"part": None}
    table.drop_commits_through(replayed.version - 1)
    same_state(table.log().snapshot(), replayed)


@pytest.mark.rules("CHECKPOINT.STATS_AS_STRUCT")
def test_stats_json_can_be_left_out(tmp_path: Path) -> None:
    table = Table(tmp_path)
    rich_history(table, **{"delta.checkpoint.writeStatsAsJson": "false"})
    result = write_checkpoint(table.log(), table.log().snapshot(), now_ms=NOW)
    adds = pq.read_table(tmp_path / "_delta_log" / result.files[0]).column("add")
    assert "stats" not in [f.name for f in adds.type]


@pytest.mark.rules("LOG.COMPACTION")
def test_compaction_keeps_the_last_commits_in_commit_timestamp(tmp_path: Path) -> None:
    """A compaction file ending at the target carries no commitInfo; the snapshot's timestamp
    is still the target commit's inCommitTimestamp."""
    table = Table(tmp_path)
    ict = Protocol(1, 7, None, ("appendOnly", "inCommitTimestamp", "invariants"))
    conf = {"delta.enableInCommitTimestamps": "true"}
    log_dir = tmp_path / "_delta_log"
    log_dir.mkdir()
    for version, actions in enumerate(
        [[ict, metadata(**conf), add("part=a/f0")], [add("part=a/f1")], [add("part=a/f2")]]
    ):
        info = CommitInfo({"inCommitTimestamp": 1000 + version, "timestamp": 5})
        (log_dir / commit_name(version)).write_bytes(codec.encode_commit([info, *actions]))
    (log_dir / compaction_name(1, 2)).write_bytes(
        codec.encode_commit([add("part=a/f1"), add("part=a/f2")])
    )
    snapshot = table.log().snapshot()
    assert snapshot.version == 2 and snapshot.timestamp == 1002
    assert paths(table) == {"part=a/f0", "part=a/f1", "part=a/f2"}
