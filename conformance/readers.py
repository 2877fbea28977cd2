"""Table readers for the fixtures suite: what an implementation makes of a table on disk.

A reader returns the snapshot JSON of the adapters (version, files, app_txns, domains,
properties, partition_columns, protocol) and, where it can scan, the rows; a refusal is a
``ReadFailure`` with the neutral error kind (impl/errors.py ``kind`` values)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from deltaspec.conformance.adapters.base import protocol_json
from deltaspec.conformance.adapters.impl import snapshot_json
from deltaspec.impl.errors import DeltaError
from deltaspec.impl.scan import scan
from deltaspec.impl.snapshot import DeltaLog

Json = dict[str, Any]


class ReadFailure(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind


class TableReader(Protocol):
    name: str

    def read(self, root: Path, version: int | None) -> Json: ...

    def rows(self, root: Path, version: int | None) -> pa.Table | None: ...


class ImplReader:
    """deltaspec.impl: DeltaLog snapshots and the reference Arrow scan."""

    name = "impl"

    def read(self, root: Path, version: int | None) -> Json:
        try:
            return snapshot_json(DeltaLog(str(root)).snapshot(version))
        except DeltaError as error:
            raise ReadFailure(error.kind, str(error)) from error

    def rows(self, root: Path, version: int | None) -> pa.Table | None:
        try:
            return scan(DeltaLog(str(root)).snapshot(version), root)
        except DeltaError as error:
            raise ReadFailure(error.kind, str(error)) from error


class DeltaRsReader:
    """The deltalake package (delta-rs)."""

    name = "deltars"

    def read(self, root: Path, version: int | None) -> Json:
        import deltalake

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

    def rows(self, root: Path, version: int | None) -> pa.Table | None:
        import deltalake

        try:
            return deltalake.DeltaTable(str(root), version=version).to_pyarrow_table()
        except Exception as error:
            raise ReadFailure(_deltars_kind(error), str(error)) from error


def _deltars_kind(error: Exception) -> str:
    text = str(error).lower()
    if "feature" in text:  # "reader features ... not yet supported": a feature, not a version
        return "UNSUPPORTED_FEATURE"
    if "not contiguous" in text or ("missing" in text and "version" in text):
        return "VERSIONS_NOT_CONTIGUOUS"
    if "protocol" in text and ("unsupported" in text or "reader" in text):
        return "UNSUPPORTED_PROTOCOL"
    if "not a delta table" in text or "no files in log segment" in text:
        return "TABLE_NOT_FOUND"
    return f"DELTARS:{type(error).__name__}"
