"""The names of the files in ``_delta_log``, made and parsed in this one place.

Commits ``<v>.json`` (LOG.COMMIT_FILE_NAME), checkpoints of every kind (CHECKPOINT.READ):
classic ``<v>.checkpoint.parquet``, multi-part ``<v>.checkpoint.<o>.<p>.parquet`` and v2
``<v>.checkpoint.<uuid>.json|parquet``, checksums ``<v>.crc``, Hadoop's hidden ``.<name>.crc``
companions, log compaction files ``<x>.<y>.compacted.json`` (LOG.COMPACTION), the store's
temporary files and the fixed names (``_last_checkpoint``,
``_sidecars``). Versions are 20 ASCII digits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

from deltaspec.rules import rule

__all__ = [
    "LAST_CHECKPOINT",
    "LOG_DIR",
    "SIDECARS_DIR",
    "CheckpointKind",
    "CheckpointName",
    "classic_checkpoint_name",
    "commit_name",
    "compaction_name",
    "hadoop_crc_of",
    "is_checkpoint_name",
    "is_checksum_name",
    "is_temp_name",
    "leading_version",
    "log_file_version",
    "parse_checkpoint_name",
    "parse_commit_name",
    "parse_compaction_name",
    "part_checkpoint_name",
    "sidecar_name",
]

LOG_DIR = "_delta_log"
"""The log directory beneath the table root."""

LAST_CHECKPOINT = "_last_checkpoint"
"""The only log file that may be overwritten (CHECKPOINT.LAST_CHECKPOINT)."""

SIDECARS_DIR = "_sidecars"
"""The subdirectory holding the sidecar files of v2 checkpoints."""

_VERSION_DIGITS = 20
_MAX_VERSION = 10**_VERSION_DIGITS - 1
# ASCII digits only: ``\d`` would also accept other Unicode digits, which are not log names.
_COMMIT = re.compile(r"[0-9]{20}\.json")
_CLASSIC = re.compile(r"([0-9]{20})\.checkpoint\.parquet")
_MULTI = re.compile(r"([0-9]{20})\.checkpoint\.([0-9]{10})\.([0-9]{10})\.parquet")
_UUID = re.compile(r"([0-9]{20})\.checkpoint\.([^./]+)\.(json|parquet)")
_CRC = re.compile(r"([0-9]{20})\.crc")
_COMPACTION = re.compile(r"([0-9]{20})\.([0-9]{20})\.compacted\.json")
_HADOOP_CRC = re.compile(r"\.(.+)\.crc")

CheckpointKind = Literal["classic", "multi-part", "v2"]


@rule("LOG.COMMIT_FILE_NAME")
def commit_name(version: int) -> str:
    """The file name of the commit of ``version`` in ``_delta_log`` (LOG.COMMIT_FILE_NAME).

    The decimal version left-padded with zeros to exactly 20 digits, then ``.json``:
    ``commit_name(42) == "00000000000000000042.json"``. Raises ValueError for a version that is
    negative, not an int, or too large for 20 digits.
    """
    if isinstance(version, bool) or not isinstance(version, int):
        raise ValueError(f"a version is an int, not {version!r}")
    if not 0 <= version <= _MAX_VERSION:
        raise ValueError(f"version {version} does not fit a commit file name")
    return f"{version:0{_VERSION_DIGITS}d}.json"


def parse_commit_name(name: str) -> int | None:
    """The version of a commit file name, or None if ``name`` is not one (LOG.COMMIT_FILE_NAME).

    A name is a commit only if the whole name is 20 ASCII digits followed by ``.json``: checkpoint,
    checksum, compaction and temporary files, ``_last_checkpoint`` and names with a directory part
    are not commits.
    """
    if _COMMIT.fullmatch(name) is None:
        return None
    return int(name[:_VERSION_DIGITS])


def leading_version(name: str) -> int | None:
    """The version a commit, checkpoint or checksum name starts with (20 digits and a dot)."""
    head, dot, _ = name.partition(".")
    return (
        int(head)
        if dot and len(head) == _VERSION_DIGITS and head.isascii() and head.isdigit()
        else None
    )


def classic_checkpoint_name(version: int) -> str:
    """``<v>.checkpoint.parquet`` with a 20-digit version (CHECKPOINT.READ)."""
    return f"{version:020d}.checkpoint.parquet"


def part_checkpoint_name(version: int, part: int, parts: int) -> str:
    """``<v>.checkpoint.<part>.<parts>.parquet``, part and parts padded to 10 digits."""
    return f"{version:020d}.checkpoint.{part:010d}.{parts:010d}.parquet"


@dataclass(frozen=True, slots=True)
class CheckpointName:
    """What a checkpoint file name says: its version and kind, and for a part of a multi-part
    checkpoint its number and the number of parts (1 of 1 otherwise)."""

    version: int
    kind: CheckpointKind
    part: int = 1
    parts: int = 1


def parse_checkpoint_name(name: str) -> CheckpointName | None:
    """The checkpoint ``name`` names (CHECKPOINT.READ), or None if it is not a checkpoint file."""
    if match := _CLASSIC.fullmatch(name):
        return CheckpointName(int(match[1]), "classic")
    if match := _MULTI.fullmatch(name):
        return CheckpointName(int(match[1]), "multi-part", int(match[2]), int(match[3]))
    if match := _UUID.fullmatch(name):
        return CheckpointName(int(match[1]), "v2")
    return None


def is_checkpoint_name(name: str) -> bool:
    """Whether ``name`` is a checkpoint file of any kind (classic, part, v2 top-level file)."""
    return parse_checkpoint_name(name) is not None


def log_file_version(name: str) -> int | None:
    """The version of a commit, checkpoint (any kind) or checksum file name, else None."""
    checkpoint = parse_checkpoint_name(name)
    if checkpoint is not None:
        return checkpoint.version
    if match := _CRC.fullmatch(name):
        return int(match[1])
    return parse_commit_name(name)


def compaction_name(first: int, last: int) -> str:
    """``<x>.<y>.compacted.json``: the log compaction file of commits ``x..y`` (LOG.COMPACTION)."""
    return f"{first:020d}.{last:020d}.compacted.json"


def parse_compaction_name(name: str) -> tuple[int, int] | None:
    """The commit range ``(x, y)`` a log compaction file name covers, or None if ``name`` is not
    one; ``x < y`` is required (LOG.COMPACTION)."""
    match = _COMPACTION.fullmatch(name)
    if match is None or int(match[1]) >= int(match[2]):
        return None
    return int(match[1]), int(match[2])


def hadoop_crc_of(name: str) -> str | None:
    """The file a hidden Hadoop checksum ``.<name>.crc`` belongs to, else None."""
    match = _HADOOP_CRC.fullmatch(name)
    return None if match is None else match[1]


def is_checksum_name(name: str) -> bool:
    """Whether ``name`` is a version checksum file ``<v>.crc`` (CHECKSUM.WRITE)."""
    return _CRC.fullmatch(name) is not None


def is_temp_name(name: str) -> bool:
    """Whether ``name`` (or its last component) is one of the store's temporary files.

    Temporary files are named ``.<final name>.<uuid4 hex>.tmp``; any name that starts with ``.``
    and ends with ``.tmp`` is treated as one and never listed (LOG.LISTING). Other hidden files,
    such as Hadoop's ``.00000000000000000000.json.crc``, are ordinary files and are listed.
    """
    base = name.rsplit("/", 1)[-1]
    return base.startswith(".") and base.endswith(".tmp")


def sidecar_name(path: str) -> str:
    """The log-relative name of a v2 checkpoint's sidecar from its (URI-encoded) ``path``."""
    decoded = unquote(path)
    return f"{SIDECARS_DIR}/{decoded.rsplit('/', 1)[-1]}"
