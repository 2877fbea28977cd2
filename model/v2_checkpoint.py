"""What a v2 checkpoint of a snapshot must hold (CHECKPOINT.V2_WRITE, CHECKPOINT.LAST_CHECKPOINT;
whether a table is checkpointed so is ``checkpoint.uses_v2_checkpoint``).

The actions are CHECKPOINT.CONTENTS' (``checkpoint.checkpoint_actions``), split as delta-spark
4.4.0 writes them: the file actions (live adds, unexpired tombstones) in one sidecar, the rest in
the top-level file after its ``checkpointMetadata`` and its one ``sidecar`` action. The counts a
writer states about them (the ``checkpointMetadata`` tags, ``_last_checkpoint``) follow from that
split; the byte sizes and times are those of the files as written, which only a reader of the
files can see (the model states that they must equal them, not what they are).
"""

from __future__ import annotations

from dataclasses import dataclass

from .actions import Action, AddFile, RemoveFile
from .checkpoint import checkpoint_actions
from .snapshot import Snapshot

SIDECAR_COLUMNS = ("add", "remove")
"""The sidecar's columns, in order: the file actions' structs."""
TOP_LEVEL_ORDER = ("checkpointMetadata", "sidecar", "protocol", "metaData", "txn", "domainMetadata")
"""The top-level file's action kinds in the order they appear, each kind's actions together."""


@dataclass(frozen=True)
class V2Checkpoint:
    """The v2 checkpoint of one version, one sidecar."""

    version: int
    sidecar_actions: tuple[AddFile | RemoveFile, ...]
    """The sidecar's rows: the live files, then the unexpired tombstones."""
    non_file_actions: tuple[Action, ...]
    """The top-level file's actions after ``checkpointMetadata`` and the ``sidecar``: protocol,
    metadata, app transactions, domains."""

    @property
    def sidecar_num_actions(self) -> int:
        """The tag ``sidecarNumActions``: the sidecar's rows, adds and tombstones alike."""
        return len(self.sidecar_actions)

    @property
    def num_of_add_files(self) -> int:
        """The tag ``numOfAddFiles`` and ``_last_checkpoint.numOfAddFiles``: the live files."""
        return sum(isinstance(a, AddFile) for a in self.sidecar_actions)

    @property
    def size(self) -> int:
        """``_last_checkpoint.size``: every action of the checkpoint, the sidecar's rows plus
        the top-level file's lines (``checkpointMetadata``, the ``sidecar``, the non-file
        actions)."""
        return self.sidecar_num_actions + 2 + len(self.non_file_actions)


def v2_checkpoint(snapshot: Snapshot, now: int) -> V2Checkpoint:
    """The v2 checkpoint of ``snapshot`` written at ``now`` (CHECKPOINT.CONTENTS at that clock:
    expired tombstones and app transactions left out)."""
    actions = checkpoint_actions(snapshot, now)
    files = tuple(a for a in actions if isinstance(a, AddFile | RemoveFile))
    others = tuple(a for a in actions if not isinstance(a, AddFile | RemoveFile))
    return V2Checkpoint(snapshot.version, files, others)
