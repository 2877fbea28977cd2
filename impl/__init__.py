"""The production implementation of the Delta log, and its front door: the public Python API
(docs/python-api.md) is what this module exports; everything else is the implementation's own."""

from . import predicates
from .actions import (
    AddFile,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from .checkpoint.write import CheckpointResult, write_checkpoint
from .errors import (
    CommitFailedError,
    CommitOutcomeUnknownError,
    ConcurrentAppendException,
    ConcurrentDeleteDeleteException,
    ConcurrentDeleteReadException,
    ConcurrentModificationException,
    ConcurrentTransactionException,
    ConcurrentWriteException,
    DeltaConcurrentModificationException,
    DeltaError,
    MetadataChangedException,
    ProtocolChangedException,
)
from .log.local_store import LocalLogStore
from .log.object_store import ObjectLogStore
from .log.store import LogStore
from .retention.log_cleanup import cleanup_expired_logs
from .retention.vacuum import VacuumResult, vacuum
from .snapshot.delta_log import DeltaLog
from .snapshot.state import Snapshot
from .table.releases import Profile
from .txn.transaction import Operation, OptimisticTransaction

__all__ = [
    "AddFile", "CheckpointResult", "CommitFailedError", "CommitInfo", "CommitOutcomeUnknownError",
    "ConcurrentAppendException", "ConcurrentDeleteDeleteException", "ConcurrentDeleteReadException",
    "ConcurrentModificationException", "ConcurrentTransactionException", "ConcurrentWriteException",
    "DeltaConcurrentModificationException", "DeltaError", "DeltaLog", "DomainMetadata",
    "LocalLogStore", "LogStore", "Metadata", "MetadataChangedException", "ObjectLogStore",
    "Operation", "OptimisticTransaction", "Profile", "Protocol", "ProtocolChangedException",
    "RemoveFile", "SetTransaction", "Snapshot", "VacuumResult", "cleanup_expired_logs",
    "predicates", "vacuum", "write_checkpoint",
]  # fmt: skip
