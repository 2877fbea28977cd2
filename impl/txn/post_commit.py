"""Post-commit work: the last stage of the commit pipeline, after the commit is in the log
(deltaspec.impl.txn.prepared_commit): the version's checksum (CHECKSUM.WRITE) and, when the
table's interval asks for one, its checkpoint (CHECKPOINT.INTERVAL). Nothing here ever raises
(TXN.COMMITTED_IS_FINAL)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from deltaspec.rules import rule

from .. import checksum, errors
from ..actions import Metadata
from ..checkpoint import policy as checkpoint_policy
from ..snapshot.delta_log import DeltaLog

__all__ = ["post_commit"]

LOG = logging.getLogger(__name__)


@rule("TXN.COMMITTED_IS_FINAL")
def post_commit(
    log: DeltaLog, version: int, metadata: Metadata | None, clock: Callable[[], int]
) -> None:
    """The checksum of the committed ``version`` of ``log``, then its checkpoint if
    ``metadata``'s interval asks for one (CHECKPOINT.INTERVAL). Nothing here ever raises
    (TXN.COMMITTED_IS_FINAL): the commit is in the log, and a caller told otherwise would retry
    it and write its rows twice; a failure is logged."""
    _write_checksum(log, version)
    try:
        if metadata is None or not checkpoint_policy.needs_checkpoint(version, metadata):
            return
        checkpoint_policy.checkpoint_version(log, version, now_ms=clock())
    except ValueError as why:  # a table property the table itself holds (an interval of 0)
        LOG.warning("no checkpoint of %s at %s: %s", log.table_path, version, why)
    except Exception:  # a checkpoint is an optimisation; the commit already landed
        LOG.exception("post-commit work of %s at version %s failed", log.table_path, version)


def _write_checksum(log: DeltaLog, version: int) -> None:
    """CHECKSUM.WRITE after the commit; a failure is logged, never raised."""
    try:
        checksum.write_checksum(log, version)
    except errors.DeltaError as why:  # the table's state has no checksum (e.g. no metadata yet)
        LOG.warning("no checksum for %s at %s: %s", log.table_path, version, why)
    except Exception:  # a checksum is an optimisation; the commit already landed
        LOG.exception("writing the checksum of %s at %s failed", log.table_path, version)
