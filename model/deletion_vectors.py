"""Deletion vectors on write (DV.WRITE, spec/deletion-vectors.md): what a command that removes
rows from files commits on a table with deletion vectors enabled."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from deltaspec.rules import rule


@dataclass(frozen=True)
class MarkedFile:
    """A live file as DV.WRITE sees it: its path, its row count and the rows its current vector
    marks."""

    path: str
    num_records: int
    deleted: frozenset[int] = frozenset()


@dataclass(frozen=True)
class FileOutcome:
    """What the commit does to one file: removed outright (``deleted`` None), or removed and
    added again with a vector marking ``deleted``."""

    path: str
    deleted: frozenset[int] | None


@rule("DV.WRITE")
def mark_deleted(
    files: tuple[MarkedFile, ...], removed: Mapping[str, frozenset[int]]
) -> tuple[FileOutcome, ...]:
    """Each file with rows in ``removed``: gone when its old and new marked rows cover it, else
    re-added with a vector of both; files without removed rows are untouched."""
    out = []
    for f in files:
        new = removed.get(f.path, frozenset())
        if not new:
            continue
        union = f.deleted | new
        out.append(FileOutcome(f.path, None if len(union) >= f.num_records else union))
    return tuple(out)
