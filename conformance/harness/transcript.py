"""``--trace DIR``: every adapter call of a vector, written as bridge messages (spec/bridge.md).

A ``Recorder`` wraps the adapter the suite makes for each vector and logs each call as the
request a bridge program would receive (method and params, named as in spec/bridge.md) and the
response it gave (``result``, or ``error`` with its kind), one JSON object per line. For a
``cmd:`` adapter that is the conversation on the wire, so a bridge author can replay it by hand.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .actions import JsonFields
from .adapter import Adapter, TableSetup, Unsupported, WriterSpec
from .outcomes import Committed, Conflict, Error, Pending, Skipped
from .snapshots import TableSnapshot
from .wire import to_wire

Json = dict[str, Any]
METHODS = (
    "create",
    "begin",
    "read",
    "stage",
    "commit",
    "try_write",
    "resolve",
    "checkpoint",
    "snapshot",
    "checkpoints",
    "verify",
    "close",
)


_WIRE = (JsonFields, Committed, Conflict, Error, Skipped, Pending, TableSnapshot, WriterSpec,
         TableSetup)  # fmt: skip
"""The typed values of the adapter interface, written as harness/wire.py spells them."""


def _plain(value: Any) -> Any:
    if isinstance(value, _WIRE):
        return to_wire(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | frozenset | set):
        return [_plain(v) for v in value]
    return value


class Recorder:
    """An adapter that forwards to ``inner`` and appends each exchange to ``lines``."""

    def __init__(self, inner: Adapter, lines: list[str]) -> None:
        self._inner, self._lines = inner, lines
        self._lines.append(json.dumps({"id": len(lines), "method": "hello", "params": {}}))
        capabilities = sorted(c.value for c in inner.capabilities)
        self._lines.append(
            json.dumps(
                {"id": len(lines) - 1, "result": {"name": inner.name, "capabilities": capabilities}}
            )
        )

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        if name not in METHODS:
            return value
        return self._recording(name, value)

    def _recording(self, method: str, call: Callable[..., Any]) -> Callable[..., Any]:
        names = list(inspect.signature(call).parameters)

        def recorded(*args: Any) -> Any:
            ident = len(self._lines) // 2
            params = {
                ("setup" if n == "setup" else n): _plain(a)
                for n, a in zip(names, args, strict=False)
            }
            self._lines.append(json.dumps({"id": ident, "method": method, "params": params}))
            try:
                result = call(*args)
            except Unsupported as error:
                self._answer({"id": ident, "error": {"kind": "UNSUPPORTED", "message": str(error)}})
                raise
            except Exception as error:
                message = f"{type(error).__name__}: {error}"
                self._answer({"id": ident, "error": {"kind": "INTERNAL", "message": message}})
                raise
            self._answer({"id": ident, "result": _plain(result)})
            return result

        return recorded

    def _answer(self, response: Json) -> None:
        self._lines.append(json.dumps(response, default=str))


def trace_file(directory: Path, case: str) -> Path:
    return directory / (case.replace("/", "__") + ".jsonl")


def write_trace(directory: Path, case: str, lines: list[str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = trace_file(directory, case)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
