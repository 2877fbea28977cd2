"""Logical file keys over Arrow tables (SNAPSHOT.FILE_KEY): a file is ``(path, dvId)``."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import CorruptLogError
from .selection import select_table

__all__ = ["drop_keys", "refuse_duplicate_keys", "refuse_live_tombstones", "table_keys"]


def _dv_key(row: dict[str, Any] | None) -> str | None:
    """The deletion vector's unique id from an Arrow row (SNAPSHOT.FILE_KEY)."""
    if row is None:
        return None
    base = f"{row['storage_type']}{row['path_or_inline_dv']}"
    return base if row["offset"] is None else f"{base}@{row['offset']}"


def table_keys(table: pa.Table) -> list[tuple[str, str | None]]:
    paths = table.column("path").to_pylist()
    dvs = table.column("deletion_vector").to_pylist()
    return [(p, _dv_key(d)) for p, d in zip(paths, dvs, strict=True)]


def drop_keys(table: pa.Table, keys: set[tuple[str, str | None]]) -> pa.Table:
    """``table`` without the rows whose file key is in ``keys`` (vectorised on the path)."""
    if not keys or table.num_rows == 0:
        return table
    paths = pa.array(sorted({path for path, _ in keys}), type=pa.string())
    hit = pc.is_in(table.column("path"), value_set=paths)
    if not pc.any(hit).as_py():
        return table
    untouched = select_table(table, pc.invert(hit))
    candidates = table.filter(hit)
    if candidates.column("deletion_vector").null_count == candidates.num_rows:
        keep = [(path, None) not in keys for path in candidates.column("path").to_pylist()]
    else:
        keep = [key not in keys for key in table_keys(candidates)]
    if not any(keep):
        return untouched
    return pa.concat_tables([untouched, candidates.filter(pa.array(keep, type=pa.bool_()))])


def refuse_duplicate_keys(adds: pa.Table, table: str, version: int, file: str) -> None:
    """A checkpoint holds each live file once (CHECKPOINT.CONTENTS): two rows with one file key
    mean a corrupt checkpoint, not a file to keep twice."""
    # unique's hash kernel takes about half the time of count_distinct's on 1M paths
    if len(pc.unique(adds.column("path"))) == adds.num_rows:
        return
    keys = table_keys(adds)
    seen: set[tuple[str, str | None]] = set()
    for key in keys:
        if key in seen:
            raise CorruptLogError(
                f"the checkpoint holds live file {key[0][:200]!r} twice",
                table=table,
                version=version,
                file=file,
            )
        seen.add(key)


def refuse_live_tombstones(
    adds: pa.Table, removes: pa.Table, table: str, version: int, file: str
) -> None:
    """A checkpoint holds a file key as a live file or as a tombstone, never both
    (CHECKPOINT.CONTENTS: the reconciled state): which one it meant cannot be told."""
    # the tombstones are hashed (usually the fewer rows), the live files only probed
    hit = pc.is_in(adds.column("path"), value_set=pc.unique(removes.column("path")))
    if not pc.any(hit).as_py():
        return
    tombstones = set(table_keys(removes))
    for key in table_keys(adds.filter(hit)):
        if key in tombstones:
            raise CorruptLogError(
                f"the checkpoint holds file {key[0][:200]!r} as live and as removed",
                table=table,
                version=version,
                file=file,
            )
