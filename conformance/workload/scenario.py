"""Operations of the alphabet spelled as scenario writers (spec/scenarios.md).

Two spellings, one per tool that writes vectors from operations:

- :func:`writer_spec`, the explorer's: what an :class:`~.alphabet.Operation` reads and stages
  is a pure function of the table it begins on (a :class:`TableState`) and of its writer name
  (new files are named after the writer, so no two operations ever add the same path);
- :func:`matrix_writer`, the conflict matrix's: an operation on the matrix's fixed table
  (files ``p=X/X1.parquet`` and ``p=X/X2.parquet`` in each partition X), as
  spec/data/conflict_matrix.json describes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..harness.adapter import Json
from ..isolation import predicates
from .alphabet import OPERATION_NAMES, AlphabetError, Kind, Operation

APP_ID = "stream"
"""The one application id every ``set_txn`` writer reads and writes (CONFLICT.APP_TXN)."""

PARTITION_COLUMN = "p"
PARTITION_TYPES = {PARTITION_COLUMN: "integer"}
"""The explorer's table: one integer partition column (or none)."""


@dataclass(frozen=True)
class TableState:
    """What an explored operation sees of the snapshot it begins on, as plain values."""

    version: int
    files: Mapping[str, Mapping[str, str | None]]
    """Live path -> its partition values."""
    configuration: Mapping[str, str | None] | None
    """The table properties (None: no metadata yet)."""
    app_version: int
    """The last version of :data:`APP_ID` applied, -1 for none."""

    def matching(self, partition: int | None) -> list[str]:
        """Live paths in ``partition`` (every live path for None), sorted."""
        if partition is None:
            return sorted(self.files)
        form = ["=", PARTITION_COLUMN, partition]
        return sorted(
            path
            for path, values in self.files.items()
            if predicates.evaluate(
                form, predicates.typed_row(values, PARTITION_TYPES), PARTITION_TYPES
            )
            is True
        )


def _directory(partition: int | None) -> str:
    return "" if partition is None else f"{PARTITION_COLUMN}={partition}/"


def _values(partition: int | None) -> Json:
    return {} if partition is None else {PARTITION_COLUMN: str(partition)}


def table(partitions: int, isolation: str | None) -> Json:
    """The explorer's version 0: one file per partition (or one file), the isolation level as a
    property."""
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


def _add(name: str, partition: int | None, data_change: bool = True) -> Json:
    body: Json = {"path": f"{_directory(partition)}{name}.parquet"}
    if partition is not None:
        body["partitionValues"] = _values(partition)
    if not data_change:
        body["dataChange"] = False
    return {"add": body}


def _removes(paths: Sequence[str], data_change: bool = True) -> list[Json]:
    extra: Json = {} if data_change else {"dataChange": False}
    return [{"remove": {"path": path, **extra}} for path in paths]


def _actions(op: Operation, name: str, state: TableState) -> list[Json]:
    part = op.partition
    matched = state.matching(part)
    match op.kind:
        case Kind.APPEND | Kind.READ_WRITE:
            return [_add(name, part)]
        case Kind.DELETE:
            return _removes(matched)
        case Kind.UPDATE:
            return [*_removes(matched), _add(name, part)] if matched else []
        case Kind.COMPACT if len(matched) >= 2:
            return [*_removes(matched, data_change=False), _add(name, part, data_change=False)]
        case Kind.COMPACT:
            return []
        case Kind.SET_PROPERTIES:
            configuration = dict(state.configuration or {})
            configuration["user.version"] = str(state.version + 1)
            return [{"metaData": {"configuration": configuration}}]
        case Kind.SET_TXN:
            txn = {"txn": {"appId": APP_ID, "version": state.app_version + 1}}
            return [txn, _add(name, part)]
    raise AlphabetError(f"the explorer does not run {op.kind.value!r}")


def writer_spec(op: Operation, name: str, state: TableState) -> Json:
    """The scenario writer that ``op`` is when writer ``name`` begins on ``state``."""
    actions = _actions(op, name, state)
    spec: Json = {"operation": OPERATION_NAMES[op.kind]}
    if op.kind is Kind.SET_TXN:
        spec["reads"] = [{"app_id": APP_ID}]
    elif op.kind not in {Kind.APPEND, Kind.SET_PROPERTIES}:
        spec["reads"] = [{"filter": _filter(op.partition)}]
    spec["actions"] = actions
    return spec


# --- the conflict matrix -----------------------------------------------------------------------


def _file(path: str, partition: str, data_change: bool = True) -> Json:
    body: Json = {"path": path, "partitionValues": {"p": partition}}
    if not data_change:
        body["dataChange"] = False
    return body


_MATRIX_REWRITES = {
    Kind.UPDATE: ("{first}-updated",),
    Kind.DELETE: ("{first}-rest",),
    Kind.MERGE: ("{first}-merged", "inserted"),
}
"""What a matrix rewrite of the partition's first file adds, after ``p=X/<writer>-``."""


def matrix_writer(kind: Kind, name: str, partition: str) -> Json:
    """``kind`` as conflict_matrix.json describes it, run by ``name`` in ``partition``."""
    first, second = f"p={partition}/{partition}1.parquet", f"p={partition}/{partition}2.parquet"
    prefix = f"p={partition}/{name}"
    reads = [{"filter": [["=", "p", partition]]}]
    operation = OPERATION_NAMES[kind]
    if kind is Kind.APPEND:
        return {"operation": operation,
                "actions": [{"add": _file(f"{prefix}-new.parquet", partition)}]}  # fmt: skip
    if kind is Kind.COMPACT:
        actions = [{"remove": _file(first, partition, False)},
                   {"remove": _file(second, partition, False)},
                   {"add": _file(f"{prefix}-compacted.parquet", partition, False)}]  # fmt: skip
        return {"operation": operation, "reads": reads, "actions": actions}
    if kind not in _MATRIX_REWRITES:
        raise AlphabetError(f"the conflict matrix does not run {kind.value!r}")
    adds = [f"{prefix}-{a.format(first=f'{partition}1')}.parquet" for a in _MATRIX_REWRITES[kind]]
    actions = [{"remove": _file(first, partition)}, *({"add": _file(a, partition)} for a in adds)]
    return {"operation": operation, "reads": reads, "actions": actions}
