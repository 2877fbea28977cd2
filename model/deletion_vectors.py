"""Deletion vectors on write (spec/deletion-vectors.md): what a command that removes rows from
files commits on a table with deletion vectors enabled (DV.WRITE), and the checks every add with
a deletion vector passes when the commit is prepared (DV.ADD_CHECKS)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from deltaspec.rules import rule

from .actions import Action, AddFile, Metadata
from .outcomes import ErrorKind
from .profiles import Profile
from .transaction_state import Transaction

Actions = tuple[Action, ...]


@dataclass(frozen=True)
class MarkedFile:
    """A live file as DV.WRITE sees it: its path, its row count and the rows its current vector
    marks."""

    path: str
    num_records: int
    deleted: frozenset[int] = frozenset()


@dataclass(frozen=True)
class FileOutcome:
    """What the commit does to one file: removed outright (``deleted`` None), or removed and
    added again with a vector marking ``deleted``."""

    path: str
    deleted: frozenset[int] | None


@rule("DV.WRITE")
def mark_deleted(
    files: tuple[MarkedFile, ...], removed: Mapping[str, frozenset[int]]
) -> tuple[FileOutcome, ...]:
    """Each file with rows in ``removed``: gone when its old and new marked rows cover it, else
    re-added with a vector of both; files without removed rows are untouched."""
    out = []
    for f in files:
        new = removed.get(f.path, frozenset())
        if not new:
            continue
        union = f.deleted | new
        out.append(FileOutcome(f.path, None if len(union) >= f.num_records else union))
    return tuple(out)


TIGHT_BOUNDS_FORBIDDEN = frozenset({"DELETE", "UPDATE", "MERGE"})
"""Operations whose deletion-vector adds must say ``tightBounds: false`` (DV.ADD_CHECKS)."""


def _stats(add: AddFile) -> dict[str, object]:
    parsed = json.loads(add.stats) if add.stats else {}
    return parsed if isinstance(parsed, dict) else {}


@rule("DV.ADD_CHECKS")
def check_deletion_vector_adds(
    txn: Transaction, actions: Actions, profile: Profile
) -> Actions | ErrorKind:
    """Every add with a deletion vector: the table enables deletion vectors, its stats give
    ``numRecords``, and for DELETE, UPDATE and MERGE they say ``tightBounds: false``."""
    with_dv = [a for a in actions if isinstance(a, AddFile) and a.dv_id is not None]
    if not with_dv or not profile.has("deletion_vector_add_checks"):
        return actions
    metadata = next((a for a in actions if isinstance(a, Metadata)), txn.read_snapshot.metadata)
    configuration = {k.lower(): v for k, v in metadata.configuration} if metadata else {}
    if configuration.get("delta.enabledeletionvectors", "false").strip().lower() != "true":
        return ErrorKind.DELETION_VECTORS_DISALLOWED
    for add in with_dv:
        stats = _stats(add)
        if stats.get("numRecords") is None:
            return ErrorKind.DELETION_VECTOR_MISSING_NUM_RECORDS
        tight = stats.get("tightBounds") is True
        if tight and txn.operation.name in TIGHT_BOUNDS_FORBIDDEN:
            return ErrorKind.DELETION_VECTOR_TIGHT_BOUNDS
    return actions
