"""A bridge written from spec/bridge.md and spec/log-vectors.md alone (it imports nothing of
deltaspec): delta-rs (the ``deltalake`` package) as a reader of tables on disk.

    deltaspec conformance \\
        --adapter "cmd:python conformance/bridge/examples/deltars_read_table.py" \\
        --suite fixtures        # or --suite logs

It declares ``read_table`` and ``read_rows`` (delta-rs's own Arrow scan); every other request is
answered UNSUPPORTED, so the scenario vectors are skipped (and a run of them alone fails the
coverage gate, as it should).
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import math
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
    import deltalake  # lazy: the engine is this example's optional dependency
    import pyarrow as pa  # lazy: the engine is this example's optional dependency

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


def read_rows(path: str, version: int | None) -> dict[str, Any]:
    import deltalake  # lazy: the engine is this example's optional dependency

    try:
        table = deltalake.DeltaTable(path, version=version).to_pyarrow_table()
    except Exception as error:
        text = str(error)
        kind = next((k for marker, k in KINDS if marker in text.lower()), "READ_FAILED")
        return {"error": kind, "message": text}
    return rows_json(table)


def json_value(value: Any) -> Any:
    """A value as Arrow's ``to_pylist`` gives it, in the JSON of spec/bridge.md ("Rows in JSON"):
    dates as days and timestamps as microseconds since the epoch, decimals as strings, binary as
    base64, non-finite floats as strings, a map as its [key, value] pairs."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime.datetime):
        zone = None if value.tzinfo is None else datetime.UTC
        epoch = datetime.datetime(1970, 1, 1, tzinfo=zone)
        return (value - epoch) // datetime.timedelta(microseconds=1)
    if isinstance(value, datetime.date):
        return (value - datetime.date(1970, 1, 1)).days
    if isinstance(value, dict):
        return {key: json_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    return value


def rows_json(table: Any) -> dict[str, Any]:
    """A pyarrow table as the ``read_rows`` result."""
    columns = [table.column(name).to_pylist() for name in table.column_names]
    rows = [[json_value(value) for value in row] for row in zip(*columns, strict=True)]
    return {"columns": list(table.column_names), "rows": rows}


def answer(request: dict[str, Any]) -> dict[str, Any]:
    method, params = request.get("method"), request.get("params") or {}
    if method == "hello":
        capabilities = ["read_table", "read_rows"]
        result = {"protocol": PROTOCOL, "name": "delta-rs-reader", "capabilities": capabilities}
        return {"id": request["id"], "result": result}
    if method == "read_table":
        return {"id": request["id"], "result": read_table(params["path"], params.get("version"))}
    if method == "read_rows":
        return {"id": request["id"], "result": read_rows(params["path"], params.get("version"))}
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
