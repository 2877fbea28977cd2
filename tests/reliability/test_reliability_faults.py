"""Faulty storage under the transaction path (deltaspec.impl.log.faults.FaultyLogStore).

Each fault a LogStore may show — a write that fails, a write that lands but reports failure, a
rename of ``_last_checkpoint`` that fails, a listing one version behind, a slow listing, a failed
read or delete — is injected on purpose, first one at a time with a precise expectation, then all
at random under concurrent writers. Outcomes must stay correct: a commit that returns a version is
at that version, once; a commit that raises is not in the log (unless the error says its outcome
is unknown); the log stays well formed and the history keeps its isolation promises.
"""

from __future__ import annotations

import errno
import os
import random
import threading
import time
from pathlib import Path

import pytest
from support import (
    append_rows,
    create_reliability_table,
    deltalake_view,
    log_problems,
    run_operation,
    txn_ids_in_log,
    write_data_file,
)

from deltaspec.conformance.isolation.checker import check
from deltaspec.conformance.tools.inspect import history_from_log
from deltaspec.impl import errors
from deltaspec.impl.log import local_store
from deltaspec.impl.log.faults import Fault, FaultPlan, FaultyLogStore
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import commit_name, is_temp_name
from deltaspec.impl.log.store import TEMP_FILE_SAFETY_MS
from deltaspec.impl.snapshot.delta_log import DeltaLog, wall_clock_ms
from deltaspec.impl.table.releases import Profile
from deltaspec.impl.txn.retries import MAX_FAILED_WRITES
from deltaspec.impl.txn.transaction import OptimisticTransaction


def faulty_log(root: Path, plan: FaultPlan | None = None) -> tuple[DeltaLog, FaultyLogStore]:
    store = FaultyLogStore(LocalLogStore(root), plan)
    return DeltaLog(str(root), store=store), store


def blind_append(log: DeltaLog, part: str = "a", **kw: object) -> OptimisticTransaction:
    txn = OptimisticTransaction(log, **kw)  # type: ignore[arg-type]
    txn.stage([write_data_file(log.table_path, part, [1])])
    return txn


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "TXN.COMMIT_INFO", "RETRY.ATTEMPT_VERSION")
@pytest.mark.parametrize("release", ["4.4.0", "1.0.0"])  # with and without commitInfo.txnId
def test_lost_acknowledgement_is_resolved_by_reading_the_log(tmp_path: Path, release: str) -> None:
    create_reliability_table(tmp_path)
    log, store = faulty_log(tmp_path)
    store.force(Fault.WRITE_LOST_ACK)
    txn = blind_append(log, profile=Profile.parse(release))
    assert txn.commit() == 1
    assert store.injected[Fault.WRITE_LOST_ACK] == 1
    assert log.latest_version() == 1  # not committed a second time at version 2
    if release == "4.4.0":
        assert txn_ids_in_log(tmp_path)[txn.txn_id] == [1]


@pytest.mark.rules("RETRY.NEXT_VERSION", "LOG.PUT_IF_ABSENT")
def test_failed_write_and_another_winner_is_a_lost_race(tmp_path: Path) -> None:
    """The write fails; reading back finds a concurrent writer's commit there: retry after it."""
    create_reliability_table(tmp_path)
    inner = LocalLogStore(tmp_path)

    class RacedStore(FaultyLogStore):
        def write_new(self, name: str, data: bytes) -> None:
            if name == commit_name(1) and not inner.exists(name):
                append_rows(DeltaLog(str(tmp_path)), "b", [2])  # the winner lands first
                raise OSError(errno.EIO, "injected: connection reset")
            super().write_new(name, data)

    log = DeltaLog(str(tmp_path), store=RacedStore(inner))
    txn = blind_append(log)
    assert txn.commit() == 2
    assert txn_ids_in_log(tmp_path)[txn.txn_id] == [2]


@pytest.mark.rules("RETRY.NEXT_VERSION", "LOG.PUT_IF_ABSENT")
def test_a_write_that_lands_late_is_recognised_as_our_own(tmp_path: Path) -> None:
    """The write reports failure and is not visible yet; when it lands, the retry of the same
    version collides with it, and the winner check recognises the txnId instead of committing the
    same actions again at the next version (RETRY.NO_SELF_DETECTION is what delta-spark does)."""
    create_reliability_table(tmp_path)
    inner = LocalLogStore(tmp_path)

    class LateStore(FaultyLogStore):
        delayed: bytes | None = None

        def write_new(self, name: str, data: bytes) -> None:
            if self.delayed is None and name == commit_name(1):
                self.delayed = data
                raise OSError(errno.ETIMEDOUT, "injected: timed out")
            if self.delayed is not None and not inner.exists(commit_name(1)):
                inner.write_new(commit_name(1), self.delayed)  # the first request lands now
            super().write_new(name, data)

    log = DeltaLog(str(tmp_path), store=LateStore(inner))
    txn = blind_append(log)
    assert txn.commit() == 1
    assert log.latest_version() == 1
    assert txn_ids_in_log(tmp_path)[txn.txn_id] == [1]


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "RETRY.ATTEMPT_VERSION")
def test_a_failed_write_is_retried_at_the_same_version(tmp_path: Path) -> None:
    create_reliability_table(tmp_path)
    log, store = faulty_log(tmp_path)
    store.force(Fault.WRITE_FAILS, times=3)
    txn = blind_append(log)
    assert txn.commit() == 1
    assert store.injected[Fault.WRITE_FAILS] == 3
    assert not [n for n in os.listdir(tmp_path / "_delta_log") if is_temp_name(n)]


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_writes_that_keep_failing_give_up_with_nothing_committed(tmp_path: Path) -> None:
    create_reliability_table(tmp_path)
    log, store = faulty_log(tmp_path, FaultPlan({Fault.WRITE_FAILS: 1.0}))
    txn = blind_append(log)
    with pytest.raises(errors.CommitFailedError) as raised:
        txn.commit()
    assert raised.value.version == 1 and raised.value.file == commit_name(1)
    assert raised.value.table == str(tmp_path)
    assert store.injected[Fault.WRITE_FAILS] == MAX_FAILED_WRITES
    assert LocalLogStore(tmp_path).exists(commit_name(1)) is False
    assert txn.txn_id not in txn_ids_in_log(tmp_path)


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_unreadable_log_after_a_lost_acknowledgement_is_an_unknown_outcome(tmp_path: Path) -> None:
    create_reliability_table(tmp_path)
    log, store = faulty_log(tmp_path)
    txn = blind_append(log)
    store.force(Fault.WRITE_LOST_ACK)
    store.force(Fault.READ_FAILS, times=3)
    with pytest.raises(errors.CommitOutcomeUnknownError) as raised:
        txn.commit()
    assert raised.value.version == 1 and txn.txn_id in str(raised.value)
    assert txn_ids_in_log(tmp_path)[txn.txn_id] == [1]  # it did land: "unknown" was honest


@pytest.mark.rules("LOG.LISTING", "RETRY.NEXT_VERSION", "LOG.CONTIGUITY")
def test_stale_listing_never_leaves_a_gap_or_a_lost_commit(tmp_path: Path) -> None:
    base = create_reliability_table(tmp_path)
    for part in "abc":
        append_rows(base, part, [1])
    log, store = faulty_log(tmp_path)
    store.force(Fault.STALE_LISTING, times=2)
    txn = blind_append(log)
    assert txn.read_version == 2  # the listing hid version 3
    append_rows(base, "b", [5])  # and version 4 is a concurrent winner
    assert txn.commit() == 5
    assert store.injected[Fault.STALE_LISTING] == 2  # the begin's listing and the retry's
    assert log_problems(tmp_path) == []
    assert sorted(txn_ids_in_log(tmp_path)[txn.txn_id]) == [5]


@pytest.mark.rules("CHECKPOINT.LAST_CHECKPOINT", "CHECKPOINT.INTERVAL")
def test_failed_rename_of_last_checkpoint_never_fails_the_commit(tmp_path: Path) -> None:
    create_reliability_table(tmp_path, **{"delta.checkpointInterval": "2"})
    log, store = faulty_log(tmp_path)
    store.force(Fault.OVERWRITE_FAILS)
    append_rows(log, "a", [1])
    version, _, _ = append_rows(log, "b", [2])  # version 2: checkpoint, hint write fails
    assert version == 2 and store.injected[Fault.OVERWRITE_FAILS] == 1
    assert (tmp_path / "_delta_log" / "00000000000000000002.checkpoint.parquet").exists()
    assert not (tmp_path / "_delta_log" / "_last_checkpoint").exists()
    assert DeltaLog(str(tmp_path)).snapshot().checkpoint_version == 2  # found by listing
    assert log_problems(tmp_path) == []
    assert deltalake_view(tmp_path)[0] == 2


@pytest.mark.rules("RETENTION.LOG")
def test_failed_delete_in_log_cleanup_never_fails_the_commit(tmp_path: Path) -> None:
    ahead = 60 * 24 * 3600 * 1000
    create_reliability_table(tmp_path, **{"delta.checkpointInterval": "2"})
    store = FaultyLogStore(LocalLogStore(tmp_path))
    log = DeltaLog(str(tmp_path), store=store, clock=lambda: wall_clock_ms() + ahead)
    store.force(Fault.DELETE_FAILS)
    append_rows(log, "a", [1])
    assert append_rows(log, "b", [2])[0] == 2
    assert store.injected[Fault.DELETE_FAILS] == 1
    assert (tmp_path / "_delta_log" / commit_name(0)).exists()  # cleanup stopped at once
    append_rows(log, "a", [3])
    append_rows(log, "a", [4])  # the next checkpoint's cleanup finishes the job
    assert not (tmp_path / "_delta_log" / commit_name(0)).exists()
    assert log_problems(tmp_path) == []


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "LOG.ATOMIC_VISIBILITY")
def test_failed_link_in_the_local_store_is_retried(tmp_path: Path, monkeypatch) -> None:
    create_reliability_table(tmp_path)
    real_link = os.link
    failures = []

    def flaky_link(src: str, dst: str) -> None:
        if not failures:
            failures.append(dst)
            raise OSError(errno.EIO, "injected: link failed")
        real_link(src, dst)

    monkeypatch.setattr(local_store.os, "link", flaky_link)
    txn = blind_append(DeltaLog(str(tmp_path)))
    assert txn.commit() == 1 and len(failures) == 1
    assert not [n for n in os.listdir(tmp_path / "_delta_log") if is_temp_name(n)]


@pytest.mark.rules("LOG.LISTING", "RETENTION.LOG")
def test_temp_sweep_keeps_young_files_and_a_swept_temp_only_fails_one_write(
    tmp_path: Path, monkeypatch
) -> None:
    create_reliability_table(tmp_path)
    log_dir = tmp_path / "_delta_log"
    young = log_dir / f".{commit_name(5)}.{'a' * 32}.tmp"
    old = log_dir / f".{commit_name(6)}.{'b' * 32}.tmp"
    young.write_bytes(b"x")
    old.write_bytes(b"x")
    stamp = time.time() - 2 * 3600
    os.utime(old, (stamp, stamp))
    store = LocalLogStore(tmp_path)
    assert store.sweep_temp_files(wall_clock_ms() - TEMP_FILE_SAFETY_MS) == [old.name]
    assert young.exists()
    # a sweeper removes a live writer's temporary file just before its link
    real_link = os.link
    swept: list[str] = []

    def swept_link(src: str, dst: str) -> None:
        if not swept:
            swept.append(src)
            os.unlink(src)
        real_link(src, dst)

    monkeypatch.setattr(local_store.os, "link", swept_link)
    txn = blind_append(DeltaLog(str(tmp_path)))
    assert txn.commit() == 1  # ENOENT on the link: not written, retried
    assert txn_ids_in_log(tmp_path)[txn.txn_id] == [1]


# --- everything at once, concurrent writers ------------------------------------------------------

PROBABILITIES = {
    Fault.WRITE_FAILS: 0.1,
    Fault.WRITE_LOST_ACK: 0.15,
    Fault.OVERWRITE_FAILS: 0.3,
    Fault.STALE_LISTING: 0.3,
    Fault.SLOW_LISTING: 0.2,
    Fault.READ_FAILS: 0.02,
}
"""DELETE_FAILS needs an expired log to clean up, which would also delete the commits whose
txnIds this test looks for: it has its own test above."""


def run_faulty_writers(root: Path, writers: int, ops: int, seed: int) -> dict[str, object]:
    """``writers`` threads × ``ops`` operations, each thread through its own FaultyLogStore."""
    create_reliability_table(root, **{"delta.checkpointInterval": "4"})
    for part in "abc":
        append_rows(DeltaLog(str(root)), part, [0])
    acknowledged: dict[str, int] = {}
    failed: list[str] = []
    unknown: list[str] = []
    conflicts = 0
    stores: list[FaultyLogStore] = []
    lock = threading.Lock()

    def writer(index: int) -> None:
        nonlocal conflicts
        rng = random.Random(seed * 100 + index)
        store = FaultyLogStore(LocalLogStore(root), FaultPlan(PROBABILITIES, seed * 100 + index))
        stores.append(store)
        log = DeltaLog(str(root), store=store)
        for _ in range(ops):
            kind = rng.choice(["append", "append", "delete", "compact", "checkpoint"])
            txn: OptimisticTransaction | None = None
            try:
                txn, version = run_operation(log, kind, rng, holder := [])
            except errors.DeltaConcurrentModificationException:
                with lock:
                    conflicts += 1
                continue
            except errors.CommitOutcomeUnknownError:
                with lock:
                    unknown.extend(t.txn_id for t in holder)
                continue
            except (OSError, errors.DeltaError):
                with lock:
                    failed.extend(t.txn_id for t in holder)
                continue
            if txn is not None and version is not None:
                with lock:
                    acknowledged[txn.txn_id] = version

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    injected: dict[str, int] = {}
    for store in stores:
        for fault, count in store.injected.items():
            injected[fault.name] = injected.get(fault.name, 0) + count
    return {
        "acknowledged": acknowledged,
        "failed": failed,
        "unknown": unknown,
        "conflicts": conflicts,
        "injected": injected,
    }


@pytest.mark.rules(
    "LOG.PUT_IF_ABSENT", "LOG.CONTIGUITY", "RETRY.NEXT_VERSION", "CHECKPOINT.LAST_CHECKPOINT"
)
def test_concurrent_writers_on_faulty_storage_stay_correct(tmp_path: Path) -> None:
    """Rounds of the run below, each on a new table, until every fault kind has fired at least
    once (thread timing decides how many checkpoints reach ``_last_checkpoint``; one round does
    not always rename it, so a single seed cannot promise every kind)."""
    injected: set[str] = set()
    for seed in range(8, 14):
        injected |= assert_faulty_run_stays_correct(tmp_path / f"round-{seed}", seed)
        if {f.name for f in PROBABILITIES} <= injected:
            break
    assert {f.name for f in PROBABILITIES} <= injected


def assert_faulty_run_stays_correct(root: Path, seed: int) -> set[str]:
    """One concurrent faulty run on ``root``, checked; returns the fault kinds it injected."""
    result = run_faulty_writers(root, writers=4, ops=12, seed=seed)
    in_log = txn_ids_in_log(root)
    assert all(len(versions) == 1 for versions in in_log.values()), "a commit landed twice"
    acknowledged = result["acknowledged"]
    assert isinstance(acknowledged, dict) and len(acknowledged) >= 10
    for txn_id, version in acknowledged.items():
        assert in_log[txn_id] == [version]
    for txn_id in result["failed"]:  # type: ignore[attr-defined]
        assert txn_id not in in_log
    assert log_problems(root) == []
    assert check(history_from_log(str(root))) == ()
    version, files = deltalake_view(root)
    snapshot = DeltaLog(str(root)).snapshot()
    assert (version, files) == (snapshot.version, sorted(p for p, _ in snapshot.files))
    injected = result["injected"]
    assert isinstance(injected, dict)
    return set(injected)
