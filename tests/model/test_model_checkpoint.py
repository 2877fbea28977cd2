"""Checkpoints and retention (CHECKPOINT.*, RETENTION.*).

Durations are computed here from a unit table of the test's own, never with
the model's interval parser; log cleanup is checked against RETENTION.LOG as
the spec states it (whole runs of commits before a checkpoint), over commit
files and a single checkpoint.
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import examples

from deltaspec.model.actions import (
    Action,
    AddCDCFile,
    AddFile,
    Commit,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.model.checkpoint import (
    checkpoint_actions,
    cleanup_may_truncate,
    expired_log_versions,
    min_file_retention_timestamp,
    needs_checkpoint,
    snapshot_from_checkpoint,
)
from deltaspec.model.log import Log
from deltaspec.model.profiles import profile
from deltaspec.model.snapshot import Snapshot, replay

HOUR = 3_600_000
DAY = 24 * HOUR
WEEK = 7 * DAY
UNIT = {"hour": HOUR, "day": DAY, "week": WEEK}
SCHEMA = json.dumps({"type": "struct", "fields": [{"name": "x", "type": "integer"}]})


def duration(text: str) -> int:
    match = re.fullmatch(r"interval (\d+) (hour|day|week)s?", text)
    assert match is not None, text
    return int(match[1]) * UNIT[match[2]]


def metadata(**conf: str) -> Metadata:
    return Metadata("t", SCHEMA, configuration=tuple(sorted(conf.items())))


NOW = 100 * DAY + 5 * HOUR

tombstone_retentions = st.sampled_from(
    [None, "interval 2 days", "interval 36 hours", "interval 1 week", "interval 3 days"]
)
txn_retentions = st.sampled_from([None, "interval 1 day", "interval 2 days", "interval 30 hours"])


@st.composite
def table_metadata(draw: st.DrawFn) -> Metadata:
    conf = {}
    if (tombstones := draw(tombstone_retentions)) is not None:
        conf["delta.deletedFileRetentionDuration"] = tombstones
    if (txns := draw(txn_retentions)) is not None:
        conf["delta.setTransactionRetentionDuration"] = txns
    return metadata(**conf)


times = st.integers(NOW - 10 * DAY, NOW)
paths = st.sampled_from(["a", "b", "c", "d"])
dvs = st.sampled_from([None, "dv1"])
body_actions = st.one_of(
    st.builds(AddFile, path=paths, dv_id=dvs, size=st.integers(1, 99)),
    st.builds(AddFile, path=paths, dv_id=dvs, size=st.integers(1, 99)),
    st.builds(RemoveFile, path=paths, dv_id=dvs, deletion_timestamp=st.one_of(st.none(), times)),
    st.builds(RemoveFile, path=paths, dv_id=dvs, deletion_timestamp=times),
    st.builds(SetTransaction, st.sampled_from(["x", "y", "z"]), st.integers(0, 9), times),
    st.builds(
        DomainMetadata, st.sampled_from(["d1", "d2"]), st.sampled_from(["", "1"]), st.booleans()
    ),
    st.builds(CommitInfo, timestamp=times, operation=st.just("WRITE")),
    st.builds(AddCDCFile, path=paths),
    table_metadata(),
    st.builds(Protocol, st.integers(1, 3), st.integers(2, 7)),
)


@st.composite
def logs(draw: st.DrawFn) -> Log:
    first = (Protocol(1, 2), draw(table_metadata()), *draw(st.lists(body_actions, max_size=4)))
    bodies = [first, *draw(st.lists(st.lists(body_actions, max_size=5).map(tuple), max_size=7))]
    log = Log()
    for version, body in enumerate(bodies):
        landed = log.write_new(version, body, 1000 + version)
        assert landed is not None
        log = landed
    return log


def tombstone_cutoff(snapshot: Snapshot, now: int) -> int:
    text = (
        None
        if snapshot.metadata is None
        else snapshot.metadata.property("delta.deletedFileRetentionDuration")
    )
    return now - (WEEK if text is None else duration(text))


def txn_cutoff(snapshot: Snapshot, now: int) -> int | None:
    text = (
        None
        if snapshot.metadata is None
        else snapshot.metadata.property("delta.setTransactionRetentionDuration")
    )
    return None if text is None else now - duration(text)


def kept_txn(txn: SetTransaction, cutoff: int | None) -> bool:
    """delta-spark's InMemoryLogReplay.getTransactions: ``lastUpdated.exists(_ > cutoff)``."""
    return cutoff is None or (txn.last_updated is not None and txn.last_updated > cutoff)


def of_type(actions: tuple[Action, ...], kind: type) -> list:
    return [a for a in actions if isinstance(a, kind)]


# --------------------------------------------------------------------------------------------
# CHECKPOINT.CONTENTS, CHECKPOINT.READ and the retention of what a checkpoint keeps
# --------------------------------------------------------------------------------------------


@pytest.mark.rules("CHECKPOINT.CONTENTS", "RETENTION.TOMBSTONES", "RETENTION.SET_TRANSACTION")
@examples(0.5)
@given(logs(), st.data())
def test_checkpoint_contents(log, data):
    version = data.draw(st.integers(0, log.latest_version))
    now = data.draw(st.integers(NOW - DAY, NOW + 8 * DAY))
    snapshot = log.snapshot(version)
    cp = checkpoint_actions(snapshot, now)

    assert of_type(cp, Protocol) == [snapshot.protocol]
    assert of_type(cp, Metadata) == [snapshot.metadata]
    assert not of_type(cp, CommitInfo)
    assert not of_type(cp, AddCDCFile)
    adds = of_type(cp, AddFile)
    assert sorted(adds, key=repr) == sorted(snapshot.files.values(), key=repr)
    cutoff = tombstone_cutoff(snapshot, now)
    assert sorted(of_type(cp, RemoveFile), key=repr) == sorted(
        (r for r in snapshot.tombstones.values() if (r.deletion_timestamp or 0) > cutoff), key=repr
    )
    assert sorted(of_type(cp, DomainMetadata), key=repr) == sorted(
        snapshot.domains.values(), key=repr
    )
    assert not any(d.removed for d in of_type(cp, DomainMetadata))
    txn_limit = txn_cutoff(snapshot, now)
    assert sorted(of_type(cp, SetTransaction), key=repr) == sorted(
        (t for t in snapshot.app_txns.values() if kept_txn(t, txn_limit)), key=repr
    )


@pytest.mark.rules("CHECKPOINT.READ", "CHECKPOINT.CONTENTS", "RETENTION.TOMBSTONES")
@examples(0.5)
@given(logs(), st.data())
def test_a_checkpoint_plus_later_commits_rebuilds_the_latest_snapshot(log, data):
    version = data.draw(st.integers(0, log.latest_version))
    now = data.draw(st.integers(NOW - DAY, NOW + 8 * DAY))
    at = log.snapshot(version)
    later = log.commits[version + 1 :]
    rebuilt = snapshot_from_checkpoint(version, checkpoint_actions(at, now), later)
    full = log.snapshot()

    assert rebuilt.version == full.version
    assert rebuilt.protocol == full.protocol
    assert rebuilt.metadata == full.metadata
    assert dict(rebuilt.files) == dict(full.files)
    assert dict(rebuilt.domains) == dict(full.domains)

    touched_keys = {
        (a.path, a.dv_id) for c in later for a in c.actions if isinstance(a, AddFile | RemoveFile)
    }
    cutoff = tombstone_cutoff(at, now)
    assert set(rebuilt.tombstones) <= set(full.tombstones)
    for key, remove in full.tombstones.items():
        if key in touched_keys or (remove.deletion_timestamp or 0) > cutoff:
            assert rebuilt.tombstones.get(key) == remove
        else:
            assert key not in rebuilt.tombstones  # expired before the checkpoint was written

    touched_apps = {a.app_id for c in later for a in c.actions if isinstance(a, SetTransaction)}
    txn_limit = txn_cutoff(at, now)
    assert dict(rebuilt.app_txns) == {
        app: txn
        for app, txn in full.app_txns.items()
        if app in touched_apps or kept_txn(txn, txn_limit)
    }


@pytest.mark.rules("CHECKPOINT.READ")
def test_a_checkpoint_alone_stands_for_its_version():
    log = Log()
    bodies: list[tuple[Action, ...]] = [
        (Protocol(1, 2), metadata(), AddFile("a"), SetTransaction("x", 1, NOW)),
        (RemoveFile("a", NOW), AddFile("b"), DomainMetadata("d", "1")),
        (CommitInfo(NOW, "WRITE"), AddCDCFile("c"), AddFile("c")),
    ]
    for version, body in enumerate(bodies):
        log = log.write_new(version, body, version)
    for version in range(3):
        at = log.snapshot(version)
        rebuilt = snapshot_from_checkpoint(version, checkpoint_actions(at, NOW), [])
        assert rebuilt.version == version
        assert (rebuilt.files, rebuilt.tombstones) == (at.files, at.tombstones)
        assert (rebuilt.app_txns, rebuilt.domains) == (at.app_txns, at.domains)
        assert (rebuilt.protocol, rebuilt.metadata) == (at.protocol, at.metadata)


@pytest.mark.rules("CHECKPOINT.CONTENTS")
def test_no_checkpoint_without_protocol_and_metadata():
    with pytest.raises(ValueError):
        checkpoint_actions(Snapshot(), NOW)
    with pytest.raises(ValueError):
        checkpoint_actions(replay([Commit(0, (AddFile("a"),))]), NOW)


# --------------------------------------------------------------------------------------------
# CHECKPOINT.INTERVAL and CHECKPOINT.COMMITTED_VERSION
# --------------------------------------------------------------------------------------------


@pytest.mark.rules("CHECKPOINT.INTERVAL")
@given(st.integers(1, 25), st.integers(0, 120))
def test_checkpoints_fall_on_nonzero_multiples_of_the_interval(interval, horizon):
    table = metadata(**{"delta.checkpointInterval": str(interval)})
    chosen = {v for v in range(horizon + 1) if needs_checkpoint(v, table)}
    assert chosen == set(range(interval, horizon + 1, interval))


@pytest.mark.rules("CHECKPOINT.INTERVAL")
@pytest.mark.parametrize("table", [None, metadata(), metadata(**{"delta.appendOnly": "true"})])
def test_the_default_interval_is_ten(table):
    assert [v for v in range(45) if needs_checkpoint(v, table)] == [10, 20, 30, 40]


def _log_of(bodies: list[tuple[Action, ...]]) -> Log:
    log = Log()
    for version, body in enumerate(bodies):
        log = log.write_new(version, body, 1000 * version)
    return log


@pytest.mark.rules("CHECKPOINT.COMMITTED_VERSION", "CHECKPOINT.INTERVAL")
def test_the_interval_is_read_from_the_committed_version():
    bodies: list[tuple[Action, ...]] = [(Protocol(1, 2), metadata())]
    bodies += [(AddFile(f"f{v}"),) for v in range(1, 6)]
    bodies.append((metadata(**{"delta.checkpointInterval": "3"}),))  # version 6
    log = _log_of(bodies)
    # the post-commit snapshot of version 6 carries the new interval, which makes 6 a checkpoint
    assert needs_checkpoint(6, log.snapshot(6).metadata)
    assert not needs_checkpoint(6, log.snapshot(5).metadata)
    assert not needs_checkpoint(3, log.snapshot(3).metadata)


@pytest.mark.rules("CHECKPOINT.COMMITTED_VERSION", "CHECKPOINT.READ")
def test_the_checkpoint_is_of_the_committed_version_even_after_later_commits():
    bodies: list[tuple[Action, ...]] = [(Protocol(1, 2), metadata(), AddFile("f0"))]
    bodies += [(AddFile(f"f{v}"), RemoveFile(f"f{v - 1}", NOW)) for v in range(1, 13)]
    log = _log_of(bodies)
    # the writer of version 10 runs its hook after versions 11 and 12 landed
    assert needs_checkpoint(10, log.snapshot(10).metadata)
    cp = checkpoint_actions(log.snapshot(10), NOW)
    log = log.checkpoint_version(10)
    assert log.checkpoints == (10,)
    rebuilt = snapshot_from_checkpoint(10, cp, log.commits[11:])
    latest = log.snapshot()
    assert (rebuilt.version, rebuilt.files, rebuilt.tombstones) == (
        latest.version,
        latest.files,
        latest.tombstones,
    )
    alone = snapshot_from_checkpoint(10, cp, [])
    assert alone.live_paths() == log.snapshot(10).live_paths() == {"f10"}
    # a checkpoint of the latest state filed under version 10 would misstate version 10
    wrong = snapshot_from_checkpoint(10, checkpoint_actions(log.snapshot(12), NOW), [])
    assert wrong.live_paths() != log.snapshot(10).live_paths()


@pytest.mark.rules("CHECKPOINT.COMMITTED_VERSION")
def test_only_existing_versions_can_be_checkpointed():
    log = _log_of([(Protocol(1, 2), metadata()), (AddFile("a"),)])
    assert log.checkpoint_version(1).checkpoint_version(0).checkpoint_version(1).checkpoints == (
        0,
        1,
    )
    for version in (2, -1):
        with pytest.raises(ValueError):
            log.checkpoint_version(version)


def _tombstones(log: Log, version: int | None = None) -> set[str]:
    read = log.snapshot(version)
    assert read is not None
    return {path for path, _ in read.tombstones}


@pytest.mark.rules("RETENTION.TOMBSTONES", "CHECKPOINT.READ")
def test_a_tombstone_a_checkpoint_left_out_stays_out_of_every_read_from_it():
    """Version 1 removes ``a`` at NOW; version 1 is checkpointed a week later (the tombstone
    expired then): reads of version 1 and later start from the checkpoint and have no
    tombstone, whatever their clock; the fold of the commits still has it."""
    log = _log_of(
        [(Protocol(1, 2), metadata(), AddFile("a")), (RemoveFile("a", NOW),), (AddFile("b"),)]
    )
    kept = log.checkpoint_version(1, NOW + WEEK - 1)
    assert kept.checkpoint_states == {} and kept.snapshot() == log.snapshot()
    dropped = log.checkpoint_version(1, NOW + WEEK)
    for version in (1, 2):
        assert _tombstones(dropped, version) == set()
        read, fold = dropped.snapshot(version), log.snapshots[version]
        assert read is not None and (read.files, read.timestamp) == (fold.files, fold.timestamp)
    assert _tombstones(log) == {"a"} and _tombstones(dropped, 0) == set()
    # a second checkpoint of version 1 without a clock keeps what the first one holds
    assert _tombstones(dropped.checkpoint_version(1)) == set()
    # a checkpoint of version 2 is written from what a reader of 2 loads: no tombstone either
    assert _tombstones(dropped.checkpoint_version(2, NOW)) == set()


# --------------------------------------------------------------------------------------------
# RETENTION.TOMBSTONES
# --------------------------------------------------------------------------------------------


@pytest.mark.rules("RETENTION.TOMBSTONES")
@pytest.mark.parametrize(
    ("conf", "retention"),
    [
        ({}, WEEK),
        ({"delta.deletedFileRetentionDuration": "interval 1 week"}, WEEK),
        ({"delta.deletedFileRetentionDuration": "interval 2 days"}, 2 * DAY),
        ({"delta.deletedFileRetentionDuration": "interval 36 hours"}, 36 * HOUR),
        ({"delta.deletedFileRetentionDuration": "interval 2 weeks"}, 2 * WEEK),
    ],
)
def test_tombstones_expire_after_the_retention(conf, retention):
    table = metadata(**conf)
    cutoff = NOW - retention
    assert min_file_retention_timestamp(table, NOW) == cutoff
    assert min_file_retention_timestamp(None, NOW) == NOW - WEEK
    removes = {
        "at": RemoveFile("at", cutoff),
        "before": RemoveFile("before", cutoff - 1),
        "after": RemoveFile("after", cutoff + 1),
        "recent": RemoveFile("recent", NOW),
        "untimed": RemoveFile("untimed", None),  # no deletion time reads as 0
    }
    snapshot = replay([Commit(0, (Protocol(1, 2), table, *removes.values()))])
    kept = {r.path for r in checkpoint_actions(snapshot, NOW) if isinstance(r, RemoveFile)}
    assert kept == {"after", "recent"}


# --------------------------------------------------------------------------------------------
# RETENTION.SET_TRANSACTION
# --------------------------------------------------------------------------------------------


def _txns_kept(conf: dict[str, str], txns: list[SetTransaction]) -> set[str]:
    snapshot = replay([Commit(0, (Protocol(1, 2), metadata(**conf), *txns))])
    return {t.app_id for t in checkpoint_actions(snapshot, NOW) if isinstance(t, SetTransaction)}


@pytest.mark.rules("RETENTION.SET_TRANSACTION")
def test_set_transactions_are_kept_forever_by_default():
    ancient = [SetTransaction("a", 1, 0), SetTransaction("b", 1, NOW - 1000 * DAY)]
    assert _txns_kept({}, ancient) == {"a", "b"}


@pytest.mark.rules("RETENTION.SET_TRANSACTION")
@pytest.mark.parametrize("text", ["interval 1 day", "interval 2 days", "interval 30 hours"])
def test_set_transactions_older_than_the_retention_are_dropped(text):
    cutoff = NOW - duration(text)
    txns = [
        SetTransaction("before", 1, cutoff - 1),
        SetTransaction("at", 1, cutoff),
        SetTransaction("after", 1, cutoff + 1),
        SetTransaction("now", 1, NOW),
    ]
    assert _txns_kept({"delta.setTransactionRetentionDuration": text}, txns) == {"after", "now"}


@pytest.mark.rules("RETENTION.SET_TRANSACTION", "CHECKPOINT.READ")
def test_an_expired_app_id_reads_as_unknown_after_the_checkpoint():
    table = metadata(**{"delta.setTransactionRetentionDuration": "interval 1 day"})
    at = replay(
        [Commit(0, (Protocol(1, 2), table, SetTransaction("old", 7, NOW - 2 * DAY),
                    SetTransaction("new", 3, NOW - HOUR)))]
    )  # fmt: skip
    rebuilt = snapshot_from_checkpoint(0, checkpoint_actions(at, NOW), [])
    assert (rebuilt.app_txn_version("old"), rebuilt.app_txn_version("new")) == (-1, 3)
    assert at.app_txn_version("old") == 7


@pytest.mark.rules("RETENTION.SET_TRANSACTION")
def test_a_set_transaction_without_last_updated_expires_when_a_retention_is_set():
    # delta-spark keeps an entry only if lastUpdated.exists(_ > cutoff)
    txns = [SetTransaction("untimed", 1, None), SetTransaction("now", 1, NOW)]
    assert _txns_kept({"delta.setTransactionRetentionDuration": "interval 1 day"}, txns) == {"now"}
    assert _txns_kept({}, txns) == {"untimed", "now"}


# --------------------------------------------------------------------------------------------
# RETENTION.LOG
# --------------------------------------------------------------------------------------------


def spec_expired(
    timestamps: list[int], checkpoint: int, cutoff: int, earlier: tuple[int, ...] = ()
) -> set[int]:
    """RETENTION.LOG over commit files, the newest checkpoint ``checkpoint`` and ``earlier`` ones.

    Times are made strictly increasing (a commit no later than its predecessor counts as the
    predecessor + 1 ms); the newest checkpoint ``c <= checkpoint`` whose preceding commit is
    expired qualifies, and every commit before it goes; if none qualifies nothing does.
    """
    adjusted: list[int] = []
    for ts in timestamps:
        adjusted.append(adjusted[-1] + 1 if adjusted and adjusted[-1] >= ts else ts)
    qualifying = [
        c for c in {checkpoint, *earlier} if 1 <= c <= checkpoint and adjusted[c - 1] <= cutoff
    ]
    return set(range(max(qualifying, default=0)))


def day_cutoff(now: int, retention: int) -> int:
    return (now - retention) // DAY * DAY


@st.composite
def cleanup_cases(draw: st.DrawFn) -> tuple[list[int], int, tuple[int, ...], int, str | None]:
    """Commit times clustered around the cutoff, so that both sides of it occur."""
    now = draw(st.integers(40 * DAY, 41 * DAY))
    retention = draw(st.sampled_from([None, None, "interval 2 days", "interval 36 hours"]))
    cutoff = day_cutoff(now, 30 * DAY if retention is None else duration(retention))
    near = st.integers(cutoff - 2 * DAY, cutoff + 2 * DAY)
    timestamps = draw(st.lists(near, min_size=1, max_size=10))
    checkpoint = draw(st.integers(0, len(timestamps) - 1))
    earlier = tuple(draw(st.sets(st.integers(0, checkpoint), max_size=3)))
    return timestamps, checkpoint, earlier, now, retention


@pytest.mark.rules("RETENTION.LOG")
@examples(0.5)
@given(cleanup_cases())
def test_log_cleanup_agrees_with_the_rule(case):
    timestamps, checkpoint, earlier, now, retention_text = case
    conf = {} if retention_text is None else {"delta.logRetentionDuration": retention_text}
    retention = 30 * DAY if retention_text is None else duration(retention_text)
    got = expired_log_versions(timestamps, checkpoint, now, metadata(**conf), earlier)
    assert list(got) == sorted(got)
    assert set(got) == spec_expired(timestamps, checkpoint, day_cutoff(now, retention), earlier)


@pytest.mark.rules("RETENTION.CHECKPOINT_PROTECTION")
def test_checkpoint_protection_binds_cleanups_below_the_protected_version():
    """With delta.requireCheckpointProtectionBeforeVersion = 10 (the impl's cases, tests/impl/
    test_impl_checkpoint.py): below 10, delta-spark 4.x cleans up in chunks, 3.3.x not at all."""
    protected = Protocol(1, 7, writer_features=frozenset({"appendOnly", "checkpointProtection"}))
    meta = metadata(**{"delta.requireCheckpointProtectionBeforeVersion": "10"})
    cases = ((5, "4.4.0", True), (5, "4.0.1", True), (5, "3.3.2", False), (10, "3.3.2", True),
             (11, "3.3.2", True), (0, "3.3.2", False))  # fmt: skip
    for new_start, release, allowed in cases:
        at = profile(release)
        assert cleanup_may_truncate(protected, meta, new_start, at) is allowed, (new_start, release)
        assert cleanup_may_truncate(Protocol(1, 2), meta, new_start, at)


PROTECTED = Protocol(1, 7, writer_features=frozenset({"domainMetadata", "checkpointProtection"}))
PROTECTED_BEFORE = "delta.requireCheckpointProtectionBeforeVersion"


@pytest.mark.rules("RETENTION.CHECKPOINT_PROTECTION", "RETENTION.LOG")
def test_a_cleanup_below_the_protected_version_goes_in_chunks_from_4_0_only():
    """Checkpoints at 3, 6 and 8, every commit long expired, versions below 8 protected:
    delta-spark 4.0.1+ truncates below 8 in chunks, 3.3.2 deletes nothing until it can reach 8
    in one go (spec/checkpoint.md, RETENTION.CHECKPOINT_PROTECTION)."""
    now = 100 * DAY
    timestamps = [(v + 1) * DAY for v in range(10)]
    meta = metadata(**{PROTECTED_BEFORE: "8"})
    for release in ("4.4.0", "4.0.1"):
        got = expired_log_versions(timestamps, 6, now, meta, (3,), PROTECTED, profile(release))
        assert got == (0, 1, 2, 3, 4, 5), release
    assert expired_log_versions(timestamps, 6, now, meta, (3,), PROTECTED) == (0, 1, 2, 3, 4, 5)
    # 3.3.2 does not fall back to the chunk it may take: nothing, not versions 0-2 either
    assert expired_log_versions(timestamps, 6, now, meta, (3,), PROTECTED, profile("3.3.2")) == ()
    # once a checkpoint at 8 qualifies, everything below it goes in one go, at any release
    for release in ("3.3.2", "4.4.0"):
        got = expired_log_versions(timestamps, 8, now, meta, (3, 6), PROTECTED, profile(release))
        assert got == tuple(range(8)), release
    # the property binds only a table listing the writer feature
    for protocol in (None, Protocol(1, 2), Protocol(3, 7, frozenset({"deletionVectors"}),
                                                     frozenset({"deletionVectors"}))):  # fmt: skip
        got = expired_log_versions(timestamps, 6, now, meta, (3,), protocol, profile("3.3.2"))
        assert got == (0, 1, 2, 3, 4, 5), protocol
    # a table that lists the feature without the property protects nothing (version 0)
    got = expired_log_versions(timestamps, 6, now, metadata(), (3,), PROTECTED, profile("3.3.2"))
    assert got == (0, 1, 2, 3, 4, 5)


@pytest.mark.rules("RETENTION.CHECKPOINT_PROTECTION", "RETENTION.LOG")
@examples(0.5)
@given(cleanup_cases(), st.integers(0, 11), st.sampled_from(["3.3.2", "4.0.1", "4.4.0"]))
def test_a_protected_cleanup_agrees_with_the_rule(case, protected_before, release):
    """RETENTION.LOG's segment, on a table listing checkpointProtection: whole if its new first
    version is at or past the protected one or the release truncates in chunks (4.0.1+), else
    nothing (3.3.2)."""
    timestamps, checkpoint, earlier, now, retention_text = case
    conf = {PROTECTED_BEFORE: str(protected_before)}
    if retention_text is not None:
        conf["delta.logRetentionDuration"] = retention_text
    retention = 30 * DAY if retention_text is None else duration(retention_text)
    whole = spec_expired(timestamps, checkpoint, day_cutoff(now, retention), earlier)
    new_start = len(whole)  # the segment is versions 0 .. new start - 1
    chunks = release != "3.3.2"
    want = whole if chunks or new_start >= protected_before else set()
    got = expired_log_versions(
        timestamps, checkpoint, now, metadata(**conf), earlier, PROTECTED, profile(release)
    )
    assert set(got) == want


@pytest.mark.rules("RETENTION.LOG")
def test_commits_before_a_checkpoint_go_only_as_a_whole():
    now = 40 * DAY
    timestamps = [DAY, 2 * DAY, 39 * DAY, 39 * DAY + HOUR]
    assert spec_expired(timestamps, 3, day_cutoff(now, 30 * DAY)) == set()
    assert expired_log_versions(timestamps, 3, now, metadata()) == ()


@pytest.mark.rules("RETENTION.LOG")
def test_cleanup_stops_at_the_newest_qualifying_checkpoint():
    now = 40 * DAY  # cutoff: day 10
    timestamps = [DAY, 2 * DAY, 3 * DAY, 4 * DAY, 5 * DAY, 39 * DAY, 39 * DAY + HOUR]
    # checkpoints at 3 and 6: the commit before 6 is recent, the one before 3 is expired
    assert expired_log_versions(timestamps, 6, now, metadata(), (3,)) == (0, 1, 2)
    assert expired_log_versions(timestamps, 6, now, metadata(), ()) == ()
    # checkpoints at 2 and 4 below the newest one at 6: the later qualifying one wins
    assert expired_log_versions(timestamps, 6, now, metadata(), (2, 4)) == (0, 1, 2, 3)
    assert spec_expired(timestamps, 6, day_cutoff(now, 30 * DAY), (2, 4)) == {0, 1, 2, 3}


@pytest.mark.rules("RETENTION.LOG")
def test_the_log_cutoff_is_truncated_to_the_start_of_its_day():
    now = 40 * DAY + 5 * HOUR  # now - 30 days = day 10, 05:00, truncated to day 10, 00:00
    # version 0 is older than now - 30 days, but not older than the truncated cutoff
    timestamps = [10 * DAY + HOUR, 10 * DAY + 2 * HOUR]
    assert expired_log_versions(timestamps, 1, now, metadata()) == ()
    assert spec_expired(timestamps, 1, day_cutoff(now, 30 * DAY)) == set()
    # nineteen hours later the cutoff moves to day 11, 00:00
    assert expired_log_versions(timestamps, 1, now + 19 * HOUR, metadata()) == (0,)
    assert expired_log_versions([10 * DAY], 0, now + 19 * HOUR, metadata()) == ()


@pytest.mark.rules("RETENTION.LOG")
def test_only_commits_before_the_checkpoint_are_cleaned_up():
    old = [DAY, 2 * DAY, 3 * DAY, 4 * DAY]
    now = 100 * DAY
    assert expired_log_versions(old, 0, now, metadata()) == ()
    assert expired_log_versions(old, 1, now, metadata()) == (0,)
    assert expired_log_versions(old, 3, now, metadata()) == (0, 1, 2)


@pytest.mark.rules("RETENTION.LOG")
def test_the_log_retention_property_overrides_thirty_days():
    timestamps = [DAY, 5 * DAY, 8 * DAY, 9 * DAY]
    now = 10 * DAY + 5 * HOUR  # two days back is day 8, 05:00, truncated to day 8
    assert expired_log_versions(timestamps, 3, now, metadata()) == ()
    short = metadata(**{"delta.logRetentionDuration": "interval 2 days"})
    assert expired_log_versions(timestamps, 3, now, short) == (0, 1, 2)
    assert spec_expired(timestamps, 3, day_cutoff(now, 2 * DAY)) == {0, 1, 2}


@pytest.mark.rules("RETENTION.LOG")
def test_commit_times_are_made_strictly_increasing_first():
    cutoff_day = 10 * DAY
    now = cutoff_day + 30 * DAY
    # version 1 was stamped day 9 by a skewed clock after version 0 at day 12: it counts as
    # day 12 + 1 ms, so the checkpoint at 2 does not qualify although day 9 is expired
    timestamps = [12 * DAY, 9 * DAY, 13 * DAY]
    assert expired_log_versions(timestamps, 2, now, metadata()) == ()
    assert expired_log_versions([8 * DAY, 9 * DAY, 13 * DAY], 2, now, metadata()) == (0, 1)
    # equal times are adjusted too, and stay expired when the adjusted time is
    timestamps = [5 * DAY, 5 * DAY, 5 * DAY, 11 * DAY]
    assert expired_log_versions(timestamps, 3, now, metadata()) == (0, 1, 2)
    assert spec_expired(timestamps, 3, cutoff_day) == {0, 1, 2}
