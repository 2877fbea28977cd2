"""Log cleanup (RETENTION.LOG): deleting the commits, checkpoints and checksums that expired
before a complete, readable checkpoint (RETENTION.VERIFIED_CHECKPOINT), and the temporary files
killed writers left in the log.

Cleanup runs after a checkpoint (:func:`deltaspec.impl.checkpoint.policy.checkpoint_version`),
when ``delta.enableExpiredLogCleanup`` is true (the default), a checkpoint at a time.
"""

from __future__ import annotations

from collections.abc import Sequence

from deltaspec.rules import rule

from ..actions import Metadata, Protocol
from ..errors import DeltaError
from ..log import crashpoints
from ..log.listing import CheckpointFiles, LogListing
from ..log.names import hadoop_crc_of, is_checkpoint_name, log_file_version
from ..log.store import TEMP_FILE_SAFETY_MS, FileInfo, LogStore
from ..snapshot.delta_log import DeltaLog, log_of
from ..table.properties import DAY_MS, TableProperties
from ..table.releases import Profile

__all__ = [
    "CHECKPOINT_PROTECTION",
    "cleanup_expired_logs",
    "cleanup_may_truncate",
    "log_cleanup_enabled",
    "sweep_temp_files",
]

CHECKPOINT_PROTECTION = "checkpointProtection"
CURRENT_PROFILE = Profile()
"""The release a cleanup follows unless told otherwise: the newest."""


def log_cleanup_enabled(metadata: Metadata) -> bool:
    """``delta.enableExpiredLogCleanup`` (default true) (RETENTION.LOG)."""
    return TableProperties(metadata.configuration).expired_log_cleanup


def sweep_temp_files(
    store: LogStore, now_ms: int, safety_ms: int = TEMP_FILE_SAFETY_MS
) -> list[str]:
    """Delete the log's temporary files older than ``safety_ms`` (default one hour) at
    ``now_ms``: what writers killed between writing and removing them left behind. They are
    never listed or read, so this only reclaims space. Returns the deleted names."""
    return store.sweep_temp_files(now_ms - safety_ms)


@rule("RETENTION.CHECKPOINT_PROTECTION")
def cleanup_may_truncate(
    protocol: Protocol | None,
    metadata: Metadata,
    new_start: int,
    profile: Profile,
) -> bool:
    """Whether a cleanup that leaves ``new_start`` as the log's first version may run
    (RETENTION.CHECKPOINT_PROTECTION): on a table listing the writer feature
    ``checkpointProtection``, one that stops below
    ``delta.requireCheckpointProtectionBeforeVersion`` must be exempt. This module's cleanup is
    (it creates no checkpoint and deletes only files below the checkpoint it keeps), unless it
    follows a release before v4.0 (``profile``), which reaches that version in one go or not
    at all."""
    if protocol is None or CHECKPOINT_PROTECTION not in (protocol.writer_features or ()):
        return True
    protected_before = TableProperties(metadata.configuration).checkpoint_protected_before
    return new_start >= protected_before or profile.has("checkpoint_protection_chunked_cleanup")


def _readable(log: DeltaLog, checkpoints: Sequence[CheckpointFiles]) -> bool:
    """Whether one of the checkpoints of a version reads back whole
    (RETENTION.VERIFIED_CHECKPOINT)."""
    for cp in checkpoints:
        try:
            log.verify_checkpoint(cp)
        except DeltaError:
            continue
        return True
    return False


@rule("RETENTION.LOG")
def cleanup_expired_logs(
    log_or_store: DeltaLog | LogStore,
    checkpoint_version: int,
    now_ms: int,
    metadata: Metadata,
    protocol: Protocol | None = None,
    profile: Profile = CURRENT_PROFILE,
) -> list[str]:
    """Delete the log files that expired before a complete checkpoint (RETENTION.LOG).

    1. ``cutoff = now − delta.logRetentionDuration`` (default 30 days), truncated to midnight UTC.
    2. Commit, checkpoint and checksum files are taken in name order with their modification
       times made strictly increasing (a time not after the previous one counts as previous + 1).
    3. Among complete checkpoints ``c <= checkpoint_version``, the newest one whose immediately
       preceding file is at or before the cutoff is kept together with everything after it;
       every listed file before it (commits, checkpoints, checksums of versions ``< c``) is
       deleted, with the hidden Hadoop ``.<name>.crc`` files that belong to them.

    The checkpoint kept as the new start must read back whole first
    (RETENTION.VERIFIED_CHECKPOINT): a torn, incomplete or malformed one is passed over for an
    older one, so commits are never deleted unless a readable checkpoint covers them.

    Nothing happens when ``delta.enableExpiredLogCleanup`` is false or no checkpoint qualifies.
    ``protocol``: the table's, for RETENTION.CHECKPOINT_PROTECTION; ``profile``: the release
    followed (the newest by default). Returns the deleted names.
    """
    log = log_of(log_or_store)
    store = log.store
    properties = TableProperties(metadata.configuration)
    if not properties.expired_log_cleanup:
        return []
    cutoff = now_ms - properties.log_retention_ms
    cutoff -= cutoff % DAY_MS
    names = store.list_names()
    entries, infos = _timed_entries(store, names, checkpoint_version, cutoff)
    listing = LogListing.of(infos, full=True)
    keep_from = _new_start(log, listing, entries, checkpoint_version, cutoff)
    if keep_from is None:
        return []
    new_start = entries[keep_from][1]
    if not cleanup_may_truncate(protocol, metadata, new_start, profile):
        return []
    return _delete_before(store, names, [name for name, _, _ in entries[:keep_from]])


def _timed_entries(
    store: LogStore, names: list[str], last_version: int, cutoff: int
) -> tuple[list[tuple[str, int, int]], list[FileInfo]]:
    """Commit, checkpoint and checksum files up to ``last_version`` in name order, as
    ``(name, version, time)`` with the times made strictly increasing, and their listings.

    Only the prefix that may expire is looked at (one ``stat`` each): the made-increasing times
    never decrease, so once one is past ``cutoff`` no later file's predecessor can expire, and
    the entries stop after the files of that version (the rest of a checkpoint whose first file
    it is). Cleanup costs what it may delete, not the length of the log."""
    entries: list[tuple[str, int, int]] = []
    infos: list[FileInfo] = []
    previous: int | None = None
    last: int | None = None  # the version of the first file past the cutoff
    for name in names:
        version = log_file_version(name)
        if version is None or version > last_version:
            continue
        if last is not None and version != last:
            break
        info = store.stat(name)
        if info is None:
            continue  # deleted since the listing (another cleanup)
        time = info.modification_time
        if previous is not None and time <= previous:
            time = previous + 1
        previous = time
        entries.append((name, version, time))
        infos.append(info)
        if last is None and time > cutoff:
            last = version
    return entries, infos


def _new_start(
    log: DeltaLog,
    listing: LogListing,
    entries: list[tuple[str, int, int]],
    checkpoint_version: int,
    cutoff: int,
) -> int | None:
    """The index in ``entries`` of the first file of the newest readable checkpoint whose
    preceding file expired, or None (RETENTION.LOG, RETENTION.VERIFIED_CHECKPOINT)."""
    first_index: dict[int, int] = {}
    for index, (name, version, _) in enumerate(entries):
        if version not in first_index and is_checkpoint_name(name):
            first_index[version] = index
    for version in sorted(listing.checkpoints, reverse=True):
        if version > checkpoint_version or version not in first_index:
            continue
        index = first_index[version]
        if (
            index > 0
            and entries[index - 1][1] < checkpoint_version
            and entries[index - 1][2] <= cutoff
            and _readable(log, listing.checkpoints[version])
        ):
            return index
    return None


def _delete_before(store: LogStore, names: list[str], doomed: list[str]) -> list[str]:
    """Delete ``doomed`` oldest first, then the hidden Hadoop checksums that belong to them."""
    doomed_set = set(doomed)
    hidden = {
        name for name in names if (owner := hadoop_crc_of(name)) is not None and owner in doomed_set
    }
    deleted: list[str] = []
    for name in doomed:  # oldest first: a crash half-way leaves only a prefix gone
        store.delete(name)
        deleted.append(name)
        crashpoints.reached("cleanup.mid_delete")
    for name in sorted(hidden):
        store.delete(name)
        deleted.append(name)
    return deleted
