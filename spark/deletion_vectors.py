"""DELETE, UPDATE and MERGE by deletion vectors (DV.WRITE, spec/deletion-vectors.md): on a table
that enables them, the rows a command removes from a file are marked in a new deletion vector
instead of the file being rewritten, as delta-spark 4.4.0 does.

A file that loses rows is committed as a ``remove`` of the file with its old DV (stats reduced
to ``numRecords``) and an ``add`` of the same path with the new DV: the old DV's rows and the
new ones, in one ``deletion_vector_<uuid>.bin`` per command, stats unchanged but
``tightBounds: false``. A file that loses every row is removed outright.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pyspark.sql import Column, SparkSession

from deltaspec.rules import rule

from ..impl.actions import AddFile, Protocol, RemoveFile
from ..impl.deletion_vectors import deleted_rows, enabled_in, write_deletion_vectors
from ..impl.snapshot.state import Snapshot
from ..impl.table import features
from . import rewrite, stats
from .read import FILE_COLUMN, ROW_INDEX_COLUMN, scan


def enabled(snapshot: Snapshot) -> bool:
    """DML writes deletion vectors: ``delta.enableDeletionVectors`` is true and the protocol
    supports the ``deletionVectors`` feature."""
    supported = "deletionVectors" in features.features(snapshot.protocol)
    return supported and enabled_in(snapshot.metadata.configuration)


def written_protocol(snapshot: Snapshot | None, configuration: Mapping[str, str]) -> Protocol:
    """The protocol of a table being written: its own, or for a new table the one its
    creation with ``configuration`` gives it (:func:`created_protocol`)."""
    if snapshot is None:
        return created_protocol(configuration, Protocol(1, 2))
    return snapshot.protocol


def created_protocol(configuration: Mapping[str, str], legacy: Protocol) -> Protocol:
    """A new table's protocol: ``legacy`` unless its properties enable deletion vectors, which
    need the ``deletionVectors`` reader and writer feature (delta-spark then writes the legacy
    writer features as table features too: ``invariants`` and ``appendOnly``, plus
    ``checkConstraints`` from writer version 3)."""
    if not enabled_in(configuration):
        return legacy
    writer = ["deletionVectors", "invariants", "appendOnly"]
    writer += ["checkConstraints"] if legacy.min_writer_version >= 3 else []
    return Protocol(3, 7, ("deletionVectors",), tuple(writer))


def marked_rows(
    spark: SparkSession, root: str, snapshot: Snapshot, files: Sequence[AddFile], rows: Column
) -> dict[str, set[int]]:
    """Per path among ``files``, the indexes (in the file) of the live rows where ``rows`` is
    true; files without such a row are left out."""
    if not files:
        return {}
    frame = scan(spark, root, snapshot, files, with_file=True, with_row_index=True)
    found: dict[str, set[int]] = {}
    for path, index in frame.where(rows).select(FILE_COLUMN, ROW_INDEX_COLUMN).collect():
        found.setdefault(path, set()).add(int(index))
    return found


def loose_stats(text: str | None) -> str | None:
    """The file's stats with ``tightBounds: false``: its min/max may now cover deleted rows."""
    if text is None:
        return None
    parsed = json.loads(text)
    parsed["tightBounds"] = False
    return json.dumps(parsed, separators=(",", ":"))


@dataclass(frozen=True)
class DeletionVectorChanges:
    """What marking rows did: the removes and adds to commit, and the counts for the metrics."""

    removes: tuple[RemoveFile, ...] = ()
    adds: tuple[AddFile, ...] = ()
    deleted_rows: int = 0
    vectors_added: int = 0
    vectors_updated: int = 0
    vectors_removed: int = 0
    files_removed: int = 0

    def metrics(self, prefix: str = "num") -> dict[str, str]:
        """The vector counts as operation metrics (MERGE names them ``numTarget...``)."""
        return {
            f"{prefix}DeletionVectorsAdded": str(self.vectors_added),
            f"{prefix}DeletionVectorsUpdated": str(self.vectors_updated),
            f"{prefix}DeletionVectorsRemoved": str(self.vectors_removed),
        }


@rule("DV.WRITE")
def mark_deleted(
    root: str, files: Sequence[AddFile], marked: Mapping[str, set[int]], now: int
) -> DeletionVectorChanges:
    """DV.WRITE: each file of ``files`` with rows in ``marked`` gets a DV of its old deleted rows
    and the marked ones (one new DV file for the command); a file left with no row is removed."""
    hit = [f for f in files if marked.get(f.path)]
    old = {f.path: _old_rows(root, f) for f in hit}
    union = {f.path: old[f.path] | marked[f.path] for f in hit}
    emptied = [f for f in hit if len(union[f.path]) >= (stats.num_records(f.stats) or 0)]
    kept = [f for f in hit if f not in emptied]
    vectors = write_deletion_vectors(root, [union[f.path] for f in kept]) if kept else []
    removes = [_remove(f, now) for f in hit]
    adds = [
        replace(f, deletion_vector=dv, stats=loose_stats(f.stats), data_change=True)
        for f, dv in zip(kept, vectors, strict=True)
    ]
    return DeletionVectorChanges(
        removes=tuple(removes),
        adds=tuple(adds),
        deleted_rows=sum(len(union[f.path] - old[f.path]) for f in hit),
        vectors_added=len(kept),
        vectors_updated=sum(1 for f in kept if f.deletion_vector is not None),
        vectors_removed=sum(1 for f in hit if f.deletion_vector is not None),
        files_removed=len(emptied),
    )


def _old_rows(root: str, add: AddFile) -> set[int]:
    return set() if add.deletion_vector is None else deleted_rows(Path(root), add.deletion_vector)


def _remove(add: AddFile, now: int) -> RemoveFile:
    """The tombstone of a file whose DV changes (or that loses every row): the old DV, stats
    reduced to ``numRecords``."""
    return rewrite.remove(add, now, with_stats=True)
