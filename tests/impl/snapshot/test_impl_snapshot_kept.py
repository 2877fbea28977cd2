"""A writer's ``DeltaLog`` (which keeps checkpoint states, decoded commits and the last snapshot
it built) loads the same snapshot as a cold load, after every commit of a random history written
by it and by another writer, with checkpoints, checksums and log cleanup running after commits."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import examples

from deltaspec.impl.actions import AddFile, Metadata, Protocol, RemoveFile, SetTransaction
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.snapshot.state import Snapshot
from deltaspec.impl.txn.transaction import OptimisticTransaction

NOW = 1_700_000_000_000
SCHEMA = json.dumps(
    {
        "type": "struct",
        "fields": [{"name": "p", "type": "integer", "nullable": True, "metadata": {}}],
    }
)
STEP = st.tuples(
    st.sampled_from(["ours", "ours", "other"]),
    st.sampled_from(["append", "remove", "txn"]),
    st.integers(0, 3),
)


def _digest(snapshot: Snapshot) -> dict[str, Any]:
    return {
        "version": snapshot.version,
        "checkpoint": snapshot.checkpoint_version,
        "timestamp": snapshot.timestamp,
        "protocol": snapshot.protocol,
        "metadata": snapshot.metadata,
        "files": sorted(snapshot.files.items()),
        "tombstones": sorted(snapshot.tombstones.items()),
        "txns": sorted(snapshot.app_transactions.items()),
        "domains": sorted(snapshot.domains.items()),
    }


def _step(log: DeltaLog, kind: str, n: int, counter: int) -> None:
    txn = OptimisticTransaction(log, clock=lambda: NOW + counter)
    live = sorted(txn.snapshot.files.values(), key=lambda f: f.path) if txn.snapshot else []
    if kind == "remove" and live:
        doomed = live[n % len(live)]
        txn.commit([RemoveFile(doomed.path, NOW, True, True, doomed.partition_values, 1)])
    elif kind == "txn":
        txn.commit([SetTransaction(f"app-{n}", counter, NOW)])
    else:
        txn.commit([AddFile(f"p={n}/f{counter}.parquet", {"p": str(n)}, 10, NOW, True)])


@pytest.mark.rules("SNAPSHOT.REPLAY", "CHECKPOINT.READ")
@examples(0.25)
@given(steps=st.lists(STEP, min_size=1, max_size=14), interval=st.sampled_from([2, 3, 100]))
def test_a_writers_log_loads_what_a_cold_load_loads(
    steps: list[tuple[str, str, int]], interval: int
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "t"
        ours = DeltaLog(root, clock=lambda: NOW)
        other = DeltaLog(root, clock=lambda: NOW)
        configuration = {"delta.checkpointInterval": str(interval)}
        OptimisticTransaction(ours, None, clock=lambda: NOW).commit(
            [Protocol(1, 2), Metadata("t", SCHEMA, ("p",), configuration)]
        )
        for counter, (writer, kind, n) in enumerate(steps, start=1):
            _step(ours if writer == "ours" else other, kind, n, counter)
            cold = DeltaLog(root, clock=lambda: NOW, cache=False)
            assert _digest(ours.snapshot()) == _digest(cold.snapshot())
            version = ours.snapshot().version
            assert _digest(ours.snapshot(version - 1)) == _digest(cold.snapshot(version - 1))
