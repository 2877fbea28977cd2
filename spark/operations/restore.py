"""RESTORE: make the table's live files and metadata those of an older version again.

As delta-spark's RestoreTableCommand: the files live at the target version and not now are added
back (``dataChange=true``, statistics kept), the files live now and not then are removed, the
metadata returns to the target's when it differs, the protocol is never downgraded, and the
whole table counts as read. commitInfo: operation ``RESTORE`` with ``{"version": n,
"timestamp": null}`` (or the timestamp given) and delta-spark's six metrics. A restored file
that is gone (VACUUMed) fails the restore before anything is committed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace

from ...impl import errors
from ...impl.actions import Action, Protocol
from ...impl.snapshot.delta_log import DeltaLog
from ...impl.snapshot.time_travel import (
    TimestampEarlierThanCommitRetentionError,
    version_at,
)
from ...impl.txn.transaction import Operation, OptimisticTransaction
from .. import manifest, rewrite
from ..errors import RestoreMissingFilesError, RestoreTimestampEarlierError
from ..read import file_path
from ..s3a import local_root
from ..write import require_writable


@dataclass(frozen=True)
class RestoreResult:
    version: int | None
    metrics: dict[str, str]


def restore(
    path: str | os.PathLike[str],
    *,
    version: int | None = None,
    timestamp_ms: int | None = None,
    timestamp_text: str | None = None,
    before_commit: Callable[[], None] | None = None,
) -> RestoreResult:
    """Restore the table at ``path`` to ``version`` or to the version current at
    ``timestamp_ms`` (``timestamp_text`` is what the user wrote, recorded in commitInfo)."""
    root = local_root(path, "RESTORE")
    log = DeltaLog(root)
    txn = OptimisticTransaction(log)
    current = txn.snapshot
    if current is None:
        raise errors.TableNotFoundError(f"{root} is not a Delta table", table=root)
    require_writable(current.protocol, root)
    if (version is None) == (timestamp_ms is None):
        raise ValueError("give a version or a timestamp")
    target_version = version if version is not None else _version_at(log, timestamp_ms or 0)
    target = log.snapshot(target_version)
    now = txn.clock()
    live = {f.key: f for f in txn.filter_files()}
    wanted = target.files
    restored = [replace(f, data_change=True) for k, f in sorted(wanted.items()) if k not in live]
    gone = [f for k, f in sorted(live.items()) if k not in wanted]
    missing = [f.path for f in restored if not os.path.isfile(file_path(root, f))]
    if missing:
        raise RestoreMissingFilesError(
            f"cannot restore version {target_version}: {len(missing)} of its files are gone "
            f"(first: {missing[0]})",
            table=root,
            version=target_version,
            file=missing[0],
        )
    # as delta-spark: the target's metadata, and the protocol, never downgraded
    newer = target.protocol if _rank(target.protocol) > _rank(current.protocol) else None
    actions: list[Action] = [target.metadata, newer or current.protocol]
    actions.extend(rewrite.remove(f, now, whole_stats=True) for f in gone)
    actions.extend(restored)
    metrics = {
        "numRestoredFiles": str(len(restored)),
        "removedFilesSize": str(sum(f.size for f in gone)),
        "numRemovedFiles": str(len(gone)),
        "restoredFilesSize": str(sum(f.size for f in restored)),
        "numOfFilesAfterRestore": str(len(wanted)),
        "tableSizeAfterRestore": str(sum(f.size for f in wanted.values())),
    }
    operation = Operation(
        "RESTORE",
        {"version": None if version is None else target_version, "timestamp": timestamp_text},
        metrics=metrics,
    )
    if before_commit is not None:
        before_commit()
    committed = txn.commit(actions, operation)
    manifest.after_commit(root, committed)
    return RestoreResult(committed, metrics)


def _rank(protocol: Protocol) -> tuple[int, int, int]:
    features = len(set(protocol.reader_features or ()) | set(protocol.writer_features or ()))
    return (protocol.min_reader_version, protocol.min_writer_version, features)


def _version_at(log: DeltaLog, timestamp_ms: int) -> int:
    """The version RESTORE goes to at ``timestamp_ms``; before the first version's timestamp
    delta-spark's RESTORE says DELTA_CANNOT_RESTORE_TIMESTAMP_EARLIER."""
    try:
        return version_at(log, timestamp_ms)
    except TimestampEarlierThanCommitRetentionError as error:
        raise RestoreTimestampEarlierError(error.message, table=log.table_path) from None
