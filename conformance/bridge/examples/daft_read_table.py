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
Only ``read_table`` is declared.
"""

from __future__ import annotations

import json
import logging
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
    import daft

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


def answer(request: dict[str, Any]) -> dict[str, Any]:
    method, params = request.get("method"), request.get("params") or {}
    if method == "hello":
        result = {"protocol": PROTOCOL, "name": "daft", "capabilities": ["read_table"]}
        return {"id": request["id"], "result": result}
    if method == "read_table":
        return {"id": request["id"], "result": read_table(params["path"], params.get("version"))}
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
