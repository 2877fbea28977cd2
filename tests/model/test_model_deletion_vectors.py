"""DV.WRITE on the model: which files a deletion-vector update keeps."""

from __future__ import annotations

import pytest

from deltaspec.model.deletion_vectors import FileOutcome, MarkedFile, mark_deleted


@pytest.mark.rules("DV.WRITE")
def test_marked_rows_join_the_old_vector_and_a_covered_file_goes() -> None:
    files = (
        MarkedFile("a", 4, frozenset({0})),
        MarkedFile("b", 2, frozenset({0})),
        MarkedFile("c", 3),
    )
    removed = {"a": frozenset({2}), "b": frozenset({1}), "c": frozenset()}
    assert mark_deleted(files, removed) == (
        FileOutcome("a", frozenset({0, 2})),
        FileOutcome("b", None),
    )
