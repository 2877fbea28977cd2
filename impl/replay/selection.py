"""Keeping the rows a mask selects without copying them where they lie in a few runs.

``filter`` copies every kept row of every column; a checkpoint's ``add`` column has a handful of
null rows (its protocol, metaData and tombstone rows) among a million adds, and a replay's few
touched keys drop a handful of the live files: in both, the kept rows form a few contiguous runs,
which zero-copy slices select exactly, in order.
"""

from __future__ import annotations

from typing import TypeVar

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["MAX_RUNS", "kept_runs", "select_array", "select_table"]

MAX_RUNS = 64
"""More runs of kept rows than this: ``filter`` (one copy) costs less than many slices."""

Data = TypeVar("Data", pa.Array, pa.Table)


def kept_runs(mask: pa.Array | pa.ChunkedArray) -> list[tuple[int, int]] | None:
    """The ``(start, length)`` runs of the rows ``mask`` keeps (true; false and null drop, as
    in ``filter``), or None when there are more than :data:`MAX_RUNS`."""
    if isinstance(mask, pa.ChunkedArray):
        mask = mask.combine_chunks()
    encoded = pc.run_end_encode(mask)
    values = encoded.values
    if len(values) > 2 * MAX_RUNS + 1:
        return None
    runs: list[tuple[int, int]] = []
    start = 0
    for value, end in zip(values.to_pylist(), encoded.run_ends.to_pylist(), strict=True):
        if value:
            runs.append((start, end - start))
        start = end
    return runs if len(runs) <= MAX_RUNS else None


def _select(data: Data, mask: pa.Array | pa.ChunkedArray) -> list[Data] | Data:
    runs = kept_runs(mask)
    if runs is None:
        return data.filter(mask)
    return [data.slice(start, length) for start, length in runs]


def select_array(array: pa.Array, mask: pa.Array) -> list[pa.Array]:
    """The rows of ``array`` that ``mask`` keeps, as slices of it where they lie in a few runs
    (else one filtered copy): a list of arrays to lay end to end."""
    selected = _select(array, mask)
    return selected if isinstance(selected, list) else [selected]


def select_table(table: pa.Table, mask: pa.Array | pa.ChunkedArray) -> pa.Table:
    """``table.filter(mask)``, made of slices of ``table`` where the kept rows lie in a few
    runs."""
    selected = _select(table, mask)
    if not isinstance(selected, list):
        return selected
    if not selected:
        return table.slice(0, 0)
    return pa.concat_tables(selected)
