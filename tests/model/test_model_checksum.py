"""CHECKSUM.WRITE on the model: what a version's checksum file must hold, the file size
histogram by delta-spark 4.4.0's bins (spec data the impl reads too)."""

from __future__ import annotations

import pytest

from deltaspec.checksum_bins import bin_boundaries
from deltaspec.model.actions import (
    AddFile,
    Commit,
    DomainMetadata,
    Metadata,
    Protocol,
    RemoveFile,
    SetTransaction,
)
from deltaspec.model.checksum import (
    FileSizeHistogram,
    file_size_histogram,
    size_bin,
    version_checksum,
)
from deltaspec.model.snapshot import replay

MB = 1024 * 1024


def test_the_bins_are_delta_sparks_95() -> None:
    bins = bin_boundaries()
    assert len(bins) == 95
    assert bins[:3] == (0, 8192, 16384) and bins[9:12] == (2 * MB, 4 * MB, 8 * MB)
    assert bins[-1] == 256 * 1024 * MB


@pytest.mark.rules("CHECKSUM.WRITE")
def test_a_size_on_a_boundary_starts_its_bin() -> None:
    assert [size_bin(s) for s in (0, 8191, 8192, 8193, 4 * MB - 1, 4 * MB)] == [0, 0, 1, 1, 9, 10]
    assert size_bin(2**60) == 94
    with pytest.raises(ValueError):
        size_bin(-1)


@pytest.mark.rules("CHECKSUM.WRITE")
def test_the_histogram_counts_files_and_bytes_per_bin() -> None:
    histogram = file_size_histogram([1, 8191, 8192, 8192])
    assert histogram.file_counts[:3] == (2, 2, 0) and sum(histogram.file_counts) == 4
    assert histogram.total_bytes[:2] == (8192, 16384) and sum(histogram.total_bytes) == 24576


@pytest.mark.rules("CHECKSUM.WRITE", "CHECKSUM.VERIFY")
def test_the_checksum_of_a_snapshot() -> None:
    protocol, metadata = Protocol(1, 2), Metadata("t", "{}")
    snapshot = replay(
        [
            Commit(0, (protocol, metadata, AddFile("a", size=10), AddFile("b", size=8192))),
            Commit(1, (RemoveFile("a"), SetTransaction("app", 3), DomainMetadata("d", "x"))),
            Commit(2, (DomainMetadata("e", "y"), DomainMetadata("e", "", removed=True))),
        ]
    )
    checksum = version_checksum(snapshot, 1234, "txn")
    assert (checksum.table_size_bytes, checksum.num_files) == (8192, 1)
    assert (checksum.num_metadata, checksum.num_protocol) == (1, 1)
    assert (checksum.metadata, checksum.protocol) == (metadata, protocol)
    assert checksum.set_transactions == (SetTransaction("app", 3),)
    assert checksum.domain_metadata == (DomainMetadata("d", "x"),)
    assert checksum.file_size_histogram == FileSizeHistogram(
        bin_boundaries(), (0, 1, *[0] * 93), (0, 8192, *[0] * 93)
    )
    assert (checksum.in_commit_timestamp_opt, checksum.txn_id) == (1234, "txn")
    assert checksum.file_fields() == {
        "tableSizeBytes": 8192, "numFiles": 1, "numMetadata": 1, "numProtocol": 1,
        "inCommitTimestampOpt": 1234, "setTransactions": ["app"], "domainMetadata": ["d"],
        "fileSizeHistogram": checksum.file_size_histogram.as_json(),
    }  # fmt: skip
