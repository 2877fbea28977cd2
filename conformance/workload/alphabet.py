"""The explorer's alphabet: what one writer operation reads and stages, as scenario JSON.

``deltaspec explore`` enumerates writers that each run a few operations drawn from this
alphabet. An operation is a name and a partition; what it reads and stages is a pure
function of the snapshot it begins on and of its writer name (new files are named after
the writer, so no two operations ever add the same path). The result is a writer object
of spec/scenarios.md, so any explored interleaving is written down as a vector as it ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from deltaspec.conformance.adapters.base import Json
from deltaspec.model.actions import AddFile, as_dict
from deltaspec.model.predicates import TRUE, Predicate, parse
from deltaspec.model.snapshot import Snapshot
from deltaspec.model.transaction import matching_files

ALPHABET = ("append", "read_write", "delete", "update", "compact", "metadata", "set_txn")
"""Blind append; read-then-write (an insert-only MERGE reading its partition); DELETE; UPDATE
(copy-on-write rewrite); OPTIMIZE (dataChange=false); a table property change; a streaming
write with a SetTransaction."""

WHOLE_TABLE_OPS = frozenset({"metadata"})
"""Operations that touch no partition."""

APP_ID = "stream"
"""The one application id every ``set_txn`` writer reads and writes (CONFLICT.APP_TXN)."""

PARTITION_COLUMN = "p"


class ExploreError(ValueError):
    """A configuration the explorer cannot run (no writers, an unknown mutant...)."""


class AlphabetError(ExploreError):
    """An operation name outside :data:`ALPHABET`."""


@dataclass(frozen=True, order=True)
class Op:
    """One operation: its name and the partition it works on (None: unpartitioned or none)."""

    name: str
    partition: int | None = None

    def __str__(self) -> str:
        return self.name if self.partition is None else f"{self.name}(p={self.partition})"


def check_alphabet(names: Sequence[str]) -> tuple[str, ...]:
    unknown = sorted(set(names) - set(ALPHABET))
    if unknown or not names:
        raise AlphabetError(f"unknown operations {unknown}; choose from {', '.join(ALPHABET)}")
    return tuple(n for n in ALPHABET if n in names)


def choices(alphabet: Sequence[str], partitions: int) -> tuple[Op, ...]:
    """Every operation a writer may begin next, in a fixed order."""
    spread = tuple(range(partitions)) if partitions else (None,)
    return tuple(
        Op(name, part)
        for name in alphabet
        for part in ((None,) if name in WHOLE_TABLE_OPS else spread)
    )


def _directory(partition: int | None) -> str:
    return "" if partition is None else f"{PARTITION_COLUMN}={partition}/"


def _values(partition: int | None) -> Json:
    return {} if partition is None else {PARTITION_COLUMN: str(partition)}


def table(partitions: int, isolation: str | None) -> Json:
    """Version 0: one file per partition (or one file), the isolation level as a property."""
    parts: Sequence[int | None] = range(partitions) if partitions else (None,)
    files: list[Json] = []
    for part in parts:
        entry: Json = {"path": f"{_directory(part)}init.parquet"}
        if part is not None:
            entry["partition"] = _values(part)
        files.append(entry)
    schema = [{"name": "id", "type": "long"}]
    data: Json = {"schema": schema, "files": files}
    if partitions:
        data["schema"] = [{"name": PARTITION_COLUMN, "type": "integer"}, *schema]
        data["partition_columns"] = [PARTITION_COLUMN]
    if isolation is not None:
        data["properties"] = {"delta.isolationLevel": isolation}
    return data


def _filter(partition: int | None) -> list[Any]:
    return [] if partition is None else [["=", PARTITION_COLUMN, partition]]


def _predicate(partition: int | None) -> Predicate:
    return TRUE if partition is None else parse(["=", PARTITION_COLUMN, partition])


def _add(name: str, partition: int | None, data_change: bool = True) -> Json:
    body: Json = {"path": f"{_directory(partition)}{name}.parquet"}
    if partition is not None:
        body["partitionValues"] = _values(partition)
    if not data_change:
        body["dataChange"] = False
    return {"add": body}


def _removes(files: Sequence[AddFile], data_change: bool = True) -> list[Json]:
    extra: Json = {} if data_change else {"dataChange": False}
    return [{"remove": {"path": f.path, **extra}} for f in sorted(files, key=lambda f: f.path)]


def writer_spec(op: Op, name: str, snapshot: Snapshot) -> Json:
    """The scenario writer that ``op`` is when writer ``name`` begins on ``snapshot``."""
    part = op.partition
    read: Json = {"filter": _filter(part)}
    matched = matching_files(snapshot, _predicate(part))
    match op.name:
        case "append":
            return {"operation": "WRITE", "actions": [_add(name, part)]}
        case "read_write":
            return {"operation": "MERGE", "reads": [read], "actions": [_add(name, part)]}
        case "delete":
            return {"operation": "DELETE", "reads": [read], "actions": _removes(matched)}
        case "update":
            rewrite = [*_removes(matched), _add(name, part)] if matched else []
            return {"operation": "UPDATE", "reads": [read], "actions": rewrite}
        case "compact":
            compacted = (
                [*_removes(matched, data_change=False), _add(name, part, data_change=False)]
                if len(matched) >= 2
                else []
            )
            return {"operation": "OPTIMIZE", "reads": [read], "actions": compacted}
        case "metadata":
            metadata = snapshot.metadata
            configuration = dict(as_dict(metadata.configuration)) if metadata else {}
            configuration["user.version"] = str(snapshot.version + 1)
            change = {"metaData": {"configuration": configuration}}
            return {"operation": "SET TBLPROPERTIES", "actions": [change]}
        case "set_txn":
            txn = {"txn": {"appId": APP_ID, "version": snapshot.app_txn_version(APP_ID) + 1}}
            return {
                "operation": "STREAMING UPDATE",
                "reads": [{"app_id": APP_ID}],
                "actions": [txn, _add(name, part)],
            }
    raise AlphabetError(f"unknown operation {op.name!r}")
