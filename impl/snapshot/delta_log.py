"""The log of one table, and how it loads snapshots (CHECKPOINT.READ, SNAPSHOT.*).

:class:`DeltaLog` builds a snapshot (:class:`~deltaspec.impl.snapshot.state.Snapshot`) the way
delta-spark does:

1. read the ``_last_checkpoint`` hint (a missing, corrupt, stale or dangling hint only costs a
   longer listing, CHECKPOINT.LAST_CHECKPOINT; :mod:`deltaspec.impl.log.last_checkpoint`);
2. list ``_delta_log`` once, resolve the version to load (SNAPSHOT.TIME_TRAVEL,
   :mod:`deltaspec.impl.snapshot.time_travel`) and the segment to load it from: the newest
   *complete* checkpoint at or below it and the commits after it
   (:mod:`deltaspec.impl.snapshot.segment`);
3. read the checkpoint with pyarrow (:mod:`deltaspec.impl.replay.checkpoint_reader`), then
   replay the JSON commits after it up to the target, which must be contiguous (LOG.CONTIGUITY);
4. reconcile file actions by logical file key ``(path, dvId)`` (SNAPSHOT.FILE_KEY,
   SNAPSHOT.RECONCILE; :mod:`deltaspec.impl.replay.commits`).

What it keeps between loads, and when a load may reuse or refresh the last snapshot, is
:mod:`deltaspec.impl.snapshot.cache`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pyarrow as pa

from deltaspec.rules import rule

from .. import codec
from ..actions import Action
from ..errors import DeltaError, InvalidArgumentError, VersionNotFoundError
from ..log import last_checkpoint
from ..log.listing import CheckpointFiles, LogListing, list_log, listing_for
from ..log.names import commit_name, parse_commit_name
from ..log.store import LogStore
from ..log.stores import log_store_for
from ..replay import checkpoint_reader
from ..replay.checkpoint_reader import UnusableCheckpoint
from ..replay.commits import (
    Commit,
    ReplayActions,
    read_replay_commit,
    reconcile,
    require_protocol_and_metadata,
)
from ..replay.compaction import replay_commits
from ..replay.state import ReplayState
from .cache import NO_CACHE, LogCache, SnapshotCache, refresh_from, reused
from .segment import LogSegment, checkpoint_starts, commit_zero_segment
from .state import Snapshot
from .time_travel import target_version
from .timestamps import version_timestamp

__all__ = ["LIVE_FILES_CHUNKS", "RELIST_ATTEMPTS", "DeltaLog", "wall_clock_ms"]

RELIST_ATTEMPTS = 3
"""Loads of one snapshot, each from a fresh listing, while files the previous one listed
disappear under it (SNAPSHOT.RELIST)."""


LIVE_FILES_CHUNKS = 16
"""Chunks a snapshot's live files may have: each refresh appends one (its commits' adds), and
past this many they are combined into one (a copy of the table)."""


def _bounded_chunks(files: pa.Table) -> pa.Table:
    """``files`` with at most :data:`LIVE_FILES_CHUNKS` chunks."""
    if files.num_columns and files.column(0).num_chunks > LIVE_FILES_CHUNKS:
        return files.combine_chunks()
    return files


def wall_clock_ms() -> int:
    """Milliseconds since the epoch from the system clock."""
    return time.time_ns() // 1_000_000


def _is_path(table_root: object) -> bool:
    """Whether ``table_root`` can name a directory: a non-empty str or os.PathLike with no NUL
    (which no file system takes, and which os functions refuse with a raw ValueError)."""
    if not isinstance(table_root, str | os.PathLike):
        return False
    text = os.fspath(table_root)
    return isinstance(text, str) and text != "" and "\x00" not in text


class DeltaLog:
    """The log of one table: listing, commits, snapshots (CHECKPOINT.READ, SNAPSHOT.*).

    ``store`` defaults to the store of ``table_root``
    (:func:`~deltaspec.impl.log.stores.log_store_for`: a local directory, or an object-store URL
    configured by ``storage_options``); ``clock`` (milliseconds) decides which tombstones and
    application transactions have expired in the snapshots it builds.

    Every :meth:`snapshot` lists the log afresh and replays from the newest usable checkpoint, so
    it sees every commit that landed before it started, from any writer, and builds the same
    snapshot whether or not anything was read before. In its ``cache`` (by default a
    :class:`~deltaspec.impl.snapshot.cache.LogCache` of its own; ``False`` or
    :data:`~deltaspec.impl.snapshot.cache.NO_CACHE`: nothing kept; or a cache given) the log
    keeps what it read from files that never change once listed, and the last snapshot it built
    (:mod:`deltaspec.impl.snapshot.cache`): a load that lists the very same checkpoint and
    commit files for the same version gets it again, as of its own clock, and a load of a later
    version from the same checkpoint applies only the commits after it to its state (a refresh
    costs the new commits, not the table; see :func:`~deltaspec.impl.snapshot.cache.refresh_from`
    for when a refresh is possible). A load from a newer checkpoint starts from that
    checkpoint's state, kept once read or written by this log.
    """

    def __init__(
        self,
        table_root: str | os.PathLike[str],
        store: LogStore | None = None,
        clock: Callable[[], int] | None = None,
        *,
        cache: SnapshotCache | bool = True,
        storage_options: Mapping[str, str] | None = None,
    ) -> None:
        if store is None and not _is_path(table_root):
            raise InvalidArgumentError(
                "a table root is a non-empty path (str or os.PathLike) without a NUL character, "
                f"not {table_root!r:.80}"
            )
        if store is None:
            store = log_store_for(table_root, storage_options)
        self.store: LogStore = store
        self.clock: Callable[[], int] = clock if clock is not None else wall_clock_ms
        if isinstance(cache, bool):
            cache = LogCache() if cache else NO_CACHE
        self.cache: SnapshotCache = cache

    def __repr__(self) -> str:
        return f"DeltaLog({self.table_path!r})"

    @property
    def table_path(self) -> str:
        return self.store.table_path

    # --- reading single files ------------------------------------------------------------------

    def read_last_checkpoint(self) -> dict[str, Any] | None:
        """The parsed ``_last_checkpoint`` hint, or None if missing or unusable
        (CHECKPOINT.LAST_CHECKPOINT)."""
        return last_checkpoint.read_last_checkpoint(self.store)

    def _version_argument(self, version: object) -> int:
        """``version`` if it is an int (not a bool), else InvalidArgumentError: a version given
        as True, 1.0 or "1" would be taken for 1, or fail somewhere inside."""
        if isinstance(version, int) and not isinstance(version, bool):
            return version
        raise InvalidArgumentError(
            f"a version is an int, not {type(version).__name__} {version!r:.50}",
            table=self.table_path,
        )

    def read_commit(self, version: int) -> list[Action]:
        """The actions of commit ``version`` in file order (VersionNotFoundError if absent)."""
        version = self._version_argument(version)
        name = commit_name(version)
        try:
            data = self.store.read(name)
        except FileNotFoundError:
            raise VersionNotFoundError(
                f"commit {version} does not exist", table=self.table_path, version=version
            ) from None
        return codec.decode_commit(data, table=self.table_path, version=version, file=name)

    def list_commit_versions(self, after: int) -> list[int]:
        """Versions of the commit files after ``after``, ascending (LOG.LISTING)."""
        start = commit_name(after + 1) if after >= -1 else ""
        versions = (parse_commit_name(info.name) for info in self.store.list_from(start))
        return [v for v in versions if v is not None and v > after]

    # --- listing -------------------------------------------------------------------------------

    def list_log(self, hint: int | None = None) -> LogListing:
        """List ``_delta_log`` once, from the hinted checkpoint version on if given."""
        return list_log(self.store, hint)

    @rule("LOG.NEW_TABLE")
    def latest_version(self) -> int:
        """The newest committed version, -1 when there is no table (LOG.NEW_TABLE)."""
        listing = listing_for(self.store, None)
        if listing.latest_version < 0 and not listing.full:
            listing = self.list_log(None)
        return listing.latest_version

    # --- snapshots -----------------------------------------------------------------------------

    def snapshot(self, version: int | None = None) -> Snapshot:
        """The snapshot at ``version`` (default: latest) (SNAPSHOT.REPLAY, SNAPSHOT.TIME_TRAVEL).

        Raises TableNotFoundError (no commit and no checkpoint), VersionNotFoundError (a version
        outside the reconstructable range), MissingVersionsError (a gap in the commits needed,
        LOG.CONTIGUITY), CorruptLogError, MissingProtocolOrMetadataError and
        UnsupportedProtocolError.
        """
        version = None if version is None else self._version_argument(version)
        if version is not None and version < 0:
            raise VersionNotFoundError(
                f"cannot time travel to version {version}", table=self.table_path, version=version
            )
        for attempt in range(RELIST_ATTEMPTS):
            listing = listing_for(self.store, version)
            try:
                return self._load_listed(listing, version)
            except DeltaError:
                if attempt + 1 == RELIST_ATTEMPTS or not self._listing_changed(listing):
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    @rule("SNAPSHOT.RELIST")
    def _listing_changed(self, listing: LogListing) -> bool:
        """Whether a file the failed load relied on is gone or different now: a checkpoint and
        log cleanup raced the load (SNAPSHOT.RELIST), so the log is listed again."""
        fresh = set(self.store.list_from(listing.files[0].name if listing.files else ""))
        return not set(listing.files) <= fresh

    def _load_listed(self, listing: LogListing, version: int | None) -> Snapshot:
        failed: dict[str, BaseException] = {}
        while True:
            try:
                return self._load(listing, version, failed)
            except UnusableCheckpoint as unusable:
                if listing.full:
                    raise unusable.error from None
                listing = self.list_log(None)  # older checkpoints are not in a partial listing

    @rule("CHECKPOINT.READ")
    def _load(
        self, listing: LogListing, requested: int | None, failed: dict[str, BaseException]
    ) -> Snapshot:
        """Load ``requested`` from ``listing``, skipping the checkpoints in ``failed``: from the
        newest usable checkpoint at or below it, else from commit 0."""
        now = self.clock()
        target = target_version(listing, requested, self.table_path)
        refreshed = self._refreshed(listing, target, now)
        if refreshed is not None:
            return refreshed
        for cp in checkpoint_starts(listing, target, failed):
            # commits after the newest start must all exist; older starts need them too
            listing.require_commits(cp.version, target, self.table_path)
            segment = LogSegment.listed(listing, cp, target)
            kept = self._kept_snapshot(segment, now)
            if kept is not None:
                return kept
            try:
                state = self._read_checkpoint(cp)
            except UnusableCheckpoint as unusable:
                failed[cp.files[0].name] = unusable.error
                continue
            return self._keep(self._replay(listing, state, segment, now), segment, listing)
        segment = commit_zero_segment(listing, target, failed, self.table_path)
        kept = self._kept_snapshot(segment, now)
        if kept is not None:
            return kept
        return self._keep(self._replay(listing, ReplayState(), segment, now), segment, listing)

    # --- what the log keeps (deltaspec.impl.snapshot.cache) ------------------------------------

    def _commit_actions(self, listing: LogListing, version: int) -> ReplayActions:
        """The decoded, checked actions of commit ``version`` (the kept ones if the listing
        shows the same file)."""
        info = listing.commits.get(version)
        kept = self.cache.commit(info)
        if kept is not None:
            return kept
        actions = read_replay_commit(self.store, version)
        self.cache.keep_commit(info, actions)
        return actions

    def _kept_snapshot(self, segment: LogSegment, now: int) -> Snapshot | None:
        """The snapshot last built, if built from the very files of ``segment``, as of ``now``
        (:func:`~deltaspec.impl.snapshot.cache.reused`); else None."""
        return reused(self.cache.last_snapshot, segment, now)

    def _keep(self, snapshot: Snapshot, segment: LogSegment, listing: LogListing) -> Snapshot:
        """Remember ``snapshot``, built from ``segment`` as ``listing`` shows it (see
        :meth:`_kept_snapshot` and :meth:`_refreshed`), and return it."""
        self.cache.keep_snapshot(snapshot, segment, listing.commits.get(snapshot.version))
        return snapshot

    def _refreshed(self, listing: LogListing, target: int, now: int) -> Snapshot | None:
        """The snapshot at ``target`` from the one last built, by applying only the commits
        after it to its state (SNAPSHOT.REPLAY); None when that is not possible
        (:func:`~deltaspec.impl.snapshot.cache.refresh_from`)."""
        kept = self.cache.last_snapshot
        if kept is None:
            return None
        plan = refresh_from(kept, listing, target)
        if plan is None:
            return None
        segment, state = plan
        replayed = self._replay(listing, state, segment, now, first=kept.snapshot.version)
        return self._keep(replayed, segment, listing)

    def wrote_checkpoint(self, version: int, first_file: str, state: ReplayState) -> None:
        """Keep ``state``, what the checkpoint of ``version`` this log has just written holds
        (``first_file`` its first file, no sidecars), as that checkpoint's state: a load that
        starts from it, as every load after it does, then reads none of its files
        (CHECKPOINT.READ)."""
        self.cache.keep_written_checkpoint(
            first_file, state, lambda: self.list_log(version).checkpoints.get(version, ())
        )

    def _read_checkpoint(self, cp: CheckpointFiles) -> ReplayState:
        """The state of checkpoint ``cp`` (the kept one if cached; UnusableCheckpoint if it
        cannot be read, CHECKPOINT.READ)."""
        kept = self.cache.checkpoint(cp)
        if kept is not None:
            return kept
        state = checkpoint_reader.read_checkpoint(self.store, cp)
        if state.cacheable:
            self.cache.keep_checkpoint(cp, state)
        return state

    @rule("RETENTION.VERIFIED_CHECKPOINT")
    def verify_checkpoint(self, cp: CheckpointFiles) -> None:
        """Read checkpoint ``cp`` whole, as a snapshot load would, and raise the typed error
        that makes it unusable (a torn or missing file, a malformed row, no protocol or
        metadata): what log cleanup requires before deleting the commits it covers
        (RETENTION.VERIFIED_CHECKPOINT)."""
        try:
            state = self._read_checkpoint(cp)
        except UnusableCheckpoint as unusable:
            raise unusable.error from None
        checkpoint_reader.verify_checkpoint(state, self.table_path, cp)

    # --- replay --------------------------------------------------------------------------------

    def _commits_after(self, listing: LogListing, first: int, target: int) -> Iterator[Commit]:
        return replay_commits(
            self.store, listing, first, target, lambda v: self._commit_actions(listing, v)
        )

    @rule("SNAPSHOT.REPLAY")
    def _replay(
        self,
        listing: LogListing,
        state: ReplayState,
        segment: LogSegment,
        now: int,
        first: int | None = None,
    ) -> Snapshot:
        """Apply the commits after ``first`` (default: the segment's start) up to the segment's
        version (SNAPSHOT.RECONCILE) and finish the snapshot."""
        cp, target = segment.start, segment.version
        if first is None:
            first = segment.first
        last_actions = reconcile(state, self._commits_after(listing, first, target))
        protocol, metadata = require_protocol_and_metadata(state, self.table_path, target, cp)
        files = state.files
        return Snapshot(
            table_path=self.table_path,
            version=target,
            protocol=protocol,
            metadata=metadata,
            checkpoint_version=None if cp is None else cp.version,
            timestamp=version_timestamp(self, listing, target, metadata, last_actions, cp),
            domains=dict(state.domains),
            all_app_transactions=dict(state.txns),
            live_files=_bounded_chunks(files),
            all_tombstones=state.tombstones,
            now_ms=now,
        )


def log_of(log_or_store: DeltaLog | LogStore) -> DeltaLog:
    """``log_or_store`` as a log: itself, or an uncached DeltaLog over the store (what the
    checkpoint writer and the log cleanup read checkpoints back through)."""
    if isinstance(log_or_store, DeltaLog):
        return log_or_store
    return DeltaLog(log_or_store.table_path, store=log_or_store, cache=NO_CACHE)
