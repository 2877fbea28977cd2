"""Checkpoint schedule and contents; retention (CHECKPOINT.*, RETENTION.*)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from deltaspec.rules import rule

from .actions import Action, Commit, Metadata, Protocol, RemoveFile, SetTransaction
from .profiles import Profile
from .snapshot import Snapshot, data_file_path, replay, require_protocol_and_metadata

DAY_MS = 24 * 60 * 60 * 1000
_UNITS_MS = {
    "microsecond": 0.001,
    "millisecond": 1,
    "second": 1000,
    "minute": 60_000,
    "hour": 3_600_000,
    "day": DAY_MS,
    "week": 7 * DAY_MS,
}
DEFAULT_CHECKPOINT_INTERVAL = 10
DEFAULT_TOMBSTONE_RETENTION = "interval 1 week"
DEFAULT_LOG_RETENTION = "interval 30 days"
LATEST_PROFILE = Profile()
"""The release whose defaults apply when a caller names none."""


def interval_ms(text: str) -> int:
    """Read a Delta interval property such as ``interval 1 week`` or ``30 days``."""
    match = re.fullmatch(r"\s*(?:interval\s+)?(\d+)\s+([a-z]+?)s?\s*", text.lower())
    if match is None or match.group(2) not in _UNITS_MS:
        raise ValueError(f"not an interval: {text!r}")
    return int(int(match.group(1)) * _UNITS_MS[match.group(2)])


def _property(metadata: Metadata | None, key: str, default: str | None) -> str | None:
    return default if metadata is None else metadata.property(key, default)


def checkpoint_interval(metadata: Metadata | None) -> int:
    return int(_property(metadata, "delta.checkpointInterval", None) or DEFAULT_CHECKPOINT_INTERVAL)


@rule("CHECKPOINT.INTERVAL")
def needs_checkpoint(version: int, metadata: Metadata | None) -> bool:
    """CHECKPOINT.INTERVAL: after committing ``version``, checkpoint that version
    (CHECKPOINT.COMMITTED_VERSION, ``Log.checkpoint_version``) when it is a non-zero multiple of
    the interval."""
    return version != 0 and version % checkpoint_interval(metadata) == 0


@rule("TXN.COMMITTED_IS_FINAL")
def post_commit(version: int, metadata: Metadata | None) -> bool:
    """Whether the work after the commit of ``version`` checkpoints it (CHECKPOINT.INTERVAL).
    It never fails the landed commit (TXN.COMMITTED_IS_FINAL): an interval it cannot use (not a
    positive integer, stored by another engine without validation) means no checkpoint."""
    try:
        return needs_checkpoint(version, metadata)
    except (ValueError, ZeroDivisionError):
        return False


@rule("RETENTION.TOMBSTONES")
def min_file_retention_timestamp(metadata: Metadata | None, now: int) -> int:
    """RETENTION.TOMBSTONES: tombstones deleted at or before this time may be dropped."""
    retention = _property(metadata, "delta.deletedFileRetentionDuration", None)
    return now - interval_ms(retention or DEFAULT_TOMBSTONE_RETENTION)


CHECKPOINT_PROTECTION = "checkpointProtection"
PROTECTED_BEFORE_KEY = "delta.requireCheckpointProtectionBeforeVersion"


@rule("RETENTION.CHECKPOINT_PROTECTION")
def cleanup_may_truncate(
    protocol: Protocol | None,
    metadata: Metadata | None,
    new_start: int,
    profile: Profile,
) -> bool:
    """RETENTION.CHECKPOINT_PROTECTION: whether a log cleanup that leaves ``new_start`` as the
    first version may run. Only a table listing the writer feature ``checkpointProtection``
    constrains it: a cleanup stopping below ``delta.requireCheckpointProtectionBeforeVersion``
    may run only if it is exempt (it creates no checkpoint and deletes none at or after its
    new start, as this spec's does, or it supports every protocol it truncates, as delta-spark
    4.x checks); v3.3.x's is not, and reaches that version in one go or not at all."""
    if protocol is None or CHECKPOINT_PROTECTION not in (protocol.writer_features or ()):
        return True
    protected_before = int(_property(metadata, PROTECTED_BEFORE_KEY, None) or 0)
    return new_start >= protected_before or profile.has("checkpoint_protection_chunked_cleanup")


@rule("RETENTION.SET_TRANSACTION")
def app_transactions_at(snapshot: Snapshot, now: int) -> tuple[SetTransaction, ...]:
    """RETENTION.SET_TRANSACTION: the app transactions of ``snapshot`` not expired at ``now``.
    Without ``delta.setTransactionRetentionDuration`` none expires; with it, one expires when it
    has no ``lastUpdated`` or it is at or before ``now`` minus the retention."""
    txn_retention = _property(snapshot.metadata, "delta.setTransactionRetentionDuration", None)
    return tuple(
        t
        for t in snapshot.app_txns.values()
        if txn_retention is None
        or (t.last_updated is not None and t.last_updated > now - interval_ms(txn_retention))
    )


@rule("CHECKPOINT.CONTENTS")
def checkpoint_actions(snapshot: Snapshot, now: int) -> tuple[Action, ...]:
    """CHECKPOINT.CONTENTS: protocol, metadata, app txns (RETENTION.SET_TRANSACTION), live adds,
    unexpired tombstones and live domain metadata; no commitInfo, no cdc."""
    protocol, metadata = require_protocol_and_metadata(snapshot)
    return (
        protocol,
        metadata,
        *app_transactions_at(snapshot, now),
        *snapshot.files.values(),
        *tombstones(snapshot, now),
        *snapshot.domains.values(),
    )


def snapshot_from_checkpoint(
    version: int, actions: Sequence[Action], later: Sequence[Commit]
) -> Snapshot:
    """A checkpoint's actions stand for versions 0..version; replay the rest (CHECKPOINT.READ,
    whose choice of the checkpoint is ``Log._load``)."""
    base = replay([Commit(version, tuple(actions))])
    return replay(later, start=base)


def checkpointed(snapshot: Snapshot, now: int) -> Snapshot:
    """What a read starting at the checkpoint of ``snapshot`` written at ``now`` starts from: its
    actions (CHECKPOINT.CONTENTS) read back, with the version's time; ``snapshot`` itself when
    nothing had expired at ``now``. A tombstone or app transaction it left out stays out of
    every snapshot read from it, whatever the reader's clock (RETENTION.TOMBSTONES)."""
    actions = checkpoint_actions(snapshot, now)
    state = (snapshot.app_txns, snapshot.files, snapshot.tombstones, snapshot.domains)
    if len(actions) == 2 + sum(len(part) for part in state):
        return snapshot
    read = snapshot_from_checkpoint(snapshot.version, actions, ())
    return replace(
        read, timestamp=snapshot.timestamp, in_commit_timestamp=snapshot.in_commit_timestamp
    )


FIRST_PART = ".checkpoint.0000000001."


def checkpoint_read(names: Iterable[str]) -> str | None:
    """Of the checkpoint files of one version, the first file of the checkpoint a reader starts
    from, as the impl chooses: the classic file, else the multi-part checkpoint whose first
    part's name sorts first; None without one. (CHECKPOINT.READ lets a reader use any complete
    one; delta-spark takes the one with the most parts.)"""
    firsts = [n for n in names if n.endswith(".checkpoint.parquet") or FIRST_PART in n]
    return min(firsts, key=lambda n: (FIRST_PART in n, n), default=None)


@rule("RETENTION.LOG")
def expired_log_versions(
    timestamps: Sequence[int],
    checkpoint_version: int,
    now: int,
    metadata: Metadata | None,
    earlier_checkpoints: Sequence[int] = (),
    protocol: Protocol | None = None,
    profile: Profile = LATEST_PROFILE,
) -> tuple[int, ...]:
    """RETENTION.LOG: commits that cleanup may delete after checkpointing ``checkpoint_version``.

    Commit times are first made strictly increasing (a commit no later than its
    predecessor counts as predecessor + 1 ms); the cutoff is ``now`` minus the
    retention, truncated to the start of its UTC day. Deletion goes by whole
    segments so that the kept log starts at a checkpoint: everything before
    checkpoint ``c`` goes when the commit right before ``c`` is expired, for the
    latest such ``c`` among ``checkpoint_version`` and ``earlier_checkpoints``.

    On a table whose ``protocol`` lists ``checkpointProtection``, that segment goes only if
    :func:`cleanup_may_truncate` lets a cleanup start the log at ``c`` at the release
    ``profile`` (RETENTION.CHECKPOINT_PROTECTION): below the protected version, in chunks from
    the release with ``checkpoint_protection_chunked_cleanup`` on, else nothing until ``c``
    reaches it (one go).
    """
    retention = _property(metadata, "delta.logRetentionDuration", None)
    cutoff = now - interval_ms(retention or DEFAULT_LOG_RETENTION)
    cutoff -= cutoff % DAY_MS
    adjusted: list[int] = []
    for ts in timestamps:
        adjusted.append(ts if not adjusted or ts > adjusted[-1] else adjusted[-1] + 1)
    boundaries = {checkpoint_version, *earlier_checkpoints}
    deletable = [
        c
        for c in boundaries
        if 1 <= c <= min(checkpoint_version, len(adjusted)) and adjusted[c - 1] <= cutoff
    ]
    new_start = max(deletable, default=0)
    if new_start and not cleanup_may_truncate(protocol, metadata, new_start, profile):
        return ()
    return tuple(range(new_start))


@rule("SNAPSHOT.TOMBSTONES")
def tombstones(snapshot: Snapshot, now: int) -> tuple[RemoveFile, ...]:
    """SNAPSHOT.TOMBSTONES: the tombstones of ``snapshot`` that have not expired at ``now``
    (RETENTION.TOMBSTONES): those deleted after :func:`min_file_retention_timestamp`, a missing
    time counting as 0."""
    keep_after = min_file_retention_timestamp(snapshot.metadata, now)
    return tuple(
        r for r in snapshot.tombstones.values() if (r.deletion_timestamp or 0) > keep_after
    )


def checkpoint_file_names(version: int, parts: int | None) -> tuple[str, ...]:
    """The files of one checkpoint of ``version``: ``<v>.checkpoint.parquet`` (classic), or
    ``<v>.checkpoint.<i>.<parts>.parquet`` for i in 1..parts (multi-part), numbers zero-padded
    (20 digits for the version, 10 for i and parts)."""
    if parts is None or parts <= 1:
        return (f"{version:020d}.checkpoint.parquet",)
    return tuple(
        f"{version:020d}.checkpoint.{i:010d}.{parts:010d}.parquet" for i in range(1, parts + 1)
    )


@rule("CHECKPOINT.STATS_AS_STRUCT")
def checkpoint_stats_columns(
    metadata: Metadata | None, profile: Profile = LATEST_PROFILE
) -> tuple[bool, bool]:
    """CHECKPOINT.STATS_AS_STRUCT: (``add.stats`` as JSON, ``stats_parsed`` and
    ``partitionValues_parsed`` as structs) — ``delta.checkpoint.writeStatsAsJson`` (default
    true) and ``delta.checkpoint.writeStatsAsStruct`` (default true since v3.0.0, unset
    before)."""
    by_default = "true" if profile.has("stats_as_struct_by_default") else "false"
    as_json = _property(metadata, "delta.checkpoint.writeStatsAsJson", None) or "true"
    as_struct = _property(metadata, "delta.checkpoint.writeStatsAsStruct", None) or by_default
    return as_json.strip().lower() == "true", as_struct.strip().lower() == "true"


@rule("CHECKPOINT.V2_WRITE")
def uses_v2_checkpoint(protocol: Protocol, metadata: Metadata | None) -> bool:
    """CHECKPOINT.V2_WRITE: a checkpoint is a v2 checkpoint (UUID-named top-level file,
    checkpointMetadata, sidecars) when the protocol supports the ``v2Checkpoint`` writer feature
    and ``delta.checkpointPolicy`` is ``v2``; otherwise a classic one."""
    policy = (_property(metadata, "delta.checkpointPolicy", None) or "classic").strip().lower()
    return "v2Checkpoint" in (protocol.writer_features or frozenset()) and policy == "v2"


def listed_commit_times(
    commit_times: Mapping[int, int],
    checkpoint_files: Mapping[int, Sequence[int]],
    checksums: bool = False,
) -> dict[int, int]:
    """RETENTION.LOG step 2: each listed commit's modification time made strictly increasing
    over the listing in name order, where a version's checkpoint files come before its checksum
    file and its commit file (``<v>.checkpoint…`` < ``<v>.crc`` < ``<v>.json``). ``commit_times``
    maps the versions still listed to the times their commit files were written;
    ``checkpoint_files`` maps versions to the times of their checkpoint files, in name order;
    with ``checksums`` every commit has a checksum file written when it was (CHECKSUM.WRITE)."""
    adjusted: dict[int, int] = {}
    previous: int | None = None
    for version in sorted({*commit_times, *checkpoint_files}):
        commit = (commit_times[version],) if version in commit_times else ()
        for moment in (*checkpoint_files.get(version, ()), *(commit * (1 + checksums))):
            previous = moment if previous is None or moment > previous else previous + 1
        if commit and previous is not None:
            adjusted[version] = previous
    return adjusted


def vacuum_deletes(
    snapshot: Snapshot,
    listed_commits: Sequence[Commit],
    data_files: Mapping[str, int],
    cutoff: int,
) -> tuple[str, ...]:
    """What VACUUM deletes at ``cutoff`` (now − retention): the data files (path → time they
    were written) that no version within retention references and that were written before the
    cutoff. Referenced: a live file of ``snapshot`` (the latest), a tombstone deleted after the
    cutoff, or a file removed by a listed commit made after the cutoff (a read of the version
    current at the cutoff needs it)."""
    referenced = {data_file_path(path) for path in snapshot.live_paths()}
    referenced |= {
        data_file_path(r.path) for r in snapshot.tombstones.values()
        if (r.deletion_timestamp or 0) > cutoff
    }  # fmt: skip
    for commit in listed_commits:
        if commit.version <= snapshot.version and commit.timestamp > cutoff:
            referenced |= {
                data_file_path(a.path) for a in commit.actions if isinstance(a, RemoveFile)
            }
    return tuple(sorted(p for p, t in data_files.items() if p not in referenced and t < cutoff))
