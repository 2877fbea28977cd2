"""spec/data/releases.json's writer_protocols, as releases_table reads it (TXN.WRITER_PROTOCOL):
the facts read from delta-spark's source come out release by release."""

from __future__ import annotations

import pytest

from deltaspec.releases_table import full_writer_protocol, unwritable_protocol, writer_support

pytestmark = pytest.mark.rules("TXN.WRITER_PROTOCOL")


def test_before_table_features_a_release_takes_versions_up_to_its_own():
    assert writer_support((0, 7, 0)).writer_versions == {1, 2}
    assert writer_support((0, 8, 0)).writer_versions == {1, 2, 3}
    assert writer_support((2, 2, 0)).writer_versions == {1, 2, 3, 4, 5, 6}
    assert writer_support((2, 2, 0)).unsupported(7, ["appendOnly"]) == ["minWriterVersion 7"]


def test_identity_columns_come_and_go_with_writer_version_six():
    assert writer_support((2, 3, 0)).unsupported(6, []) == []  # versions 1-7, whatever is listed
    assert writer_support((2, 4, 0)).unsupported(6, []) == ["minWriterVersion 6"]
    assert writer_support((3, 2, 1)).unsupported(7, ["identityColumns"]) == ["identityColumns"]
    assert writer_support((3, 3, 2)).unsupported(6, []) == []


def test_features_arrive_release_by_release():
    assert writer_support((3, 2, 1)).unsupported(7, ["checkpointProtection"]) != []
    assert writer_support((3, 3, 2)).unsupported(7, ["checkpointProtection"]) == []
    assert "inCommitTimestamp-preview" in writer_support((3, 2, 0)).features
    assert "inCommitTimestamp-preview" not in writer_support((3, 3, 0)).features
    assert "variantShredding" not in writer_support((4, 0, 1)).features
    assert "variantShredding" in writer_support((4, 1, 0)).features


def test_no_release_writes_a_catalog_managed_table_by_path():
    for release in ((4, 0, 0), (4, 0, 1), (4, 4, 0)):
        support = writer_support(release)
        assert not {"catalogManaged", "catalogOwned-preview"} & support.features


def test_the_full_protocol_lists_reader_writer_features_on_both_sides():
    protocol = full_writer_protocol((4, 4, 0))
    assert (protocol["minReaderVersion"], protocol["minWriterVersion"]) == (3, 7)
    assert set(protocol["readerFeatures"]) <= set(protocol["writerFeatures"])
    assert {"deletionVectors", "variantType", "columnMapping"} <= set(protocol["readerFeatures"])
    assert "rowTracking" not in protocol["readerFeatures"]
    assert full_writer_protocol((1, 0, 0)) == {"minReaderVersion": 1, "minWriterVersion": 4}


def test_the_unwritable_protocol_is_refused_and_the_full_one_is_not():
    for release in ((1, 2, 0), (2, 3, 0), (3, 2, 1), (4, 4, 0)):
        support = writer_support(release)
        full = full_writer_protocol(release)
        bad = unwritable_protocol(release, full)
        assert support.unsupported(full["minWriterVersion"], full.get("writerFeatures", ())) == []
        assert support.unsupported(bad["minWriterVersion"], bad.get("writerFeatures", ())) != []
