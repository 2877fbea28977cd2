"""The path rule (PATH.DATA_FILE) applied to the file actions a replay reads.

The rule itself lives in :mod:`deltaspec.impl.table.paths`; replay applies it to every add and
remove of a commit (:func:`check_commit_actions`) and, vectorised, to a checkpoint's tables
(:func:`check_file_table`), so that every path a snapshot holds is canonical
(SNAPSHOT.CANONICAL_PATH).
"""

from __future__ import annotations

import dataclasses
from typing import cast

import pyarrow as pa
import pyarrow.compute as pc

from ..actions import Action, AddFile, RemoveFile
from ..errors import CorruptLogError, UnsafePathError
from ..table import paths
from .layouts import ZERO, dv_from_row

__all__ = ["check_commit_actions", "check_file_table"]


_INT64_MAX = 2**63 - 1
_VECTORISED_SCREEN = 64
"""Fewer paths than this are screened with Python's compiled regex: pyarrow compiles its RE2
pattern on every call (about 0.1 ms, most of a small commit's replay). Python's ``$`` also
matches before a final line break, so it screens in at least every path RE2 does."""


def _needs_check(action: AddFile | RemoveFile, suspect: bool) -> bool:
    """Whether :func:`paths.check_file_action` could find anything in ``action``: a suspicious
    path (a line break too: Python's ``$`` matches before one, RE2's does not), a deletion
    vector, or a size or modification time out of range."""
    if suspect or action.deletion_vector is not None or "\n" in action.path:
        return True
    size = action.size
    if size is not None and not 0 <= size <= _INT64_MAX:
        return True
    if isinstance(action, AddFile):
        return not 0 <= action.modification_time <= _INT64_MAX
    return False


def check_commit_actions(actions: list[Action], table: str, version: int, file: str) -> None:
    """Check every add and remove of a commit in place: its path made canonical
    (:func:`paths.check_file_action`). The paths are screened with one vectorised regex
    (:data:`paths.SUSPICIOUS_PATH`; one by one in a small commit); the full check runs where it
    could find anything."""
    indexes = [i for i, a in enumerate(actions) if isinstance(a, AddFile | RemoveFile)]
    if not indexes:
        return
    files = [cast(AddFile | RemoveFile, actions[i]) for i in indexes]
    if len(files) < _VECTORISED_SCREEN:
        screened = [paths.is_suspicious(a.path) for a in files]
    else:
        screened = pc.match_substring_regex(
            pa.array([a.path for a in files], pa.string()), paths.SUSPICIOUS_PATH
        ).to_pylist()
    for index, action, suspect in zip(indexes, files, screened, strict=True):
        if _needs_check(action, bool(suspect)):
            canonical = paths.check_file_action(action, table, version, file)
            if canonical != action.path:
                actions[index] = dataclasses.replace(action, path=canonical)


def check_file_table(
    rows: pa.Table, kind: str, table: str, version: int | None, file: str
) -> pa.Table:
    """:func:`paths.check_file_action` for a checkpoint's FILES/TOMBSTONES table, vectorised:
    only the suspicious-looking paths are resolved one by one; returns ``rows`` with their
    paths canonical (SNAPSHOT.CANONICAL_PATH)."""
    if rows.num_rows == 0:
        return rows
    column = rows.column("path")
    if column.null_count:
        raise CorruptLogError(
            f"a {kind} row without a path", table=table, version=version, file=file
        )
    suspect = pc.match_substring_regex(column, paths.SUSPICIOUS_PATH)
    if pc.any(suspect).as_py():
        canonical: list[str] = []
        for path in column.to_pylist():
            if paths.is_suspicious(path):
                try:
                    paths.resolve_data_path(table, path)
                except ValueError as exc:
                    raise UnsafePathError(
                        f"{kind}.path {path[:200]!r}: {exc}",
                        table=table,
                        version=version,
                        file=file,
                    ) from None
                path = paths.canonical_path(path)
            canonical.append(path)
        rows = rows.set_column(
            rows.schema.get_field_index("path"), "path", pa.array(canonical, pa.string())
        )
    dvs = rows.column("deletion_vector")
    if dvs.null_count < rows.num_rows:
        # only a ``p`` path or a ``u`` id with a prefix can leave the table, only an inline
        # vector can be undecodable: the bare 20-char ``u`` ids deletion-vector writers produce
        # are skipped without leaving Arrow
        dvs = dvs.filter(pc.is_valid(dvs))
        kind_column = pc.struct_field(dvs, "storage_type")
        prefixed = pc.not_equal(pc.utf8_length(pc.struct_field(dvs, "path_or_inline_dv")), 20)
        bare_u = pc.and_(pc.equal(kind_column, "u"), pc.invert(prefixed))
        dvs = dvs.filter(pc.invert(bare_u))
        for row in dvs.to_pylist():
            vector = dv_from_row(row)
            if vector is not None:
                paths.check_deletion_vector(vector, table, version, file)
    sizes = rows.column("size")
    bad = pc.less(sizes, ZERO)
    if kind == "add":
        bad = pc.or_kleene(bad, pc.is_null(sizes))
    if pc.any(bad).as_py():
        path = rows.column("path").filter(bad).to_pylist()[0]
        raise CorruptLogError(
            f"{kind}.size is negative or null for {path[:200]!r}",
            table=table,
            version=version,
            file=file,
        )
    return rows
