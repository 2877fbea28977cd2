"""A bridge written from spec/bridge.md and spec/log-vectors.md alone (it imports nothing of
deltaspec): Daft's ``read_deltalake`` as a reader of tables on disk.

    deltaspec conformance \\
        --adapter "cmd:python conformance/bridge/examples/daft_read_table.py" \\
        --suite fixtures        # or --suite logs

Daft exposes rows, not the log's state (it replays the log with delta-rs, then plans its own
Parquet scan: its version check, deletion-vector refusal and path decoding are Daft's). A read is
what a user's ``daft.read_deltalake(path, version=V).collect()`` does; the snapshot reported
carries only ``version`` when a version was asked for (Daft loaded exactly that one), no files,
properties or protocol (log-vectors.md judges a reader on the keys it reports). A scan that stops
on a data file that does not exist still counts as a read: log vectors write no data files, so
Daft opening one means it took the file as live; one outside the table root is logged to stderr.
``read_rows`` answers the rows of the same read (``.to_arrow()``), so the fixtures suite compares
them with the rows Spark read. Only ``read_table`` and ``read_rows`` are declared.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import logging
import math
import os
import re
import sys
from typing import Any

PROTOCOL = "deltaspec-bridge/1"
KINDS = (  # log-vectors.md error kinds, recognised in Daft's and delta-rs's messages
    ("deletion vectors are not yet supported", "UNSUPPORTED_FEATURE"),
    ("unsupported", "UNSUPPORTED_FEATURE"),
    ("feature", "UNSUPPORTED_FEATURE"),
    ("contiguous", "VERSIONS_NOT_CONTIGUOUS"),
    ("json error", "CORRUPT_LOG_FILE"),  # a commit line that does not parse
    ("no table metadata", "MISSING_PROTOCOL_OR_METADATA"),
    ("does not exist. latest available version", "VERSION_NOT_FOUND"),
    ("not the same as the specified end version", "VERSION_NOT_FOUND"),
    ("no files in log segment", "TABLE_NOT_FOUND"),
    ("not a delta table", "TABLE_NOT_FOUND"),
)
MISSING_DATA = re.compile(r"(?P<path>/\S+): No such file or directory \(os error 2\)")


def read_table(path: str, version: int | None) -> dict[str, Any]:
    import daft  # lazy: the engine is this example's optional dependency

    try:
        daft.read_deltalake(path, version=version).collect()
    except Exception as error:  # Daft and delta-rs raise untyped errors: classify the message
        text = str(error)
        opened = MISSING_DATA.search(text)
        if opened is None:
            kind = next((k for marker, k in KINDS if marker in text.lower()), "READ_FAILED")
            return {"error": kind, "message": text}
        data_file = os.path.realpath(opened["path"])
        if not data_file.startswith(os.path.realpath(path) + os.sep):
            print(f"daft opened {data_file}, outside {path}", file=sys.stderr)
    return {} if version is None else {"version": version}


def read_rows(path: str, version: int | None) -> dict[str, Any]:
    import daft  # lazy: the engine is this example's optional dependency

    try:
        table = daft.read_deltalake(path, version=version).to_arrow()
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
        result = {"protocol": PROTOCOL, "name": "daft", "capabilities": capabilities}
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
    logging.disable(logging.WARNING)  # Daft warns of full scans of partitioned tables on stderr
    for line in sys.stdin:
        sys.stdout.write(json.dumps(answer(json.loads(line))) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
