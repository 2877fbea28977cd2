"""Version checksum files ``<v>.crc`` (spec/timestamps.md: CHECKSUM.WRITE, CHECKSUM.VERIFY): what
the checksum of a snapshot must hold, field by field, as values.

The model counts everything from the snapshot, naively: a writer that updates its checksums
incrementally from the previous version's (as delta-spark and the impl do for the file size
histogram) must end where this full count does. The histogram's bins are spec data
(spec/data/file_size_histogram.json, read by ``deltaspec.checksum_bins``), shared with the impl.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from deltaspec.checksum_bins import bin_boundaries
from deltaspec.rules import rule

from .actions import DomainMetadata, Metadata, Protocol, SetTransaction
from .snapshot import Snapshot, require_protocol_and_metadata


@dataclass(frozen=True)
class FileSizeHistogram:
    """``fileSizeHistogram``: per bin (its lower boundary in bytes), the live files and their
    bytes."""

    sorted_bin_boundaries: tuple[int, ...]
    file_counts: tuple[int, ...]
    total_bytes: tuple[int, ...]

    def as_json(self) -> dict[str, list[int]]:
        """As the checksum file spells it."""
        return {
            "sortedBinBoundaries": list(self.sorted_bin_boundaries),
            "fileCounts": list(self.file_counts),
            "totalBytes": list(self.total_bytes),
        }


def size_bin(size: int) -> int:
    """The index of the bin a file of ``size`` bytes counts in: the last boundary at or below
    its size (a size equal to a boundary starts that boundary's bin); a negative size is a
    ValueError."""
    if size < 0:
        raise ValueError(f"a file size is negative: {size}")
    return max(i for i, low in enumerate(bin_boundaries()) if low <= size)


def file_size_histogram(sizes: Iterable[int]) -> FileSizeHistogram:
    """The histogram of the live files of sizes ``sizes``, counted one file at a time."""
    boundaries = bin_boundaries()
    counts = [0] * len(boundaries)
    totals = [0] * len(boundaries)
    for size in sizes:
        index = size_bin(size)
        counts[index] += 1
        totals[index] += size
    return FileSizeHistogram(boundaries, tuple(counts), tuple(totals))


@dataclass(frozen=True)
class Checksum:
    """The checksum of one version: the fields delta-spark 4.4.0 writes (``allFiles`` aside,
    which readers may ignore), as model values."""

    table_size_bytes: int
    num_files: int
    num_metadata: int
    num_protocol: int
    metadata: Metadata
    protocol: Protocol
    set_transactions: tuple[SetTransaction, ...]
    """The live app transactions, by app id (none expired: a checksum holds every one)."""
    domain_metadata: tuple[DomainMetadata, ...]
    """The live, not removed, domains, by name."""
    file_size_histogram: FileSizeHistogram
    in_commit_timestamp_opt: int | None = None
    """The version's in-commit timestamp, on a table with in-commit timestamps only."""
    txn_id: str | None = None
    """The committing transaction's ``commitInfo.txnId``, when it has one."""

    def file_fields(self) -> dict[str, object]:
        """The state fields CHECKSUM.VERIFY compares, plus ``inCommitTimestampOpt`` and
        ``fileSizeHistogram``, by their names in the file (transactions and domains as their
        sorted keys)."""
        fields: dict[str, object] = {
            "tableSizeBytes": self.table_size_bytes,
            "numFiles": self.num_files,
            "numMetadata": self.num_metadata,
            "numProtocol": self.num_protocol,
        }
        if self.in_commit_timestamp_opt is not None:
            fields["inCommitTimestampOpt"] = self.in_commit_timestamp_opt
        fields["setTransactions"] = [t.app_id for t in self.set_transactions]
        fields["domainMetadata"] = [d.domain for d in self.domain_metadata]
        fields["fileSizeHistogram"] = self.file_size_histogram.as_json()
        return fields


@rule("CHECKSUM.WRITE", "CHECKSUM.VERIFY")
def version_checksum(
    snapshot: Snapshot, in_commit_timestamp: int | None, txn_id: str | None = None
) -> Checksum:
    """CHECKSUM.WRITE: the checksum of ``snapshot`` (CHECKSUM.VERIFY compares its state
    fields): the live files' count, bytes and size histogram, one metadata and one protocol,
    every live app transaction and domain; ``in_commit_timestamp`` is the version's in-commit
    timestamp where the table has them, ``txn_id`` its commit's ``txnId``."""
    protocol, metadata = require_protocol_and_metadata(snapshot)
    sizes = [f.size for f in snapshot.files.values()]
    return Checksum(
        table_size_bytes=sum(sizes),
        num_files=len(sizes),
        num_metadata=1,
        num_protocol=1,
        metadata=metadata,
        protocol=protocol,
        set_transactions=tuple(t for _, t in sorted(snapshot.app_txns.items())),
        domain_metadata=tuple(d for _, d in sorted(snapshot.domains.items()) if not d.removed),
        file_size_histogram=file_size_histogram(sizes),
        in_commit_timestamp_opt=in_commit_timestamp,
        txn_id=txn_id,
    )
