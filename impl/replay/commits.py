"""Replaying commits onto a state (SNAPSHOT.REPLAY, SNAPSHOT.RECONCILE).

The checkpoint's rows stay Arrow; only the file keys the later commits touch are looked at one
by one. The last action per file key wins: an add clears the key's tombstone, a remove drops the
live entry and becomes the tombstone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pyarrow as pa

from deltaspec.rules import rule

from .. import codec
from ..actions import Action, AddFile, FileKey, Metadata, Protocol, RemoveFile
from ..errors import MissingProtocolOrMetadataError, MissingVersionsError
from ..log.listing import CheckpointFiles
from ..log.names import commit_name
from ..log.store import LogStore
from ..table.features import check_reader_protocol
from .columnar import ColumnarCommit, decode_columnar
from .file_checks import check_commit_actions
from .keys import drop_keys
from .layouts import adds_to_table, removes_to_table
from .state import ReplayState

__all__ = [
    "Commit",
    "ReplayActions",
    "read_checked_commit",
    "read_replay_commit",
    "reconcile",
    "require_protocol_and_metadata",
]

ReplayActions = list[Action] | ColumnarCommit
"""A commit's checked actions in file order: a list, or with its add lines as one Arrow table."""

Commit = tuple[int, str, ReplayActions]
"""A commit to replay: its version, its file name and its checked actions in file order."""


def _read(store: LogStore, version: int) -> bytes:
    try:
        return store.read(commit_name(version))
    except FileNotFoundError:
        raise MissingVersionsError(
            f"commit {version} disappeared while reading the log",
            table=store.table_path,
            version=version,
        ) from None


def _strict(store: LogStore, version: int, data: bytes) -> list[Action]:
    name = commit_name(version)
    actions = codec.decode_commit(data, table=store.table_path, version=version, file=name)
    check_commit_actions(actions, store.table_path, version, name)
    return actions


def read_checked_commit(store: LogStore, version: int) -> list[Action]:
    """The decoded actions of commit ``version`` with every path checked and made canonical
    (PATH.DATA_FILE); MissingVersionsError if the listed commit is gone."""
    return _strict(store, version, _read(store, version))


def read_replay_commit(store: LogStore, version: int) -> ReplayActions:
    """:func:`read_checked_commit` for replay: a bulk commit's add lines as one Arrow table where
    :func:`~deltaspec.impl.replay.columnar.decode_columnar` can prove that reading equal to the
    strict one, else the strict reading (with its errors)."""
    data = _read(store, version)
    fast = decode_columnar(data, table=store.table_path, version=version, file=commit_name(version))
    return _strict(store, version, data) if fast is None else fast


@rule("SNAPSHOT.RECONCILE")
def reconcile(state: ReplayState, commits: Iterable[Commit]) -> list[Action] | None:
    """Apply ``commits`` in order to ``state``; the actions of the last one (None if none;
    without its adds if it was decoded columnar: what a caller looks for is its commitInfo).

    SNAPSHOT.RECONCILE: the last action per file key wins; an add clears the key's
    tombstone, a remove drops the live entry and becomes the tombstone. The checkpoint's
    rows are filtered by the touched keys only; the adds of columnar commits
    (:class:`ColumnarCommit`) stay Arrow rows, taken in the order the keys were last added.
    """
    adds: dict[FileKey, AddFile | tuple[int, int]] = {}
    removes: dict[FileKey, RemoveFile] = {}
    last_actions: list[Action] | None = None
    columnar: list[ColumnarCommit] = []
    for version, name, decoded in commits:
        if isinstance(decoded, ColumnarCommit):
            actions: Sequence[Action | int] = decoded.entries
            source, paths = len(columnar), decoded.paths
            columnar.append(decoded)
        else:
            actions = decoded
        for action in actions:
            key: FileKey
            if isinstance(action, int):
                key = (paths[action], None)
                removes.pop(key, None)
                adds.pop(key, None)
                adds[key] = (source, action)
            elif isinstance(action, AddFile):
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
        last_actions = decoded.actions if isinstance(decoded, ColumnarCommit) else decoded
    touched = set(adds) | set(removes)
    state.files = drop_keys(state.files, touched)
    state.tombstones = drop_keys(state.tombstones, touched)
    if adds:
        new_files = _added_rows(list(adds.values()), columnar)
        state.files = pa.concat_tables([state.files, new_files], promote_options="default")
    if removes:
        state.tombstones = pa.concat_tables(
            [state.tombstones, removes_to_table(list(removes.values()))]
        )
    return last_actions


def _added_rows(added: list[AddFile | tuple[int, int]], columnar: list[ColumnarCommit]) -> pa.Table:
    """The live files the replay added, in ``added``'s order: decoded adds, or rows of the
    columnar commits' tables as ``(commit, row)``."""
    if not columnar:
        return adds_to_table(added)  # type: ignore[arg-type]
    decoded = [add for add in added if isinstance(add, AddFile)]
    starts = [len(decoded)]
    for commit in columnar[:-1]:
        starts.append(starts[-1] + commit.adds.num_rows)
    index: list[int] = []
    position = 0
    for add in added:
        if isinstance(add, AddFile):
            index.append(position)
            position += 1
        else:
            index.append(starts[add[0]] + add[1])
    tables = [adds_to_table(decoded), *(commit.adds for commit in columnar)]
    if index == list(range(position + sum(commit.adds.num_rows for commit in columnar))):
        return pa.concat_tables(tables)  # every row in place: no copy (the usual bulk append)
    return pa.concat_tables(tables).take(pa.array(index, pa.int64()))


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
