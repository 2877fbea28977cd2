"""The two sides of a MERGE as Spark rows: the source and the target's files, joined ON its
condition."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ....impl.actions import AddFile

SOURCE_FLAG = "__deltaspec_source"
"""A column of the source, always true: null in a joined row means no source row matched."""

TARGET_ROW = "__deltaspec_row"
"""A column of the target: one id per target row, to count the source rows each matched."""


@dataclass(frozen=True)
class MergeFrames:
    """The two sides of a MERGE: the source flagged aliased ``s`` and how to read the target's
    files as rows (with their file and, with deletion vectors, each row's index) aliased ``t``,
    joined ON ``on``."""

    source: DataFrame
    on: str
    t: str
    s: str
    names: list[str]
    types: dict[str, Any]
    target: Callable[[Sequence[AddFile]], DataFrame]
    marked: dict[str, set[int]] | None = None
    """With deletion vectors: filled with the target rows a clause changed, per file."""

    def joined(self, files: Sequence[AddFile], how: str) -> DataFrame:
        return self.target(files).join(self.source, F.expr(self.on), how)
