"""Writing v2 checkpoints (CHECKPOINT.V2_WRITE) and the ``_last_checkpoint`` fields that
describe them (CHECKPOINT.LAST_CHECKPOINT).

A v2 checkpoint is what delta-spark 4.4.0 writes for a table with the ``v2Checkpoint`` feature
and ``delta.checkpointPolicy = v2``: the file actions (``add``, ``remove``) go to one sidecar
Parquet file ``_delta_log/_sidecars/<v>.checkpoint.0000000001.0000000001.<uuid>.parquet``; the
top-level file ``<v>.checkpoint.<uuid>.json`` holds, one per line, the ``checkpointMetadata``
action (first), the ``sidecar`` action naming that file, and the non-file actions. A
``checkpointMetadata`` carries delta-spark's tags (sidecar action count, bytes, add count and
the sidecar's Spark schema).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from deltaspec.rules import rule

from .. import codec
from ..actions import (
    Action,
    CheckpointMetadata,
    DomainMetadata,
    Metadata,
    Protocol,
    SetTransaction,
    Sidecar,
)
from ..log import crashpoints
from ..log.names import SIDECARS_DIR
from ..log.store import FileInfo, LogStore
from .contents import parquet_bytes

__all__ = [
    "V2_POLICY",
    "V2CheckpointFiles",
    "spark_schema_json",
    "uses_v2_checkpoint",
    "v2_checkpoint_names",
    "write_v2_checkpoint",
]

V2_POLICY = "v2"
"""``delta.checkpointPolicy`` value that asks for v2 checkpoints (default ``classic``)."""

_SPARK_ATOMS: Mapping[pa.DataType, str] = {
    pa.string(): "string",
    pa.int64(): "long",
    pa.int32(): "integer",
    pa.bool_(): "boolean",
}


@rule("CHECKPOINT.V2_WRITE")
def uses_v2_checkpoint(protocol: Protocol, metadata: Metadata) -> bool:
    """Whether a checkpoint of this table is a v2 checkpoint (CHECKPOINT.V2_WRITE): the table
    supports the ``v2Checkpoint`` writer feature and ``delta.checkpointPolicy`` is ``v2``. With
    the feature and the (default) ``classic`` policy, checkpoints are classic files."""
    features = set(protocol.writer_features or ())
    policy = metadata.configuration.get("delta.checkpointPolicy", "classic").strip().lower()
    return "v2Checkpoint" in features and policy == V2_POLICY


def v2_checkpoint_names(version: int, top_uuid: str, sidecar_uuid: str) -> tuple[str, str]:
    """The top-level file name and the sidecar's log-relative name of a v2 checkpoint of
    ``version`` (CHECKPOINT.V2_WRITE)."""
    top = f"{version:020d}.checkpoint.{top_uuid}.json"
    sidecar = f"{version:020d}.checkpoint.{1:010d}.{1:010d}.{sidecar_uuid}.parquet"
    return top, f"{SIDECARS_DIR}/{sidecar}"


def _spark_type(kind: pa.DataType) -> Any:
    if pa.types.is_struct(kind):
        return spark_schema_json(kind)
    if pa.types.is_map(kind):
        return {
            "type": "map",
            "keyType": _spark_type(kind.key_type),
            "valueType": _spark_type(kind.item_type),
            "valueContainsNull": True,
        }
    if pa.types.is_list(kind):
        return {"type": "array", "elementType": _spark_type(kind.value_type), "containsNull": True}
    return _SPARK_ATOMS[kind]


def spark_schema_json(struct: pa.StructType | pa.Schema) -> dict[str, Any]:
    """A checkpoint Arrow struct (or schema) as Spark's schema JSON, every field nullable."""
    fields = list(struct)
    return {
        "type": "struct",
        "fields": [
            {"name": f.name, "type": _spark_type(f.type), "nullable": True, "metadata": {}}
            for f in fields
        ],
    }


@dataclass(frozen=True, slots=True)
class V2CheckpointFiles:
    """What :func:`write_v2_checkpoint` wrote: the top-level file, its sidecar, their actions."""

    top_level: FileInfo
    sidecar: Sidecar
    checkpoint_metadata: CheckpointMetadata
    non_file_actions: tuple[Action, ...]
    num_actions: int

    @property
    def size_in_bytes(self) -> int:
        return self.top_level.size + self.sidecar.size_in_bytes

    def last_checkpoint_field(self) -> dict[str, Any]:
        """``_last_checkpoint``'s ``v2Checkpoint`` object, in delta-spark's field order: the
        top-level file, its non-file actions (protocol, metadata, app transactions, domains,
        then checkpointMetadata) and its sidecar list (CHECKPOINT.LAST_CHECKPOINT)."""
        actions = [*self.non_file_actions, self.checkpoint_metadata]
        return {
            "path": self.top_level.name,
            "sizeInBytes": self.top_level.size,
            "modificationTime": self.top_level.modification_time,
            "nonFileActions": [json.loads(codec.encode_action(a)) for a in actions],
            "sidecarFiles": [json.loads(codec.encode_action(self.sidecar))["sidecar"]],
        }


def _file_info(store: LogStore, name: str, size: int) -> FileInfo:
    directory, _, _ = name.rpartition("/")
    listed = store.list_dir(directory) if directory else store.list_from(name)
    for info in listed:
        if info.name == name:
            return info
    return FileInfo(name, size, 0)


def _sidecar_rows(table: pa.Table) -> pa.Table:
    """The ``add`` and ``remove`` rows of a checkpoint table, with only those two columns."""
    adds, removes = table.column("add"), table.column("remove")
    keep = pc.or_(pc.is_valid(adds), pc.is_valid(removes))
    return table.select(["add", "remove"]).filter(keep)


def _non_file_actions(
    protocol: Protocol,
    metadata: Metadata,
    txns: tuple[SetTransaction, ...],
    domains: tuple[DomainMetadata, ...],
) -> tuple[Action, ...]:
    return (protocol, metadata, *txns, *domains)


def write_v2_checkpoint(
    store: LogStore,
    table: pa.Table,
    version: int,
    non_file: tuple[Protocol, Metadata, tuple[SetTransaction, ...], tuple[DomainMetadata, ...]],
    num_of_add_files: int,
) -> V2CheckpointFiles:
    """Write the sidecar, then the top-level file, of the v2 checkpoint of ``version`` whose
    rows are ``table`` (a classic checkpoint table) (CHECKPOINT.V2_WRITE). Both names are new
    UUIDs, so put-if-absent never meets another writer's file; the sidecar exists before the
    top-level file that names it, so a reader never sees a checkpoint whose sidecar is missing
    because it was not written yet."""
    top_name, sidecar_name = v2_checkpoint_names(version, str(uuid.uuid4()), str(uuid.uuid4()))
    rows = _sidecar_rows(table)
    data = parquet_bytes(rows)
    store.write_new(sidecar_name, data)
    crashpoints.reached("checkpoint.between_parts")
    written = _file_info(store, sidecar_name, len(data))
    sidecar = Sidecar(
        path=sidecar_name.rpartition("/")[2],
        size_in_bytes=written.size,
        modification_time=written.modification_time,
    )
    marker = CheckpointMetadata(
        version=version,
        tags={
            "sidecarNumActions": str(rows.num_rows),
            "sidecarSizeInBytes": str(written.size),
            "numOfAddFiles": str(num_of_add_files),
            "sidecarFileSchema": json.dumps(spark_schema_json(rows.schema), separators=(",", ":")),
        },
    )
    others = _non_file_actions(*non_file)
    top = codec.encode_commit([marker, sidecar, *others])
    store.write_new(top_name, top)
    return V2CheckpointFiles(
        top_level=_file_info(store, top_name, len(top)),
        sidecar=sidecar,
        checkpoint_metadata=marker,
        non_file_actions=others,
        num_actions=rows.num_rows + 2 + len(others),
    )
