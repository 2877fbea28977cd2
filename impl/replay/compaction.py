"""Replaying through log compaction files (LOG.COMPACTION).

A ``<x>.<y>.compacted.json`` file holds the reconciled actions of commits ``x..y``; where the
listing's :meth:`~deltaspec.impl.log.listing.LogListing.replay_units` picks one, its actions
are replayed in place of those commits. A compaction file that is picked but cannot be read is
a typed error naming the table, the file and its first version, never a partial state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .. import codec
from ..actions import Action
from ..errors import CorruptLogError
from ..log.listing import LogListing
from ..log.names import commit_name, compaction_name
from ..log.store import LogStore
from .commits import Commit, ReplayActions
from .file_checks import check_commit_actions
from .read_ahead import READ_AHEAD_BYTES, ReadAhead

__all__ = ["read_compaction", "replay_commits"]


def read_compaction(store: LogStore, first: int, last: int) -> list[Action]:
    """The checked actions of the compaction file of commits ``first..last``; CorruptLogError
    (naming the table, the file and ``first``) if it is gone or malformed."""
    name = compaction_name(first, last)
    try:
        data = store.read(name)
    except FileNotFoundError:
        raise CorruptLogError(
            "the log compaction file disappeared while reading the log",
            table=store.table_path,
            version=first,
            file=name,
        ) from None
    actions = codec.decode_commit(data, table=store.table_path, version=first, file=name)
    check_commit_actions(actions, store.table_path, first, name)
    return actions


def replay_commits(
    store: LogStore,
    listing: LogListing,
    start: int,
    target: int,
    read_commit: Callable[[int], ReplayActions],
) -> Iterator[Commit]:
    """The commits ``start + 1 .. target`` to replay, a compaction file standing for its range
    where the listing allows (LOG.COMPACTION). When a compaction file ends at ``target``, the
    commit ``target`` follows it again — replaying a commit twice leaves the same state
    (SNAPSHOT.RECONCILE: the last action per key wins) — so that the snapshot's last actions
    are that commit's own (its commitInfo, for in-commit timestamps)."""
    units = listing.replay_units(start, target)
    ends_compacted = bool(units) and units[-1][0] != units[-1][1]
    singles = [first for first, last in units if first == last]
    singles += [target] if ends_compacted else []
    large = [v for v in singles if (i := listing.commits.get(v)) and i.size >= READ_AHEAD_BYTES]
    read_commit = ahead = ReadAhead(read_commit, large)
    try:
        for first, last in units:
            if first == last:
                yield first, commit_name(first), read_commit(first)
            else:
                yield last, compaction_name(first, last), read_compaction(store, first, last)
        if ends_compacted:
            yield target, commit_name(target), read_commit(target)
    finally:
        ahead.close()
