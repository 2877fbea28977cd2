"""The ``clean_up_log`` step (scenarios.md) on a table on disk, for adapters whose engine keeps
its log in ``<root>/_delta_log``: the step is what log cleanup leaves, not the engine's cleanup."""

from __future__ import annotations

import json
from pathlib import Path

from ..harness.adapter import Json


def delete_log_below(root: Path, version: int) -> list[str]:
    """Delete every commit, checkpoint and checksum file of a version below ``version`` (names
    starting with a 20-digit version); ``_last_checkpoint`` and later files stay. Returns the
    names deleted. ``version`` must have a checkpoint: a log cut anywhere else is not one that
    RETENTION.LOG leaves."""
    log = root / "_delta_log"
    names = sorted(p.name for p in log.iterdir())
    if not any(n[:20].isdigit() and int(n[:20]) == version and ".checkpoint" in n for n in names):
        raise ValueError(f"clean_up_log {version}: no checkpoint of version {version}")
    versioned = {n: n.removeprefix(".")[:20] for n in names}  # with Hadoop's .<file>.crc sidecars
    deleted = [n for n, v in versioned.items() if v.isdigit() and int(v) < version]
    for name in deleted:
        (log / name).unlink()
    return deleted


def read_checksum_file(root: Path, version: int) -> Json | None:
    """The parsed ``_delta_log/<version>.crc`` (20-digit version), or None when there is none
    (the ``checksum`` of an adapter declaring ``checksums``, CHECKSUM.WRITE)."""
    path = root / "_delta_log" / f"{version:020d}.crc"
    if not path.is_file():
        return None
    parsed: Json = json.loads(path.read_text(encoding="utf-8"))
    return parsed
