"""Log cleanup looks only at the prefix of the log that may expire, and deletes exactly what the
rule over the whole listing deletes (RETENTION.LOG), whatever the files' modification times."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import examples

from deltaspec.impl.actions import AddFile, Metadata, Protocol
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import is_checkpoint_name, log_file_version
from deltaspec.impl.retention.log_cleanup import cleanup_expired_logs
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.table.properties import DAY_MS
from deltaspec.impl.txn.transaction import OptimisticTransaction

NOW = 1_700_000_000_000
RETENTION_DAYS = 2
SCHEMA = json.dumps({"type": "struct", "fields": []})


def _expected(store: LocalLogStore, checkpoint_version: int, now_ms: int) -> list[str]:
    """RETENTION.LOG over the whole listing, as the rule states it."""
    cutoff = now_ms - RETENTION_DAYS * DAY_MS
    cutoff -= cutoff % DAY_MS
    entries: list[tuple[str, int, int]] = []
    for info in store.list_from(""):
        version = log_file_version(info.name)
        if version is None or version > checkpoint_version:
            continue
        time = info.modification_time
        if entries and time <= entries[-1][2]:
            time = entries[-1][2] + 1
        entries.append((info.name, version, time))
    starts = [
        i
        for i, (name, version, _) in enumerate(entries)
        if is_checkpoint_name(name) and (i == 0 or entries[i - 1][1] != version)
    ]
    for index in reversed(starts):
        previous = entries[index - 1] if index > 0 else None
        if previous is not None and previous[1] < checkpoint_version and previous[2] <= cutoff:
            return [name for name, _, _ in entries[:index]]
    return []


@pytest.mark.rules("RETENTION.LOG")
@examples(0.25)
@given(
    days=st.lists(st.integers(0, 6), min_size=8, max_size=8),
    checkpoints=st.sets(st.integers(1, 7), max_size=4),
)
def test_cleanup_deletes_what_the_whole_listing_says(
    days: list[int], checkpoints: set[int]
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory) / "t"
        log = DeltaLog(root, clock=lambda: NOW, cache=False)
        configuration = {
            "delta.checkpointInterval": "1000",
            "delta.logRetentionDuration": f"interval {RETENTION_DAYS} days",
        }
        OptimisticTransaction(log, None, clock=lambda: NOW).commit(
            [Protocol(1, 2), Metadata("t", SCHEMA, (), configuration)]
        )
        for i in range(1, 8):
            OptimisticTransaction(log).commit([AddFile(f"f{i}", {}, 1, NOW, True)])
            if i in checkpoints:
                write_checkpoint(log, log.snapshot(i), now_ms=NOW)
        log_dir = root / "_delta_log"
        for name in os.listdir(log_dir):  # ages in days, per version, not in version order
            version = log_file_version(name)
            if version is not None:
                stamp = (NOW - days[version] * DAY_MS) * 1_000_000
                os.utime(log_dir / name, ns=(stamp, stamp))
        store = LocalLogStore(root)
        expected = _expected(store, 7, NOW)
        metadata = log.snapshot().metadata
        deleted = cleanup_expired_logs(log, 7, NOW, metadata)
        assert [n for n in deleted if not n.startswith(".")] == expected
