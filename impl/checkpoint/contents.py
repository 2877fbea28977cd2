"""The contents of a checkpoint (CHECKPOINT.CONTENTS): delta-spark's Parquet schema and the
snapshot as one Arrow table in it.

A checkpoint stores the snapshot at one version as Parquet, one row per action and one nullable
struct column per action type, in delta-spark's layout: top-level columns ``txn``, ``add``,
``remove``, ``metaData``, ``protocol``, ``domainMetadata``, with the field names, order and types
delta-spark 3.x writes (``add.partitionValues`` a ``map<string,string>``, ``add.stats`` a JSON
string, ``deletionVector`` a struct, ``remove`` without ``stats`` and ``tags``). Live files and
tombstones are stored with ``dataChange = false``; expired tombstones and application
transactions are left out (RETENTION.TOMBSTONES, RETENTION.SET_TRANSACTION). ``add.stats`` and
``stats_parsed`` / ``partitionValues_parsed`` follow the table's properties
(CHECKPOINT.STATS_AS_STRUCT, :mod:`deltaspec.impl.checkpoint.stats`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from deltaspec.rules import rule

from ..actions import DomainMetadata, Metadata, Protocol, SetTransaction
from ..replay.layouts import ADD_COLUMNS, REMOVE_COLUMNS, ColumnSpec
from ..replay.state import ReplayState
from ..snapshot.state import Snapshot
from .stats import add_parsed_columns

__all__ = ["CHECKPOINT_SCHEMA", "checkpoint_state", "checkpoint_table", "parquet_bytes"]

# --- the checkpoint schema (delta-spark's) -------------------------------------------------------

_STRING_MAP = pa.map_(pa.string(), pa.string())
_STRING_LIST = pa.list_(pa.string())


def _delta_type(cols: Sequence[ColumnSpec]) -> pa.StructType:
    return pa.struct(
        [pa.field(c.delta, _delta_type(c.children) if c.children else c.type) for c in cols]
    )


TXN_TYPE = pa.struct([("appId", pa.string()), ("version", pa.int64()), ("lastUpdated", pa.int64())])
ADD_TYPE = _delta_type(ADD_COLUMNS)
REMOVE_TYPE = _delta_type(REMOVE_COLUMNS)
METADATA_TYPE = pa.struct(
    [
        ("id", pa.string()),
        ("name", pa.string()),
        ("description", pa.string()),
        ("format", pa.struct([("provider", pa.string()), ("options", _STRING_MAP)])),
        ("schemaString", pa.string()),
        ("partitionColumns", _STRING_LIST),
        ("configuration", _STRING_MAP),
        ("createdTime", pa.int64()),
    ]
)
PROTOCOL_TYPE = pa.struct(
    [
        ("minReaderVersion", pa.int32()),
        ("minWriterVersion", pa.int32()),
        ("readerFeatures", _STRING_LIST),
        ("writerFeatures", _STRING_LIST),
    ]
)
DOMAIN_METADATA_TYPE = pa.struct(
    [("domain", pa.string()), ("configuration", pa.string()), ("removed", pa.bool_())]
)

CHECKPOINT_SCHEMA: pa.Schema = pa.schema(
    [
        ("txn", TXN_TYPE),
        ("add", ADD_TYPE),
        ("remove", REMOVE_TYPE),
        ("metaData", METADATA_TYPE),
        ("protocol", PROTOCOL_TYPE),
        ("domainMetadata", DOMAIN_METADATA_TYPE),
    ]
)
"""The classic checkpoint's Parquet schema, as delta-spark 3.x writes it (CHECKPOINT.CONTENTS)."""


# --- building the checkpoint ---------------------------------------------------------------------


def _to_delta_struct(table: pa.Table, cols: Sequence[ColumnSpec]) -> pa.StructArray:
    """A FILES/TOMBSTONES table as the checkpoint's ``add``/``remove`` struct array."""
    children: list[pa.Array] = []
    for col in cols:
        column = table.column(col.name).combine_chunks()
        if col.children:
            inner = column.flatten()
            column = pa.StructArray.from_arrays(
                inner,
                fields=list(_delta_type(col.children)),
                mask=column.is_null() if column.null_count else None,
            )
        children.append(column)
    return pa.StructArray.from_arrays(children, fields=list(_delta_type(cols)))


def _protocol_row(protocol: Protocol) -> dict[str, Any]:
    return {
        "minReaderVersion": protocol.min_reader_version,
        "minWriterVersion": protocol.min_writer_version,
        "readerFeatures": None
        if protocol.reader_features is None
        else list(protocol.reader_features),
        "writerFeatures": None
        if protocol.writer_features is None
        else list(protocol.writer_features),
    }


def _metadata_row(metadata: Metadata) -> dict[str, Any]:
    return {
        "id": metadata.id,
        "name": metadata.name,
        "description": metadata.description,
        "format": {
            "provider": metadata.format.provider,
            "options": list(metadata.format.options.items()),
        },
        "schemaString": metadata.schema_string,
        "partitionColumns": list(metadata.partition_columns),
        "configuration": list(metadata.configuration.items()),
        "createdTime": metadata.created_time,
    }


def _txn_row(txn: SetTransaction) -> dict[str, Any]:
    return {"appId": txn.app_id, "version": txn.version, "lastUpdated": txn.last_updated}


def _domain_row(domain: DomainMetadata) -> dict[str, Any]:
    return {"domain": domain.domain, "configuration": domain.configuration, "removed": False}


@rule("CHECKPOINT.CONTENTS")
def checkpoint_table(snapshot: Snapshot, *, now_ms: int) -> pa.Table:
    """The checkpoint of ``snapshot`` as one Arrow table (CHECKPOINT.CONTENTS).

    Rows: the protocol, the metadata, one ``txn`` per unexpired app id, one ``domainMetadata``
    per live domain, one ``add`` per live file, one ``remove`` per unexpired tombstone. The
    ``add`` struct carries ``stats`` and/or ``stats_parsed`` / ``partitionValues_parsed`` as
    the table's properties ask (CHECKPOINT.STATS_AS_STRUCT).
    """
    txns = sorted(snapshot.app_transactions_at(now_ms).values(), key=lambda t: t.app_id)
    domains = sorted(snapshot.domains.values(), key=lambda d: d.domain)
    files = snapshot.files_table()
    tombstones = snapshot.tombstones_table(now_ms)
    small: list[tuple[str, dict[str, Any]]] = [
        ("protocol", _protocol_row(snapshot.protocol)),
        ("metaData", _metadata_row(snapshot.metadata)),
        *(("txn", _txn_row(t)) for t in txns),
        *(("domainMetadata", _domain_row(d)) for d in domains),
    ]
    n_small, n_adds, n_removes = len(small), files.num_rows, tombstones.num_rows
    columns: list[pa.Array] = []
    for schema_field in CHECKPOINT_SCHEMA:
        name, kind = schema_field.name, schema_field.type
        if name == "add":
            pieces = [
                pa.nulls(n_small, kind),
                _to_delta_struct(files, ADD_COLUMNS),
                pa.nulls(n_removes, kind),
            ]
        elif name == "remove":
            pieces = [
                pa.nulls(n_small + n_adds, kind),
                _to_delta_struct(tombstones, REMOVE_COLUMNS),
            ]
        else:
            head = pa.array([row if column == name else None for column, row in small], type=kind)
            pieces = [head, pa.nulls(n_adds + n_removes, kind)]
        columns.append(pa.concat_arrays([p.cast(kind) for p in pieces]))
    table = pa.Table.from_arrays(columns, schema=CHECKPOINT_SCHEMA)
    adds = add_parsed_columns(
        table.column("add").combine_chunks(), snapshot.metadata, files=snapshot.live_files
    )
    return table.set_column(table.schema.get_field_index("add"), "add", adds)


def checkpoint_state(snapshot: Snapshot, *, now_ms: int) -> ReplayState:
    """What the checkpoint of ``snapshot`` written at ``now_ms`` holds, as the state a load
    starting from it replays onto (CHECKPOINT.READ): the snapshot without the tombstones and
    application transactions expired at ``now_ms``, which :func:`checkpoint_table` leaves out."""
    return ReplayState(
        snapshot.protocol,
        snapshot.metadata,
        dict(snapshot.app_transactions_at(now_ms)),
        dict(snapshot.domains),
        snapshot.live_files,
        snapshot.tombstones_table(now_ms),
    )


def parquet_bytes(table: pa.Table) -> bytes:
    """``table`` as the bytes of a Snappy-compressed Parquet file, as checkpoints are written."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="snappy")
    return bytes(sink.getvalue().to_pybytes())
