"""``cmd:PROGRAM`` adapters: an implementation in any language behind the JSON-lines protocol of
spec/bridge.md, driven through the same Adapter interface as the in-process ones."""

from __future__ import annotations

import contextlib
import json
import shlex
import subprocess
from collections.abc import Sequence
from typing import Any, Protocol, cast

from ...harness.actions import Action
from ...harness.adapter import Capability, Json, TableSetup, Unsupported, WriterSpec
from ...harness.json_rows import JsonRows
from ...harness.outcomes import Outcome
from ...harness.reading import ReadFailure
from ...harness.reads import Read
from ...harness.snapshots import TableSnapshot
from ...harness.wire import outcome_from_wire, snapshot_from_wire, to_wire

PROTOCOL = "deltaspec-bridge/1"


class BridgeError(Exception):
    """The program broke the protocol, crashed, or reported an internal error."""


class BridgeStartError(BridgeError):
    """The program could not be run, or did not answer ``hello`` as spec/bridge.md says."""


class BridgeProtocolError(BridgeError):
    """A line that is not a response to the request sent: the program cannot be trusted with
    the next request (the pipe's driver restarts it)."""


HELLO: Json = {"protocol": PROTOCOL}
"""The params of the ``hello`` request."""


def request_line(ident: int, method: str, params: Json) -> str:
    """An adapter call as the protocol's request line (without its newline): the one way a
    request is written, over a pipe (BridgeProcess) or to a bridge hosted in process."""
    return json.dumps({"id": ident, "method": method, "params": params})


def result_of(line: str, ident: int, method: str, program: str) -> Any:
    """The response line to request ``ident`` as the adapter call's result: the one way a
    response is read. ``UNSUPPORTED`` raises Unsupported (the vector is skipped), any other error
    kind BridgeError; a line that is not JSON or answers another request BridgeProtocolError."""
    try:
        response = json.loads(line)
    except json.JSONDecodeError:
        raise BridgeProtocolError(f"{program} wrote a line that is not JSON: {line!r}") from None
    if not isinstance(response, dict) or response.get("id") != ident:
        raise BridgeProtocolError(f"{program} answered {line!r} to request {ident}")
    if "error" in response:
        failure = response["error"]
        if failure.get("kind") == "UNSUPPORTED":
            raise Unsupported(failure.get("message", method))
        raise BridgeError(f"{method}: {failure.get('kind')}: {failure.get('message')}")
    return response.get("result")


def handshake(hello: Any) -> tuple[str | None, frozenset[Capability]]:
    """The name and the known capabilities of a ``hello`` answer; BridgeError when it does not
    speak this protocol (unknown capability names are ignored, spec/bridge.md)."""
    if not isinstance(hello, dict) or hello.get("protocol") != PROTOCOL:
        raise BridgeError(f"its hello answer does not speak {PROTOCOL}: {hello!r}")
    known = {c.value for c in Capability}
    declared = [c for c in hello.get("capabilities", []) if c in known]
    name = hello.get("name")
    return (None if name is None else str(name)), frozenset(Capability(c) for c in declared)


class Channel(Protocol):
    """Where a BridgeAdapter's requests go: a program over a pipe (BridgeProcess) or a bridge
    hosted in this process (engines/deltaspark/adapter.py), both through request_line and
    result_of."""

    name: str
    capabilities: frozenset[Capability]

    def request(self, method: str, params: Json | None = None) -> Any: ...


class BridgeProcess:
    """One running bridge program; requests are answered in order."""

    def __init__(self, command: str | Sequence[str]) -> None:
        self.command = shlex.split(command) if isinstance(command, str) else list(command)
        self._process: subprocess.Popen[str] | None = None
        self._next_id = 0
        self.name = "cmd"
        self.capabilities: frozenset[Capability] = frozenset()
        self.wire: list[str] | None = None  # a list here records every line both ways

    def _start(self) -> subprocess.Popen[str]:
        if self._process is None or self._process.poll() is not None:
            try:
                self._process = subprocess.Popen(
                    self.command,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                    encoding="utf-8",
                    bufsize=1,
                )
                self._next_id = 0
                name, self.capabilities = handshake(self._exchange("hello", HELLO))
            except (OSError, BridgeError, ValueError) as error:
                self.stop()
                raise BridgeStartError(
                    f"the bridge program {shlex.join(self.command)!r} did not start: {error} "
                    f"(spec/bridge.md: it must answer the hello request on stdout)"
                ) from error
            self.name = f"cmd:{name or self.command[0]}"
        return self._process

    def request(self, method: str, params: Json | None = None) -> Any:
        self._start()
        return self._exchange(method, params or {})

    def _exchange(self, method: str, params: Json) -> Any:
        process = self._process
        assert process is not None and process.stdin is not None and process.stdout is not None
        ident = self._next_id
        self._next_id += 1
        request = request_line(ident, method, params)
        try:
            process.stdin.write(request + "\n")
            process.stdin.flush()
            line = process.stdout.readline()
            if self.wire is not None:
                self.wire += [request, line.rstrip("\n")]
        except (BrokenPipeError, OSError) as error:
            self.stop()
            raise BridgeError(f"{self.command[0]} is gone: {error}") from error
        if not line:
            code = process.wait(10)
            self.stop()
            raise BridgeError(f"{self.command[0]} exited (code {code}) during {method}")
        try:
            return result_of(line, ident, method, self.command[0])
        except BridgeProtocolError:
            self.stop()
            raise

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            if process.stdin is not None:
                process.stdin.close()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


class BridgeAdapter:
    """The Adapter protocol over a bridge (one table per create … close): each method is one
    request, typed values out and back through harness/wire.py; a BridgeProcess is started first,
    so that its name and capabilities are known."""

    def __init__(self, process: Channel) -> None:
        self.process = process
        if isinstance(process, BridgeProcess):
            process._start()
        self.name = process.name
        self.capabilities = process.capabilities

    def create(self, setup: TableSetup) -> None:
        self.process.request("create", {"setup": to_wire(setup)})

    def begin(self, writer: str, spec: WriterSpec, version: int | None, now: int) -> Outcome | None:
        result = self.process.request(
            "begin", {"writer": writer, "spec": to_wire(spec), "version": version, "now": now}
        )
        return None if result is None else outcome_from_wire(result)

    def read(self, writer: str, read: Read) -> None:
        self.process.request("read", {"writer": writer, "read": to_wire(read)})

    def stage(self, writer: str, actions: Sequence[Action], now: int) -> None:
        body = [to_wire(a) for a in actions]
        self.process.request("stage", {"writer": writer, "actions": body, "now": now})

    def commit(self, writer: str, now: int) -> Outcome:
        return outcome_from_wire(self.process.request("commit", {"writer": writer, "now": now}))

    def try_write(self, writer: str, now: int) -> Outcome:
        params = {"writer": writer, "now": now}
        return outcome_from_wire(self.process.request("try_write", params))

    def resolve(self, writer: str) -> Outcome:
        return outcome_from_wire(self.process.request("resolve", {"writer": writer}))

    def checkpoint(self, version: int, now: int) -> None:
        self.process.request("checkpoint", {"version": version, "now": now})

    def clean_up_log(self, version: int, now: int) -> None:
        self.process.request("clean_up_log", {"version": version, "now": now})

    def checksum(self, version: int) -> Json | None:
        return cast(Json | None, self.process.request("checksum", {"version": version}))

    def snapshot(self, version: int | None = None) -> TableSnapshot:
        return snapshot_from_wire(self.process.request("snapshot", {"version": version}))

    def checkpoints(self) -> tuple[int, ...]:
        return tuple(self.process.request("checkpoints"))

    def verify(self) -> list[str]:
        return list(self.process.request("verify"))

    def close(self) -> None:
        with contextlib.suppress(BridgeError):  # gone: the next create starts a new process
            self.process.request("close")


class BridgeReader:
    """A bridge that declares ``read_table`` as a table reader (the harness's ``TableReader``):
    the fixtures suite and the log vectors run through it, and the fixtures' row checks too when
    it declares ``read_rows``."""

    def __init__(self, process: BridgeProcess) -> None:
        self.process = process
        process._start()
        self.name = process.name

    def read(self, root: Any, version: int | None) -> Json:
        return self._answer(self._request("read_table", {"path": str(root), "version": version}))

    def read_at_timestamp(self, root: Any, timestamp: int) -> Json:
        """``read_table`` by timestamp, asked only of a bridge declaring ``read_table_timestamp``
        (otherwise the read is declined and skipped)."""
        if Capability.READ_TABLE_TIMESTAMP not in self.process.capabilities:
            raise ReadFailure("UNSUPPORTED_FEATURE", f"{self.name}: no read_table_timestamp")
        params = {"path": str(root), "version": None, "timestamp": timestamp}
        return self._answer(self._request("read_table", params))

    def clean_up_expired_logs(self, root: Any) -> None:
        """The engine's own log cleanup by retention, asked only of a bridge declaring
        ``log_cleanup_by_retention`` (otherwise the vector is declined and skipped)."""
        if Capability.LOG_CLEANUP_BY_RETENTION not in self.process.capabilities:
            why = f"{self.name} cannot run its own log cleanup (no log_cleanup_by_retention)"
            raise ReadFailure("UNSUPPORTED_FEATURE", why)
        result = self._request("clean_up_expired_logs", {"path": str(root)})
        if result is not None:
            self._answer(result)

    def _request(self, method: str, params: Json) -> Any:
        """A request whose UNSUPPORTED answer declines the read (it is skipped)."""
        try:
            return self.process.request(method, params)
        except Unsupported as unsupported:
            raise ReadFailure("UNSUPPORTED_FEATURE", str(unsupported)) from unsupported

    def _answer(self, result: Any) -> Json:
        if isinstance(result, dict) and "error" in result and "version" not in result:
            raise ReadFailure(str(result["error"]), str(result.get("message", "")))
        return cast(Json, result)

    def rows(self, root: Any, version: int | None) -> JsonRows | None:
        """``read_rows``, asked only of a bridge declaring it (None: the row checks are
        skipped); the rows in the JSON of spec/bridge.md, typed by what they are compared with."""
        if Capability.READ_ROWS not in self.process.capabilities:
            return None
        result = self._request("read_rows", {"path": str(root), "version": version})
        if isinstance(result, dict) and "error" in result and "rows" not in result:
            self._answer(result)
        return JsonRows.of(result if isinstance(result, dict) else {})
