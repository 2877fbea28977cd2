"""Live delta-spark behind the adapter interface, at action level: the one delta-spark driver,
``bridge`` (the spec-only bridge program of spec/bridge.md), hosted in this process.

``--adapter deltaspark@X.Y.Z`` runs that program in the release's own pyspark venv and speaks to
it over a pipe (``cmd.BridgeProcess``); ``--adapter deltaspark`` runs its ``Bridge`` here, on the
session of ``session.delta_session()`` (the process's one delta-spark session, shared
with the other delta-spark adapters and the engine pair). Either way every adapter call is one
request of the protocol, written by ``cmd.request_line`` and read back by ``cmd.result_of`` (the
adapter methods are ``cmd.BridgeAdapter``'s), so the in-process engine is judged exactly as the
program would be on the same release.

What the host adds to the bridge: the session's settings the bridge changes for a table
(``SESSION``, the vector's ``config``) are put back when the table closes, as the session outlives
it; and ``verify`` checks what delta-spark stored with our impl's checks of a stored log (the
program answers ``[]``: it has no checks of its own and imports nothing of deltaspec).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ....impl.log.local_store import LocalLogStore
from ....impl.snapshot.delta_log import DeltaLog as ImplLog
from ...harness.adapter import Capability, Json, TableSetup
from ..cmd.adapter import HELLO, BridgeAdapter, handshake, request_line, result_of
from ..table_files.logfiles import verify_stored_log
from . import bridge as driver
from .session import RELEASE, delta_session

NAME = "deltaspark"


class HostedBridge:
    """The bridge's handlers on this process's JVM: a ``cmd.Channel`` without a pipe. Each
    request is the protocol's line and each answer too, so nothing reaches the handlers or comes
    back that the program would not see or write."""

    def __init__(self, spark: Any, scratch: Path) -> None:
        self.bridge = driver.Bridge.hosted(spark, scratch)
        self.name = NAME
        self._next_id = 0
        self.capabilities: frozenset[Capability] = frozenset()
        _, self.capabilities = handshake(self.request("hello", HELLO))

    def request(self, method: str, params: Json | None = None) -> Any:
        ident = self._next_id
        self._next_id += 1
        line = request_line(ident, method, params or {})
        # an INTERNAL error's stack stays here: its message reaches the verdict
        answer = driver.respond(self.bridge, json.loads(line), log=None)
        return result_of(json.dumps(answer), ident, method, self.name)

    @property
    def table_root(self) -> Path | None:
        """The directory of the table the bridge drives now (None: no table)."""
        return None if self.bridge.table is None else self.bridge.table.root


class DeltaSparkAdapter(BridgeAdapter):
    """Real delta-spark transactions on real files under ``root``, driven by the bridge."""

    releases = frozenset({RELEASE})
    """The one release this engine runs (the oracle draws only it)."""
    wall_clock = True
    """The oracle leaves commit timestamps and tombstones out of its comparison with the model:
    kept from when this engine ran on the wall clock (the bridge's ManualClock follows the
    steps; the comparison without is not measured yet)."""

    def __init__(self, root: Path, session: Any | None = None) -> None:
        self.spark = session if session is not None else delta_session()
        self.host = HostedBridge(self.spark, root)
        super().__init__(self.host)
        self._previous: dict[str, str | None] = {}

    def create(self, setup: TableSetup) -> None:
        for conf in (*driver.SESSION, *driver.CONF.values()):
            self._previous.setdefault(conf, self.spark.conf.get(conf, None))
        for conf, value in driver.SESSION.items():
            self.spark.conf.set(conf, value)
        super().create(setup)

    def verify(self) -> list[str]:
        root = self.host.table_root
        if root is None:
            return []
        store = LocalLogStore(root)
        return verify_stored_log(store, ImplLog(str(root), store=store))

    def close(self) -> None:
        super().close()
        for conf, previous in self._previous.items():
            if previous is None:
                self.spark.conf.unset(conf)
            else:
                self.spark.conf.set(conf, previous)
        self._previous.clear()
