"""The ``clean_up_log`` step (scenarios.md) on a table's log, for adapters whose engine keeps its
log in ``<root>/_delta_log`` on disk or in a log store: the step is what log cleanup leaves, not
the engine's cleanup."""

from __future__ import annotations

import json
from pathlib import Path

from ....impl.log.local_store import LocalLogStore
from ....impl.log.names import is_checkpoint_name, log_file_version, parse_commit_name
from ....impl.log.store import LogStore
from ....impl.snapshot.delta_log import DeltaLog
from ...harness.adapter import Json


def delete_log_below(log: Path | LogStore, version: int) -> list[str]:
    """Delete every commit, checkpoint and checksum file of a version below ``version`` (names
    starting with a 20-digit version) from the log of the table at ``log`` (a table root on
    disk, or its store); ``_last_checkpoint`` and later files stay. Returns the names deleted.
    ``version`` must have a checkpoint: a log cut anywhere else is not one that RETENTION.LOG
    leaves."""
    store = log if isinstance(log, LogStore) else LocalLogStore(log)
    names = store.list_names()
    if not any(n[:20].isdigit() and int(n[:20]) == version and ".checkpoint" in n for n in names):
        raise ValueError(f"clean_up_log {version}: no checkpoint of version {version}")
    versioned = {n: n.removeprefix(".")[:20] for n in names}  # with Hadoop's .<file>.crc sidecars
    deleted = [n for n, v in versioned.items() if v.isdigit() and int(v) < version]
    for name in deleted:
        store.delete(name)
    return deleted


def read_checksum_file(log: Path | LogStore, version: int) -> Json | None:
    """The parsed ``_delta_log/<version>.crc`` (20-digit version) of the table at ``log`` (a
    table root on disk, or its store), or None when there is none (the ``checksum`` of an
    adapter declaring ``checksums``, CHECKSUM.WRITE)."""
    store = log if isinstance(log, LogStore) else LocalLogStore(log)
    try:
        text = store.read(f"{version:020d}.crc")
    except FileNotFoundError:
        return None
    parsed: Json = json.loads(text)
    return parsed


def checkpoint_versions(names: list[str]) -> tuple[int, ...]:
    versions = {log_file_version(n) for n in names if is_checkpoint_name(n)}
    return tuple(sorted(v for v in versions if v is not None))


def verify_stored_log(store: LogStore, log: DeltaLog) -> list[str]:
    """LOG.CONTIGUITY and the checkpoint pointers of the stored log, read from one listing
    (what the snapshot holds is compared with the model separately)."""
    names = [info.name for info in store.list_from()]
    versions = sorted(v for n in names if (v := parse_commit_name(n)) is not None)
    checkpoints = checkpoint_versions(names)
    latest = versions[-1] if versions else -1
    problems = []
    if versions and versions != list(range(versions[0], latest + 1)):
        problems.append(f"commit versions are not contiguous: {versions}")
    if any(v > latest for v in checkpoints):
        problems.append(f"a checkpoint is newer than the latest commit: {checkpoints}")
    last = log.read_last_checkpoint()
    if last is not None and last.get("version") not in checkpoints:
        problems.append(f"_last_checkpoint names version {last.get('version')}, not written")
    return problems
