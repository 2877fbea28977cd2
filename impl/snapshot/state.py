"""The snapshot: the state of a table at one version, as a value (SNAPSHOT.*).

A snapshot holds the reconciled state a load replayed (deltaspec.impl.snapshot.delta_log):
protocol, metadata, live files, tombstones, the latest application transaction per app id and
the live metadata domains. Live files and tombstones are held as Arrow tables
(:data:`~deltaspec.impl.replay.layouts.FILES_SCHEMA`,
:data:`~deltaspec.impl.replay.layouts.TOMBSTONES_SCHEMA`) and materialised as
``dict[(path, dvId), AddFile | RemoveFile]`` only on demand. Tombstones and application
transactions past their retention are left out with the clock of the log that built the
snapshot (RETENTION.TOMBSTONES, RETENTION.SET_TRANSACTION).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import pyarrow as pa
import pyarrow.compute as pc

from deltaspec.rules import rule

from ..actions import (
    AddFile,
    DomainMetadata,
    FileKey,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from ..replay.layouts import (
    FILES_SCHEMA,
    STATS_PARSED,
    TOMBSTONES_SCHEMA,
    ZERO,
    dv_from_row,
    string_map,
)
from ..replay.stats import parse_stats, stats_layout
from ..table.properties import TableProperties

__all__ = ["Snapshot"]


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
    def min_file_retention_timestamp(self, now_ms: int) -> int:
        """``now_ms − delta.deletedFileRetentionDuration``: a tombstone deleted at or before it
        has expired (RETENTION.TOMBSTONES; delta-spark's ``minFileRetentionTimestamp``)."""
        return now_ms - self.deleted_file_retention_ms

    def tombstones_table(self, now_ms: int | None = None) -> pa.Table:
        """Tombstones not expired at ``now_ms`` (default: when the snapshot was built).

        A tombstone expires when its ``deletionTimestamp`` (0 if absent) is at or before
        :meth:`min_file_retention_timestamp` (RETENTION.TOMBSTONES).
        """
        now = self.now_ms if now_ms is None else now_ms
        cutoff = self.min_file_retention_timestamp(now)
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
