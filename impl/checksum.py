"""Version checksum files ``<v>.crc`` (spec/timestamps.md: CHECKSUM.WRITE, CHECKSUM.VERIFY).

The writer writes one after each commit from the snapshot at that version; a reader verifies
one on request. Neither ever fails a commit or a read on its own. When the writer computed the
checksum of the previous version itself (kept in memory per :class:`DeltaLog`, never read back
from a ``.crc`` file, so a corrupt file is not carried forward), the file size histogram is
updated from it with the rows of the files the commit touched, as delta-spark updates its
checksums incrementally; every other field comes from the snapshot, and the result is the one
computed in full.
"""

from __future__ import annotations

import bisect
import itertools
import json
import logging
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from deltaspec.checksum_bins import bin_boundaries
from deltaspec.rules import rule

from . import codec
from .actions import Action, AddFile, CommitInfo, RemoveFile
from .errors import DeltaError
from .replay.commits import read_checked_commit
from .snapshot.delta_log import DeltaLog
from .snapshot.state import Snapshot

LOG = logging.getLogger(__name__)

BIN_BOUNDARIES: tuple[int, ...] = bin_boundaries()
"""The ``fileSizeHistogram.sortedBinBoundaries`` delta-spark writes (bytes, 95 bins), from
spec/data/file_size_histogram.json, which the model reads too."""

COMPARED = (
    "tableSizeBytes",
    "numFiles",
    "numMetadata",
    "numProtocol",
    "metadata",
    "protocol",
    "setTransactions",
    "domainMetadata",
)
"""The fields CHECKSUM.VERIFY compares (the latter two when the checksum has them)."""


class ChecksumMismatchError(DeltaError):
    """CHECKSUM.VERIFY: ``<v>.crc`` disagrees with the replayed state."""

    error_class = "DELTA_TXN_LOG_FAILED_INTEGRITY"
    kind = "TXN_LOG_FAILED_INTEGRITY"


def checksum_name(version: int) -> str:
    return f"{version:020d}.crc"


def _json_of(action: Action) -> Any:
    line = codec.encode_commit([action]).decode("utf-8")
    return next(iter(json.loads(line).values()))


def file_size_histogram(sizes: Sequence[int] | pa.Array | pa.ChunkedArray) -> dict[str, list[int]]:
    """Live file counts and bytes per size bin (``fileSizeHistogram``): a file is in the last
    bin whose lower boundary it reaches; a negative size is a ValueError."""
    if isinstance(sizes, pa.Array | pa.ChunkedArray):
        column = sizes.cast(pa.int64())
        ordered = column.take(pc.sort_indices(column)).to_pylist()
    else:
        ordered = sorted(int(size) for size in sizes)
    if ordered and ordered[0] < 0:
        raise ValueError(f"a file size is negative: {ordered[0]}")
    prefix = [0, *itertools.accumulate(ordered)]
    starts = [bisect.bisect_left(ordered, low) for low in BIN_BOUNDARIES] + [len(ordered)]
    return {
        "sortedBinBoundaries": list(BIN_BOUNDARIES),
        "fileCounts": [end - start for start, end in itertools.pairwise(starts)],
        "totalBytes": [prefix[end] - prefix[start] for start, end in itertools.pairwise(starts)],
    }


def updated_histogram(
    histogram: dict[str, list[int]], gone: Sequence[int], new: Sequence[int]
) -> dict[str, list[int]]:
    """``histogram`` (:func:`file_size_histogram`) without the files of sizes ``gone`` and with
    those of sizes ``new``."""
    counts = list(histogram["fileCounts"])
    totals = list(histogram["totalBytes"])
    for sizes, sign in ((gone, -1), (new, 1)):
        for size in sizes:
            if size < 0:
                raise ValueError(f"a file size is negative: {size}")
            index = bisect.bisect_right(BIN_BOUNDARIES, size) - 1
            counts[index] += sign
            totals[index] += sign * size
    return {
        "sortedBinBoundaries": list(BIN_BOUNDARIES),
        "fileCounts": counts,
        "totalBytes": totals,
    }


@dataclass(frozen=True)
class _Previous:
    """The checksum a writer computed for ``snapshot`` (its version's)."""

    snapshot: Snapshot
    checksum: dict[str, Any]


_PREVIOUS: weakref.WeakKeyDictionary[DeltaLog, _Previous] = weakref.WeakKeyDictionary()
_PREVIOUS_LOCK = threading.Lock()


def _touched_sizes(files: pa.Table, paths: pa.Array) -> list[int]:
    """The sizes of the rows of ``files`` whose path is in ``paths``."""
    hit = pc.is_in(files.column("path"), value_set=paths)
    return [int(size) for size in files.column("size").filter(hit).to_pylist()]


def _histogram(
    snapshot: Snapshot, previous: _Previous | None, actions: Sequence[Action] | None
) -> dict[str, list[int]]:
    """The file size histogram of ``snapshot``: updated from ``previous`` (the checksum of the
    version before, with its snapshot) by the rows of the files ``actions`` (the commit between
    them) touched, or else computed in full."""
    if previous is None or actions is None or previous.snapshot.version != snapshot.version - 1:
        return file_size_histogram(snapshot.live_files.column("size"))
    touched = {a.path for a in actions if isinstance(a, AddFile | RemoveFile)}
    paths = pa.array(sorted(touched), type=pa.string())
    updated = updated_histogram(
        previous.checksum["fileSizeHistogram"],
        _touched_sizes(previous.snapshot.live_files, paths),
        _touched_sizes(snapshot.live_files, paths),
    )
    sizes = snapshot.live_files.column("size")
    total = int(pc.sum(sizes).as_py() or 0) if len(sizes) else 0
    if sum(updated["fileCounts"]) != len(sizes) or sum(updated["totalBytes"]) != total:
        return file_size_histogram(sizes)  # not the same table's history: count in full
    return updated


@rule("CHECKSUM.WRITE", "CHECKSUM.VERIFY")
def version_checksum(
    snapshot: Snapshot,
    txn_id: str | None = None,
    histogram: dict[str, list[int]] | None = None,
) -> dict[str, Any]:
    """CHECKSUM.WRITE: the checksum of ``snapshot`` in delta-spark 4.4.0's field order (no
    ``allFiles``, which delta-spark writes only for small tables and readers may ignore);
    ``histogram`` is its file size histogram when the caller has it (computed otherwise)."""
    sizes = snapshot.live_files.column("size")
    checksum: dict[str, Any] = {} if txn_id is None else {"txnId": txn_id}
    total = pc.sum(sizes).as_py() if len(sizes) else 0
    checksum |= {
        "tableSizeBytes": int(total or 0),
        "numFiles": len(sizes),
        "numMetadata": 1,
        "numProtocol": 1,
    }
    if snapshot.properties.in_commit_timestamps:
        checksum["inCommitTimestampOpt"] = snapshot.timestamp
    checksum |= {
        "setTransactions": [_json_of(t) for _, t in sorted(snapshot.all_app_transactions.items())],
        "domainMetadata": [_json_of(d) for _, d in sorted(snapshot.domains.items())],
        "metadata": _json_of(snapshot.metadata),
        "protocol": _json_of(snapshot.protocol),
        "fileSizeHistogram": file_size_histogram(sizes) if histogram is None else histogram,
    }
    return checksum


def write_checksum(log: DeltaLog, version: int) -> None:
    """CHECKSUM.WRITE: write ``<version>.crc`` after the commit landed; an existing file is
    left alone. Raises on failure: the caller (the post-commit step) logs and goes on."""
    actions = read_checked_commit(log.store, version)
    info = next((a for a in actions if isinstance(a, CommitInfo)), None)
    txn_id = info.get("txnId") if info is not None else None
    snapshot = log.snapshot(version)
    with _PREVIOUS_LOCK:
        previous = _PREVIOUS.get(log)
    histogram = _histogram(snapshot, previous, actions)
    checksum = version_checksum(snapshot, txn_id if isinstance(txn_id, str) else None, histogram)
    with _PREVIOUS_LOCK:
        _PREVIOUS[log] = _Previous(snapshot, checksum)
    data = json.dumps(checksum, separators=(",", ":")).encode("utf-8")
    if not log.store.exists(checksum_name(version)):
        log.store.write_new(checksum_name(version), data)


def read_checksum(log: DeltaLog, version: int) -> dict[str, Any] | None:
    """The parsed ``<version>.crc``, or None when it is absent or unreadable."""
    try:
        parsed = json.loads(log.store.read(checksum_name(version)))
    except (OSError, ValueError):
        return None
    return parsed if isinstance(parsed, dict) else None


def checksum_mismatches(stored: dict[str, Any], snapshot: Snapshot) -> list[str]:
    """The CHECKSUM.VERIFY fields on which ``stored`` disagrees with ``snapshot``."""
    computed = version_checksum(snapshot)
    return [
        key
        for key in COMPARED
        if key in stored
        and (
            _normalised(stored[key], key) != _normalised(computed[key], key)
            if key in ("metadata", "protocol")
            else stored[key] != computed[key]
        )
    ]


def _normalised(value: Any, key: str) -> Any:
    """Protocol feature lists compare as sets; absent optional metadata fields as absent."""
    if not isinstance(value, dict):
        return value
    out = {k: v for k, v in value.items() if v is not None}
    if key == "protocol":
        for features in ("readerFeatures", "writerFeatures"):
            if features in out:
                out[features] = sorted(out[features])
    return out


def verify_checksum(log: DeltaLog, version: int | None = None) -> bool:
    """CHECKSUM.VERIFY: check ``<version>.crc`` (default: the latest) against the replayed
    state. False when there is no readable checksum; ChecksumMismatchError on a mismatch."""
    snapshot = log.snapshot(version)
    stored = read_checksum(log, snapshot.version)
    if stored is None:
        return False
    wrong = checksum_mismatches(stored, snapshot)
    if wrong:
        raise ChecksumMismatchError(
            f"the checksum disagrees with the log on {wrong}",
            table=log.table_path,
            version=snapshot.version,
            file=checksum_name(snapshot.version),
        )
    return True
