"""When a checkpoint is written, and what follows it (CHECKPOINT.INTERVAL,
CHECKPOINT.COMMITTED_VERSION).

A commit whose version is a multiple of ``delta.checkpointInterval`` triggers a checkpoint
(:func:`needs_checkpoint`); the post-commit step :func:`checkpoint_version` writes the checkpoint of
that version, then cleans up the log (RETENTION.LOG, :mod:`deltaspec.impl.retention.log_cleanup`).
"""

from __future__ import annotations

from deltaspec.rules import rule

from ..actions import Metadata
from ..retention.log_cleanup import (
    cleanup_expired_logs,
    log_cleanup_enabled,
    sweep_temp_files,
)
from ..snapshot.delta_log import DeltaLog
from ..table.properties import TableProperties
from .contents import checkpoint_state
from .write import CheckpointResult, write_checkpoint

__all__ = ["checkpoint_interval", "checkpoint_version", "needs_checkpoint"]


def checkpoint_interval(metadata: Metadata) -> int:
    """``delta.checkpointInterval``: a positive integer, default 10 (CHECKPOINT.INTERVAL);
    ValueError for anything else (properties.checkpoint_interval)."""
    return TableProperties(metadata.configuration).checkpoint_interval


@rule("CHECKPOINT.INTERVAL")
def needs_checkpoint(version: int, metadata: Metadata) -> bool:
    """Whether committing ``version`` triggers a checkpoint (CHECKPOINT.INTERVAL).

    True when ``version != 0`` and ``version`` is a multiple of ``delta.checkpointInterval``.
    """
    return version != 0 and version % checkpoint_interval(metadata) == 0


@rule("CHECKPOINT.COMMITTED_VERSION")
def checkpoint_version(
    log: DeltaLog, version: int, *, now_ms: int, parts: int | None = None
) -> CheckpointResult:
    """Checkpoint the snapshot at ``version``, then clean up the log (CHECKPOINT.COMMITTED_VERSION,
    RETENTION.LOG).

    This is the post-commit step after committing ``version`` (CHECKPOINT.INTERVAL): the
    checkpoint is of that version even if later ones exist. Log cleanup runs when
    ``delta.enableExpiredLogCleanup`` is true (default), and sweeps the temporary files that
    killed writers left behind
    (:func:`~deltaspec.impl.retention.log_cleanup.sweep_temp_files`).
    """
    snapshot = log.snapshot(version)
    result = write_checkpoint(log, snapshot, parts=parts, now_ms=now_ms)
    if not result.reused and result.v2_checkpoint is None:
        # what the files hold is known: the next load starts from it without reading them
        log.wrote_checkpoint(version, result.files[0], checkpoint_state(snapshot, now_ms=now_ms))
    if log_cleanup_enabled(snapshot.metadata):
        cleanup_expired_logs(log, version, now_ms, snapshot.metadata, snapshot.protocol)
        sweep_temp_files(log.store, now_ms)
    return result
