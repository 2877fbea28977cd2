"""The reference bridge program (spec/bridge.md): our impl served over JSON lines.

    python -m deltaspec.conformance.bridge.reference

Implementers start from this: read a request per line, call their engine, answer with one line.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from ..engines.impl.adapter import ImplAdapter
from ..engines.impl.reader import ImplReader
from ..harness.actions import Action
from ..harness.adapter import TableSetup, Unsupported, WriterSpec
from ..harness.json_rows import encode_table
from ..harness.reading import ReadFailure
from ..harness.reads import Read
from ..harness.wire import from_wire, to_wire

PROTOCOL = "deltaspec-bridge/1"


class Server:
    def __init__(self) -> None:
        self.adapter: ImplAdapter | None = None
        self.root: Path | None = None

    def _close(self) -> None:
        if self.adapter is not None:
            self.adapter.close()
        if self.root is not None:
            shutil.rmtree(self.root, ignore_errors=True)
        self.adapter, self.root = None, None

    def handle(self, method: str, params: dict[str, Any]) -> Any:
        if method == "hello":
            return hello()
        if method == "create":
            self._close()
            self.root = Path(tempfile.mkdtemp(prefix="deltaspec-bridge-"))
            self.adapter = ImplAdapter(self.root)
            self.adapter.create(from_wire(TableSetup, params["setup"]))
            return None
        if method == "close":
            self._close()
            return None
        if method == "read_table":
            return read_table(params["path"], params.get("version"), params.get("timestamp"))
        if method == "read_rows":
            return read_rows(params["path"], params.get("version"), params.get("timestamp"))
        if method == "clean_up_expired_logs":
            return clean_up_expired_logs(params["path"])
        adapter = self.adapter
        if adapter is None:
            raise ValueError(f"{method} before create")
        match method:
            case "begin":
                spec = from_wire(WriterSpec, params["spec"])
                failed = adapter.begin(params["writer"], spec, params.get("version"), params["now"])
                return None if failed is None else to_wire(failed)
            case "read":
                return adapter.read(params["writer"], from_wire(Read, params["read"]))
            case "stage":
                actions = [from_wire(Action, a) for a in params["actions"]]
                return adapter.stage(params["writer"], actions, params["now"])
            case "commit":
                return to_wire(adapter.commit(params["writer"], params["now"]))
            case "try_write":
                return to_wire(adapter.try_write(params["writer"], params["now"]))
            case "resolve":
                return to_wire(adapter.resolve(params["writer"]))
            case "checkpoint":
                return adapter.checkpoint(params["version"], params["now"])
            case "clean_up_log":
                return adapter.clean_up_log(params["version"], params["now"])
            case "checksum":
                return adapter.checksum(params["version"])
            case "snapshot":
                return to_wire(adapter.snapshot(params.get("version")))
            case "checkpoints":
                return list(adapter.checkpoints())
            case "verify":
                return adapter.verify()
        raise ValueError(f"unknown method {method!r}")


def hello() -> dict[str, Any]:
    """The ``hello`` result: the impl adapter's capabilities and the table readers'."""
    probe = ImplAdapter(Path(tempfile.gettempdir()))
    readers = ["read_table", "read_rows", "read_table_timestamp", "log_cleanup_by_retention"]
    return {
        "protocol": PROTOCOL,
        "name": "deltaspec-impl",
        "capabilities": sorted([*(c.value for c in probe.capabilities), *readers]),
    }


def read_table(path: str, version: int | None, timestamp: int | None = None) -> Any:
    """``read_table``: the snapshot of the table at ``path`` (at ``version``, or by ``timestamp``
    when given), or ``{"error": KIND, "message"}``."""
    try:
        if timestamp is not None:
            return ImplReader().read_at_timestamp(Path(path), timestamp)
        return ImplReader().read(Path(path), version)
    except ReadFailure as failure:
        return {"error": failure.kind, "message": str(failure)}


def read_rows(path: str, version: int | None, timestamp: int | None = None) -> Any:
    """``read_rows``: the rows of the table at ``path`` (at ``version``, or by ``timestamp``) in
    the JSON of spec/bridge.md, or ``{"error": KIND, "message"}``."""
    reader = ImplReader()
    try:
        if timestamp is not None:
            version = reader.read_at_timestamp(Path(path), timestamp)["version"]
        table = reader.rows(Path(path), version)
    except ReadFailure as failure:
        return {"error": failure.kind, "message": str(failure)}
    return encode_table(table)


def clean_up_expired_logs(path: str) -> Any:
    """``clean_up_expired_logs``: the impl's own log cleanup by retention on the table at
    ``path`` (log-vectors.md), ``null``, or ``{"error": KIND, "message"}``."""
    try:
        ImplReader().clean_up_expired_logs(Path(path))
    except ReadFailure as failure:
        return {"error": failure.kind, "message": str(failure)}
    return None


def serve(source: TextIO, sink: TextIO) -> None:
    server = Server()
    try:
        for line in source:
            ident: Any = None
            try:
                request = json.loads(line)
                ident = request["id"]
                result = server.handle(request["method"], request.get("params") or {})
                response: dict[str, Any] = {"id": ident, "result": result}
            except Unsupported as error:
                response = {"id": ident, "error": {"kind": "UNSUPPORTED", "message": str(error)}}
            except (KeyError, ValueError, TypeError) as error:
                response = {"id": ident, "error": {"kind": "BAD_REQUEST", "message": str(error)}}
            except Exception as error:
                kind = {"kind": "INTERNAL", "message": f"{type(error).__name__}: {error}"}
                response = {"id": ident, "error": kind}
            sink.write(json.dumps(response) + "\n")
            sink.flush()
    finally:
        server._close()


if __name__ == "__main__":
    serve(sys.stdin, sys.stdout)
