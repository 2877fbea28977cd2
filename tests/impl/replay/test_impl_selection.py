"""Rows kept by a mask as zero-copy slices (impl/replay/selection.py): always what ``filter``
keeps, in order, whether the kept rows lie in a few runs or many."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given
from hypothesis import strategies as st

from deltaspec.impl.replay.selection import MAX_RUNS, kept_runs, select_array, select_table

_masks = st.one_of(
    st.lists(st.sampled_from([True, False, None]), max_size=300),
    st.lists(st.booleans(), min_size=2 * MAX_RUNS + 10, max_size=400),
    st.integers(0, 40).map(lambda gaps: ([True] * 7 + [False]) * gaps),
)


@given(_masks)
def test_selection_keeps_what_filter_keeps(values: list[bool | None]) -> None:
    mask = pa.array(values, pa.bool_())
    rows = len(values)
    table = pa.table({"n": pa.array(range(rows), pa.int64()), "s": [str(i) for i in range(rows)]})
    expected = table.filter(mask)
    assert select_table(table, mask).equals(expected)
    assert select_table(table, pa.chunked_array([mask])).equals(expected)
    struct = pa.StructArray.from_arrays([table["n"].combine_chunks()], names=["n"])
    pieces = select_array(struct, mask)
    assert pa.concat_arrays(pieces).equals(struct.filter(mask)) if pieces else not len(expected)


def test_few_runs_are_slices_and_many_are_not() -> None:
    few = pa.array([False, True, True, None, True, False] * 3)
    assert kept_runs(few) == [(1, 2), (4, 1), (7, 2), (10, 1), (13, 2), (16, 1)]
    many = pa.array([True, False] * (MAX_RUNS + 1))
    assert kept_runs(many) is None
    table = pa.table({"n": range(len(few))})
    assert select_table(table, few).column("n").num_chunks == 6  # slices, not one copy
