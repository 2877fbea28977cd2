"""Live delta-spark 4.4.0 behind the adapter interface, at action level.

Every writer is a real ``org.apache.spark.sql.delta.OptimisticTransaction`` driven through py4j
with delta-spark's own API only, so the same code runs on the published jar:

- ``begin``: ``DeltaLog.forTable(spark, path)``, then ``startTransaction(None, snapshot)`` on the
  latest snapshot (``update()``) or on ``getSnapshotAt(v)`` for a writer that begins at ``v``;
- ``read``: ``filterFiles(filters)`` for a filtered scan, ``trackReadPredicates`` plus
  ``trackFilesRead`` when the vector fixes the scanned files (data skipping), ``readWholeTable``,
  ``txnVersion(appId)``; predicates are rendered as Spark SQL and parsed by the session's parser;
- ``stage``: the vector's actions, with the defaults of spec/scenarios.md resolved as the impl
  adapter resolves them, encoded as Delta JSON and parsed by ``Action.fromJson``;
- ``commit``: ``commit`` / ``commitIfNeeded`` with the ``DeltaOperations`` operation named by
  the writer (``ManualUpdate`` for a name that has none); the commitInfo is read back from the
  written log file; a failure is mapped to our kinds by spec/data/conflict_kinds.json.

The engine's commit loop cannot be stepped (no ``COMMIT_STEPS``), it runs one release
(``session.RELEASE``), and its clock is the wall clock, not the vector's ``time``.
The table's version 0 and the unchecked setup commits are written as files, as for the impl.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from deltaspec.impl import codec
from deltaspec.impl.actions import CommitInfo
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.snapshot.delta_log import DeltaLog as ImplLog
from deltaspec.rules import spec_root

from ...harness import actions as staged
from ...harness import outcomes, wire
from ...harness.adapter import (
    ACTION_LEVEL,
    Capability,
    Json,
    TableSetup,
    Unsupported,
    WriterSpec,
)
from ...harness.reads import Read
from ...harness.snapshots import TableSnapshot
from ..table_files.impl_actions import initial_commit as _initial_commit
from ..table_files.impl_actions import to_action
from ..table_files.logfiles import delete_log_below, read_checksum_file, verify_stored_log
from .jvm import (
    checkpoint,
    delta_log,
    delta_package,
    java_view,
    scala_none,
    scala_object,
    scala_seq,
)
from .session import RELEASE, delta_session

FIXED_CONFS = {
    "spark.databricks.delta.history.metricsEnabled": "false",
    "spark.databricks.delta.snapshotPartitions": "1",
}
"""Operation metrics need a command's SQL metrics, which hand-driven transactions do not have;
tables of a few files replay fastest in one partition (the default is 50)."""

SESSION_CONFS = {
    "maxCommitAttempts": "spark.databricks.delta.maxCommitAttempts",
    "skipRecordingEmptyCommits": "spark.databricks.delta.skipRecordingEmptyCommits",
}
"""Vector session config → the delta-spark SQL conf that sets it."""


@cache
def _kinds() -> tuple[dict[str, str], dict[str, str], dict[str, list[str]]]:
    """(exception class → conflict kind, error class → error kind, exception class → error kinds)
    from spec/data/conflict_kinds.json, the one source of these names."""
    data = json.loads((spec_root() / "data" / "conflict_kinds.json").read_text(encoding="utf-8"))
    conflicts = {entry["exception"]: kind for kind, entry in data["conflicts"].items()}
    by_error_class = {
        error_class: kind
        for kind, entry in data["errors"].items()
        for error_class in [entry["error_class"], *entry.get("other_error_classes", ())]
        if error_class
    }
    by_exception: dict[str, list[str]] = {}
    for kind, entry in data["errors"].items():
        if not entry["error_class"]:
            by_exception.setdefault(entry["exception"], []).append(kind)
    return conflicts, by_error_class, by_exception


def _java_throwable(error: BaseException) -> Any | None:
    """The Java exception behind a py4j or PySpark exception, if any."""
    for attribute in ("java_exception", "_origin"):
        throwable = getattr(error, attribute, None)
        if throwable is not None:
            return throwable
    return None


def _class_names(throwable: Any) -> list[str]:
    names = []
    cls = throwable.getClass()
    while cls is not None:
        names.append(str(cls.getName()))
        cls = cls.getSuperclass()
    return names


def _error_class(throwable: Any) -> str | None:
    for method in ("getCondition", "getErrorClass"):
        try:
            value = getattr(throwable, method)()
        except Exception:
            continue
        if value:
            return str(value)
    return None


_WINNER = re.compile(r"committed at version (\d+)")
_CONFLICTING_COMMIT = re.compile(r"Conflicting commit: (\{.*\})")
_CONFLICTING_DOMAIN = re.compile(r"conflicting metadata domain (\S+) is added")


def outcome_of(error: BaseException) -> Json | None:
    """Our outcome for a delta-spark failure, or None when it is not one the spec names.

    delta-spark's Python package turns its conflict exceptions into ``delta.exceptions`` classes
    named as the Java ones (without the Java object); anything else keeps its Java throwable.
    """
    conflicts, by_error_class, by_exception = _kinds()
    throwable = _java_throwable(error)
    if throwable is not None:
        names = _class_names(throwable)
        message = str(throwable.getMessage() or "")
    elif type(error).__module__.startswith("delta.exceptions"):
        names = [f"io.delta.exceptions.{type(error).__name__}"]
        message = str(error)
    else:
        return None
    for name in names:  # io.delta.exceptions.X extends org.apache.spark.sql.delta.X
        if name in conflicts:
            out: Json = {"conflict": conflicts[name]}
            winner = _WINNER.search(message)
            if winner:
                out["winner"] = int(winner.group(1))
            elif (commit := _CONFLICTING_COMMIT.search(message)) is not None:
                out["winning_commit"] = json.loads(commit.group(1))
            else:
                domain = _CONFLICTING_DOMAIN.search(message)
                out["winning_commit"] = None
                out["winning_domain"] = None if domain is None else domain.group(1)
            return out
    error_class = None if throwable is None else _error_class(throwable)
    if error_class is not None:
        for known, kind in by_error_class.items():
            if error_class == known or error_class.startswith(known + "."):
                return {"error": kind}
    # only the exception's own class: a subclass of a broad class such as
    # IllegalArgumentException (SparkNumberFormatException, say) is some other failure
    for name in names[:1]:
        candidates = by_exception.get(name, [])
        if len(candidates) > 1:  # e.g. AssertionError: told apart by what changed twice
            candidates = [k for k in candidates if k.split("_")[0].lower() in message.lower()]
        if candidates:
            return {"error": candidates[0]}
    return None


def _sql_literal(value: Any, spark_type: str) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value).replace("\\", "\\\\").replace("'", "\\'")
    if spark_type == "date":
        return f"DATE'{text}'"
    if spark_type in {"timestamp", "timestamp_ntz"}:
        return f"TIMESTAMP'{text}'"
    if spark_type == "string" or spark_type == "binary" or isinstance(value, str):
        return f"CAST('{text}' AS {spark_type.upper()})" if spark_type != "string" else f"'{text}'"
    return repr(value)


_COMPARISONS = {"=", "!=", "<", "<=", ">", ">="}


def predicate_sql(form: Sequence[Any], types: dict[str, str]) -> str:
    """Spark SQL for one predicate of spec/scenarios.md's prefix form (PREDICATE.LANGUAGE),
    literals typed by the column they are compared with (PREDICATE.TYPING)."""
    head, rest = form[0], list(form[1:])
    if head in {"true", "false"}:
        return str(head)
    if head in {"and", "or"}:
        return "(" + f" {head.upper()} ".join(predicate_sql(r, types) for r in rest) + ")"
    if head == "not":
        return f"(NOT {predicate_sql(rest[0], types)})"
    column = f"`{rest[0]}`"
    kind = types.get(rest[0], "string")
    if head in _COMPARISONS:
        op = "<>" if head == "!=" else head
        return f"({column} {op} {_sql_literal(rest[1], kind)})"
    if head == "in":
        return f"({column} IN ({', '.join(_sql_literal(v, kind) for v in rest[1])}))"
    if head == "is_null":
        return f"({column} IS NULL)"
    if head == "is_not_null":
        return f"({column} IS NOT NULL)"
    raise ValueError(f"not a predicate: {form!r}")


class _Writer:
    def __init__(self, txn: Any, spec: WriterSpec, version: int | None) -> None:
        self.txn = txn
        self.spec = spec
        self.version = version
        self.actions: list[Any] = []
        self.staged: list[Json] = []


class DeltaSparkAdapter:
    """Real delta-spark transactions on real files under ``root``."""

    name = "deltaspark"
    capabilities = (ACTION_LEVEL - {Capability.COMMIT_STEPS}) | {
        Capability.LOG_CLEANUP,
        Capability.CHECKSUMS,
    }
    releases = frozenset({RELEASE})
    """The one release this engine runs (the oracle draws only it)."""
    wall_clock = True
    """Commit timestamps and tombstone expiry follow the engine's clock, not the vector's."""

    def __init__(self, root: Path, session: Any | None = None) -> None:
        self.root = root
        self.path = str(root)
        self.spark = session if session is not None else delta_session()
        self.jvm = self.spark._jvm
        self.delta = delta_package(self.spark)
        self.writers: dict[str, _Writer] = {}
        self.confs: dict[str, str | None] = {}
        self.store = LocalLogStore(root)

    # --- py4j helpers -------------------------------------------------------------------------

    def _none(self) -> Any:
        return scala_none(self.spark)

    def _some(self, value: Any) -> Any:
        return self.jvm.scala.Option.apply(value)

    def _seq(self, items: Sequence[Any]) -> Any:
        return scala_seq(self.spark, items)

    def _map(self, mapping: dict[str, str]) -> Any:
        java_map = self.jvm.java.util.HashMap()
        for key, value in mapping.items():
            java_map.put(key, value)
        return self.jvm.org.apache.spark.api.python.PythonUtils.toScalaMap(java_map)

    def _list(self, seq: Any) -> list[Any]:
        """A Scala Seq as a Python list."""
        return list(java_view(self.spark, seq))

    def _log(self) -> Any:
        return delta_log(self.spark, self.path)

    def _inner(self, name: str) -> Any:
        return getattr(self.delta, f"DeltaOperations${name}")

    def _object(self, name: str) -> Any:
        return scala_object(self.delta, f"DeltaOperations${name}")

    # --- the adapter ----------------------------------------------------------------------------

    def create(self, setup: TableSetup) -> None:
        if setup.profile not in (None, RELEASE):
            raise Unsupported(
                f"deltaspark runs delta-spark {RELEASE}; this vector is for release {setup.profile}"
            )
        unknown = sorted(set(setup.config) - set(SESSION_CONFS))
        if unknown:
            raise Unsupported(f"delta-spark has no session setting for {unknown}")
        settings = {SESSION_CONFS[key]: value for key, value in setup.config.items()}
        for conf, value in {**FIXED_CONFS, **settings}.items():
            self.confs[conf] = self.spark.conf.get(conf, None)
            self.spark.conf.set(conf, str(value).lower() if isinstance(value, bool) else value)
        if setup.table is not None:
            self.store.write_new(commit_name(0), codec.encode_commit(_initial_commit(setup.table)))
        impl_log = ImplLog(self.path, store=self.store)
        for commit in setup.commits:
            version = impl_log.latest_version() + 1
            base = impl_log.snapshot() if version > 0 else None
            actions = [to_action(a, base, 0) for a in commit]
            self.store.write_new(commit_name(version), codec.encode_commit(actions))

    def begin(
        self, writer: str, spec: WriterSpec, version: int | None, now: int
    ) -> outcomes.Outcome | None:
        failed = self._begin(writer, spec, version)
        return None if failed is None else wire.outcome_from_wire(failed)

    def _begin(self, writer: str, spec: WriterSpec, version: int | None) -> Json | None:
        log = self._log()
        try:
            if version is None:
                snapshot = log.update(False, self._none(), self._none())
            elif version == -1:
                snapshot = None
            else:
                if log.update(False, self._none(), self._none()).version() < 0:
                    return {"error": "TABLE_NOT_FOUND"}
                snapshot = log.getSnapshotAt(version, self._none(), self._none(), False)
        except Exception as error:
            failed = outcome_of(error)
            if failed is None:
                raise
            return failed
        if snapshot is None:
            txn = log.startTransaction(self._none(), self._none())
        else:
            txn = log.startTransaction(self._none(), self._some(snapshot))
        self.writers[writer] = _Writer(txn, spec, version)
        return None

    def _column_types(self, txn: Any) -> dict[str, str]:
        schema = txn.snapshot().metadata().schemaString()
        if not schema:
            return {}
        fields = json.loads(str(schema)).get("fields", [])
        return {f["name"]: f["type"] for f in fields if isinstance(f.get("type"), str)}

    def _expressions(self, txn: Any, forms: Sequence[Any]) -> Any:
        types = self._column_types(txn)
        parser = self.spark._jsparkSession.sessionState().sqlParser()
        return self._seq([parser.parseExpression(predicate_sql(f, types)) for f in forms])

    def _live_files(self, txn: Any, paths: Sequence[str]) -> Any:
        wanted = set(paths)
        files = list(txn.snapshot().allFiles().collectAsList())
        found = [f for f in files if str(f.path()) in wanted]
        if len(found) != len(wanted):
            raise ValueError(f"read files {sorted(wanted)} are not all live")
        return self._seq(found)

    def read(self, writer: str, read: Read) -> None:
        self._read(writer, wire.to_wire(read))

    def _read(self, writer: str, read: Json) -> None:
        txn = self.writers[writer].txn
        if "filter" in read:
            filters = self._expressions(txn, read["filter"])
            if "files" in read:
                txn.trackReadPredicates(filters, False, True)
                txn.trackFilesRead(self._live_files(txn, read["files"]))
            else:
                txn.filterFiles(filters, False)
            return
        if "predicate" in read:
            txn.trackReadPredicates(self._expressions(txn, [read["predicate"]]), True, True)
        if "files" in read:
            txn.trackFilesRead(self._live_files(txn, read["files"]))
        if read.get("whole_table"):
            txn.readWholeTable()
        if "app_id" in read:
            txn.txnVersion(read["app_id"])

    def stage(self, writer: str, actions: Sequence[staged.Action], now: int) -> None:
        state = self.writers[writer]
        base = None
        if state.txn.snapshot().version() >= 0:
            base = ImplLog(self.path, store=self.store).snapshot(
                int(state.txn.snapshot().version())
            )
        for data in actions:
            action = to_action(data, base, now)
            if isinstance(action, CommitInfo):
                raise Unsupported("delta-spark writes its own commitInfo; a staged one is not sent")
            line = codec.encode_commit([action]).decode("utf-8").strip()
            state.actions.append(self.delta.actions.Action.fromJson(line))
            state.staged.append(wire.to_wire(data))

    def _operation(self, state: _Writer) -> Any:
        name = state.spec.operation
        none = self._none()
        kinds = {next(iter(a)) for a in state.staged}
        if name == "WRITE":
            mode = self.jvm.org.apache.spark.sql.SaveMode
            chosen = mode.Overwrite if "remove" in kinds else mode.Append
            return self._inner("Write")(chosen, none, none, none, none, none, none, none, none)
        if name == "DELETE":
            return self._inner("Delete")(self._seq([]))
        if name == "UPDATE":
            return self._inner("Update")(none)
        if name == "MERGE":
            empty = self._seq([])
            return self._inner("Merge")(none, none, none, none, empty, empty, empty)
        if name == "OPTIMIZE":
            return self._inner("Optimize")(self._seq([]), self._seq([]), False, none, False)
        if name == "SET TBLPROPERTIES":
            properties = {}
            for data in state.staged:
                properties.update(data.get("metaData", {}).get("configuration", {}))
            return self._inner("SetTableProperties")(self._map(properties))
        if name == "UNSET TBLPROPERTIES":
            return self._inner("UnsetTableProperties")(self._seq([]), False)
        if name == "STREAMING UPDATE":
            append = self.jvm.org.apache.spark.sql.streaming.OutputMode.Append()
            return self._inner("StreamingUpdate")(append, "deltaspec", 0, none)
        if name == "UPGRADE PROTOCOL":
            protocol = next(
                (a for a in state.actions if "Protocol" in str(a.getClass().getName())), None
            )
            if protocol is not None:
                return self._inner("UpgradeProtocol")(protocol)
        if name == "CREATE TABLE":
            metadata = next(
                (a for a in state.actions if "Metadata" in str(a.getClass().getName())), None
            )
            if metadata is not None:
                return self._inner("CreateTable")(metadata, False, False, none)
        if name == "ADD COLUMNS":
            return self._inner("AddColumns")(self._seq([]))
        if name == "COMPUTE STATS":
            return self._inner("ComputeStats")(self._seq([]))
        if name == "DROP FEATURE":
            return self._inner("DropTableFeature")("unknown", False)
        return self._object("ManualUpdate")

    def commit(self, writer: str, now: int) -> outcomes.Outcome:
        return wire.outcome_from_wire(self._commit(writer))

    def _commit(self, writer: str) -> Json:
        state = self.writers[writer]
        operation = self._operation(state)
        wanted = state.spec.changes_data
        if wanted is not None and wanted != bool(operation.changesData()):
            raise Unsupported(
                f"delta-spark takes changesData from the operation ({state.spec.operation} "
                f"changes data: {bool(operation.changesData())}); no override to {wanted}"
            )
        actions = self._seq(state.actions)
        try:
            if state.spec.commit_if_needed:
                landed = state.txn.commitIfNeeded(actions, operation, self._map({}))
                version = None if landed.isEmpty() else int(landed.get())
            else:
                version = int(state.txn.commit(actions, operation))
        except Exception as error:
            failed = outcome_of(error)
            if failed is None:
                raise
            if "winning_commit" in failed:
                winner = self._winner(
                    int(state.txn.readVersion()),
                    failed.pop("winning_commit"),
                    failed.pop("winning_domain", None),
                )
                if winner is not None:
                    failed["winner"] = winner
            return failed
        if version is None:
            return {"skipped": True}
        return {"committed": version, "commit_info": self._commit_info(version)}

    def _winner(
        self, read_version: int, commit_info: Json | None, domain: str | None = None
    ) -> int | None:
        """The winning version of a conflict whose message does not give it: the one commit after
        the loser's read version whose commitInfo is the one the message quotes; for a domain
        conflict (the message names the domain only), the first commit after the read version
        that sets that domain."""
        latest = max(
            (int(p.stem) for p in (self.root / "_delta_log").glob("*.json") if p.stem.isdigit()),
            default=-1,
        )
        candidates = list(range(read_version + 1, latest + 1))
        if commit_info is None and domain is not None:
            for version in candidates:
                text = (self.root / "_delta_log" / commit_name(version)).read_text("utf-8")
                lines = (json.loads(line) for line in text.splitlines() if line.strip())
                if any(a.get("domainMetadata", {}).get("domain") == domain for a in lines):
                    return version
            return None
        if commit_info is not None:
            candidates = [
                v
                for v in candidates
                if all(self._commit_info(v).get(k) == value for k, value in commit_info.items())
            ]
        return candidates[0] if len(candidates) == 1 else None

    def _commit_info(self, version: int) -> Json:
        text = (self.root / "_delta_log" / commit_name(version)).read_text(encoding="utf-8")
        for line in text.splitlines():
            action = json.loads(line)
            if "commitInfo" in action:
                return dict(action["commitInfo"])
        return {}

    def try_write(self, writer: str, now: int) -> outcomes.Outcome:
        raise Unsupported("delta-spark's commit loop cannot be stepped")

    def resolve(self, writer: str) -> outcomes.Outcome:
        raise Unsupported("delta-spark's commit loop cannot be stepped")

    def checkpoint(self, version: int, now: int) -> None:
        checkpoint(self.spark, self.path, version)

    def clean_up_log(self, version: int, now: int) -> None:
        delete_log_below(self.root, version)

    def checksum(self, version: int) -> Json | None:
        return read_checksum_file(self.root, version)

    def snapshot(self, version: int | None = None) -> TableSnapshot:
        return wire.snapshot_from_wire(self._snapshot(version))

    def _snapshot(self, version: int | None) -> Json:
        log = self._log()
        if log.update(False, self._none(), self._none()).version() < 0:
            return {} if version not in (None, -1) else {"version": -1}
        try:
            if version is None:
                snap = log.update(False, self._none(), self._none())
            else:
                snap = log.getSnapshotAt(version, self._none(), self._none(), False)
        except Exception as error:
            if outcome_of(error) is None:
                raise
            return {}
        return self._snapshot_json(snap)

    def _snapshot_json(self, snap: Any) -> Json:
        def rows(dataset: Any) -> list[Json]:
            return [json.loads(str(r)) for r in dataset.toJSON().collectAsList()]

        files = rows(snap.allFiles())
        metadata = json.loads(str(snap.metadata().json()))["metaData"]
        protocol = json.loads(str(snap.protocol().json()))["protocol"]
        for key in ("readerFeatures", "writerFeatures"):
            if key in protocol and protocol[key] is not None:
                protocol[key] = sorted(protocol[key])
            else:
                protocol.pop(key, None)
        txns = [json.loads(str(t.json()))["txn"] for t in self._list(snap.setTransactions())]
        domains = [
            json.loads(str(d.json()))["domainMetadata"] for d in self._list(snap.domainMetadata())
        ]
        return {
            "version": int(snap.version()),
            "files": sorted(f["path"] for f in files),
            "app_txns": {t["appId"]: t["version"] for t in sorted(txns, key=lambda t: t["appId"])},
            "domains": {
                d["domain"]: d["configuration"]
                for d in sorted(domains, key=lambda d: d["domain"])
                if not d.get("removed")
            },
            "tombstones": sorted(r["path"] for r in rows(snap.tombstones())),
            "stats": {f["path"]: f.get("stats") for f in sorted(files, key=lambda f: f["path"])},
            "row_ids": {
                f["path"]: [f.get("baseRowId"), f.get("defaultRowCommitVersion")]
                for f in sorted(files, key=lambda f: f["path"])
            },
            "properties": dict(metadata.get("configuration", {})),
            "schema": metadata.get("schemaString"),
            "partition_columns": list(metadata.get("partitionColumns", [])),
            "protocol": protocol,
        }

    def checkpoints(self) -> tuple[int, ...]:
        versions = set()
        for info in self.store.list_from():
            match = re.match(r"^(\d{20})\.checkpoint\.", info.name)
            if match:
                versions.add(int(match.group(1)))
        return tuple(sorted(versions))

    def verify(self) -> list[str]:
        return verify_stored_log(self.store, ImplLog(self.path, store=self.store))

    def close(self) -> None:
        self.writers.clear()
        # delta-spark caches every DeltaLog (and its snapshots) per path: forget this table's,
        # or a long run over many scratch tables fills the driver's heap
        hadoop_path = self.jvm.org.apache.hadoop.fs.Path(self.path)
        self.delta.DeltaLog.invalidateCache(self.spark._jsparkSession, hadoop_path)
        for conf, previous in self.confs.items():
            if previous is None:
                self.spark.conf.unset(conf)
            else:
                self.spark.conf.set(conf, previous)
        self.confs.clear()
