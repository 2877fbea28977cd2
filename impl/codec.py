"""The JSON codec of the Delta log: commit files, actions, paths, partition values and stats.

Reading (ACTION.LINE_FORMAT, ACTION.UNKNOWN): a commit file is UTF-8 text holding one JSON object
per line. Each object names its action by its one known top-level key; unknown keys beside it and
unknown fields inside it are ignored, a line with no known key is an unknown action (skipped).
Known actions are validated field by field: a missing required field or a value of the wrong JSON
type is a :class:`~deltaspec.impl.errors.CorruptLogError`, which :func:`decode_commit` locates by
table, version, file and 1-based line number.

Writing: :func:`encode_action` produces the line delta-spark (Jackson, ``NON_ABSENT``) writes for
the same action, byte for byte: the wrapper key, delta-spark's field names and field order, absent
(``None``) fields omitted, compact separators, non-ASCII characters written raw (UTF-8) and
control characters escaped as Jackson does (``\\n``, ``\\t``, ... or ``\\u00XX`` with upper-case
hex). Facts taken from delta-spark's ``actions.scala`` and checked against the fixture logs:

- ``add``: ``path, partitionValues, size, modificationTime, dataChange, stats, tags,
  deletionVector, baseRowId, defaultRowCommitVersion, clusteringProvider``; ``partitionValues`` is
  annotated ``Include.ALWAYS``, so it keeps its ``null`` values.
- ``remove``: ``path, deletionTimestamp, dataChange, extendedFileMetadata, partitionValues, size,
  tags, deletionVector, baseRowId, defaultRowCommitVersion, stats`` (``stats`` comes last). Its
  ``partitionValues`` has no ``Include.ALWAYS``: Jackson >= 2.9 applies the mapper's
  ``NON_ABSENT`` to map *contents* as well, so delta-spark drops ``null`` partition values from a
  remove. The encoder does the same; readers take a missing column as null
  (ACTION.PARTITION_VALUES).
- ``cdc``: ``path, partitionValues, size, tags, dataChange`` (``dataChange`` is a ``val`` of the
  class body, serialised after the constructor fields).
- ``metaData``: ``id, name, description, format, schemaString, partitionColumns, configuration,
  createdTime``; ``format`` is ``{"provider": ..., "options": {...}}`` with ``options`` always
  written.
- ``commitInfo``: written back field for field in the order held (the order read, or for a
  commitInfo built by :func:`make_commit_info`, delta-spark's declaration order). delta-spark
  writes ``operationParameters`` with a serializer that emits each in-memory value as *raw* JSON,
  so in the file the values are JSON strings (``"mode":"Append"``, ``"partitionBy":"[]"``), but
  also ``null``, numbers and booleans (``"auto":false``, ``"version":1``); they are kept exactly
  as parsed.

A commit file is the lines joined with ``\\n``, every line including the last terminated by
``\\n`` (delta-spark's log stores write ``line + "\\n"``).

Paths (ACTION.ADD): ``add.path`` is a URI reference: delta-spark builds it with Hadoop's
``Path(...).toUri.toString``, i.e. ``java.net.URI``'s multi-argument constructor, which
percent-encodes (UTF-8, upper-case hex) every character that is not legal in a URI path, ``%``
included, and leaves other non-ASCII characters raw. Partition directories are first escaped the
Hive way (Spark's ``ExternalCatalogUtils.escapePathName``), so a ``%`` in a partition value shows
up as ``%25`` in the directory name and as ``%2525`` in the log.

Decisions for content delta-spark tolerates but a reader must decide on:

- A ``metaData`` without ``schemaString`` (written by delta-spark itself when the schema is null,
  see the fixtures ``golden-checkpoint-missing-protocol`` and ``golden-versions-not-contiguous``)
  decodes with ``schema_string == ""``; delta-spark reads a null schema as the empty struct, and so
  should every consumer of an empty ``schema_string``. The encoder omits an empty
  ``schemaString``, so the round trip is exact.
- A known action key whose value is ``null`` counts as absent (Jackson leaves the field null).
- delta-spark picks one action by a fixed priority when a line holds several known keys; this
  codec refuses such a line (CorruptLogError).
- Integers must be JSON integers and booleans JSON booleans: Jackson would coerce ``"12"`` or
  ``12.0`` into a long, this reader reports a corrupt log instead.
- ``remove.dataChange`` and ``domainMetadata.removed`` default to ``true`` and ``false`` when
  absent (delta-spark's constructor defaults); absent ``metaData.configuration`` and
  ``format.options`` read as empty maps.
"""

from __future__ import annotations

import json
import math
import re
import struct
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, Final
from urllib.parse import unquote

from deltaspec.impl.actions import (
    Action,
    AddCDCFile,
    AddFile,
    CheckpointMetadata,
    CommitInfo,
    DeletionVector,
    DomainMetadata,
    Format,
    Metadata,
    PartitionValues,
    Protocol,
    RemoveFile,
    SetTransaction,
    Sidecar,
)
from deltaspec.impl.errors import CorruptLogError

__all__ = [
    "COMMIT_INFO_FIELD_ORDER",
    "HIVE_DEFAULT_PARTITION",
    "KNOWN_ACTIONS",
    "decode_action",
    "decode_commit",
    "decode_partition_value",
    "decode_path",
    "encode_action",
    "encode_commit",
    "encode_partition_value",
    "encode_path",
    "encode_stats",
    "make_commit_info",
    "partition_directory",
]

KNOWN_ACTIONS: Final = (
    "protocol",
    "metaData",
    "add",
    "remove",
    "txn",
    "commitInfo",
    "domainMetadata",
    "cdc",
    "checkpointMetadata",
    "sidecar",
)
"""The top-level keys this codec decodes; any other key is an unknown action (ACTION.UNKNOWN)."""

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

HIVE_DEFAULT_PARTITION: Final = "__HIVE_DEFAULT_PARTITION__"
"""The directory name of a null (or empty) partition value (ACTION.PARTITION_VALUES)."""

Json = Any
_Body = dict[str, Any]


# --- JSON text ---------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER: Final = json.JSONDecoder(parse_constant=_reject_constant)
_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# Python escapes the control characters without a short form as \u00xx (lower-case hex), Jackson
# as \u00XX; only 0x0B, 0x0E, 0x0F and 0x1A-0x1F contain a letter. The look-behind makes sure the
# backslash is not itself escaped (an even number of backslashes precedes it).
_LOWER_HEX_ESCAPE: Final = re.compile(r"(?<!\\)((?:\\\\)*)\\u00(0[bef]|1[a-f])")


def _upper_escape(match: re.Match[str]) -> str:
    return f"{match[1]}\\u00{match[2].upper()}"


def _dumps(value: Json) -> str:
    """Compact JSON exactly as Jackson writes it (non-ASCII raw, upper-case \\u escapes)."""
    text = _ENCODER.encode(value)
    if "\\u00" in text:
        text = _LOWER_HEX_ESCAPE.sub(_upper_escape, text)
    return text


# --- decoding ----------------------------------------------------------------------------------


_MISSING: Final = object()


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__


def _bad(kind: str, name: str, value: object, expected: str) -> CorruptLogError:
    if value is _MISSING:
        return CorruptLogError(f"{kind} lacks the required field {name!r}")
    return CorruptLogError(f"{kind}.{name} must be {expected}, not {_type_name(value)}")


def _body(kind: str, body: object) -> _Body:
    if type(body) is not dict:
        raise CorruptLogError(f"the {kind} action must be a JSON object, not {_type_name(body)}")
    return body


def _req_str(kind: str, body: _Body, name: str) -> str:
    value = body.get(name, _MISSING)
    if type(value) is not str:
        raise _bad(kind, name, value, "a string")
    return value


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def _req_int(kind: str, body: _Body, name: str) -> int:
    """A required integer field: Delta's integers are Java longs, so one beyond 64 bits is as
    malformed as a string (a checkpoint could not even hold it)."""
    value = body.get(name, _MISSING)
    if type(value) is not int or not _LONG_MIN <= value <= _LONG_MAX:
        raise _bad(kind, name, value, "a 64-bit integer")
    return value


def _req_bool(kind: str, body: _Body, name: str) -> bool:
    value = body.get(name, _MISSING)
    if type(value) is not bool:
        raise _bad(kind, name, value, "a boolean")
    return value


def _opt_str(kind: str, body: _Body, name: str) -> str | None:
    value = body.get(name)
    if value is not None and type(value) is not str:
        raise _bad(kind, name, value, "a string")
    return value


def _opt_int(kind: str, body: _Body, name: str) -> int | None:
    value = body.get(name)
    if value is not None and (type(value) is not int or not _LONG_MIN <= value <= _LONG_MAX):
        raise _bad(kind, name, value, "a 64-bit integer")
    return value


def _opt_bool(kind: str, body: _Body, name: str, default: bool) -> bool:
    value = body.get(name)
    if value is None:
        return default
    if type(value) is not bool:
        raise _bad(kind, name, value, "a boolean")
    return value


def _str_map(kind: str, name: str, value: object) -> dict[str, str]:
    if type(value) is not dict:
        raise _bad(kind, name, value, "an object of strings")
    for item in value.values():
        if type(item) is not str:
            raise CorruptLogError(f"{kind}.{name} values must be strings, not {_type_name(item)}")
    return value


def _opt_str_map(kind: str, body: _Body, name: str) -> dict[str, str] | None:
    value = body.get(name)
    return None if value is None else _str_map(kind, name, value)


def _partition_values(kind: str, value: object) -> PartitionValues:
    if type(value) is not dict:
        raise _bad(kind, "partitionValues", value, "an object")
    for item in value.values():
        if item is not None and type(item) is not str:
            raise CorruptLogError(
                f"{kind}.partitionValues values must be strings or null, not {_type_name(item)}"
            )
    return value


def _str_list(kind: str, name: str, value: object) -> tuple[str, ...]:
    if type(value) is not list:
        raise _bad(kind, name, value, "an array of strings")
    for item in value:
        if type(item) is not str:
            raise CorruptLogError(f"{kind}.{name} items must be strings, not {_type_name(item)}")
    return tuple(value)


def _deletion_vector(kind: str, value: object) -> DeletionVector | None:
    if value is None:
        return None
    where = f"{kind}.deletionVector"
    dv = _body(where, value)
    return DeletionVector(
        _req_str(where, dv, "storageType"),
        _req_str(where, dv, "pathOrInlineDv"),
        _req_int(where, dv, "sizeInBytes"),
        _req_int(where, dv, "cardinality"),
        _opt_int(where, dv, "offset"),
        _opt_int(where, dv, "maxRowIndex"),
    )


def _decode_add(raw: object) -> AddFile:
    """ACTION.ADD: path, partitionValues, size, modificationTime, dataChange are required."""
    body = _body("add", raw)
    get = body.get
    path: Any = get("path")
    values: Any = get("partitionValues")
    size: Any = get("size")
    mtime: Any = get("modificationTime")
    data_change: Any = get("dataChange")
    if (
        type(path) is not str
        or type(values) is not dict
        or type(size) is not int
        or type(mtime) is not int
        or type(data_change) is not bool
    ):
        _req_str("add", body, "path")
        _partition_values("add", body.get("partitionValues", _MISSING))
        _req_int("add", body, "size")
        _req_int("add", body, "modificationTime")
        _req_bool("add", body, "dataChange")
    for item in values.values():
        if item is not None and type(item) is not str:
            _partition_values("add", values)
    stats = get("stats")
    if stats is not None and type(stats) is not str:
        raise _bad("add", "stats", stats, "a string")
    tags = get("tags")
    dv = get("deletionVector")
    base_row_id = get("baseRowId")
    default_version = get("defaultRowCommitVersion")
    clustering = get("clusteringProvider")
    if tags is not None:
        _str_map("add", "tags", tags)
    if base_row_id is not None or default_version is not None:
        _opt_int("add", body, "baseRowId")
        _opt_int("add", body, "defaultRowCommitVersion")
    if clustering is not None:
        _opt_str("add", body, "clusteringProvider")
    return AddFile(
        path,
        values,
        size,
        mtime,
        data_change,
        stats,
        tags,
        None if dv is None else _deletion_vector("add", dv),
        base_row_id,
        default_version,
        clustering,
    )


def _decode_remove(raw: object) -> RemoveFile:
    """ACTION.REMOVE: path is required; dataChange defaults to true (delta-spark's default)."""
    body = _body("remove", raw)
    values = body.get("partitionValues")
    return RemoveFile(
        _req_str("remove", body, "path"),
        _opt_int("remove", body, "deletionTimestamp"),
        _opt_bool("remove", body, "dataChange", True),
        None
        if body.get("extendedFileMetadata") is None
        else _req_bool("remove", body, "extendedFileMetadata"),
        None if values is None else _partition_values("remove", values),
        _opt_int("remove", body, "size"),
        _opt_str("remove", body, "stats"),
        _opt_str_map("remove", body, "tags"),
        _deletion_vector("remove", body.get("deletionVector")),
        _opt_int("remove", body, "baseRowId"),
        _opt_int("remove", body, "defaultRowCommitVersion"),
    )


def _decode_protocol(raw: object) -> Protocol:
    """ACTION.PROTOCOL: minReaderVersion and minWriterVersion are required integers."""
    body = _body("protocol", raw)
    readers = body.get("readerFeatures")
    writers = body.get("writerFeatures")
    reader, writer = (
        _req_int("protocol", body, n) for n in ("minReaderVersion", "minWriterVersion")
    )
    for name, version in (("minReaderVersion", reader), ("minWriterVersion", writer)):
        if not -(2**31) <= version < 2**31:  # Java ints (and int32 checkpoint columns)
            raise _bad("protocol", name, version, "a 32-bit integer")
    return Protocol(
        reader,
        writer,
        None if readers is None else _str_list("protocol", "readerFeatures", readers),
        None if writers is None else _str_list("protocol", "writerFeatures", writers),
    )


def _decode_metadata(raw: object) -> Metadata:
    """ACTION.METADATA: id, format and partitionColumns are required; see the module notes."""
    body = _body("metaData", raw)
    fmt = _body("metaData.format", body.get("format", _MISSING))
    options = fmt.get("options")
    configuration = body.get("configuration")
    return Metadata(
        _req_str("metaData", body, "id"),
        _opt_str("metaData", body, "schemaString") or "",
        _str_list("metaData", "partitionColumns", body.get("partitionColumns", _MISSING)),
        {} if configuration is None else _str_map("metaData", "configuration", configuration),
        Format(
            _req_str("metaData.format", fmt, "provider"),
            {} if options is None else _str_map("metaData.format", "options", options),
        ),
        _opt_str("metaData", body, "name"),
        _opt_str("metaData", body, "description"),
        _opt_int("metaData", body, "createdTime"),
    )


def _decode_txn(raw: object) -> SetTransaction:
    """ACTION.TXN: appId and version are required, lastUpdated is optional."""
    body = _body("txn", raw)
    return SetTransaction(
        _req_str("txn", body, "appId"),
        _req_int("txn", body, "version"),
        _opt_int("txn", body, "lastUpdated"),
    )


def _decode_commit_info(raw: object) -> CommitInfo:
    """ACTION.COMMIT_INFO: any JSON object, kept as read."""
    return CommitInfo(_body("commitInfo", raw))


def _decode_domain_metadata(raw: object) -> DomainMetadata:
    """ACTION.DOMAIN_METADATA: domain and configuration are required strings."""
    body = _body("domainMetadata", raw)
    return DomainMetadata(
        _req_str("domainMetadata", body, "domain"),
        _req_str("domainMetadata", body, "configuration"),
        _opt_bool("domainMetadata", body, "removed", False),
    )


def _decode_cdc(raw: object) -> AddCDCFile:
    """ACTION.CDC: path, partitionValues and size are required."""
    body = _body("cdc", raw)
    return AddCDCFile(
        _req_str("cdc", body, "path"),
        _partition_values("cdc", body.get("partitionValues", _MISSING)),
        _req_int("cdc", body, "size"),
        _opt_bool("cdc", body, "dataChange", False),
        _opt_str_map("cdc", body, "tags"),
    )


def _decode_checkpoint_metadata(raw: object) -> CheckpointMetadata:
    body = _body("checkpointMetadata", raw)
    return CheckpointMetadata(
        _req_int("checkpointMetadata", body, "version"),
        _opt_str_map("checkpointMetadata", body, "tags"),
    )


def _decode_sidecar(raw: object) -> Sidecar:
    body = _body("sidecar", raw)
    return Sidecar(
        _req_str("sidecar", body, "path"),
        _req_int("sidecar", body, "sizeInBytes"),
        _req_int("sidecar", body, "modificationTime"),
        _opt_str_map("sidecar", body, "tags"),
    )


_DECODERS: Final[dict[str, Callable[[object], Action]]] = {
    "add": _decode_add,
    "remove": _decode_remove,
    "commitInfo": _decode_commit_info,
    "protocol": _decode_protocol,
    "metaData": _decode_metadata,
    "txn": _decode_txn,
    "domainMetadata": _decode_domain_metadata,
    "cdc": _decode_cdc,
    "checkpointMetadata": _decode_checkpoint_metadata,
    "sidecar": _decode_sidecar,
}
assert set(_DECODERS) == set(KNOWN_ACTIONS)


def decode_action(obj: dict[str, Any]) -> Action | None:
    """Decode one parsed log line (ACTION.LINE_FORMAT, ACTION.UNKNOWN).

    Exactly one known action key gives that action; keys that name no known action are ignored,
    and a line with none returns ``None`` (an unknown action). Unknown fields inside a known action
    are ignored. A known key whose value is ``null`` counts as absent. Two known actions on one
    line, a missing required field or a value of the wrong JSON type raise
    :class:`CorruptLogError` (without location: :func:`decode_commit` adds it). The returned action
    may share the maps (``partitionValues``, ``tags``, the commitInfo object) of ``obj``.
    """
    if len(obj) == 1:
        for key, body in obj.items():
            decoder = _DECODERS.get(key)
            if decoder is None or body is None:
                return None
            return decoder(body)
    found: str | None = None
    for key, body in obj.items():
        if body is not None and key in _DECODERS:
            if found is not None:
                raise CorruptLogError(f"one line holds two actions, {found!r} and {key!r}")
            found = key
    return None if found is None else _DECODERS[found](obj[found])


_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")


def decode_commit(data: bytes, *, table: str, version: int | None, file: str) -> list[Action]:
    """Decode a whole commit file (ACTION.LINE_FORMAT): its known actions in file order.

    Empty (or blank) lines are skipped and unknown actions dropped (ACTION.UNKNOWN). Invalid UTF-8,
    invalid JSON on any line, a line that is not a JSON object, or a malformed known action raise
    :class:`CorruptLogError` naming ``table``, ``version``, ``file`` and the 1-based line number.
    """

    def corrupt(line: int, problem: str) -> CorruptLogError:
        return CorruptLogError(f"line {line}: {problem}", table=table, version=version, file=file)

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise corrupt(line, f"invalid UTF-8 at byte offset {exc.start}") from None
    actions: list[Action] = []
    append = actions.append
    parse = _DECODER.decode
    for number, line_text in enumerate(text.split("\n"), 1):
        if not line_text or line_text.isspace():
            continue
        try:
            obj = parse(line_text)
        except (ValueError, RecursionError) as exc:
            raise corrupt(number, f"invalid JSON: {exc}") from None
        if type(obj) is not dict:
            raise corrupt(number, f"a log line must be a JSON object, not {_type_name(obj)}")
        if _SURROGATE_ESCAPE.search(line_text) is not None:
            try:  # a \ud800-\udfff escape not part of a pair is no Unicode text
                json.dumps(obj, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:
                raise corrupt(number, "a lone surrogate escape (not Unicode text)") from None
        try:
            action = decode_action(obj)
        except CorruptLogError as exc:
            raise corrupt(number, exc.message) from None
        if action is not None:
            append(action)
    return actions


# --- encoding ----------------------------------------------------------------------------------


def _dv_json(dv: DeletionVector) -> dict[str, Any]:
    out: dict[str, Any] = {"storageType": dv.storage_type, "pathOrInlineDv": dv.path_or_inline_dv}
    if dv.offset is not None:
        out["offset"] = dv.offset
    out["sizeInBytes"] = dv.size_in_bytes
    out["cardinality"] = dv.cardinality
    if dv.max_row_index is not None:
        out["maxRowIndex"] = dv.max_row_index
    return out


def _put(out: dict[str, Any], name: str, value: object) -> None:
    if value is not None:
        out[name] = value


def _encode_add(a: AddFile) -> dict[str, Any]:
    out: dict[str, Any] = {
        "path": a.path,
        "partitionValues": a.partition_values,
        "size": a.size,
        "modificationTime": a.modification_time,
        "dataChange": a.data_change,
    }
    if a.stats is not None:
        out["stats"] = a.stats
    if a.tags is not None:
        out["tags"] = a.tags
    if a.deletion_vector is not None:
        out["deletionVector"] = _dv_json(a.deletion_vector)
    _put(out, "baseRowId", a.base_row_id)
    _put(out, "defaultRowCommitVersion", a.default_row_commit_version)
    _put(out, "clusteringProvider", a.clustering_provider)
    return {"add": out}


def _encode_remove(r: RemoveFile) -> dict[str, Any]:
    out: dict[str, Any] = {"path": r.path}
    _put(out, "deletionTimestamp", r.deletion_timestamp)
    out["dataChange"] = r.data_change
    _put(out, "extendedFileMetadata", r.extended_file_metadata)
    if r.partition_values is not None:
        values = r.partition_values
        if None in values.values():  # NON_ABSENT content inclusion, see the module notes
            values = {k: v for k, v in values.items() if v is not None}
        out["partitionValues"] = values
    _put(out, "size", r.size)
    _put(out, "tags", r.tags)
    if r.deletion_vector is not None:
        out["deletionVector"] = _dv_json(r.deletion_vector)
    _put(out, "baseRowId", r.base_row_id)
    _put(out, "defaultRowCommitVersion", r.default_row_commit_version)
    _put(out, "stats", r.stats)
    return {"remove": out}


def _encode_protocol(p: Protocol) -> dict[str, Any]:
    out: dict[str, Any] = {
        "minReaderVersion": p.min_reader_version,
        "minWriterVersion": p.min_writer_version,
    }
    if p.reader_features is not None:
        out["readerFeatures"] = list(p.reader_features)
    if p.writer_features is not None:
        out["writerFeatures"] = list(p.writer_features)
    return {"protocol": out}


def _encode_metadata(m: Metadata) -> dict[str, Any]:
    out: dict[str, Any] = {"id": m.id}
    _put(out, "name", m.name)
    _put(out, "description", m.description)
    out["format"] = {"provider": m.format.provider, "options": m.format.options}
    if m.schema_string:
        out["schemaString"] = m.schema_string
    out["partitionColumns"] = list(m.partition_columns)
    out["configuration"] = m.configuration
    _put(out, "createdTime", m.created_time)
    return {"metaData": out}


def _encode_txn(t: SetTransaction) -> dict[str, Any]:
    out: dict[str, Any] = {"appId": t.app_id, "version": t.version}
    _put(out, "lastUpdated", t.last_updated)
    return {"txn": out}


def _encode_commit_info(c: CommitInfo) -> dict[str, Any]:
    return {"commitInfo": c.fields}


def _encode_domain_metadata(d: DomainMetadata) -> dict[str, Any]:
    return {
        "domainMetadata": {
            "domain": d.domain,
            "configuration": d.configuration,
            "removed": d.removed,
        }
    }


def _encode_cdc(c: AddCDCFile) -> dict[str, Any]:
    out: dict[str, Any] = {"path": c.path, "partitionValues": c.partition_values, "size": c.size}
    _put(out, "tags", c.tags)
    out["dataChange"] = c.data_change
    return {"cdc": out}


def _encode_checkpoint_metadata(c: CheckpointMetadata) -> dict[str, Any]:
    out: dict[str, Any] = {"version": c.version}
    _put(out, "tags", c.tags)
    return {"checkpointMetadata": out}


def _encode_sidecar(s: Sidecar) -> dict[str, Any]:
    out: dict[str, Any] = {
        "path": s.path,
        "sizeInBytes": s.size_in_bytes,
        "modificationTime": s.modification_time,
    }
    _put(out, "tags", s.tags)
    return {"sidecar": out}


_ENCODERS: Final[dict[type, Callable[[Any], dict[str, Any]]]] = {
    AddFile: _encode_add,
    RemoveFile: _encode_remove,
    CommitInfo: _encode_commit_info,
    Protocol: _encode_protocol,
    Metadata: _encode_metadata,
    SetTransaction: _encode_txn,
    DomainMetadata: _encode_domain_metadata,
    AddCDCFile: _encode_cdc,
    CheckpointMetadata: _encode_checkpoint_metadata,
    Sidecar: _encode_sidecar,
}


def encode_action(action: Action) -> str:
    """One log line, without its newline, exactly as delta-spark writes the action.

    ACTION.LINE_FORMAT and the per-action rules (ACTION.PROTOCOL, ACTION.METADATA, ACTION.ADD,
    ACTION.REMOVE, ACTION.TXN, ACTION.COMMIT_INFO, ACTION.DOMAIN_METADATA, ACTION.CDC) fix the
    fields; the field order and JSON details are delta-spark's (see the module notes).
    """
    try:
        encoder = _ENCODERS[type(action)]
    except KeyError:
        raise TypeError(f"not a Delta action: {action!r}") from None
    return _dumps(encoder(action))


def encode_commit(actions: Sequence[Action]) -> bytes:
    """A commit file: one line per action, each terminated by ``\\n`` (ACTION.LINE_FORMAT)."""
    if not actions:
        return b""
    return ("\n".join(map(encode_action, actions)) + "\n").encode("utf-8")


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


# --- paths -------------------------------------------------------------------------------------

# java.net.URI, path component: unreserved (alphanumerics and -_.!~*'()), the punctuation
# ;:@&=+$, and the separator / stay; every other ASCII character (% included) is escaped; non-ASCII
# characters stay unless Character.isSpaceChar or Character.isISOControl holds for them.
_URI_PATH_UNSAFE: Final = re.compile(
    r"[^A-Za-z0-9\-_.!~*'();:@&=+$,/\u00a1-\ud7ff\ue000-\U0010ffff]"
    r"|[\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)
_BAD_ESCAPE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _percent_encode(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match[0].encode("utf-8"))


def encode_path(relative: str) -> str:
    """The URI form of a path as ``add.path`` holds it (ACTION.ADD): Hadoop ``Path.toUri``.

    Percent-encodes (UTF-8, upper-case hex) each character that ``java.net.URI`` does not allow
    raw in a path: ASCII other than letters, digits and ``-_.!~*'();:@&=+$,/``, which includes
    ``%``, space, ``#``, ``?``, ``"``, ``[``, ``]``, ``{``, ``}`` and control characters, and the
    non-ASCII space and control characters (U+0080-U+00A0, U+2028, ...). Other non-ASCII text stays
    raw. Unlike Hadoop the path is not normalised (no ``//`` or ``.`` collapsing), so
    ``decode_path(encode_path(s)) == s`` for every string. A ``:`` stays raw as Hadoop leaves it;
    a relative path with a ``:`` before its first ``/`` reads as an absolute URI, which is why
    partition directories escape ``:`` (see :func:`partition_directory`).
    Raises ``ValueError`` on lone surrogates.
    """
    return _URI_PATH_UNSAFE.sub(_percent_encode, relative)


def decode_path(uri_path: str) -> str:
    """The file path an ``add.path`` URI names (ACTION.ADD): ``java.net.URI.getPath`` decoding.

    Every ``%XX`` escape is decoded, runs of escapes as UTF-8 (invalid UTF-8 becomes U+FFFD, as
    in Java); ``+`` stays ``+``. A ``%`` not followed by two hex digits raises ``ValueError``
    (``java.net.URI`` refuses such a string).
    """
    if "%" not in uri_path:
        return uri_path
    if _BAD_ESCAPE.search(uri_path):
        raise ValueError(f"malformed percent escape in path {uri_path!r}")
    return unquote(uri_path, errors="replace")


# Spark's ExternalCatalogUtils.escapePathName (non-Windows): 0x01-0x1F, "#%'*/:=?\ 0x7F {[]^.
# NUL is not in Spark's list and stays raw.
_HIVE_UNSAFE: Final = re.compile("[\x01-\x1f\"#%'*/:=?\\\\\x7f{\\[\\]^]")


def _hive_escape_char(match: re.Match[str]) -> str:
    return f"%{ord(match[0]):02X}"


def _hive_escape(name: str) -> str:
    return _HIVE_UNSAFE.sub(_hive_escape_char, name)


def partition_directory(columns: Sequence[tuple[str, str | None]]) -> str:
    """The relative directory ``col=value/col2=value2`` of a partition (ACTION.PARTITION_VALUES).

    ``columns`` are the (physical) column names with their serialised partition values in
    partition-column order. Names and values are escaped as Spark's
    ``ExternalCatalogUtils.escapePathName`` does; a null or empty value becomes
    ``__HIVE_DEFAULT_PARTITION__``. The result is a file-system path: pass
    ``partition_directory(...) + "/" + file_name`` through :func:`encode_path` for ``add.path``.
    """
    return "/".join(
        f"{_hive_escape(name)}={_hive_escape(value) if value else HIVE_DEFAULT_PARTITION}"
        for name, value in columns
    )


# --- numbers as Java prints them ---------------------------------------------------------------


def _digits_exponent(text: str) -> tuple[str, int]:
    """Significant digits (no leading/trailing zeros) and scientific exponent of a decimal text."""
    _, digit_tuple, exponent = Decimal(text).as_tuple()
    digits = "".join(map(str, digit_tuple))
    assert isinstance(exponent, int)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return stripped, exponent + len(stripped) - 1


def _to_float32(value: float) -> float:
    """Round a double to the nearest float32 (Java's ``(float)`` cast)."""
    try:
        result: float = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    return result


def _java_floating(value: float, *, single: bool = False) -> str:
    """``Double.toString`` (or ``Float.toString`` with ``single``) as specified since JDK 19.

    Shortest digits that read back to the value, plain between 1E-3 and 1E7, else computerized
    scientific notation (``1.0E10``). JDK 8-18 printed a few values with more digits than needed.
    """
    if single:
        value = _to_float32(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    if single:
        text = repr(magnitude)
        for precision in range(9):
            candidate = f"{magnitude:.{precision}e}"
            if _to_float32(float(candidate)) == magnitude:
                text = candidate
                break
    else:
        text = repr(magnitude)
    digits, exponent = _digits_exponent(text)
    if len(digits) == 1:
        # JDK 19+ (the Double.toString spec): when one digit suffices, the closest decimal of one
        # or two digits is printed; it differs from the one-digit one only for tiny subnormals
        # (Double.MIN_VALUE prints as 4.9E-324, not 5.0E-324).
        closest = f"{magnitude:.1e}"
        back = _to_float32(float(closest)) if single else float(closest)
        if back == magnitude:
            digits, exponent = _digits_exponent(closest)
    if 1e-3 <= magnitude < 1e7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            fraction = digits[exponent + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{fraction}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


# --- partition values --------------------------------------------------------------------------

_INTEGRAL_RANGES: Final = {
    "byte": (-(2**7), 2**7 - 1),
    "short": (-(2**15), 2**15 - 1),
    "integer": (-(2**31), 2**31 - 1),
    "long": (-(2**63), 2**63 - 1),
}
_DECIMAL_TYPE: Final = re.compile(r"decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)")
_INTEGER_TEXT: Final = re.compile(r"[+-]?[0-9]+")
_DATE_TEXT: Final = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIMESTAMP_TEXT: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]{1,9}))?(Z|[+-][0-9]{2}:?[0-9]{2})?"
)


def _decimal_type(spark_type: str) -> tuple[int, int] | None:
    if spark_type == "decimal":
        return 10, 0
    match = _DECIMAL_TYPE.fullmatch(spark_type)
    return (int(match[1]), int(match[2])) if match else None


def _datetime_text(moment: datetime, separator: str) -> str:
    """``yyyy-MM-dd<sep>HH:mm:ss`` (strftime's year is not zero-padded below 1000 on Linux)."""
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}{separator}"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    )


def _timestamp_text(moment: datetime) -> str:
    text = _datetime_text(moment, " ")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    return text


def encode_partition_value(
    value: Any, spark_type: str, *, utc_timestamp: bool = False
) -> str | None:
    """The ``partitionValues`` string of a typed value (ACTION.PARTITION_VALUES).

    PROTOCOL.md "Partition Value Serialization" as delta-spark produces it (Spark's cast to
    string): integers in decimal; ``float``/``double`` as Java's ``Float``/``Double.toString``
    (``1.0``, ``1.0E10``, ``NaN``); decimals in plain notation with the type's scale (delta-spark on
    Spark < 3.4 wrote scientific notation below 1E-6); booleans ``true``/``false``; dates
    ``yyyy-MM-dd``; timestamps ``yyyy-MM-dd HH:mm:ss[.ffffff]`` with trailing zeros of the fraction
    dropped (an aware datetime is first converted to UTC, a naive one is taken as it is), or with
    ``utc_timestamp`` the ISO form ``yyyy-MM-ddTHH:mm:ss.ffffffZ`` newer delta-spark writes;
    ``binary`` as its UTF-8 text; ``None`` and the empty string give ``None`` (JSON null, written
    by deltaspec writers for every null). Raises ``ValueError``/``TypeError`` for a value that does
    not fit the type.
    """
    if value is None:
        return None
    kind = spark_type.strip().lower()
    if kind == "string":
        if not isinstance(value, str):
            raise TypeError(f"a string partition value must be str, not {type(value).__name__}")
        return value or None
    if kind in _INTEGRAL_RANGES:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"a {kind} partition value must be int, not {type(value).__name__}")
        low, high = _INTEGRAL_RANGES[kind]
        if not low <= value <= high:
            raise ValueError(f"{value} is out of range for {kind}")
        return str(value)
    if kind in ("float", "double"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"a {kind} partition value must be float, not {type(value).__name__}")
        return _java_floating(float(value), single=kind == "float")
    if kind == "boolean":
        if not isinstance(value, bool):
            raise TypeError(f"a boolean partition value must be bool, not {type(value).__name__}")
        return "true" if value else "false"
    if kind == "date":
        if isinstance(value, datetime) or not isinstance(value, date):
            raise TypeError(f"a date partition value must be date, not {type(value).__name__}")
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    if kind in ("timestamp", "timestamp_ntz"):
        if not isinstance(value, datetime):
            raise TypeError(
                f"a {kind} partition value must be datetime, not {type(value).__name__}"
            )
        if value.tzinfo is not None:
            if kind == "timestamp_ntz":
                raise ValueError("a timestamp_ntz partition value must be a naive datetime")
            value = value.astimezone(UTC).replace(tzinfo=None)
        if utc_timestamp and kind == "timestamp":
            return f"{_datetime_text(value, 'T')}.{value.microsecond:06d}Z"
        return _timestamp_text(value)
    if kind == "binary":
        if not isinstance(value, bytes | bytearray):
            raise TypeError(f"a binary partition value must be bytes, not {type(value).__name__}")
        return bytes(value).decode("utf-8")
    decimal_type = _decimal_type(kind)
    if decimal_type is not None:
        if isinstance(value, bool) or not isinstance(value, int | Decimal):
            raise TypeError(f"a {kind} partition value must be Decimal, not {type(value).__name__}")
        precision, scale = decimal_type
        number = Decimal(value)
        if not number.is_finite():
            raise ValueError(f"{value} is not a {kind} value")
        try:
            scaled = number.quantize(Decimal(1).scaleb(-scale))
        except InvalidOperation:
            raise ValueError(f"{value} does not fit {kind}") from None
        whole_digits = max(scaled.adjusted() + 1, 0)
        if scaled != number or whole_digits > precision - scale:
            raise ValueError(f"{value} does not fit {kind}")
        return format(abs(scaled) if scaled.is_zero() else scaled, "f")
    raise ValueError(f"unsupported partition column type {spark_type!r}")


def decode_partition_value(raw: str | None, spark_type: str) -> Any:
    """The typed value of a ``partitionValues`` string (ACTION.PARTITION_VALUES).

    ``None`` and ``""`` are null. Returns ``str``, ``int``, ``float``, ``Decimal``, ``bool``,
    ``date``, ``datetime`` (``timestamp``: timezone-aware, a value without offset read as UTC as
    the model does; ``timestamp_ntz``: naive) or ``bytes``. Accepts both timestamp forms
    (``yyyy-MM-dd HH:mm:ss[.f]`` and ISO 8601 with ``T`` and ``Z``/offset) and scientific decimals.
    Raises ``ValueError`` for text that is not a value of the type.
    """
    if raw is None or raw == "":
        return None
    kind = spark_type.strip().lower()
    if kind == "string":
        return raw
    if kind in _INTEGRAL_RANGES:
        if not _INTEGER_TEXT.fullmatch(raw):
            raise ValueError(f"{raw!r} is not a {kind} value")
        number = int(raw)
        low, high = _INTEGRAL_RANGES[kind]
        if not low <= number <= high:
            raise ValueError(f"{raw!r} is out of range for {kind}")
        return number
    if kind in ("float", "double"):
        if raw in ("NaN", "Infinity", "-Infinity", "+Infinity"):
            return float(raw.lstrip("+").replace("Infinity", "inf"))
        if not re.fullmatch(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?", raw):
            raise ValueError(f"{raw!r} is not a {kind} value")
        number_f = float(raw.rstrip("fFdD"))
        return _to_float32(number_f) if kind == "float" else number_f
    if kind == "boolean":
        lowered = raw.lower()
        if lowered not in ("true", "false"):
            raise ValueError(f"{raw!r} is not a boolean value")
        return lowered == "true"
    if kind == "date":
        match = _DATE_TEXT.fullmatch(raw)
        if not match:
            raise ValueError(f"{raw!r} is not a date value")
        return date(int(match[1]), int(match[2]), int(match[3]))
    if kind in ("timestamp", "timestamp_ntz"):
        return _decode_timestamp(raw, kind)
    if kind == "binary":
        return raw.encode("utf-8")
    decimal_type = _decimal_type(kind)
    if decimal_type is not None:
        try:
            number_d = Decimal(raw)
        except InvalidOperation:
            raise ValueError(f"{raw!r} is not a {kind} value") from None
        if not number_d.is_finite():
            raise ValueError(f"{raw!r} is not a {kind} value")
        return number_d
    raise ValueError(f"unsupported partition column type {spark_type!r}")


def _decode_timestamp(raw: str, kind: str) -> datetime:
    match = _TIMESTAMP_TEXT.fullmatch(raw)
    if not match:
        raise ValueError(f"{raw!r} is not a {kind} value")
    fraction = (match[7] or "").ljust(9, "0")
    if fraction[6:] != "000":
        raise ValueError(f"{raw!r} has more than microsecond precision")
    moment = datetime(
        int(match[1]),
        int(match[2]),
        int(match[3]),
        int(match[4]),
        int(match[5]),
        int(match[6]),
        int(fraction[:6]),
    )
    zone = match[8]
    if kind == "timestamp_ntz":
        if zone is not None:
            raise ValueError(f"{raw!r}: a timestamp_ntz value has no zone")
        return moment
    if zone is None or zone == "Z":
        return moment.replace(tzinfo=UTC)
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return (moment - sign * offset).replace(tzinfo=UTC)


# --- stats -------------------------------------------------------------------------------------


def _stats_value(value: Any) -> str:
    if isinstance(value, str):
        return _dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = _java_floating(value)
        return f'"{text}"' if not math.isfinite(value) else text
    if isinstance(value, Decimal):
        return str(value)  # Java BigDecimal.toString follows the same to-scientific-string rules
    if isinstance(value, datetime):
        text = f"{_datetime_text(value, 'T')}.{value.microsecond // 1000:03d}"
        offset = value.utcoffset()
        if offset is not None:
            minutes = int(offset.total_seconds()) // 60
            sign = "-" if minutes < 0 else "+"
            text += (
                "Z" if not minutes else f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
            )
        return f'"{text}"'
    if isinstance(value, date):
        return f'"{value.year:04d}-{value.month:02d}-{value.day:02d}"'
    if isinstance(value, Mapping):
        items = (
            f"{_dumps(str(key))}:{_stats_value(item)}"
            for key, item in value.items()
            if item is not None
        )
        return "{" + ",".join(items) + "}"
    raise TypeError(f"cannot write {type(value).__name__} into stats")


def encode_stats(
    num_records: int,
    min_values: Mapping[str, Any] | None,
    max_values: Mapping[str, Any] | None,
    null_count: Mapping[str, Any] | None,
    tight_bounds: bool | None = None,
) -> str:
    """The ``stats`` JSON string of an add (ACTION.ADD) in delta-spark's key order.

    ``{"numRecords":n,"minValues":{...},"maxValues":{...},"nullCount":{...}[,"tightBounds":b]}``.
    The three maps nest by struct field; ``None`` leaves its key out (delta-spark writes only
    ``numRecords`` when no column is indexed) and ``None`` values inside the maps are omitted, as
    Spark's ``to_json`` does. Floats print as Java's ``Double.toString`` (``NaN`` and infinities
    quoted, as Jackson does), decimals as ``BigDecimal.toString``, datetimes as
    ``yyyy-MM-ddTHH:mm:ss.SSS`` plus the offset for aware values (``Z`` for UTC), dates as
    ``yyyy-MM-dd``.
    """
    if isinstance(num_records, bool) or not isinstance(num_records, int):
        raise TypeError("numRecords must be an int")
    parts = [f'"numRecords":{num_records}']
    for key, values in (
        ("minValues", min_values),
        ("maxValues", max_values),
        ("nullCount", null_count),
    ):
        if values is not None:
            parts.append(f'"{key}":{_stats_value(values)}')
    if tight_bounds is not None:
        parts.append(f'"tightBounds":{"true" if tight_bounds else "false"}')
    return "{" + ",".join(parts) + "}"
