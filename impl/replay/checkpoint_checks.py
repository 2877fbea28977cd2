"""What the files of a checkpoint must hold to be read as a table's state (CHECKPOINT.CONTENTS):
the structural checks of :mod:`deltaspec.impl.replay.checkpoint_reader`, each a ValueError that
the reader turns into a CorruptLogError naming the table, the version and the checkpoint's file.

- one action per row, as one per line of a commit (ACTION.LINE_FORMAT): a row holding an ``add``
  and a ``remove`` is neither;
- each field the reader takes of the kind the protocol gives it (an integer, a string, a
  boolean, a map, a list, a struct), never cast from another kind: a ``size`` written as the
  string ``"10"`` is as corrupt as in a commit;
- the fields the protocol requires present (an add's ``partitionValues``, ``modificationTime``
  and ``dataChange``, a deletion vector's four required fields);
- across all the files of one checkpoint (parts, sidecars, a v2 checkpoint's top-level file): one
  ``protocol``, one ``metaData``, at most one ``checkpointMetadata``, whose ``version`` is the
  checkpoint's, one ``txn`` per app id, one ``domainMetadata`` per domain (a state holds each
  once; two would make the reader pick one).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc

from ..actions import Action, CheckpointMetadata, DomainMetadata, Metadata, Protocol, SetTransaction
from .layouts import DV_COLUMNS, FILE_COLUMNS, NON_FILE_COLUMNS, STATS_PARSED

__all__ = ["NonFileActions", "check_action_kinds", "check_one_action_per_row", "check_required"]

_NON_FILE_KINDS: Final[dict[str, dict[str, str]]] = {
    "protocol": {"minReaderVersion": "int", "minWriterVersion": "int",
                 "readerFeatures": "list", "writerFeatures": "list"},
    "metaData": {"id": "string", "name": "string", "description": "string", "format": "struct",
                 "schemaString": "string", "partitionColumns": "list", "configuration": "map",
                 "createdTime": "int"},
    "txn": {"appId": "string", "version": "int", "lastUpdated": "int"},
    "domainMetadata": {"domain": "string", "configuration": "string", "removed": "bool"},
    "checkpointMetadata": {"version": "int", "tags": "map"},
    "sidecar": {"path": "string", "sizeInBytes": "int", "modificationTime": "int", "tags": "map"},
}  # fmt: skip
"""The fields of each non-file action the reader takes, by kind (others are ignored)."""

_REQUIRED: Final = {
    "add": ("partitionValues", "modificationTime", "dataChange"),
    "remove": (),
    "deletionVector": ("storageType", "pathOrInlineDv", "sizeInBytes", "cardinality"),
}
"""Fields a checkpoint row may not leave null (``path`` and ``size``: check_file_table)."""


def _kind(value_type: pa.DataType) -> str:
    for test, kind in (
        (pa.types.is_null, "null"),
        (pa.types.is_integer, "int"),
        (pa.types.is_string, "string"),
        (pa.types.is_large_string, "string"),
        (pa.types.is_boolean, "bool"),
        (pa.types.is_map, "map"),
        (pa.types.is_list, "list"),
        (pa.types.is_large_list, "list"),
        (pa.types.is_struct, "struct"),
    ):
        if test(value_type):
            return kind
    return str(value_type)


def _expected_kinds(action: str) -> dict[str, str]:
    if action in FILE_COLUMNS:
        return {spec.delta: _kind(spec.type) for spec in FILE_COLUMNS[action]}
    return _NON_FILE_KINDS[action]


def _check_struct(where: str, value_type: pa.StructType, expected: dict[str, str]) -> None:
    for child in value_type:
        wanted = expected.get(child.name)
        found = _kind(child.type)
        if wanted is not None and found not in (wanted, "null"):
            raise ValueError(f"{where}.{child.name} is {child.type}, not a {wanted}")
        if child.name == "deletionVector" and found == "struct":
            dv_kinds = {spec.delta: _kind(spec.type) for spec in DV_COLUMNS}
            _check_struct(f"{where}.{child.name}", child.type, dv_kinds)


def check_action_kinds(schema: pa.Schema) -> None:
    """Every action field of a checkpoint file's ``schema`` is of its protocol kind (a column
    entirely null may have any type); ValueError naming the first that is not."""
    for top in schema:
        if top.name not in (*FILE_COLUMNS, *NON_FILE_COLUMNS):
            continue
        if not pa.types.is_struct(top.type):
            raise ValueError(f"column {top.name!r} is {top.type}, not a struct")
        _check_struct(top.name, top.type, _expected_kinds(top.name))


def check_one_action_per_row(table: pa.Table) -> None:
    """No row of ``table`` (a checkpoint file's action columns) holds two actions."""
    columns = [name for name in table.column_names if name != STATS_PARSED]
    if len(columns) < 2 or table.num_rows == 0:
        return
    counts = None
    for name in columns:
        valid = pc.cast(pc.is_valid(table.column(name)), pa.int8())
        counts = valid if counts is None else pc.add(counts, valid)
    if pc.max(counts).as_py() > 1:
        row = pc.index(pc.greater(counts, 1), True).as_py()
        held = [name for name in columns if table.column(name)[row].is_valid]
        raise ValueError(f"row {row} holds {len(held)} actions: {', '.join(held)}")


def _null_where(rows: pa.StructArray, mask: pa.Array, names: Iterable[str]) -> list[str]:
    """The fields of ``names`` that ``rows`` has and leaves null in a row ``mask`` selects."""
    present = {rows.type.field(i).name for i in range(rows.type.num_fields)}
    return [
        name
        for name in names
        if name in present and pc.any(pc.and_(mask, pc.is_null(rows.field(name)))).as_py()
    ]


def check_required(column: pa.ChunkedArray, kind: str) -> None:
    """The ``add``/``remove`` rows of a checkpoint's ``kind`` column leave no required field
    null, their deletion vectors included (no row is copied)."""
    for rows in column.chunks:
        valid = pc.is_valid(rows)
        missing = _null_where(rows, valid, _REQUIRED[kind])
        if missing:
            raise ValueError(f"{kind} rows without {', '.join(missing)}")
        if rows.type.get_field_index("deletionVector") < 0:
            continue
        dvs = rows.field("deletionVector")
        missing = _null_where(dvs, pc.and_(valid, pc.is_valid(dvs)), _REQUIRED["deletionVector"])
        if missing:
            raise ValueError(f"{kind}.deletionVector without {', '.join(missing)}")


@dataclass
class NonFileActions:
    """The non-file actions of one checkpoint, across its files, checked to be a state."""

    counts: Counter[str] = field(default_factory=Counter)
    app_ids: set[str] = field(default_factory=set)
    domains: set[str] = field(default_factory=set)
    checkpoint_metadata: list[CheckpointMetadata] = field(default_factory=list)

    def take(self, action: Action) -> None:
        """Count ``action``; ValueError for a second protocol, metaData, checkpointMetadata,
        txn of one app id or domainMetadata of one domain."""
        if isinstance(action, Protocol | Metadata | CheckpointMetadata):
            name = type(action).__name__
            self.counts[name] += 1
            if self.counts[name] > 1:
                raise ValueError(f"the checkpoint holds {name} more than once")
            if isinstance(action, CheckpointMetadata):
                self.checkpoint_metadata.append(action)
        elif isinstance(action, SetTransaction):
            self._once(self.app_ids, action.app_id, "txn of app id")
        elif isinstance(action, DomainMetadata):
            self._once(self.domains, action.domain, "domainMetadata of domain")

    @staticmethod
    def _once(seen: set[str], key: str, what: str) -> None:
        if key in seen:
            raise ValueError(f"the checkpoint holds a {what} {key[:200]!r} twice")
        seen.add(key)

    def check_version(self, version: int) -> None:
        """A ``checkpointMetadata`` names the checkpoint's own version."""
        for marker in self.checkpoint_metadata:
            if marker.version != version:
                raise ValueError(
                    f"checkpointMetadata.version {marker.version} in the checkpoint of {version}"
                )
