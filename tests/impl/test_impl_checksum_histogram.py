"""``fileSizeHistogram`` (CHECKSUM.WRITE): each file in the last bin whose lower boundary it
reaches, from a Python list or an Arrow column alike."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from deltaspec.impl.checksum import BIN_BOUNDARIES, file_size_histogram

SIZES = st.lists(
    st.one_of(st.sampled_from(BIN_BOUNDARIES), st.integers(0, 2**50)), max_size=50
).map(lambda sizes: [*sizes, *(s - 1 for s in sizes if s)])


def _naive(sizes: list[int]) -> dict[str, list[int]]:
    counts = [0] * len(BIN_BOUNDARIES)
    totals = [0] * len(BIN_BOUNDARIES)
    for size in sizes:
        index = max(i for i, low in enumerate(BIN_BOUNDARIES) if size >= low)
        counts[index] += 1
        totals[index] += size
    return {"sortedBinBoundaries": list(BIN_BOUNDARIES), "fileCounts": counts, "totalBytes": totals}


@pytest.mark.rules("CHECKSUM.WRITE")
@given(sizes=SIZES)
def test_histogram_bins_every_file_by_its_lower_boundary(sizes: list[int]) -> None:
    expected = _naive(sizes)
    assert file_size_histogram(sizes) == expected
    assert file_size_histogram(pa.array(sizes, type=pa.int64())) == expected


@pytest.mark.rules("CHECKSUM.WRITE")
def test_a_negative_size_is_refused() -> None:
    with pytest.raises(ValueError):
        file_size_histogram([5, -1])
