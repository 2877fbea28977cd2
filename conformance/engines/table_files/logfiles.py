"""The ``clean_up_log`` step (scenarios.md) on a table's log, for adapters whose engine keeps its
log in ``<root>/_delta_log`` on disk or in a log store: the step is what log cleanup leaves, not
the engine's cleanup."""

from __future__ import annotations

import json
from pathlib import Path

from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.store import LogStore

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
