"""Table-property keys as delta-spark stores them (TXN.TABLE_PROPERTIES): Spark hands a data
source its write options with lowercased keys, and a property stored as ``delta.x`` in the wrong
case is one no reader (ours or delta-spark's) looks up."""

from __future__ import annotations

import pytest

from deltaspec.impl.table.properties import canonical_key


@pytest.mark.rules("TXN.TABLE_PROPERTIES")
@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("delta.dataskippingnumindexedcols", "delta.dataSkippingNumIndexedCols"),
        ("DELTA.ENABLEDELETIONVECTORS", "delta.enableDeletionVectors"),
        ("delta.checkpoint.writestatsasstruct", "delta.checkpoint.writeStatsAsStruct"),
        ("delta.logRetentionDuration", "delta.logRetentionDuration"),
        ("delta.Feature.DeletionVectors", "delta.feature.deletionvectors"),
        ("delta.someFutureKey", "delta.someFutureKey"),
        ("user.Note", "user.Note"),
    ],
)
def test_a_property_key_takes_delta_sparks_spelling(given: str, stored: str) -> None:
    assert canonical_key(given) == stored
