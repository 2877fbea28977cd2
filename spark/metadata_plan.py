"""The metadata a DataFrame write commits (delta-spark's WriteIntoDelta/ImplicitMetadataOperation).

A first write creates the table from the data's schema (made nullable) and partitioning; a later
one keeps the table's metadata, merges the data's new columns into it with mergeSchema, or
replaces schema and partitioning with overwriteSchema in an overwrite; anything else must match.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from pyspark.sql.types import StructType

from ..impl.actions import Format, Metadata
from ..impl.txn.transaction import OptimisticTransaction
from . import schema as schemas
from .errors import (
    DataChangeFalseError,
    EmptyDataError,
    OverwriteRequiredError,
    PartitioningMismatchError,
)
from .options import WriteOptions


@dataclass(frozen=True)
class MetadataPlan:
    """The metadata a write commits (``metadata``, None: unchanged), the table's metadata after
    it (``final``) and the schema the data is written in."""

    metadata: Metadata | None
    final: Metadata
    schema: schemas.Schema


def as_nullable(kind: Any) -> Any:
    """Spark's ``asNullable``: delta-spark makes a DataFrame's schema nullable before writing."""
    if isinstance(kind, dict):
        out = {k: as_nullable(v) for k, v in kind.items()}
        for flag in ("nullable", "containsNull", "valueContainsNull"):
            if flag in out:
                out[flag] = True
        return out
    if isinstance(kind, list):
        return [as_nullable(v) for v in kind]
    return kind


def resolve_partitioning(
    columns: Sequence[str], data: schemas.Schema, table: str
) -> tuple[str, ...]:
    """``columns`` as the data spells them (matched case-insensitively); each must be there."""
    names = {n.lower(): n for n in schemas.field_names(data)}
    resolved = []
    for column in columns:
        if column.lower() not in names:
            raise PartitioningMismatchError(
                f"partition column {column!r} is not in the data", table=table
            )
        resolved.append(names[column.lower()])
    return tuple(resolved)


def _created(
    data: schemas.Schema,
    partition_by: Sequence[str] | None,
    opts: WriteOptions,
    now: int,
    table: str,
) -> Metadata:
    """A new table's metadata: the data's schema and partitioning, the ``delta.*`` options."""
    if not data["fields"]:
        raise EmptyDataError("the data has no columns", table=table)
    return Metadata(
        id=str(uuid.uuid4()),
        schema_string=schemas.dumps(data),
        partition_columns=resolve_partitioning(partition_by or (), data, table),
        configuration=dict(opts.table_properties),
        format=Format(),
        created_time=now,
    )


def _evolved(
    current: Metadata,
    data: schemas.Schema,
    partition_by: Sequence[str] | None,
    mode: str,
    opts: WriteOptions,
    table: str,
) -> Metadata | None:
    """An existing table's new metadata, None when unchanged: replaced (overwriteSchema in an
    overwrite without replaceWhere), merged (mergeSchema), or else checked against the data."""
    existing = schemas.parse(current.schema_string)
    partitioning = current.partition_columns
    wanted = (
        partitioning if partition_by is None else resolve_partitioning(partition_by, data, table)
    )
    overwrite_schema = opts.overwrite_schema and mode == "Overwrite" and opts.replace_where is None
    if overwrite_schema and (not schemas.same_type(existing, data) or wanted != partitioning):
        configuration = {**current.configuration, **opts.table_properties}
        schema_string = schemas.dumps(data)
        return replace(
            current,
            schema_string=schema_string,
            partition_columns=wanted,
            configuration=configuration,
        )
    if wanted != partitioning:
        error = OverwriteRequiredError if mode == "Overwrite" else PartitioningMismatchError
        raise error(
            f"partition columns {list(wanted)} differ from the table's {list(partitioning)}",
            table=table,
        )
    if not opts.merge_schema:
        schemas.require_compatible(existing, data, path=table)
        return None
    merged = schemas.merge(existing, data)
    return None if merged == existing else replace(current, schema_string=schemas.dumps(merged))


def plan_metadata(
    txn: OptimisticTransaction,
    df_schema: StructType,
    partition_by: Sequence[str] | None,
    mode: str,
    opts: WriteOptions,
    now: int,
) -> MetadataPlan:
    """The metadata a write of data in ``df_schema`` commits in save ``mode``; a
    dataChange=false write may not change it."""
    table = txn.log.table_path
    data = as_nullable(json.loads(df_schema.json()))
    current = txn.metadata
    if current is None:
        metadata: Metadata | None = _created(data, partition_by, opts, now, table)
    else:
        metadata = _evolved(current, data, partition_by, mode, opts, table)
    if metadata is not None and not opts.data_change:
        raise DataChangeFalseError(
            "a write with dataChange=false cannot change the table's metadata", table=table
        )
    final = metadata or current
    assert final is not None
    return MetadataPlan(metadata, final, schemas.parse(final.schema_string))
