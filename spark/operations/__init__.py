"""The row-level commands of the Spark path, one module each: DELETE (``delete``), UPDATE
(``update``) and MERGE (the ``merge`` package), over what they share (``command``: the
transaction they start, what a condition reads, their one commit)."""

from .command import DmlResult
from .delete import delete
from .merge import MergeClause, merge
from .update import update

__all__ = ["DmlResult", "MergeClause", "delete", "merge", "update"]
