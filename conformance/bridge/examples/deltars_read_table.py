"""A bridge written from spec/bridge.md and spec/log-vectors.md alone (it imports nothing of
deltaspec): delta-rs (the ``deltalake`` package) as a reader of tables on disk.

    deltaspec conformance \\
        --adapter "cmd:python conformance/bridge/examples/deltars_read_table.py" \\
        --suite fixtures        # or --suite logs

It declares only ``read_table``; every other request is answered UNSUPPORTED, so the scenario
vectors are skipped (and a run of them alone fails the coverage gate, as it should).
"""

from __future__ import annotations

import json
import sys
from typing import Any

PROTOCOL = "deltaspec-bridge/1"
KINDS = (  # log-vectors.md error kinds, recognised in delta-rs's messages
    ("feature", "UNSUPPORTED_FEATURE"),
    ("contiguous", "VERSIONS_NOT_CONTIGUOUS"),
    ("json error", "CORRUPT_LOG_FILE"),  # a commit line that does not parse
    ("no table metadata", "MISSING_PROTOCOL_OR_METADATA"),
    ("not the same as the specified end version", "VERSION_NOT_FOUND"),
    ("no files in log segment", "TABLE_NOT_FOUND"),
    ("not a delta table", "TABLE_NOT_FOUND"),
)


def read_table(path: str, version: int | None) -> dict[str, Any]:
    import deltalake
    import pyarrow as pa

    try:
        table = deltalake.DeltaTable(path, version=version)
    except Exception as error:  # delta-rs raises a few untyped errors: classify the message
        text = str(error)
        kind = next((k for marker, k in KINDS if marker in text.lower()), "READ_FAILED")
        return {"error": kind, "message": text}
    protocol = table.protocol()
    shape: dict[str, Any] = {"minReaderVersion": protocol.min_reader_version,
                             "minWriterVersion": protocol.min_writer_version}  # fmt: skip
    if protocol.reader_features is not None:
        shape["readerFeatures"] = sorted(protocol.reader_features)
    if protocol.writer_features is not None:
        shape["writerFeatures"] = sorted(protocol.writer_features)
    metadata = table.metadata()
    adds = pa.table(table.get_add_actions(flatten=False))
    return {
        "version": table.version(),
        "files": sorted(adds.column("path").to_pylist()),
        "properties": dict(metadata.configuration),
        "partition_columns": list(metadata.partition_columns),
        "protocol": shape,
    }


def answer(request: dict[str, Any]) -> dict[str, Any]:
    method, params = request.get("method"), request.get("params") or {}
    if method == "hello":
        result = {"protocol": PROTOCOL, "name": "delta-rs-reader", "capabilities": ["read_table"]}
        return {"id": request["id"], "result": result}
    if method == "read_table":
        return {"id": request["id"], "result": read_table(params["path"], params.get("version"))}
    if method == "close":
        return {"id": request["id"], "result": None}
    message = f"{method}: this bridge only reads tables"
    return {"id": request["id"], "error": {"kind": "UNSUPPORTED", "message": message}}


def main() -> None:
    for line in sys.stdin:
        sys.stdout.write(json.dumps(answer(json.loads(line))) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
