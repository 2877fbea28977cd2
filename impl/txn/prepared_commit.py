"""A commit ready for its attempts: the middle stage of the commit pipeline.

The pipeline is three values and the steps between them: the transaction's validated actions
(deltaspec.impl.txn.prepare) become a :class:`PreparedCommit`, the attempt loop writes it
(deltaspec.impl.txn.retries) and returns the committed version, and post-commit work runs on that
version (deltaspec.impl.txn.post_commit).

Each action's log line is encoded once, when the commit is prepared, and the bytes the reader
would see are checked then (TXN.WRITE_BOUNDARY). An attempt's bytes are those lines joined; only
the lines an attempt changes are encoded again: the commitInfo carrying the attempt's in-commit
timestamp (ICT.RETRY) and, for a commit that turns in-commit timestamps on, the metadata
recording the attempt's version (ICT.ENABLEMENT). A rebase that changes the actions
(ROWTRACKING.REBASE) encodes only the actions it changed, and is checked again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from .. import codec
from ..actions import Action, CommitInfo, Metadata
from . import timestamps as ict
from . import write_boundary
from .current_transaction import CurrentTransactionInfo

__all__ = ["PreparedCommit"]


@dataclass(frozen=True)
class PreparedCommit:
    """A transaction ready for its first attempt (the model's PreparedCommit): ``current``, what
    the conflict checks see of it, and its actions on ``table`` in file order (the commitInfo,
    fixed for every attempt, included), with ``lines``, each action's encoded line, and
    ``payload``, the first attempt's bytes; ``in_commit_timestamp``, the first attempt's (None
    without the feature, ICT.ASSIGN), and ``enables_in_commit_timestamps``, whether the commit
    turns the feature on (ICT.ENABLEMENT). Build it with :meth:`of`, which checks the write
    boundary."""

    table: str
    actions: tuple[Action, ...]
    lines: tuple[str, ...]
    payload: bytes
    current: CurrentTransactionInfo
    in_commit_timestamp: int | None = None
    enables_in_commit_timestamps: bool = False

    @classmethod
    def of(
        cls,
        actions: Sequence[Action],
        current: CurrentTransactionInfo,
        *,
        table: str,
        version: int,
        in_commit_timestamp: int | None = None,
        enables_in_commit_timestamps: bool = False,
    ) -> PreparedCommit:
        """The commit of ``actions`` (file order) aimed at ``version``; InvalidCommitActionError
        (and the write boundary's other errors) if the reader would refuse its bytes."""
        lines = tuple(write_boundary.encode_line(a, table=table, version=version) for a in actions)
        payload = _checked_bytes(lines, table=table, version=version)
        return cls(
            table,
            tuple(actions),
            lines,
            payload,
            current,
            in_commit_timestamp,
            enables_in_commit_timestamps,
        )

    @property
    def commit_info(self) -> CommitInfo | None:
        return next((a for a in self.actions if isinstance(a, CommitInfo)), None)

    def attempt_bytes(self, version: int, timestamp: int | None, enables: bool) -> bytes:
        """The bytes of an attempt at ``version``: the commitInfo carrying the in-commit
        ``timestamp`` (None: the table has none) and, when the commit ``enables`` in-commit
        timestamps, the metadata recording ``version`` and ``timestamp``."""
        info = self.commit_info
        if timestamp is None or (
            not enables and info is not None and info.get("inCommitTimestamp") == timestamp
        ):
            return self.payload
        lines = list(self.lines)
        for index, action in enumerate(self.actions):
            if isinstance(action, CommitInfo):
                lines[index] = codec.encode_action(ict.stamped(action, timestamp))
            elif enables and isinstance(action, Metadata):
                enabled = ict.with_enablement_info(action, version, timestamp)
                lines[index] = codec.encode_action(enabled)
        return codec.commit_bytes(lines)

    def rebased(self, current: CurrentTransactionInfo, version: int) -> PreparedCommit:
        """The commit as the conflict checks rebased it (``current``) for an attempt at
        ``version``: its actions (all but the commitInfo) replaced by ``current``'s, the
        commitInfo where it was; only the actions the rebase changed are encoded again, and a
        commit whose actions changed is checked again."""
        actions = current.actions
        if actions == self.current.actions:
            return dataclasses.replace(self, current=current)
        encoded = {id(a): line for a, line in zip(self.actions, self.lines, strict=True)}
        info = self.commit_info
        ordered: tuple[Action, ...] = tuple(actions)
        if info is not None:
            ordered = (info, *ordered) if self.actions[0] is info else (*ordered, info)
        lines = tuple(
            encoded.get(id(a)) or write_boundary.encode_line(a, table=self.table, version=version)
            for a in ordered
        )
        payload = _checked_bytes(lines, table=self.table, version=version)
        return dataclasses.replace(
            self, actions=ordered, lines=lines, payload=payload, current=current
        )


def _checked_bytes(lines: Sequence[str], *, table: str, version: int) -> bytes:
    """The commit's bytes of encoded ``lines``, read back as the reader would
    (TXN.WRITE_BOUNDARY)."""
    payload = write_boundary.commit_bytes(lines, table=table, version=version)
    write_boundary.check_commit(payload, table=table, version=version)
    return payload
