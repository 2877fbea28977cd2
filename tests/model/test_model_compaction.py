"""LOG.COMPACTION on the model: what a log compaction file of a run of commits holds."""

from __future__ import annotations

import pytest

from deltaspec.model.actions import (
    AddFile,
    Commit,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.model.log import compacted_actions
from deltaspec.model.snapshot import replay

PROTOCOL, METADATA = Protocol(1, 2), Metadata("t", "{}")
COMMITS = [
    Commit(0, (PROTOCOL, METADATA, AddFile("a"), AddFile("b"), DomainMetadata("gone", "1"))),
    Commit(1, (CommitInfo(1, "WRITE"), AddFile("c"), RemoveFile("a", 5), SetTransaction("x", 1))),
    Commit(2, (RemoveFile("c", 6), AddFile("a"), SetTransaction("x", 2))),
    Commit(3, (CommitInfo(3, "WRITE"), DomainMetadata("gone", "", removed=True), AddFile("./d"))),
]


@pytest.mark.rules("LOG.COMPACTION")
def test_a_compaction_file_holds_the_reconciled_actions_of_its_run() -> None:
    run = compacted_actions(COMMITS[1:4])
    assert not any(isinstance(a, CommitInfo) for a in run)
    assert SetTransaction("x", 2) in run and SetTransaction("x", 1) not in run
    assert RemoveFile("c", 6) in run and AddFile("c") not in run  # added and removed: a tombstone
    assert AddFile("a") in run and RemoveFile("a", 5) not in run  # removed, then added again
    assert DomainMetadata("gone", "", removed=True) in run  # removes a domain set before the run
    assert len(run) == 5


@pytest.mark.rules("LOG.COMPACTION", "SNAPSHOT.RECONCILE")
@pytest.mark.parametrize("first", [0, 1, 2])
def test_replaying_a_compaction_file_gives_the_state_of_its_last_commit(first: int) -> None:
    before = replay(COMMITS[:first])
    compacted = replay([Commit(3, compacted_actions(COMMITS[first:]))], start=before)
    whole = replay(COMMITS)
    for part in ("files", "tombstones", "app_txns", "domains", "protocol", "metadata"):
        assert getattr(compacted, part) == getattr(whole, part), part
