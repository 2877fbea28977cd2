"""The operation alphabet: what one writer does, as one vocabulary for every tool.

An :class:`Operation` is a :class:`Kind` and its parameters (the partition it works on). The
tools that describe writers name their operations differently; each name maps onto a kind here:

- the explorer (``deltaspec explore``) draws from :data:`ALPHABET`, kinds by value;
- the differential oracle (``conformance/oracle/machine.py``): one state machine rule per kind,
  named as the kind (``Kind.SET_TXN``: ``set_txn``);
- the conflict matrix's operations (spec/data/conflict_matrix.json): :data:`MATRIX_OPERATIONS`;
- the engine operations an operation-level adapter runs (``engines/operations.py``):
  ``engine.ENGINE_OPERATIONS``.

The translations are functions of this folder: :mod:`.scenario` spells an operation as a
scenario writer (spec/scenarios.md) for the explorer and the matrix generator, and
:mod:`.engine` turns a scenario writer into the engine operation that records the same reads
and stages the same file changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    """What a writer does. Values are the explorer's operation names."""

    APPEND = "append"
    """Blind append (TXN.BLIND_APPEND)."""
    READ_WRITE = "read_write"
    """Read a partition, then append to it (an insert-only MERGE)."""
    DELETE = "delete"
    UPDATE = "update"
    """Copy-on-write rewrite of the files it reads."""
    MERGE = "merge"
    """Rewrite of the files it reads, and sometimes inserts besides."""
    COMPACT = "compact"
    """OPTIMIZE: files of a partition rewritten as one, dataChange=false."""
    OVERWRITE = "overwrite"
    """Replace the whole table."""
    REPLACE_WHERE = "replace_where"
    """Replace the partitions a predicate selects."""
    SET_TXN = "set_txn"
    """A streaming write with its SetTransaction (CONFLICT.APP_TXN)."""
    SET_PROPERTIES = "metadata"
    """A table property change."""
    CHANGE_SCHEMA = "schema"
    UPGRADE_PROTOCOL = "protocol"
    DOMAIN_METADATA = "domain"
    RECOMPUTE_STATS = "stats"
    """Re-add live files with new statistics, dataChange=false."""
    EMPTY = "empty"
    """A commit with no actions."""
    CREATE = "create"
    """The first commit of a table."""


OPERATION_NAMES: dict[Kind, str] = {
    Kind.APPEND: "WRITE",
    Kind.READ_WRITE: "MERGE",
    Kind.DELETE: "DELETE",
    Kind.UPDATE: "UPDATE",
    Kind.MERGE: "MERGE",
    Kind.COMPACT: "OPTIMIZE",
    Kind.OVERWRITE: "WRITE",
    Kind.REPLACE_WHERE: "WRITE",
    Kind.SET_TXN: "STREAMING UPDATE",
    Kind.SET_PROPERTIES: "SET TBLPROPERTIES",
    Kind.CHANGE_SCHEMA: "ADD COLUMNS",
    Kind.UPGRADE_PROTOCOL: "UPGRADE PROTOCOL",
    Kind.DOMAIN_METADATA: "WRITE",
    Kind.RECOMPUTE_STATS: "COMPUTE STATS",
    Kind.EMPTY: "WRITE",
    Kind.CREATE: "CREATE TABLE",
}
"""The ``commitInfo.operation`` a writer of each kind records."""

EXPLORED = (
    Kind.APPEND, Kind.READ_WRITE, Kind.DELETE, Kind.UPDATE, Kind.COMPACT, Kind.SET_PROPERTIES,
    Kind.SET_TXN,
)  # fmt: skip
ALPHABET = tuple(kind.value for kind in EXPLORED)
"""The explorer's operations by name, in the order it tries them."""

WHOLE_TABLE = frozenset({Kind.SET_PROPERTIES})
"""Explored kinds that touch no partition."""

MATRIX_OPERATIONS: dict[str, Kind] = {
    "INSERT": Kind.APPEND,
    "UPDATE": Kind.UPDATE,
    "DELETE": Kind.DELETE,
    "MERGE": Kind.MERGE,
    "COMPACTION": Kind.COMPACT,
}
"""The conflict matrix's operations (spec/data/conflict_matrix.json)."""


class ExploreError(ValueError):
    """A configuration the explorer cannot run (no writers, an unknown fault...)."""


class AlphabetError(ExploreError):
    """An operation name outside :data:`ALPHABET`."""


@dataclass(frozen=True, order=True)
class Operation:
    """One operation: its kind and the partition it works on (None: unpartitioned or none)."""

    kind: Kind
    partition: int | None = None

    def __str__(self) -> str:
        name = self.kind.value
        return name if self.partition is None else f"{name}(p={self.partition})"


def check_alphabet(names: Sequence[str]) -> tuple[str, ...]:
    """The explored operations named, in :data:`ALPHABET` order."""
    unknown = sorted(set(names) - set(ALPHABET))
    if unknown or not names:
        raise AlphabetError(f"unknown operations {unknown}; choose from {', '.join(ALPHABET)}")
    return tuple(n for n in ALPHABET if n in names)


def choices(alphabet: Sequence[str], partitions: int) -> tuple[Operation, ...]:
    """Every operation a writer may begin next, in a fixed order."""
    spread = tuple(range(partitions)) if partitions else (None,)
    return tuple(
        Operation(Kind(name), part)
        for name in alphabet
        for part in ((None,) if Kind(name) in WHOLE_TABLE else spread)
    )
