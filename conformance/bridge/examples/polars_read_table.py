"""A bridge written from spec/bridge.md and spec/log-vectors.md alone (it imports nothing of
deltaspec): polars-deltalake, the Polars reader built on delta-kernel-rs, as a reader of tables on
disk.

    deltaspec conformance \\
        --adapter "cmd:python conformance/bridge/examples/polars_read_table.py" \\
        --suite fixtures        # or --suite logs

polars-deltalake exposes rows, not the log's state: ``TableState(uri, version)`` opens the
kernel's snapshot (its schema is all it shows) and ``TableScan`` streams the rows. So a read here
is what a user's ``read_delta`` does: open the snapshot, then scan it. The snapshot reported
carries only what the API gives: ``version`` when a version was asked for (the kernel opened
exactly that one); no files, properties or protocol (log-vectors.md judges a reader on the keys
it reports). A scan that stops on a data file that does not exist still counts as a read: log
vectors write no data files, so the kernel opening one means it took the file as live. A file it
opened outside the table root is logged to stderr. ``read_rows`` answers the rows of the same
scan, so the fixtures suite compares them with the rows Spark read. Only ``read_table`` and
``read_rows`` are declared.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import math
import os
import re
import sys
from typing import Any

PROTOCOL = "deltaspec-bridge/1"
KINDS = (  # log-vectors.md error kinds, recognised in delta-kernel-rs's messages
    ("unsupported", "UNSUPPORTED_FEATURE"),
    ("syntax at character", "CORRUPT_LOG_FILE"),  # a commit line that does not parse
    ("eof while parsing", "CORRUPT_LOG_FILE"),
    ("no table version found", "TABLE_NOT_FOUND"),
    ("is missing or unavailable", "VERSION_NOT_FOUND"),
    ("no table metadata", "MISSING_PROTOCOL_OR_METADATA"),
    ("no protocol found", "MISSING_PROTOCOL_OR_METADATA"),
)
MISSING_DATA = re.compile(  # the scan opened a data file that a log vector does not write
    r"No such file or directory \(os error 2\): (?P<path>\S+)"
    r"|parquet footer of file://(?P<footer>\S+?): .*too small"
)


def scan(path: str, version: int | None) -> Any:
    """The rows of the table at ``path`` as a user's ``read_delta`` reads them, as a pyarrow
    table: the kernel's snapshot opened, then every batch of its scan."""
    import polars as pl  # lazy: the engine is this example's optional dependency
    from polars_deltalake import (  # lazy: the engine is this example's optional dependency
        TableScan,
        TableState,
    )

    state = TableState(path, version)
    batches = TableScan(state)
    batches.configure(None, None, None)
    frames = []
    while (frame := batches.next()) is not None:
        frames.append(frame)
    return (pl.concat(frames) if frames else pl.DataFrame(schema=state.schema())).to_arrow()


def read_table(path: str, version: int | None) -> dict[str, Any]:
    try:
        scan(path, version)
    except Exception as error:  # the kernel raises RuntimeError with its message
        text = str(error)
        opened = MISSING_DATA.search(text)
        if opened is None:
            kind = next((k for marker, k in KINDS if marker in text.lower()), "READ_FAILED")
            return {"error": kind, "message": text}
        named = opened["path"] or opened["footer"]  # the kernel shortens long ones with "..."
        data_file = os.path.realpath(named)
        if named.startswith("/") and not data_file.startswith(os.path.realpath(path) + os.sep):
            print(f"polars-deltalake opened {data_file}, outside {path}", file=sys.stderr)
    return {} if version is None else {"version": version}


def read_rows(path: str, version: int | None) -> dict[str, Any]:
    try:
        table = scan(path, version)
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
        result = {"protocol": PROTOCOL, "name": "polars-deltalake", "capabilities": capabilities}
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
