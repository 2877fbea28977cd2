"""The actions of the Delta log as JSON objects: one field table per action.

Each table below is the whole format of one action (ACTION.PROTOCOL, ACTION.METADATA, ACTION.ADD,
ACTION.REMOVE, ACTION.TXN, ACTION.COMMIT_INFO, ACTION.DOMAIN_METADATA, ACTION.CDC, and the v2
checkpoint's ``checkpointMetadata`` and ``sidecar``): :func:`decode_action` and
:func:`encode_action` both walk it (see :mod:`deltaspec.impl.codec.fields`). The field order is
delta-spark's (Jackson, ``NON_ABSENT``), taken from its ``actions.scala`` and checked against the
fixture logs:

- ``add``: ``partitionValues`` is annotated ``Include.ALWAYS``, so it keeps its ``null`` values.
- ``remove``: ``stats`` comes last. Its ``partitionValues`` has no ``Include.ALWAYS``: Jackson
  >= 2.9 applies the mapper's ``NON_ABSENT`` to map *contents* as well, so delta-spark drops
  ``null`` partition values from a remove; readers take a missing column as null
  (ACTION.PARTITION_VALUES).
- ``cdc``: ``dataChange`` is a ``val`` of the class body, serialised after the constructor fields.
- ``metaData``: ``format`` is ``{"provider": ..., "options": {...}}`` with ``options`` always
  written.
- ``commitInfo``: written back field for field in the order held (the order read, or for a
  commitInfo built by :func:`make_commit_info`, delta-spark's declaration order). delta-spark
  writes ``operationParameters`` with a serializer that emits each in-memory value as *raw* JSON,
  so in the file the values are JSON strings (``"mode":"Append"``, ``"partitionBy":"[]"``), but
  also ``null``, numbers and booleans (``"auto":false``, ``"version":1``); they are kept exactly
  as parsed.

Decisions for content delta-spark tolerates but a reader must decide on:

- A ``metaData`` without ``schemaString`` (written by delta-spark itself when the schema is null,
  see the fixtures ``golden-checkpoint-missing-protocol`` and ``golden-versions-not-contiguous``)
  decodes with ``schema_string == ""``; delta-spark reads a null schema as the empty struct, and so
  should every consumer of an empty ``schema_string``. The encoder omits an empty
  ``schemaString``, so the round trip is exact.
- A known action key whose value is ``null`` counts as absent (Jackson leaves the field null).
- delta-spark picks one action by a fixed priority when a line holds several known keys; this
  codec refuses such a line (CorruptLogError).
- ``remove.dataChange`` and ``domainMetadata.removed`` default to ``true`` and ``false`` when
  absent (delta-spark's constructor defaults, which the action classes share); absent
  ``metaData.configuration`` and ``format.options`` read as empty maps.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from deltaspec.rules import rule

from ..actions import (
    Action,
    AddCDCFile,
    AddFile,
    CheckpointMetadata,
    CommitInfo,
    DeletionVector,
    DomainMetadata,
    Format,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
    Sidecar,
)
from ..errors import CorruptLogError
from .fields import (
    BOOLEAN,
    INT,
    LONG,
    NON_NULL_PARTITION_VALUES,
    PARTITION_VALUES,
    STRING,
    STRING_LIST,
    STRING_MAP,
    Field,
    FieldTable,
    json_object,
    object_kind,
)
from .json_text import dumps

DELETION_VECTOR: Final = object_kind(
    FieldTable(
        DeletionVector,
        (
            Field("storageType", "storage_type", STRING, required=True),
            Field("pathOrInlineDv", "path_or_inline_dv", STRING, required=True),
            Field("offset", "offset", LONG),
            Field("sizeInBytes", "size_in_bytes", LONG, required=True),
            Field("cardinality", "cardinality", LONG, required=True),
            Field("maxRowIndex", "max_row_index", LONG),
        ),
    )
)

FORMAT: Final = object_kind(
    FieldTable(
        Format,
        (
            Field("provider", "provider", STRING, required=True),
            Field("options", "options", STRING_MAP),
        ),
    )
)

ACTION_TABLES: Final[dict[str, FieldTable]] = {
    "protocol": FieldTable(
        Protocol,
        (
            Field("minReaderVersion", "min_reader_version", INT, required=True),
            Field("minWriterVersion", "min_writer_version", INT, required=True),
            Field("readerFeatures", "reader_features", STRING_LIST),
            Field("writerFeatures", "writer_features", STRING_LIST),
        ),
    ),
    "metaData": FieldTable(
        Metadata,
        (
            Field("id", "id", STRING, required=True),
            Field("name", "name", STRING),
            Field("description", "description", STRING),
            Field("format", "format", FORMAT, required=True),
            Field("schemaString", "schema_string", STRING, default="", omit_empty=True),
            Field("partitionColumns", "partition_columns", STRING_LIST, required=True),
            Field("configuration", "configuration", STRING_MAP),
            Field("createdTime", "created_time", LONG),
        ),
    ),
    "add": FieldTable(
        AddFile,
        (
            Field("path", "path", STRING, required=True),
            Field("partitionValues", "partition_values", PARTITION_VALUES, required=True),
            Field("size", "size", LONG, required=True),
            Field("modificationTime", "modification_time", LONG, required=True),
            Field("dataChange", "data_change", BOOLEAN, required=True),
            Field("stats", "stats", STRING),
            Field("tags", "tags", STRING_MAP),
            Field("deletionVector", "deletion_vector", DELETION_VECTOR),
            Field("baseRowId", "base_row_id", LONG),
            Field("defaultRowCommitVersion", "default_row_commit_version", LONG),
            Field("clusteringProvider", "clustering_provider", STRING),
        ),
    ),
    "remove": FieldTable(
        RemoveFile,
        (
            Field("path", "path", STRING, required=True),
            Field("deletionTimestamp", "deletion_timestamp", LONG),
            Field("dataChange", "data_change", BOOLEAN),
            Field("extendedFileMetadata", "extended_file_metadata", BOOLEAN),
            Field("partitionValues", "partition_values", NON_NULL_PARTITION_VALUES),
            Field("size", "size", LONG),
            Field("tags", "tags", STRING_MAP),
            Field("deletionVector", "deletion_vector", DELETION_VECTOR),
            Field("baseRowId", "base_row_id", LONG),
            Field("defaultRowCommitVersion", "default_row_commit_version", LONG),
            Field("stats", "stats", STRING),
        ),
    ),
    "txn": FieldTable(
        SetTransaction,
        (
            Field("appId", "app_id", STRING, required=True),
            Field("version", "version", LONG, required=True),
            Field("lastUpdated", "last_updated", LONG),
        ),
    ),
    "commitInfo": FieldTable(CommitInfo, whole="fields"),
    "domainMetadata": FieldTable(
        DomainMetadata,
        (
            Field("domain", "domain", STRING, required=True),
            Field("configuration", "configuration", STRING, required=True),
            Field("removed", "removed", BOOLEAN),
        ),
    ),
    "cdc": FieldTable(
        AddCDCFile,
        (
            Field("path", "path", STRING, required=True),
            Field("partitionValues", "partition_values", PARTITION_VALUES, required=True),
            Field("size", "size", LONG, required=True),
            Field("tags", "tags", STRING_MAP),
            Field("dataChange", "data_change", BOOLEAN),
        ),
    ),
    "checkpointMetadata": FieldTable(
        CheckpointMetadata,
        (Field("version", "version", LONG, required=True), Field("tags", "tags", STRING_MAP)),
    ),
    "sidecar": FieldTable(
        Sidecar,
        (
            Field("path", "path", STRING, required=True),
            Field("sizeInBytes", "size_in_bytes", LONG, required=True),
            Field("modificationTime", "modification_time", LONG, required=True),
            Field("tags", "tags", STRING_MAP),
        ),
    ),
}
"""Every action this codec knows, by its top-level key."""

KNOWN_ACTIONS: Final = tuple(ACTION_TABLES)
"""The top-level keys this codec decodes; any other key is an unknown action (ACTION.UNKNOWN)."""

_BY_CLASS: Final = {table.cls: (key, table) for key, table in ACTION_TABLES.items()}

COMMIT_INFO_FIELD_ORDER: Final = (
    "version",
    "inCommitTimestamp",
    "timestamp",
    "userId",
    "userName",
    "operation",
    "operationParameters",
    "job",
    "notebook",
    "clusterId",
    "readVersion",
    "isolationLevel",
    "isBlindAppend",
    "dataChange",
    "operationMetrics",
    "userMetadata",
    "tags",
    "engineInfo",
    "txnId",
    "lastManifestCommit",
)
"""delta-spark's declaration order of the commitInfo fields (ACTION.COMMIT_INFO)."""


_FEATURE_LISTS: Final = (
    ("readerFeatures", "reader_features", "minReaderVersion", "min_reader_version", 3),
    ("writerFeatures", "writer_features", "minWriterVersion", "min_writer_version", 7),
)
"""Each feature list with its version field and the first version that has table features."""
_LISTS_NEED: Final = "readerFeatures need minReaderVersion 3, writerFeatures minWriterVersion 7"


@rule("ACTION.PROTOCOL_FEATURE_LISTS")
def misplaced_feature_lists(protocol: Protocol) -> list[str]:
    """The feature lists ``protocol`` holds at versions without table features, as
    ``"<list> at <version field> <n>"`` (empty: the protocol is well formed)."""
    return [
        f"{name} at {version_name} {getattr(protocol, version)}"
        for name, attr, version_name, version, first in _FEATURE_LISTS
        if getattr(protocol, attr) is not None and getattr(protocol, version) < first
    ]


def _decode_known(key: str, body: object) -> Action:
    action: Action = ACTION_TABLES[key].decode(key, json_object(key, body))
    if type(action) is Protocol and (misplaced := misplaced_feature_lists(action)):
        raise CorruptLogError(f"protocol with {' and '.join(misplaced)}: {_LISTS_NEED}")
    return action


@rule("ACTION.UNKNOWN")
def decode_action(obj: dict[str, Any]) -> Action | None:
    """Decode one parsed log line (ACTION.LINE_FORMAT, ACTION.UNKNOWN) by its action's table.

    Exactly one known action key gives that action; keys that name no known action are ignored,
    and a line with none returns ``None`` (an unknown action). Unknown fields inside a known action
    are ignored. A known key whose value is ``null`` counts as absent. Two known actions on one
    line, a missing required field or a value of the wrong JSON type raise
    :class:`CorruptLogError` (without location: ``decode_commit`` adds it). The returned action
    may share the maps (``partitionValues``, ``tags``, the commitInfo object) of ``obj``.
    """
    if len(obj) == 1:
        for key, body in obj.items():
            if body is None or key not in ACTION_TABLES:
                return None
            return _decode_known(key, body)
    found: str | None = None
    for key, body in obj.items():
        if body is not None and key in ACTION_TABLES:
            if found is not None:
                raise CorruptLogError(f"one line holds two actions, {found!r} and {key!r}")
            found = key
    return None if found is None else _decode_known(found, obj[found])


def encode_action(action: Action) -> str:
    """One log line, without its newline, exactly as delta-spark writes the action.

    ACTION.LINE_FORMAT and the per-action rules fix the fields; the action's table gives
    delta-spark's field order (see the module notes); the JSON text is Jackson's.
    """
    try:
        key, table = _BY_CLASS[type(action)]
    except KeyError:
        raise TypeError(f"not a Delta action: {action!r}") from None
    return dumps({key: table.encode(action)})


def make_commit_info(fields: Mapping[str, Any]) -> CommitInfo:
    """A commitInfo whose known fields are put in delta-spark's order (ACTION.COMMIT_INFO).

    Fields whose value is ``None`` are dropped (``NON_ABSENT``); fields delta-spark does not
    declare follow in the order given. ``operationParameters`` values are written as given, i.e.
    as they appear in the file: usually JSON strings such as ``"Append"`` or ``"[\\"a\\"]"``.
    """
    rank = {name: i for i, name in enumerate(COMMIT_INFO_FIELD_ORDER)}
    names = sorted(
        (name for name, value in fields.items() if value is not None),
        key=lambda name: rank.get(name, len(rank)),
    )
    return CommitInfo({name: fields[name] for name in names})
