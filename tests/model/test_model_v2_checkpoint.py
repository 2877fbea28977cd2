"""CHECKPOINT.V2_WRITE on the model: how a v2 checkpoint splits CHECKPOINT.CONTENTS' actions
between its sidecar and its top-level file, and the counts a writer states about them."""

from __future__ import annotations

import pytest

from deltaspec.model.actions import (
    AddFile,
    Commit,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.model.snapshot import replay
from deltaspec.model.v2_checkpoint import v2_checkpoint

FUTURE = 4_102_444_800_000


@pytest.mark.rules("CHECKPOINT.V2_WRITE", "CHECKPOINT.LAST_CHECKPOINT")
def test_the_sidecar_carries_the_live_files_and_the_unexpired_tombstones() -> None:
    protocol, metadata = (
        Protocol(3, 7, frozenset(), frozenset({"v2Checkpoint"})),
        Metadata("t", "{}"),
    )
    snapshot = replay(
        [
            Commit(0, (protocol, metadata, AddFile("a"), AddFile("b"), AddFile("c"))),
            Commit(1, (RemoveFile("a", FUTURE), RemoveFile("b", 0), SetTransaction("app", 1))),
            Commit(2, (DomainMetadata("d", "x"),)),
        ]
    )
    checkpoint = v2_checkpoint(snapshot, now=FUTURE - 1)
    assert checkpoint.version == 2
    assert sorted(type(a).__name__ + a.path for a in checkpoint.sidecar_actions) == [
        "AddFilec",
        "RemoveFilea",
    ]  # b's tombstone expired
    assert checkpoint.sidecar_num_actions == 2  # tombstones count, not only adds
    assert checkpoint.num_of_add_files == 1
    assert set(checkpoint.non_file_actions) == {
        protocol, metadata, SetTransaction("app", 1), DomainMetadata("d", "x"),
    }  # fmt: skip
    assert checkpoint.size == 2 + 2 + 4  # the sidecar's rows, checkpointMetadata and sidecar
