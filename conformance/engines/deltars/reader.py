"""delta-rs (the deltalake package) as a reader of tables on disk (the fixtures suite); its
untyped errors are given the neutral kinds by their text."""

from __future__ import annotations

import datetime
from pathlib import Path

import deltalake
import pyarrow as pa

from ...harness.adapter import Json
from ...harness.reading import ReadFailure
from ...harness.snapshots import protocol_json


class DeltaRsReader:
    """The deltalake package (delta-rs)."""

    name = "deltars"

    def read(self, root: Path, version: int | None) -> Json:
        try:
            table = deltalake.DeltaTable(str(root), version=version)
        except Exception as error:  # delta-rs raises a handful of untyped errors
            raise ReadFailure(_deltars_kind(error), str(error)) from error
        actions = pa.table(table.get_add_actions(flatten=False))
        metadata = table.metadata()
        return {
            "version": table.version(),
            "files": sorted(actions.column("path").to_pylist()),
            "properties": dict(metadata.configuration),
            "partition_columns": list(metadata.partition_columns),
            "protocol": protocol_json(table.protocol()),
        }

    def read_at_timestamp(self, root: Path, timestamp: int) -> Json:
        moment = datetime.datetime.fromtimestamp(timestamp / 1000, tz=datetime.UTC)
        try:
            table = deltalake.DeltaTable(str(root))
            table.load_as_version(moment)
        except Exception as error:
            raise ReadFailure(_deltars_kind(error), str(error)) from error
        return self.read(root, table.version())

    def rows(self, root: Path, version: int | None) -> pa.Table | None:
        try:
            return deltalake.DeltaTable(str(root), version=version).to_pyarrow_table()
        except Exception as error:
            raise ReadFailure(_deltars_kind(error), str(error)) from error


def _deltars_kind(error: Exception) -> str:
    text = str(error).lower()
    if "feature" in text:  # "reader features ... not yet supported": a feature, not a version
        return "UNSUPPORTED_FEATURE"
    if "contiguous" in text or ("missing" in text and "version" in text):
        return "VERSIONS_NOT_CONTIGUOUS"
    if "json error" in text:  # a commit line that does not parse (ACTION.LINE_FORMAT)
        return "CORRUPT_LOG_FILE"
    if "no table metadata" in text or "no protocol found" in text:
        return "MISSING_PROTOCOL_OR_METADATA"
    if "not the same as the specified end version" in text:
        return "VERSION_NOT_FOUND"
    if "protocol" in text and ("unsupported" in text or "reader" in text):
        return "UNSUPPORTED_PROTOCOL"
    if "not a delta table" in text or "no files in log segment" in text:
        return "TABLE_NOT_FOUND"
    return f"DELTARS:{type(error).__name__}"
