"""The ``_last_checkpoint`` hint: where the newest checkpoint is (CHECKPOINT.LAST_CHECKPOINT).

The hint only shortens the listing a load needs: a missing, corrupt, stale or dangling hint costs
a longer listing, never a wrong snapshot. It is the one log file that is overwritten, and only
after every file of the checkpoint it names exists.
"""

from __future__ import annotations

import json
from typing import Any

from deltaspec.rules import rule

from ..errors import DeltaError
from .names import LAST_CHECKPOINT
from .store import LogStore

__all__ = ["encode_last_checkpoint", "read_last_checkpoint", "write_last_checkpoint"]


@rule("CHECKPOINT.LAST_CHECKPOINT")
def read_last_checkpoint(store: LogStore) -> dict[str, Any] | None:
    """The parsed ``_last_checkpoint`` hint, or None if missing or unusable.

    delta-spark retries an unreadable hint three times a second apart before ignoring it; a
    local store gives the same answer every time, so it is ignored at once
    (CHECKPOINT.LAST_CHECKPOINT).
    """
    try:
        data = store.read(LAST_CHECKPOINT)
        parsed = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError, DeltaError):
        # an unsafe (symlinked), non-regular, oversized or unreadable hint is not used:
        # listing is the fallback (PATH.REGULAR_FILES)
        return None
    if not isinstance(parsed, dict):
        return None
    version = parsed.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        return None
    return parsed


def encode_last_checkpoint(
    version: int,
    size: int,
    parts: int | None,
    size_in_bytes: int,
    num_of_add_files: int,
    *,
    v2_checkpoint: dict[str, Any] | None = None,
) -> str:
    """``_last_checkpoint``: version, size, parts (multi-part only), sizeInBytes,
    numOfAddFiles and, for a v2 checkpoint, ``v2Checkpoint`` (its top-level file, non-file
    actions and sidecars), in that order (CHECKPOINT.LAST_CHECKPOINT). No ``checksum`` is
    written: it is optional, and a reader only checks one that is present."""
    content: dict[str, Any] = {"version": version, "size": size}
    if parts is not None:
        content["parts"] = parts
    content["sizeInBytes"] = size_in_bytes
    content["numOfAddFiles"] = num_of_add_files
    if v2_checkpoint is not None:
        content["v2Checkpoint"] = v2_checkpoint
    return json.dumps(content, separators=(",", ":"))


def write_last_checkpoint(store: LogStore, content: str) -> None:
    """Overwrite the hint with ``content`` (:func:`encode_last_checkpoint`); called only once
    every file of the checkpoint exists."""
    store.write_overwrite(LAST_CHECKPOINT, content.encode("utf-8"))
