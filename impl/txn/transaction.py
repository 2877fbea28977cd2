"""Optimistic transactions on the production log (TXN.*, ISOLATION.*).

A transaction reads one snapshot, records what it read, stages actions, and
commits with put-if-absent at ``read_version + 1``; on a collision it checks
every winning commit in order (deltaspec.impl.txn.conflicts) and retries after the
latest, up to ``maxCommitAttempts`` more times (the commit loop:
deltaspec.impl.txn.retries).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from deltaspec import __version__
from deltaspec.rules import rule

from .. import errors, predicates
from ..actions import (
    Action,
    AddCDCFile,
    AddFile,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
)
from ..log import crashpoints
from ..snapshot.delta_log import DeltaLog, wall_clock_ms
from ..snapshot.state import Snapshot
from ..table import properties
from ..table.releases import Profile
from . import timestamps as ict
from .current_transaction import ROW_TRACKING_DOMAIN, CurrentTransactionInfo
from .post_commit import post_commit
from .prepare import (
    file_actions,
    is_blind_append,
    prepare,
    skips_empty_commit,
)
from .prepared_commit import PreparedCommit
from .preparing import Preparing
from .read_set import ReadSet
from .retries import CommitAttempts
from .rowtracking import high_water_mark

ENGINE_INFO = f"deltaspec/{__version__}"
CHANGES_DATA = frozenset(
    {
        "WRITE",
        "STREAMING UPDATE",
        "DELETE",
        "TRUNCATE",
        "CONVERT",
        "MERGE",
        "UPDATE",
        "REPLACE TABLE",
        "REPLACE TABLE AS SELECT",
        "CREATE OR REPLACE TABLE AS SELECT",
        "RESTORE",
        "CLONE",
        "CREATE TABLE AS SELECT",
    }
)


@dataclass(frozen=True)
class Operation:
    """What the commit records as its operation (commitInfo.operation / operationParameters).

    Parameter values are written as delta-spark writes them: strings, booleans, integers and null
    as they are (OPTIMIZE's ``"auto":false``, CREATE TABLE's ``"description":null``, RESTORE's
    ``"version":1``), lists and other
    values as a JSON string (``"partitionBy":"[\"p\"]"``)."""

    name: str = "WRITE"
    parameters: dict[str, Any] = field(default_factory=dict)
    changes_data: bool | None = None
    metrics: dict[str, str] | None = None
    user_metadata: str | None = None

    @property
    def changes_data_flag(self) -> bool:
        return self.name in CHANGES_DATA if self.changes_data is None else self.changes_data


class OptimisticTransaction:
    """One transaction on ``log`` reading ``snapshot``: the latest by default (none if the table
    does not exist yet); ``None`` writes as if no table existed (read version -1)."""

    def __init__(
        self,
        log: DeltaLog,
        snapshot: Snapshot | Literal["latest"] | None = "latest",
        *,
        profile: Profile | None = None,
        clock: Callable[[], int] = wall_clock_ms,
    ) -> None:
        self.log = log
        self.profile = profile or Profile()
        self.clock = clock
        if snapshot == "latest":
            try:
                snapshot = log.snapshot()
            except errors.TableNotFoundError:
                snapshot = None
        self.snapshot: Snapshot | None = snapshot
        self.txn_id = str(uuid.uuid4())
        self._predicates: list[predicates.Expr] = []
        self._files: dict[str, AddFile] = {}
        self._whole_table = False
        self._app_ids: set[str] = set()
        self._depends_on_files = False
        self._staged: list[Action] = []
        self.committed_version: int | None = None

    # --- what the transaction read ------------------------------------------------------------

    @property
    def read_version(self) -> int:
        return -1 if self.snapshot is None else self.snapshot.version

    @property
    def metadata(self) -> Metadata | None:
        staged = [a for a in self._staged if isinstance(a, Metadata)]
        if staged:
            return staged[-1]
        return None if self.snapshot is None else self.snapshot.metadata

    def _live_files(self) -> list[AddFile]:
        return [] if self.snapshot is None else list(self.snapshot.files.values())

    @rule("TXN.READ_PREDICATES", "TXN.READ_FILES")
    def filter_files(
        self, filters: Sequence[predicates.Expr] = (), data_skipped: Iterable[str] | None = None
    ) -> list[AddFile]:
        """TXN.READ_PREDICATES / TXN.READ_FILES: scan with ``filters``; the partition-only filters
        become the read predicate, the pruned files (or ``data_skipped`` paths) the read files."""
        metadata = self.metadata
        columns = metadata.partition_columns if metadata else ()
        predicate = predicates.partition_only(filters, columns)
        live = self._live_files()
        if data_skipped is not None:
            wanted = set(data_skipped)
            scanned = [f for f in live if f.path in wanted]
        elif predicate == predicates.TRUE or metadata is None:
            scanned = live
        else:
            schema = predicates.PartitionSchema.of(metadata)
            hits = predicates.matching(predicate, [f.partition_values for f in live], schema)
            scanned = [f for f, hit in zip(live, hits, strict=True) if hit]
        self._predicates.append(predicate)
        self._files.update((f.path, f) for f in scanned)
        self._depends_on_files = True
        return scanned

    def track_read_predicate(self, predicate: predicates.Expr) -> None:
        """TXN.READ_PREDICATES: a predicate read without files (dynamic partition overwrite);
        before v0.5 a read of the table all the same (TXN.DEPENDS_ON_FILES)."""
        self._predicates.append(predicate)
        self._depends_on_files = True

    def track_files_read(self, paths: Iterable[str]) -> None:
        """TXN.READ_FILES: files read without a predicate; before v0.5 a read of the table all
        the same (TXN.DEPENDS_ON_FILES)."""
        by_path = {f.path: f for f in self._live_files()}
        self._files.update((p, by_path[p]) for p in paths if p in by_path)
        self._depends_on_files = True

    @rule("TXN.READ_WHOLE_TABLE")
    def read_whole_table(self) -> None:
        """TXN.READ_WHOLE_TABLE."""
        self._predicates.append(predicates.TRUE)
        self._whole_table = True
        self._depends_on_files = True

    @rule("TXN.READ_APP_IDS")
    def txn_version(self, app_id: str) -> int:
        """TXN.READ_APP_IDS: the app's committed version (-1 if none); the commit depends on it."""
        self._app_ids.add(app_id)
        if self.snapshot is None or app_id not in self.snapshot.app_transactions:
            return -1
        return self.snapshot.app_transactions[app_id].version

    def stage(self, actions: Iterable[Action]) -> None:
        self._staged.extend(actions)

    # --- preparing ----------------------------------------------------------------------------

    def _preparing(self, operation: Operation) -> Preparing:
        return Preparing(self.log.table_path, self.read_version + 1, self.snapshot, operation.name)

    def _error(self, kind: type[errors.CommitValidationError], message: str) -> errors.DeltaError:
        return kind(message, table=self.log.table_path, version=self.read_version + 1)

    @rule("ISOLATION.NONE", "ISOLATION.DOWNGRADE_V05", "ISOLATION.DOWNGRADE")
    def _isolation_level(self, actions: list[Action], operation: Operation) -> str | None:
        """The level the commit's conflict checks run under; None before v0.5.0."""
        profile = self.profile
        if not profile.has("fine_grained_conflicts"):
            return None
        files = file_actions(actions)
        changes = any(getattr(f, "data_change", False) for f in files)
        if not profile.has("downgrade_v12"):
            return "Serializable" if changes else "SnapshotIsolation"
        metadata = self.metadata
        declared = "Serializable"
        if profile.has("table_isolation_property") and metadata is not None:
            declared = self._table_level(metadata)
        only_files = all(
            isinstance(a, AddFile | RemoveFile | AddCDCFile)
            or (
                isinstance(a, DomainMetadata)
                and a.domain == ROW_TRACKING_DOMAIN
                and profile.has("domain_metadata")
            )
            for a in actions
        )
        may_downgrade = declared == "Serializable" or not operation.changes_data_flag
        if only_files and not changes and may_downgrade:
            return "SnapshotIsolation"
        return declared

    @rule("ISOLATION.TABLE_DEFAULT")
    def _table_level(self, metadata: Metadata) -> str:
        """ISOLATION.TABLE_DEFAULT: ``delta.isolationLevel``, case-insensitively
        (TXN.TABLE_PROPERTIES); an unknown name is InvalidIsolationLevelError."""
        value = metadata.configuration.get("delta.isolationLevel")
        if value is None:
            return "Serializable"
        try:
            return properties.isolation_level(value)
        except ValueError as exc:
            raise self._error(errors.InvalidIsolationLevelError, str(exc)) from None

    @rule("TXN.COMMIT_INFO", "ISOLATION.RECORDED")
    def _commit_info(self, operation: Operation, level: str | None, blind: bool) -> CommitInfo:
        """TXN.COMMIT_INFO in delta-spark's field order; fixed for every attempt."""
        profile = self.profile
        fields: dict[str, Any] = {
            "timestamp": self.clock(),
            "operation": operation.name,
            "operationParameters": {
                k: v if isinstance(v, str | int) or v is None else json.dumps(v)
                for k, v in operation.parameters.items()
            },
        }
        if self.read_version >= 0:
            fields["readVersion"] = self.read_version
        if level is not None and profile.has("records_isolation_level"):
            fields["isolationLevel"] = level
        if profile.has("blind_append_flag"):
            fields["isBlindAppend"] = blind
        if operation.metrics:
            fields["operationMetrics"] = operation.metrics
        if operation.user_metadata is not None:
            fields["userMetadata"] = operation.user_metadata
        fields["engineInfo"] = ENGINE_INFO
        if profile.has("txn_id"):
            fields["txnId"] = self.txn_id
        return CommitInfo(fields)

    # --- committing ---------------------------------------------------------------------------

    def commit(self, actions: Iterable[Action] = (), operation: Operation | None = None) -> int:
        """Commit the staged actions plus ``actions``; returns the committed version."""
        version = self._commit(actions, operation or Operation(), if_needed=False)
        assert version is not None
        return version

    def commit_if_needed(
        self, actions: Iterable[Action] = (), operation: Operation | None = None
    ) -> int | None:
        """Like ``commit``, but an empty commit may be skipped (TXN.EMPTY_COMMIT): returns None."""
        return self._commit(actions, operation or Operation(), if_needed=True)

    def _commit(self, extra: Iterable[Action], operation: Operation, if_needed: bool) -> int | None:
        """The commit pipeline: prepare (PreparedCommit), the attempt loop (CommitAttempts),
        post-commit work on the committed version (post_commit)."""
        if self.committed_version is not None:
            raise RuntimeError("transaction already committed")
        crashpoints.reached("commit.begin")
        prepared = self._prepare(extra, operation, if_needed)
        if prepared is None:
            return None
        attempts = CommitAttempts(
            self.log,
            self.profile,
            self.txn_id,
            self.read_version,
            prepared.in_commit_timestamp,
            prepared.enables_in_commit_timestamps,
        )
        version = attempts.write_with_retries(prepared)
        crashpoints.reached("commit.after_put")
        self.committed_version = version
        post_commit(self.log, version, prepared.current.metadata, self.clock)
        return version

    @rule("TXN.COMMIT_INFO_FIXED")
    def _prepare(
        self, extra: Iterable[Action], operation: Operation, if_needed: bool
    ) -> PreparedCommit | None:
        """The first attempt's preparation: the prepare rules, isolation level, blind append,
        the commitInfo (fixed for every attempt but its in-commit timestamp), the bytes. None
        when the commit is empty and may be skipped (TXN.EMPTY_COMMIT)."""
        staged: list[Action] = [a for a in (*self._staged, *extra) if not isinstance(a, CommitInfo)]
        actions = prepare(self._preparing(operation), staged, self.profile)
        level = self._isolation_level(actions, operation)
        reads = ReadSet(
            tuple(self._predicates),
            dict(self._files),
            self._whole_table,
            frozenset(self._app_ids),
            self._depends_on_files,
        )
        blind = is_blind_append(actions, reads, self.profile)
        if skips_empty_commit(actions, if_needed, level, self.profile):
            return None
        read = self.snapshot
        metadata = next((a for a in actions if isinstance(a, Metadata)), self.metadata)
        info = self._commit_info(operation, level, blind)
        now = info.get("timestamp")
        assert isinstance(now, int)
        # ICT.ASSIGN: the first attempt's in-commit timestamp, if the committed metadata has them
        timestamp = ict.first_in_commit_timestamp(metadata, read, now, self.profile)
        enables = ict.enables_in_commit_timestamps(metadata, read, self.profile)
        commit_info = ict.stamped(info, timestamp)
        if self.profile.has("commit_info_last"):
            ordered = [*actions, commit_info]
        else:
            ordered = [commit_info, *actions]
        table, version = self.log.table_path, self.read_version + 1
        current = CurrentTransactionInfo(
            table=table,
            read_protocol=None if read is None else read.protocol,
            read_metadata=None if read is None else read.metadata,
            reads=reads,
            actions=tuple(actions),
            isolation_level=level,
            is_blind_append=blind,
            protocol=next((a for a in actions if isinstance(a, Protocol)), None)
            or (None if read is None else read.protocol),
            metadata=metadata,
            row_id_high_water_mark=high_water_mark(read),
        )
        return PreparedCommit.of(
            ordered,
            current,
            table=table,
            version=version,
            in_commit_timestamp=timestamp,
            enables_in_commit_timestamps=enables,
        )
