"""Snapshots as a fold over commits (SNAPSHOT.*)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from urllib.parse import unquote

from deltaspec.rules import rule

from .actions import (
    Action,
    AddFile,
    Commit,
    DomainMetadata,
    FileKey,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)


@dataclass(frozen=True)
class Snapshot:
    """The table state at ``version`` (-1: no table yet, LOG.NEW_TABLE)."""

    version: int = -1
    protocol: Protocol | None = None
    metadata: Metadata | None = None
    files: Mapping[FileKey, AddFile] = field(default_factory=lambda: MappingProxyType({}))
    tombstones: Mapping[FileKey, RemoveFile] = field(default_factory=lambda: MappingProxyType({}))
    app_txns: Mapping[str, SetTransaction] = field(default_factory=lambda: MappingProxyType({}))
    domains: Mapping[str, DomainMetadata] = field(default_factory=lambda: MappingProxyType({}))
    timestamp: int = 0
    in_commit_timestamp: int | None = None
    """The commitInfo's ``inCommitTimestamp`` of this version, if any (ICT.ASSIGN)."""

    def live_paths(self) -> frozenset[str]:
        return frozenset(path for path, _ in self.files)

    def file_by_path(self, path: str) -> AddFile | None:
        return next((f for (p, _), f in self.files.items() if p == path), None)

    def app_txn_version(self, app_id: str) -> int:
        """SNAPSHOT.APP_TXN: the latest version for ``app_id``, or -1."""
        txn = self.app_txns.get(app_id)
        return -1 if txn is None else txn.version

    @property
    def partition_columns(self) -> tuple[str, ...]:
        return () if self.metadata is None else self.metadata.partition_columns


@rule("SNAPSHOT.CANONICAL_PATH")
def canonical_path(path: str) -> str:
    """SNAPSHOT.CANONICAL_PATH: a relative path without its ``.`` and empty segments; an
    absolute path or a URI (``scheme:``) as written."""
    head = path.split("/", 1)[0]
    if path.startswith("/") or (":" in head and head[0].isalpha()):
        return path
    kept = [segment for segment in path.split("/") if segment not in ("", ".")]
    return "/".join(kept) if kept else path


def data_file_path(path: str) -> str:
    """The file an ``add.path`` names, relative to the table root: the URI reference
    percent-decoded (UTF-8), as ``java.net.URI.getPath`` reads it (ACTION.ADD); ``+`` stays."""
    return unquote(canonical_path(path), errors="replace")


@rule("SNAPSHOT.RECONCILE")
def reconcile(
    files: Mapping[FileKey, AddFile],
    tombstones: Mapping[FileKey, RemoveFile],
    actions: Iterable[Action],
) -> tuple[Mapping[FileKey, AddFile], Mapping[FileKey, RemoveFile]]:
    """SNAPSHOT.RECONCILE: the live files and tombstones after a commit's file actions, in file
    order. Files reconcile by (canonical path, deletion-vector id) (SNAPSHOT.FILE_KEY,
    SNAPSHOT.CANONICAL_PATH): an add makes the key live and clears its tombstone, a remove does
    the reverse (SNAPSHOT.TOMBSTONES)."""
    files, tombstones = dict(files), dict(tombstones)
    for action in actions:
        match action:
            case AddFile():
                action = replace(action, path=canonical_path(action.path))
                files[action.key] = action
                tombstones.pop(action.key, None)
            case RemoveFile():
                action = replace(action, path=canonical_path(action.path))
                files.pop(action.key, None)
                tombstones[action.key] = action
    return MappingProxyType(files), MappingProxyType(tombstones)


@rule("SNAPSHOT.PROTOCOL_METADATA")
def require_protocol_and_metadata(snapshot: Snapshot) -> tuple[Protocol, Metadata]:
    """SNAPSHOT.PROTOCOL_METADATA: the snapshot's protocol and metadata, the latest of each
    (``apply_commit``); a snapshot without both is corrupt (ValueError). Whether the reader
    supports the protocol is ``features.unreadable``."""
    if snapshot.protocol is None or snapshot.metadata is None:
        raise ValueError(f"version {snapshot.version} has no protocol or metadata")
    return snapshot.protocol, snapshot.metadata


@rule("SNAPSHOT.APP_TXN")
def apply_app_txn(
    app_txns: Mapping[str, SetTransaction], txn: SetTransaction
) -> Mapping[str, SetTransaction]:
    """SNAPSHOT.APP_TXN: the latest ``txn`` per app id wins, whatever its version."""
    return MappingProxyType({**app_txns, txn.app_id: txn})


@rule("SNAPSHOT.DOMAIN_METADATA")
def apply_domain_metadata(
    domains: Mapping[str, DomainMetadata], action: DomainMetadata
) -> Mapping[str, DomainMetadata]:
    """SNAPSHOT.DOMAIN_METADATA: the latest domain metadata per domain wins; a removed one
    deletes its domain."""
    if action.removed:
        return MappingProxyType({d: m for d, m in domains.items() if d != action.domain})
    return MappingProxyType({**domains, action.domain: action})


def apply_commit(snapshot: Snapshot, commit: Commit) -> Snapshot:
    """SNAPSHOT.REPLAY: apply one commit's actions in file order: its file actions reconcile
    (:func:`reconcile`), the latest protocol and metadata win (SNAPSHOT.PROTOCOL_METADATA), as
    do the latest txn per app id (:func:`apply_app_txn`) and the latest domain metadata per
    domain (:func:`apply_domain_metadata`)."""
    files, tombstones = reconcile(snapshot.files, snapshot.tombstones, commit.actions)
    app_txns, domains = snapshot.app_txns, snapshot.domains
    protocol, metadata = snapshot.protocol, snapshot.metadata
    for action in commit.actions:
        match action:
            case Protocol():
                protocol = action
            case Metadata():
                metadata = action
            case SetTransaction():
                app_txns = apply_app_txn(app_txns, action)
            case DomainMetadata():
                domains = apply_domain_metadata(domains, action)
    return Snapshot(
        version=commit.version,
        protocol=protocol,
        metadata=metadata,
        files=files,
        tombstones=tombstones,
        app_txns=app_txns,
        domains=domains,
        timestamp=commit.timestamp,
        in_commit_timestamp=commit.commit_info.in_commit_timestamp if commit.commit_info else None,
    )


@rule("SNAPSHOT.REPLAY")
def replay(commits: Iterable[Commit], start: Snapshot | None = None) -> Snapshot:
    """SNAPSHOT.REPLAY: fold ``apply_commit`` over commits in version order."""
    snapshot = start or Snapshot()
    for commit in commits:
        snapshot = apply_commit(snapshot, commit)
    return snapshot
