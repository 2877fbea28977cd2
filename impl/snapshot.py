"""Snapshots of the production log: loading, caching, time travel.

A snapshot is the state of a table at one version (SNAPSHOT.REPLAY): protocol, metadata, live
files, tombstones, the latest application transaction per app id and the live metadata domains.
:class:`DeltaLog` builds it the way delta-spark does (CHECKPOINT.READ):

1. read the ``_last_checkpoint`` hint (a missing, corrupt, stale or dangling hint only costs a
   longer listing, CHECKPOINT.LAST_CHECKPOINT; :mod:`deltaspec.impl.log.last_checkpoint`);
2. list ``_delta_log`` once and pick the newest *complete* checkpoint at or below the target
   version (:mod:`deltaspec.impl.log.listing`);
3. read it with pyarrow (:mod:`deltaspec.impl.replay.checkpoint_reader`), then replay the JSON
   commits after it up to the target, which must be contiguous (LOG.CONTIGUITY);
4. reconcile file actions by logical file key ``(path, dvId)`` (SNAPSHOT.FILE_KEY,
   SNAPSHOT.RECONCILE; :mod:`deltaspec.impl.replay.commits`).

Live files and tombstones are held as Arrow tables (:data:`~deltaspec.impl.replay.layouts.
FILES_SCHEMA`, :data:`~deltaspec.impl.replay.layouts.TOMBSTONES_SCHEMA`) and materialised as
``dict[(path, dvId), AddFile | RemoveFile]`` only on demand. Tombstones and application
transactions past their retention are left out with the clock of the :class:`DeltaLog` that built
the snapshot (RETENTION.TOMBSTONES, RETENTION.SET_TRANSACTION).

This module never imports ``deltaspec.model``.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from deltaspec.impl import codec
from deltaspec.impl.actions import (
    Action,
    AddFile,
    CommitInfo,
    DomainMetadata,
    FileKey,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.impl.errors import (
    CorruptLogError,
    DeltaError,
    MissingVersionsError,
    TableNotFoundError,
    VersionNotFoundError,
)
from deltaspec.impl.log import last_checkpoint
from deltaspec.impl.log.listing import CheckpointFiles, LogListing, list_log, listing_for
from deltaspec.impl.log.names import commit_name, parse_commit_name
from deltaspec.impl.log.store import FileInfo, LocalLogStore, LogStore
from deltaspec.impl.replay import checkpoint_reader
from deltaspec.impl.replay.checkpoint_reader import UnusableCheckpoint
from deltaspec.impl.replay.commits import (
    Commit,
    ReplayActions,
    read_replay_commit,
    reconcile,
    require_protocol_and_metadata,
)
from deltaspec.impl.replay.compaction import replay_commits
from deltaspec.impl.replay.layouts import (
    FILES_SCHEMA,
    STATS_PARSED,
    TOMBSTONES_SCHEMA,
    ZERO,
    dv_from_row,
    string_map,
)
from deltaspec.impl.replay.state import ReplayState
from deltaspec.impl.replay.stats import parse_stats, stats_layout
from deltaspec.impl.table.properties import TableProperties
from deltaspec.rules import rule

__all__ = [
    "CHECKPOINT_CACHE_SIZE",
    "COMMIT_CACHE_ACTIONS",
    "LIVE_FILES_CHUNKS",
    "RELIST_ATTEMPTS",
    "WRITTEN_CHECKPOINT_FILES",
    "DeltaLog",
    "Snapshot",
    "wall_clock_ms",
]


@dataclass(frozen=True, eq=False)
class Snapshot:
    """The state of a table at one version (SNAPSHOT.*).

    Fields are the reconciled state; ``live_files`` and ``all_tombstones`` are Arrow tables
    (:data:`FILES_SCHEMA`, :data:`TOMBSTONES_SCHEMA`). ``all_tombstones`` and
    ``all_app_transactions`` include entries past their retention; :attr:`tombstones`,
    :meth:`tombstones_table` and :attr:`app_transactions` leave them out as of ``now_ms``
    (RETENTION.TOMBSTONES, RETENTION.SET_TRANSACTION). ``timestamp`` is the modification time of
    the commit file of ``version`` (its in-commit timestamp when the table enables them).
    """

    table_path: str
    version: int
    protocol: Protocol
    metadata: Metadata
    checkpoint_version: int | None
    timestamp: int
    domains: dict[str, DomainMetadata]
    all_app_transactions: dict[str, SetTransaction]
    live_files: pa.Table = field(repr=False)
    all_tombstones: pa.Table = field(repr=False)
    now_ms: int = 0

    @cached_property
    def properties(self) -> TableProperties:
        """The table properties of :attr:`metadata`, typed."""
        return TableProperties(self.metadata.configuration)

    # --- files ---------------------------------------------------------------------------------

    def files_table(self) -> pa.Table:
        """The live files as Arrow (:data:`FILES_SCHEMA`), one row per logical file."""
        live = self.live_files
        return live if live.num_columns == len(FILES_SCHEMA) else live.select(FILES_SCHEMA.names)

    @cached_property
    def files(self) -> dict[FileKey, AddFile]:
        """The live files by logical file key ``(path, dvId)`` (SNAPSHOT.FILE_KEY)."""
        table = self.live_files
        out: dict[FileKey, AddFile] = {}
        rows = zip(*(table.column(name).to_pylist() for name in FILES_SCHEMA.names), strict=True)
        for path, values, size, mtime, _, tags, dv, base, default, clustering, stats in rows:
            vector = None if dv is None else dv_from_row(dv)
            add = AddFile(
                path,
                dict(values) if values else {},
                size,
                mtime,
                False,
                stats,
                None if tags is None else dict(tags),
                vector,
                base,
                default,
                clustering,
            )
            out[(path, None if vector is None else vector.unique_id)] = add
        return out

    @cached_property
    def stats_table(self) -> pa.StructArray:
        """The live files' statistics, typed by the schema, one row per row of
        :meth:`files_table` (decoded on first use; :mod:`deltaspec.impl.replay.stats`)."""
        live = self.live_files
        parsed = live.column(STATS_PARSED) if STATS_PARSED in live.column_names else None
        return parse_stats(live.column("stats"), stats_layout(self.metadata), parsed)

    @property
    def num_files(self) -> int:
        return int(self.live_files.num_rows)

    @property
    def total_size(self) -> int:
        total = pc.sum(self.live_files.column("size")).as_py()
        return int(total or 0)

    @property
    def partition_columns(self) -> tuple[str, ...]:
        return self.metadata.partition_columns

    # --- tombstones ----------------------------------------------------------------------------

    @property
    def deleted_file_retention_ms(self) -> int:
        """``delta.deletedFileRetentionDuration`` (default one week) in ms."""
        return self.properties.deleted_file_retention_ms

    @rule("RETENTION.TOMBSTONES")
    def tombstones_table(self, now_ms: int | None = None) -> pa.Table:
        """Tombstones not expired at ``now_ms`` (default: when the snapshot was built).

        A tombstone expires when its ``deletionTimestamp`` (0 if absent) is at or before
        ``now − delta.deletedFileRetentionDuration`` (RETENTION.TOMBSTONES).
        """
        now = self.now_ms if now_ms is None else now_ms
        cutoff = now - self.deleted_file_retention_ms
        table = self.all_tombstones
        if table.num_rows == 0:
            return table
        stamps = pc.fill_null(table.column("deletion_timestamp"), ZERO)
        return table.filter(pc.greater(stamps, pa.scalar(cutoff, pa.int64())))

    @cached_property
    @rule("SNAPSHOT.TOMBSTONES")
    def tombstones(self) -> dict[FileKey, RemoveFile]:
        """Unexpired tombstones by logical file key (SNAPSHOT.TOMBSTONES)."""
        table = self.tombstones_table()
        columns = {name: table.column(name).to_pylist() for name in TOMBSTONES_SCHEMA.names}
        out: dict[FileKey, RemoveFile] = {}
        for i in range(table.num_rows):
            remove = RemoveFile(
                path=columns["path"][i],
                deletion_timestamp=columns["deletion_timestamp"][i],
                data_change=bool(columns["data_change"][i]),
                extended_file_metadata=columns["extended_file_metadata"][i],
                partition_values=string_map(columns["partition_values"][i]),
                size=columns["size"][i],
                deletion_vector=dv_from_row(columns["deletion_vector"][i]),
                base_row_id=columns["base_row_id"][i],
                default_row_commit_version=columns["default_row_commit_version"][i],
            )
            out[remove.key] = remove
        return out

    # --- application transactions --------------------------------------------------------------

    @rule("RETENTION.SET_TRANSACTION")
    def app_transactions_at(self, now_ms: int) -> dict[str, SetTransaction]:
        """Application transactions not expired at ``now_ms`` (RETENTION.SET_TRANSACTION).

        Without ``delta.setTransactionRetentionDuration`` nothing expires; with it, an entry
        expires when it has no ``lastUpdated`` or ``lastUpdated <= now − retention``.
        """
        retention = self.properties.set_transaction_retention_ms
        if retention is None:
            return dict(self.all_app_transactions)
        cutoff = now_ms - retention
        return {
            app: txn
            for app, txn in self.all_app_transactions.items()
            if txn.last_updated is not None and txn.last_updated > cutoff
        }

    @cached_property
    def app_transactions(self) -> dict[str, SetTransaction]:
        """The latest ``txn`` per app id, minus expired ones (SNAPSHOT.APP_TXN)."""
        return self.app_transactions_at(self.now_ms)

    def txn_version(self, app_id: str) -> int:
        """The app id's latest transaction version, -1 if none (SNAPSHOT.APP_TXN)."""
        txn = self.app_transactions.get(app_id)
        return -1 if txn is None else txn.version


CHECKPOINT_CACHE_SIZE = 2
"""Checkpoints whose state a :class:`DeltaLog` keeps, least recently used out."""

COMMIT_CACHE_ACTIONS = 100_000
"""Decoded actions (of all commits together) a :class:`DeltaLog` keeps, least recently used out."""


WRITTEN_CHECKPOINT_FILES = 64
"""Names of the checkpoint files a :class:`DeltaLog` wrote that it remembers, oldest out."""

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


@dataclass(frozen=True)
class _Kept:
    """The last snapshot a :class:`DeltaLog` built, with the files it was built from as listed:
    the checkpoint it started at and each commit file after it (None where the listing showed
    no file for a version, e.g. one a compaction file replayed), and the commit file of its own
    version (``anchor``, None if not listed)."""

    snapshot: Snapshot
    start: CheckpointFiles | None
    commits: dict[int, FileInfo | None]
    anchor: FileInfo | None


def wall_clock_ms() -> int:
    """Milliseconds since the epoch from the system clock."""
    return time.time_ns() // 1_000_000


class DeltaLog:
    """The log of one table: listing, commits, snapshots (CHECKPOINT.READ, SNAPSHOT.*).

    ``store`` defaults to a :class:`LocalLogStore` on ``table_root``; ``clock`` (milliseconds)
    decides which tombstones and application transactions have expired in the snapshots it
    builds.

    Every :meth:`snapshot` lists the log afresh and replays from the newest usable checkpoint, so
    it sees every commit that landed before it started, from any writer, and builds the same
    snapshot whether or not anything was read before. With ``cache`` (the default) the log keeps
    what it read from files that never change once listed (LOG.PUT_IF_ABSENT): the state of the
    last :data:`CHECKPOINT_CACHE_SIZE` checkpoints and up to :data:`COMMIT_CACHE_ACTIONS` decoded
    (and checked) commit actions, each keyed on the file's name, size and modification time as
    the listing shows them, so a file that differs from what was kept is read again. States
    read with v2 sidecars are never kept, since no listing shows the sidecars. It also keeps the
    last snapshot it built: a load that lists the very same checkpoint and commit files for the
    same version gets it again, as of its own clock, and a load of a later version applies only
    the commits after it to its state (a refresh costs the new commits, not the table; see
    :meth:`_refreshed` for when a refresh is possible).
    """

    def __init__(
        self,
        table_root: str | os.PathLike[str],
        store: LogStore | None = None,
        clock: Callable[[], int] | None = None,
        *,
        cache: bool = True,
    ) -> None:
        self.store: LogStore = store if store is not None else LocalLogStore(table_root)
        self.clock: Callable[[], int] = clock if clock is not None else wall_clock_ms
        self.cache = cache
        self._lock = threading.Lock()
        self._checkpoints: OrderedDict[CheckpointFiles, ReplayState] = OrderedDict()
        self._commits: OrderedDict[FileInfo, ReplayActions] = OrderedDict()
        self._kept_actions = 0
        self._last_snapshot: _Kept | None = None
        self._written: OrderedDict[str, None] = OrderedDict()

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

    def read_commit(self, version: int) -> list[Action]:
        """The actions of commit ``version`` in file order (VersionNotFoundError if absent)."""
        name = commit_name(version)
        try:
            data = self.store.read(name)
        except FileNotFoundError:
            raise VersionNotFoundError(
                f"commit {version} does not exist", table=self.table_path, version=version
            ) from None
        return codec.decode_commit(data, table=self.table_path, version=version, file=name)

    def commit_is_own(self, version: int, txn_id: str, payload: bytes) -> bool | None:
        """Whether commit ``version`` is the one a transaction tried to write: None if the file
        does not exist, else True when its bytes are ``payload`` or its commitInfo carries
        ``txn_id`` (TXN.COMMIT_INFO). Resolves a write whose outcome the store could not report.
        OSError if the file cannot be read."""
        name = commit_name(version)
        try:
            data = self.store.read(name)
        except FileNotFoundError:
            return None
        if data == payload:
            return True
        try:
            actions = codec.decode_commit(data, table=self.table_path, version=version, file=name)
        except CorruptLogError:
            return False
        return any(isinstance(a, CommitInfo) and a.get("txnId") == txn_id for a in actions)

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

    @rule("SNAPSHOT.TIME_TRAVEL")
    def _target(self, listing: LogListing, requested: int | None) -> int:
        """The version to load: ``requested`` if the listing can reconstruct it, else the latest
        (SNAPSHOT.TIME_TRAVEL, LOG.NEW_TABLE)."""
        table = self.table_path
        latest = listing.latest_version
        if latest < 0:
            if not listing.full:
                raise UnusableCheckpoint(TableNotFoundError("no table", table=table))
            raise TableNotFoundError(
                "no Delta table: _delta_log has no commit and no checkpoint", table=table
            )
        target = latest if requested is None else requested
        earliest = listing.earliest_version
        if requested is not None and (target > latest or earliest is None or target < earliest):
            available = "none" if earliest is None else f"{earliest} to {latest}"
            raise VersionNotFoundError(
                f"cannot time travel to version {target}; available versions: {available}",
                table=table,
                version=target,
            )
        return target

    @rule("CHECKPOINT.READ")
    def _load(
        self, listing: LogListing, requested: int | None, failed: dict[str, BaseException]
    ) -> Snapshot:
        """Load ``requested`` from ``listing``, skipping the checkpoints in ``failed``: from the
        newest usable checkpoint at or below it, else from commit 0."""
        now = self.clock()
        target = self._target(listing, requested)
        refreshed = self._refreshed(listing, target, now)
        if refreshed is not None:
            return refreshed
        candidates = [
            cp
            for v in sorted((v for v in listing.checkpoints if v <= target), reverse=True)
            for cp in listing.checkpoints[v]
            if cp.files[0].name not in failed
        ]
        for cp in candidates:
            # commits after the newest start must all exist; older starts need them too
            listing.require_commits(cp.version, target, self.table_path)
            kept = self._kept_snapshot(listing, cp, target, now)
            if kept is not None:
                return kept
            try:
                state = self._read_checkpoint(cp)
            except UnusableCheckpoint as unusable:
                failed[cp.files[0].name] = unusable.error
                continue
            return self._keep(self._replay(listing, state, cp, target, now), cp, listing)
        errors = list(failed.values())
        if not listing.full:
            # older checkpoints and commit 0 are only in a full listing
            raise UnusableCheckpoint(errors[0] if errors else TableNotFoundError("no start"))
        if 0 not in listing.commits:
            if errors:
                raise errors[0]
            raise MissingVersionsError(
                "the log is truncated: no checkpoint and no commit 0 to start from "
                f"(earliest commit {min(listing.commits, default=None)})",
                table=self.table_path,
                version=target,
                file=commit_name(0),
            )
        listing.require_commits(-1, target, self.table_path)
        kept = self._kept_snapshot(listing, None, target, now)
        if kept is not None:
            return kept
        return self._keep(self._replay(listing, ReplayState(), None, target, now), None, listing)

    # --- the cache -----------------------------------------------------------------------------

    def _commit_actions(self, listing: LogListing, version: int) -> ReplayActions:
        """The decoded, checked actions of commit ``version`` (the kept ones if the listing
        shows the same file)."""
        info = listing.commits.get(version)
        if self.cache and info is not None:
            with self._lock:
                kept = self._commits.get(info)
                if kept is not None:
                    self._commits.move_to_end(info)
                    return kept
        actions = read_replay_commit(self.store, version)
        if self.cache and info is not None and len(actions) <= COMMIT_CACHE_ACTIONS:
            with self._lock:
                if info not in self._commits:
                    self._commits[info] = actions
                    self._kept_actions += len(actions)
                while self._kept_actions > COMMIT_CACHE_ACTIONS:
                    _, dropped = self._commits.popitem(last=False)
                    self._kept_actions -= len(dropped)
        return actions

    @staticmethod
    def _listed_commits(listing: LogListing, first: int, target: int) -> dict[int, FileInfo | None]:
        """The commit files of versions ``first + 1 .. target`` as ``listing`` shows them."""
        return {v: listing.commits.get(v) for v in range(first + 1, target + 1)}

    def _kept_snapshot(
        self, listing: LogListing, cp: CheckpointFiles | None, target: int, now: int
    ) -> Snapshot | None:
        """The snapshot last built, if it was replayed from the very files ``listing`` shows
        for ``target`` from ``cp`` (LOG.PUT_IF_ABSENT: listed files never change), as of
        ``now``; else None. A post-commit step and the next transaction of a writer load the
        version it just committed once, not once each."""
        if not self.cache:
            return None
        with self._lock:
            kept = self._last_snapshot
        if kept is None or kept.snapshot.version != target or kept.start != cp:
            return None
        first = -1 if cp is None else cp.version
        if kept.commits != self._listed_commits(listing, first, target):
            return None
        return self._as_of(kept.snapshot, now)

    @staticmethod
    def _as_of(snapshot: Snapshot, now: int) -> Snapshot:
        """``snapshot`` with its own mutable dicts, as of ``now``."""
        return replace(
            snapshot,
            domains=dict(snapshot.domains),
            all_app_transactions=dict(snapshot.all_app_transactions),
            now_ms=now,
        )

    def _keep(
        self, snapshot: Snapshot, start: CheckpointFiles | None, listing: LogListing
    ) -> Snapshot:
        """Remember ``snapshot``, built from ``start`` and the commits after it as ``listing``
        shows them (see :meth:`_kept_snapshot` and :meth:`_refreshed`), and return it."""
        if self.cache:
            version = snapshot.version
            first = -1 if start is None else start.version
            commits = self._listed_commits(listing, first, version)
            anchor = listing.commits.get(version)
            kept = _Kept(self._as_of(snapshot, snapshot.now_ms), start, commits, anchor)
            with self._lock:
                self._last_snapshot = kept
        return snapshot

    def _refreshed(self, listing: LogListing, target: int, now: int) -> Snapshot | None:
        """The snapshot at ``target`` from the one last built at a version ``k <= target``, by
        applying only commits ``k + 1 .. target`` to its state (SNAPSHOT.REPLAY), as a long-lived
        reader refreshes; None when that is not possible. It is possible when the listing shows
        commit ``k`` as the very file the kept snapshot was built from, no other commit file it
        was built from differs (LOG.PUT_IF_ABSENT: a listed file never changes, so the state at
        ``k`` is still the log's), and the commits after ``k`` up to ``target`` are all listed
        (LOG.CONTIGUITY) from where a cold load would start: the newest complete checkpoint
        the listing shows at or below ``target`` (or commit 0 in a full listing without one),
        which is also the snapshot's ``checkpoint_version``. That checkpoint must be the kept
        snapshot's own start or one this log has read whole or written, and a log a cold load
        could not reconstruct is not refreshed either, so both load the same snapshot. The
        result is kept as replayed from that checkpoint: what a refresh checks stays bounded by
        the commits since the newest checkpoint."""
        if not self.cache:
            return None
        with self._lock:
            kept = self._last_snapshot
        if kept is None or kept.snapshot.version > target:
            return None
        base = kept.snapshot
        if kept.anchor is None or listing.commits.get(base.version) != kept.anchor:
            return None
        for version, info in kept.commits.items():
            shown = listing.commits.get(version)
            if shown is not None and shown != info:
                return None
        cp = next(
            (cps[0] for v, cps in sorted(listing.checkpoints.items(), reverse=True) if v <= target),
            None,
        )
        if cp is None and not (listing.full and 0 in listing.commits):
            return None  # a cold load would find no start: neither does a refresh
        if cp is not None and cp != kept.start and not self._was_read(cp):
            return None  # a cold load would read it first: whether it is usable is not known
        start = -1 if cp is None else cp.version
        needed = self._listed_commits(listing, min(start, base.version), target)
        if any(info is None for info in needed.values()):
            return None
        state = ReplayState(
            base.protocol,
            base.metadata,
            dict(base.all_app_transactions),
            dict(base.domains),
            base.live_files,
            base.all_tombstones,
        )
        return self._keep(
            self._replay(listing, state, cp, target, now, first=base.version), cp, listing
        )

    def wrote_checkpoint(self, names: tuple[str, ...]) -> None:
        """Note that this log wrote the checkpoint files ``names`` from a snapshot it loaded: a
        refresh may then start from them without reading them (see :meth:`_refreshed`)."""
        with self._lock:
            for name in names:
                self._written[name] = None
            while len(self._written) > WRITTEN_CHECKPOINT_FILES:
                self._written.popitem(last=False)

    def _was_read(self, cp: CheckpointFiles) -> bool:
        """Whether checkpoint ``cp`` is known usable: its state is kept (it was read whole) or
        this log wrote it."""
        with self._lock:
            return cp in self._checkpoints or all(f.name in self._written for f in cp.files)

    def _read_checkpoint(self, cp: CheckpointFiles) -> ReplayState:
        """The state of checkpoint ``cp`` (the kept one if cached; UnusableCheckpoint if it
        cannot be read, CHECKPOINT.READ)."""
        if self.cache:
            with self._lock:
                kept = self._checkpoints.get(cp)
                if kept is not None:
                    self._checkpoints.move_to_end(cp)
                    return kept.copy()
        state = checkpoint_reader.read_checkpoint(self.store, cp)
        if self.cache and state.cacheable:
            with self._lock:
                self._checkpoints[cp] = state.copy()
                while len(self._checkpoints) > CHECKPOINT_CACHE_SIZE:
                    self._checkpoints.popitem(last=False)
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
        cp: CheckpointFiles | None,
        target: int,
        now: int,
        first: int | None = None,
    ) -> Snapshot:
        """Apply the commits after ``first`` (default: the start, ``cp``) up to ``target``
        (SNAPSHOT.RECONCILE) and finish the snapshot."""
        if first is None:
            first = -1 if cp is None else cp.version
        last_actions = reconcile(state, self._commits_after(listing, first, target))
        protocol, metadata = require_protocol_and_metadata(state, self.table_path, target, cp)
        files = state.files
        return Snapshot(
            table_path=self.table_path,
            version=target,
            protocol=protocol,
            metadata=metadata,
            checkpoint_version=None if cp is None else cp.version,
            timestamp=self._timestamp(listing, target, metadata, last_actions, cp),
            domains=dict(state.domains),
            all_app_transactions=dict(state.txns),
            live_files=_bounded_chunks(files),
            all_tombstones=state.tombstones,
            now_ms=now,
        )

    def _timestamp(
        self,
        listing: LogListing,
        version: int,
        metadata: Metadata,
        actions: list[Action] | None,
        cp: CheckpointFiles | None,
    ) -> int:
        """The commit file's modification time, or its in-commit timestamp (SNAPSHOT.REPLAY)."""
        if TableProperties(metadata.configuration).in_commit_timestamps:
            if actions is None and version in listing.commits:
                try:
                    actions = self.read_commit(version)
                except DeltaError:
                    actions = None
            for action in actions or ():
                if isinstance(action, CommitInfo):
                    ict = action.get("inCommitTimestamp")
                    if isinstance(ict, int) and not isinstance(ict, bool):
                        return ict
        info = listing.commits.get(version)
        if info is not None:
            return info.modification_time
        return cp.files[0].modification_time if cp is not None else 0
