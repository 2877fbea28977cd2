"""Replaying commits onto a state (SNAPSHOT.REPLAY, SNAPSHOT.RECONCILE).

The checkpoint's rows stay Arrow; only the file keys the later commits touch are looked at one
by one. The last action per file key wins: an add clears the key's tombstone, a remove drops the
live entry and becomes the tombstone.

This module never imports ``deltaspec.model``.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from deltaspec.impl import codec
from deltaspec.impl.actions import Action, AddFile, FileKey, Metadata, Protocol, RemoveFile
from deltaspec.impl.errors import MissingProtocolOrMetadataError, MissingVersionsError
from deltaspec.impl.log.listing import CheckpointFiles
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.log.store import LogStore
from deltaspec.impl.replay.file_checks import check_commit_actions
from deltaspec.impl.replay.keys import drop_keys
from deltaspec.impl.replay.layouts import adds_to_table, removes_to_table
from deltaspec.impl.replay.state import ReplayState
from deltaspec.impl.table.features import check_reader_protocol
from deltaspec.rules import rule

__all__ = ["Commit", "read_checked_commit", "reconcile", "require_protocol_and_metadata"]

Commit = tuple[int, str, list[Action]]
"""A commit to replay: its version, its file name and its checked actions in file order."""


def read_checked_commit(store: LogStore, version: int) -> list[Action]:
    """The decoded actions of commit ``version`` with every path checked and made canonical
    (PATH.DATA_FILE); MissingVersionsError if the listed commit is gone."""
    name = commit_name(version)
    try:
        data = store.read(name)
    except FileNotFoundError:
        raise MissingVersionsError(
            f"commit {version} disappeared while reading the log",
            table=store.table_path,
            version=version,
        ) from None
    actions = codec.decode_commit(data, table=store.table_path, version=version, file=name)
    check_commit_actions(actions, store.table_path, version, name)
    return actions


@rule("SNAPSHOT.RECONCILE")
def reconcile(state: ReplayState, commits: Iterable[Commit]) -> list[Action] | None:
    """Apply ``commits`` in order to ``state``; the actions of the last one (None if none).

    SNAPSHOT.RECONCILE: the last action per file key wins; an add clears the key's
    tombstone, a remove drops the live entry and becomes the tombstone. The checkpoint's
    rows are filtered by the touched keys only.
    """
    adds: dict[FileKey, AddFile] = {}
    removes: dict[FileKey, RemoveFile] = {}
    last_actions: list[Action] | None = None
    for version, name, actions in commits:
        for action in actions:
            if isinstance(action, AddFile):
                key = action.key
                removes.pop(key, None)
                adds.pop(key, None)
                adds[key] = action
            elif isinstance(action, RemoveFile):
                key = action.key
                adds.pop(key, None)
                removes.pop(key, None)
                removes[key] = action
            else:
                if isinstance(action, Protocol):
                    state.protocol_origin = (version, name)
                state.apply_non_file(action)
        last_actions = actions
    touched = set(adds) | set(removes)
    state.files = drop_keys(state.files, touched)
    state.tombstones = drop_keys(state.tombstones, touched)
    if adds:
        new_files = adds_to_table(list(adds.values()))
        state.files = pa.concat_tables([state.files, new_files], promote_options="default")
    if removes:
        state.tombstones = pa.concat_tables(
            [state.tombstones, removes_to_table(list(removes.values()))]
        )
    return last_actions


@rule("SNAPSHOT.PROTOCOL_METADATA")
def require_protocol_and_metadata(
    state: ReplayState, table: str, target: int, cp: CheckpointFiles | None
) -> tuple[Protocol, Metadata]:
    """The replayed protocol and metadata: both must exist (MissingProtocolOrMetadataError) and
    the protocol must be one this reader supports (UnsupportedProtocolError)."""
    if state.protocol is None or state.metadata is None:
        missing = "protocol" if state.protocol is None else "metadata"
        raise MissingProtocolOrMetadataError(
            f"cannot recover the table state: no {missing} action"
            + ("" if cp is None else f" (replay started at checkpoint {cp.version})"),
            table=table,
            version=target,
            file=commit_name(0) if cp is None else cp.files[0].name,
        )
    origin_version, origin_file = state.protocol_origin
    check_reader_protocol(
        state.protocol,
        table=table,
        version=target if origin_version is None else origin_version,
        file=origin_file,
    )
    return state.protocol, state.metadata
