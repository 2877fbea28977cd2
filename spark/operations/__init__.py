"""The Spark path's commands over a table, one module each (delta-rs's ``operations``): the
row-level DELETE (``delete``), UPDATE (``update``) and MERGE (the ``merge`` package) over what
they share (``command``: the transaction they start, what a condition reads, their one
commit); OPTIMIZE (``compaction``), RESTORE (``restore``) and VACUUM as delta-spark records it
(``vacuum``). DataFrame writes, which they all use, are the Spark path's ``write``."""

from .command import DmlResult
from .delete import delete
from .merge import MergeClause, merge
from .update import update

__all__ = ["DmlResult", "MergeClause", "delete", "merge", "update"]
