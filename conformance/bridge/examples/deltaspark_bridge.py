"""A bridge to LIVE delta-spark, written from spec/ alone (it imports nothing of deltaspec).

    deltaspec conformance \\
        --adapter "cmd:python conformance/bridge/examples/deltaspark_bridge.py" \\
        --suite scenarios       # or fixtures, logs

It speaks ``deltaspec-bridge/1`` (spec/bridge.md, the messages of spec/bridge/*.schema.json) and
serves each request with delta-spark's own API through py4j: ``DeltaLog.forTable`` (with a
``ManualClock`` that follows the steps' clock), ``startTransaction`` on the latest or an older
snapshot, ``filterFiles`` / ``trackReadPredicates`` / ``trackFilesRead`` / ``readWholeTable`` /
``txnVersion`` for the reads, actions parsed by ``Action.fromJson``, ``commit`` or
``commitIfNeeded`` with the ``DeltaOperations`` case class the writer names, ``checkpoint``, and
``getSnapshotAt`` for snapshots and for ``read_table``. The initial table and the setup commits are
written as files, as spec/scenarios.md describes them (they are not validated).

Capabilities: ``actions``, ``checkpoint``, ``time_travel``, ``read_table`` (with
``read_table_timestamp``), ``log_cleanup`` (the files below a checkpoint deleted), ``checksums``
(the ``<v>.crc`` files delta-spark writes), ``log_cleanup_by_retention`` (delta-spark's own
``doLogCleanup`` on a table on disk). Declined with
``UNSUPPORTED`` (the vector is skipped): other releases than 4.4.0 (``profile``), a
``changes_data`` that differs from the operation's own flag, operation names with no
``DeltaOperations`` class here, and ``begin`` at version -1 of an existing table. There is no
``commit_steps``: delta-spark's commit loop is not driven one attempt at a time by a public API.

Where delta-spark comes from: ``--delta-spark DIR`` (a directory with ``jars/`` and
``python/``), ``--delta-spark maven:GROUP:ARTIFACT:VERSION`` (the published jar), else
``$DELTASPEC_DELTA_SPARK``, else ``../shared/delta-spark`` next to the repository.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
import tempfile
import traceback
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

PROTOCOL = "deltaspec-bridge/1"
RELEASE = "4.4.0"
CAPABILITIES = [
    "actions", "checkpoint", "time_travel", "read_table", "read_table_timestamp", "log_cleanup",
    "checksums", "log_cleanup_by_retention",
]  # fmt: skip
CONF = {  # scenarios.md `config` -> the delta-spark session setting
    "maxCommitAttempts": "spark.databricks.delta.maxCommitAttempts",
    "skipRecordingEmptyCommits": "spark.databricks.delta.skipRecordingEmptyCommits",
}
CONFLICTS = {  # delta-spark exception class (simple name) -> conflict kind of scenarios.md
    "ProtocolChangedException": "PROTOCOL_CHANGED",
    "MetadataChangedException": "METADATA_CHANGED",
    "ConcurrentTransactionException": "CONCURRENT_TRANSACTION",
    "ConcurrentAppendException": "CONCURRENT_APPEND",
    "ConcurrentDeleteReadException": "CONCURRENT_DELETE_READ",
    "ConcurrentDeleteDeleteException": "CONCURRENT_DELETE_DELETE",
    "ConcurrentWriteException": "CONCURRENT_WRITE",
    "ConcurrentModificationException": "CONCURRENT_MODIFICATION",
}
ERRORS = (  # a marker in delta-spark's error class or message -> error kind (scenarios.md)
    ("MAX_COMMIT_RETRIES_EXCEEDED", "MAX_COMMIT_RETRIES_EXCEEDED"),
    ("APPEND_ONLY", "APPEND_ONLY_VIOLATION"),
    ("METADATA_ABSENT", "METADATA_ABSENT"),
    ("DUPLICATE_ACTIONS", "DUPLICATE_ACTIONS"),
    ("SET_TRANSACTION", "DUPLICATE_SET_TRANSACTION"),
    ("SetTransaction actions", "DUPLICATE_SET_TRANSACTION"),  # 'Two SetTransaction actions …'
    ("ROW_ID_ASSIGNMENT_WITHOUT_STATS", "ROW_ID_ASSIGNMENT_WITHOUT_STATS"),
    ("change the metadata more than once", "METADATA_CHANGED_TWICE"),
    ("change the protocol more than once", "PROTOCOL_CHANGED_TWICE"),
    ("INVALID_PARTITIONING_SCHEMA", "INVALID_PARTITIONING_SCHEMA"),
    ("PROTOCOL_DOWNGRADE", "PROTOCOL_DOWNGRADE"),
    ("DUPLICATE_DOMAIN_METADATA", "DUPLICATE_DOMAIN_METADATA"),
    ("DOMAIN_METADATA_NOT_SUPPORTED", "DOMAIN_METADATA_UNSUPPORTED"),
    ("INVALID_ISOLATION_LEVEL", "INVALID_ISOLATION_LEVEL"),
    ("INVALID_TABLE_PROPERTY", "INVALID_TABLE_PROPERTY"),
    ("ADDING_DELETION_VECTORS_DISALLOWED", "DELETION_VECTORS_DISALLOWED"),
    ("DELETION_VECTOR_MISSING_NUM_RECORDS", "DELETION_VECTOR_MISSING_NUM_RECORDS"),
    ("DELETION_VECTORS_WITH_TIGHT_BOUNDS", "DELETION_VECTOR_TIGHT_BOUNDS"),
)
READ_ERRORS = (  # a marker in delta-spark's error class or message -> log-vectors.md kind
    ("TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION", "TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"),
    ("TIMESTAMP_GREATER_THAN_COMMIT", "TIMESTAMP_GREATER_THAN_COMMIT"),
    ("URISyntaxException", "UNSAFE_PATH"),  # PATH.DATA_FILE: java.net.URI refuses the path
    ("VERSIONS_NOT_CONTIGUOUS", "VERSIONS_NOT_CONTIGUOUS"),
    ("TRUNCATED_TRANSACTION_LOG", "VERSIONS_NOT_CONTIGUOUS"),  # no start: commits before are gone
    ("STATE_RECOVER", "MISSING_PROTOCOL_OR_METADATA"),
    ("UNSUPPORTED_FEATURES", "UNSUPPORTED_FEATURE"),
    ("TABLE_FEATURES", "UNSUPPORTED_FEATURE"),
    ("INVALID_PROTOCOL_VERSION", "UNSUPPORTED_PROTOCOL"),
    ("NOT_A_DELTA_TABLE", "TABLE_NOT_FOUND"),
    ("TABLE_NOT_FOUND", "TABLE_NOT_FOUND"),
    ("EMPTY_DIRECTORY", "TABLE_NOT_FOUND"),
    ("CORRUPT_LOG_FILE", "CORRUPT_LOG_FILE"),
    ("FAILED_READ_FILE.NO_HINT", "CORRUPT_LOG_FILE"),  # a commit line that does not parse
    ("VERSION", "VERSION_NOT_FOUND"),
    ("FILE_NOT_FOUND", "VERSION_NOT_FOUND"),
)
SQL_TYPES = {"long": "BIGINT", "integer": "INT", "short": "SMALLINT", "byte": "TINYINT"}
COMPARISONS = {"=", "!=", "<", "<=", ">", ">="}
COMMIT_FILE = re.compile(r"^\d{20}\.json$")
CHECKPOINT_FILE = re.compile(
    r"^(\d{20})\.checkpoint(\.\d+\.\d+\.parquet|\.[0-9a-f-]+\.(parquet|json)|\.parquet)$"
)  # classic, multi-part, or a v2 top-level file (UUID-named, JSON or Parquet: spec/checkpoint.md)


class Unsupported(Exception):
    """The request is one this bridge declines (UNSUPPORTED)."""


class BadRequest(Exception):
    """The request is malformed or out of order (BAD_REQUEST)."""


# --- the Spark session and py4j helpers -------------------------------------------------------


def delta_spark_source(argv: list[str]) -> str:
    if "--delta-spark" in argv:
        return argv[argv.index("--delta-spark") + 1]
    default = Path(__file__).resolve().parents[3] / ".." / "shared" / "delta-spark"
    return os.environ.get("DELTASPEC_DELTA_SPARK", str(default))


def start_spark(source: str) -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master("local[2]").appName("deltaspark-bridge")
    if source.startswith("maven:"):
        builder = builder.config("spark.jars.packages", source.removeprefix("maven:"))
    else:
        jars = sorted(str(p) for p in (Path(source) / "jars").glob("*.jar"))
        builder = builder.config("spark.jars", ",".join(jars))
    settings = {
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
        "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.databricks.delta.history.metricsEnabled": "false",
        "spark.sql.shuffle.partitions": "2",
        "spark.databricks.delta.snapshotPartitions": "2",
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@dataclass
class Jvm:
    """Conversions between Python values and the Scala values delta-spark's API takes."""

    spark: Any

    @property
    def jvm(self) -> Any:
        return self.spark._jvm

    @property
    def delta(self) -> Any:
        return self.jvm.org.apache.spark.sql.delta

    def seq(self, items: list[Any]) -> Any:
        java = self.jvm.java.util.ArrayList()
        for item in items:
            java.add(item)
        return self.jvm.scala.jdk.javaapi.CollectionConverters.asScala(java).toList()

    def items(self, seq: Any) -> list[Any]:
        return list(self.jvm.scala.jdk.javaapi.CollectionConverters.asJava(seq))

    def none(self) -> Any:
        return self.jvm.scala.Option.empty()

    def some(self, value: Any) -> Any:
        return self.jvm.scala.Option.apply(value)

    def empty_map(self) -> Any:
        return getattr(getattr(self.jvm.scala.collection.immutable, "Map$"), "MODULE$").empty()

    def operation(self, name: str, *leading: Any) -> Any:
        """``DeltaOperations.<name>(leading...)``, the remaining parameters at their Scala
        defaults (so that it works whatever parameters a release adds at the end)."""
        qualified = f"org.apache.spark.sql.delta.DeltaOperations${name}"
        klass = self.jvm.py4j.reflection.ReflectionUtil.classForName(qualified)
        arity = max(c.getParameterCount() for c in klass.getConstructors())
        companion = getattr(getattr(self.delta, f"DeltaOperations${name}$"), "MODULE$")
        defaults = [
            getattr(companion, f"$lessinit$greater$default${i}")()
            for i in range(len(leading) + 1, arity + 1)
        ]
        return getattr(self.delta, f"DeltaOperations${name}")(*leading, *defaults)

    def expression(self, sql: str) -> Any:
        return self.spark._jsparkSession.sessionState().sqlParser().parseExpression(sql)

    def rows(self, dataset: Any, column: str) -> list[Any]:
        return [row[0] for row in self.records(dataset, column)]

    def records(self, dataset: Any, *columns: str) -> list[Any]:
        from pyspark.sql import DataFrame

        return list(DataFrame(dataset.toDF(), self.spark).select(*columns).collect())


def java_failure(error: Exception) -> tuple[list[str], str] | None:
    """The class names (with superclasses) and text of a Java exception, or None."""
    # py4j's Py4JJavaError carries it as java_exception; PySpark's converted errors as _origin
    java = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    if java is None:
        return None
    names, cls = [], java.getClass()
    while cls is not None:
        names.append(cls.getSimpleName())
        cls = cls.getSuperclass()
    text = str(java.toString())
    with contextlib.suppress(Exception):  # not a SparkThrowable: no error class
        text = f"{java.getErrorClass()} {text}"
    return names, text


def java_causes(error: Exception) -> str:
    """The causes of a Java exception, innermost last, for a failure's message."""
    java = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    found: list[str] = []
    cause = None if java is None else java.getCause()
    while cause is not None and len(found) < 5:
        found.append(str(cause.toString()))
        cause = cause.getCause()
    return "".join(f"\ncaused by: {c}" for c in found)


def classify(text: str, table: tuple[tuple[str, str], ...]) -> str | None:
    return next((kind for marker, kind in table if marker.lower() in text.lower()), None)


def read_error(error: Exception, fallback: str) -> dict[str, Any]:
    """A Java failure of a table read or cleanup as a log-vectors.md error (``fallback`` when no
    marker of READ_ERRORS matches); an error that is not Java's is raised again."""
    failure = java_failure(error)
    if failure is None:
        raise error
    return {
        "error": classify(failure[1], READ_ERRORS) or fallback,
        "message": (failure[1] + java_causes(error))[:2000],
    }


# --- actions as scenarios.md defaults them ----------------------------------------------------


def schema_string(columns: list[dict[str, Any]]) -> str:
    fields = [
        {"name": c["name"], "type": c["type"], "nullable": c.get("nullable", True), "metadata": {}}
        for c in columns
    ]
    return json.dumps({"type": "struct", "fields": fields}, separators=(",", ":"))


def new_metadata() -> dict[str, Any]:
    return {
        "id": str(uuid.uuid4()),
        "format": {"provider": "parquet", "options": {}},
        "partitionColumns": [],
        "configuration": {},
    }


@dataclass
class State:
    """What the defaults of an action are resolved against: live files and the metadata."""

    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    metadata: dict[str, Any] | None = None

    def apply(self, actions: list[dict[str, Any]]) -> None:
        for action in actions:
            ((kind, body),) = action.items()
            if kind == "add":
                self.files[body["path"]] = body.get("partitionValues", {})
            elif kind == "remove":
                self.files.pop(body["path"], None)
            elif kind == "metaData":
                self.metadata = body


def resolve(action: dict[str, Any], state: State, now: int) -> dict[str, Any]:
    """One action with the defaults of scenarios.md filled in."""
    ((kind, given),) = action.items()
    body = dict(given)
    if kind == "add":
        body = {"partitionValues": {}, "size": 1, "modificationTime": 0, "dataChange": True, **body}
    elif kind == "remove":
        body = {"dataChange": True, "deletionTimestamp": now, **body}
        if "partitionValues" not in body and body["path"] in state.files:
            body["partitionValues"] = state.files[body["path"]]
    elif kind == "metaData":
        if "schema" in body:
            body["schemaString"] = schema_string(body.pop("schema"))
        body = {**(state.metadata or new_metadata()), **body}
    elif kind == "domainMetadata":
        body = {"configuration": "", "removed": False, **body}
    elif kind == "cdc":
        body = {"partitionValues": {}, "size": 1, "dataChange": False, **body}
    return {kind: body}


def version_zero(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The creating commit of scenarios.md, 'The initial table'."""
    metadata = {
        **new_metadata(),
        "id": "deltaspark-bridge-table",
        "schemaString": schema_string(table["schema"]),
        "partitionColumns": table.get("partition_columns", []),
        "configuration": table.get("properties", {}),
    }
    protocol = table.get("protocol", {"minReaderVersion": 1, "minWriterVersion": 2})
    actions: list[dict[str, Any]] = [
        {
            "commitInfo": {
                "timestamp": 0,
                "operation": "CREATE TABLE",
                "operationParameters": {},
                "isBlindAppend": False,
            }
        },
        {"protocol": protocol},
        {"metaData": metadata},
    ]
    for entry in table.get("files", []):
        actions.append(
            {
                "add": {
                    "path": entry["path"],
                    "partitionValues": entry.get("partition", {}),
                    "size": 1,
                    "modificationTime": 0,
                    "dataChange": True,
                }
            }
        )
    for app_id, version in table.get("app_txns", {}).items():
        actions.append({"txn": {"appId": app_id, "version": version}})
    for domain, configuration in table.get("domains", {}).items():
        actions.append(
            {"domainMetadata": {"domain": domain, "configuration": configuration, "removed": False}}
        )
    return actions


def write_commit(log: Path, version: int, actions: list[dict[str, Any]]) -> None:
    log.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(a, separators=(",", ":")) + "\n" for a in actions)
    target = log / f"{version:020d}.json"
    target.write_text(lines, encoding="utf-8")
    os.utime(target, (0, 0))  # written at clock 0


# --- predicates (scenarios.md "Predicates") as Spark SQL --------------------------------------


def sql_literal(value: Any, column_type: str | None) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        text = "TRUE" if value else "FALSE"
    elif isinstance(value, (int, float)):
        text = repr(value)
    else:
        text = "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"
    if column_type is None:
        return text
    return f"CAST({text} AS {SQL_TYPES.get(column_type, column_type.upper())})"


def predicate_sql(predicate: list[Any], types: dict[str, str]) -> str:
    op, args = str(predicate[0]), predicate[1:]
    if op in ("true", "false"):
        return op.upper()
    if op in ("and", "or"):
        return "(" + f" {op.upper()} ".join(predicate_sql(p, types) for p in args) + ")"
    if op == "not":
        return f"(NOT {predicate_sql(args[0], types)})"
    column = f"`{args[0]}`"
    if op == "is_null":
        return f"({column} IS NULL)"
    if op == "is_not_null":
        return f"({column} IS NOT NULL)"
    if op == "in":
        values = ", ".join(sql_literal(v, types.get(args[0])) for v in args[1])
        return f"({column} IN ({values}))"
    if op in COMPARISONS:
        return f"({column} {'<>' if op == '!=' else op} {sql_literal(args[1], types.get(args[0]))})"
    raise BadRequest(f"unknown predicate form {op!r}")


# --- operations -------------------------------------------------------------------------------


def operation(jvm: Jvm, name: str, actions: Any, snapshot: Any) -> Any:
    """The DeltaOperations case class delta-spark records for the operation `name`."""
    nil, none = jvm.seq([]), jvm.none()
    parsed = jvm.items(actions)
    metadata = next((a for a in parsed if a.getClass().getSimpleName() == "Metadata"), None)
    protocol = next((a for a in parsed if a.getClass().getSimpleName() == "Protocol"), None)
    append = jvm.jvm.org.apache.spark.sql.SaveMode.Append
    build = {
        "WRITE": lambda: jvm.operation("Write", append),
        "DELETE": lambda: jvm.operation("Delete", nil),
        "UPDATE": lambda: jvm.operation("Update", none),
        "MERGE": lambda: jvm.operation("Merge", none, none, none, none, nil, nil, nil),
        "OPTIMIZE": lambda: jvm.operation("Optimize", nil),
        "SET TBLPROPERTIES": lambda: jvm.operation("SetTableProperties", jvm.empty_map()),
        "UNSET TBLPROPERTIES": lambda: jvm.operation("UnsetTableProperties", nil, True),
        "DROP FEATURE": lambda: jvm.operation("DropTableFeature", "", False),
        "ADD COLUMNS": lambda: jvm.operation("AddColumns", nil),
        "UPGRADE PROTOCOL": lambda: jvm.operation(
            "UpgradeProtocol", protocol or snapshot.protocol()
        ),
        "CREATE TABLE": lambda: jvm.operation(
            "CreateTable", metadata or snapshot.metadata(), False, False, none
        ),
        "STREAMING UPDATE": lambda: jvm.operation(
            "StreamingUpdate",
            jvm.jvm.org.apache.spark.sql.streaming.OutputMode.Append(),
            "bridge",
            0,
            none,
        ),
    }
    if name not in build:
        raise Unsupported(f"no DeltaOperations case class for operation {name!r} in this bridge")
    return build[name]()


# --- one table's writers ----------------------------------------------------------------------


@dataclass
class Writer:
    """One transaction: delta-spark's OptimisticTransaction and what was staged on it."""

    txn: Any
    operation: str
    state: State
    types: dict[str, str]
    commit_if_needed: bool = True
    actions: list[dict[str, Any]] = field(default_factory=list)
    outcome: dict[str, Any] | None = None


def snapshot_state(jvm: Jvm, snapshot: Any) -> tuple[State, dict[str, str]]:
    """The live files and metadata of a delta-spark snapshot, and its column types."""
    if snapshot.version() < 0:
        return State(), {}
    frame_rows = jvm.rows(snapshot.allFiles(), "path")
    values = jvm.rows(snapshot.allFiles(), "partitionValues")
    files = {path: dict(pv or {}) for path, pv in zip(frame_rows, values, strict=True)}
    metadata = json.loads(snapshot.metadata().json())["metaData"]
    schema = json.loads(metadata.get("schemaString") or '{"fields": []}')
    types = {f["name"]: f["type"] for f in schema["fields"] if isinstance(f["type"], str)}
    return State(files, metadata), types


def snapshot_json(jvm: Jvm, snapshot: Any) -> dict[str, Any]:
    """The `snapshot` result of spec/bridge.md for one delta-spark snapshot."""
    if snapshot.version() < 0:
        return {"version": -1}
    metadata = json.loads(snapshot.metadata().json())["metaData"]
    protocol = json.loads(snapshot.protocol().json())["protocol"]
    domains = {
        d.domain(): d.configuration()
        for d in jvm.items(snapshot.domainMetadata())
        if not d.removed()
    }
    txns = {t.appId(): t.version() for t in jvm.items(snapshot.setTransactions())}
    for features in ("readerFeatures", "writerFeatures"):  # sets: sorted (spec/bridge.md)
        if protocol.get(features) is not None:
            protocol[features] = sorted(protocol[features])
    files = jvm.records(snapshot.allFiles(), "path", "baseRowId", "defaultRowCommitVersion")
    return {
        "version": snapshot.version(),
        "files": sorted(path for path, _, _ in files),
        "row_ids": {p: [base, commit] for p, base, commit in sorted(files, key=lambda r: r[0])},
        "tombstones": sorted(jvm.rows(snapshot.tombstones(), "path")),
        "app_txns": txns,
        "domains": domains,
        "properties": metadata.get("configuration") or {},
        "partition_columns": metadata.get("partitionColumns") or [],
        "protocol": protocol,
    }


def commit_infos(log: Path, after: int) -> list[tuple[int, dict[str, Any]]]:
    """The commitInfo of each commit after version `after` in `log`, by version."""
    found = []
    for path in sorted(log.glob("*.json")):
        if not COMMIT_FILE.match(path.name) or int(path.name[:20]) <= after:
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if '"commitInfo"' in line:
                found.append((int(path.name[:20]), json.loads(line)["commitInfo"]))
    return found


def winner_version(text: str, log: Path, read_version: int) -> int:
    """The winning commit a delta-spark conflict message names (scenarios.md `winner`).

    The message prints the winner's commitInfo after "Conflicting commit:", with its version only
    when the winner's commitInfo carries one; otherwise the commitInfo is looked up in the log
    (its txnId, else the whole object). A winner without a commitInfo falls back to the first
    version after the read."""
    stated = re.search(r"committed at version (\d+)", text) or re.search(
        r'"version"\s*:\s*(\d+)', text
    )
    if stated:
        return int(stated.group(1))
    quoted = re.search(r"Conflicting commit: (\{.*\})\s*$", text, re.MULTILINE)
    if quoted:
        with contextlib.suppress(ValueError):
            info = json.loads(quoted.group(1))
            for version, candidate in commit_infos(log, read_version):
                if candidate == info or (
                    info.get("txnId") is not None and candidate.get("txnId") == info["txnId"]
                ):
                    return version
    return read_version + 1


def failure_outcome(error: Exception, read_version: int, log: Path) -> dict[str, Any]:
    """A delta-spark exception as a conflict or error outcome of scenarios.md."""
    failure = java_failure(error)
    if failure is None:
        raise error
    names, text = failure
    conflict = next((CONFLICTS[n] for n in names if n in CONFLICTS), None)
    if conflict is not None:
        winner = winner_version(text, log, read_version)
        return {"conflict": conflict, "winner": winner, "message": text[:2000]}
    kind = classify(text, ERRORS) or names[0]
    return {"error": kind, "message": text[:2000]}


@dataclass
class Table:
    """The table of the current vector: a fresh directory, its DeltaLog and the writers."""

    jvm: Jvm
    root: Path
    clock: Any
    log: Any = None
    writers: dict[str, Writer] = field(default_factory=dict)

    def delta_log(self) -> Any:
        if self.log is None:
            path = self.jvm.jvm.org.apache.hadoop.fs.Path(str(self.root))
            self.log = self.jvm.delta.DeltaLog.forTable(
                self.jvm.spark._jsparkSession, path, self.clock
            )
        return self.log

    def exists(self) -> bool:
        return any((self.root / "_delta_log").glob("*.json"))

    def at(self, version: int | None) -> Any:
        log = self.delta_log()
        if version is None:
            return log.update(False, self.jvm.none(), self.jvm.none())
        return log.getSnapshotAt(version, self.jvm.none(), self.jvm.none(), False)

    def writer(self, name: str) -> Writer:
        if name not in self.writers:
            raise BadRequest(f"writer {name!r} has not begun")
        return self.writers[name]

    def begin(self, name: str, spec: dict[str, Any], version: int | None, now: int) -> Any:
        self.clock.setTime(now)
        if version is not None and version >= 0 and not self.exists():
            return {"error": "TABLE_NOT_FOUND"}
        if version == -1 and self.exists():
            raise Unsupported(
                "delta-spark cannot start a transaction on the empty state of a table"
            )
        try:
            snapshot = None if version in (None, -1) else self.at(version)
        except Exception as error:
            failure = java_failure(error)
            if failure is None:
                raise
            return {"error": "VERSION_NOT_FOUND", "message": failure[1][:2000]}
        log = self.delta_log()
        txn = (
            log.startTransaction()
            if snapshot is None
            else log.startTransaction(self.jvm.none(), self.jvm.some(snapshot))
        )
        state, types = snapshot_state(self.jvm, txn.snapshot())
        self.writers[name] = Writer(
            txn, spec["operation"], state, types, spec.get("commit_if_needed", True)
        )
        self.check_changes_data(name, spec.get("changes_data"))
        return None

    def check_changes_data(self, name: str, changes_data: bool | None) -> None:
        if changes_data is None:
            return
        writer = self.writers[name]
        op = operation(self.jvm, writer.operation, self.jvm.seq([]), writer.txn.snapshot())
        if bool(op.changesData()) != changes_data:
            raise Unsupported("delta-spark's operations fix changesData; it cannot be overridden")

    def read(self, name: str, read: dict[str, Any]) -> None:
        writer, jvm = self.writer(name), self.jvm
        txn = writer.txn
        if read.get("whole_table"):
            txn.readWholeTable()
        if "app_id" in read:
            txn.txnVersion(read["app_id"])
        if "filter" in read:
            filters = jvm.seq(
                [jvm.expression(predicate_sql(p, writer.types)) for p in read["filter"]]
            )
            if "files" in read:  # the listed files model data skipping
                txn.trackReadPredicates(filters, False, True)
            else:
                txn.filterFiles(filters, False)
        if "predicate" in read:
            predicate = jvm.expression(predicate_sql(read["predicate"], writer.types))
            txn.trackReadPredicates(jvm.seq([predicate]), True, True)
        if "files" in read:
            wanted = set(read["files"])
            adds = [a for a in txn.snapshot().allFiles().collectAsList() if a.path() in wanted]
            txn.trackFilesRead(jvm.seq(adds))

    def stage(self, name: str, actions: list[dict[str, Any]], now: int) -> None:
        writer = self.writer(name)
        writer.actions.extend(resolve(a, writer.state, now) for a in actions)

    def commit(self, name: str, now: int) -> dict[str, Any]:
        writer, jvm = self.writer(name), self.jvm
        if writer.outcome is not None:
            return writer.outcome
        self.clock.setTime(now)
        lines = [json.dumps(a, separators=(",", ":")) for a in writer.actions]
        actions = jvm.seq([jvm.delta.actions.Action.fromJson(line) for line in lines])
        op = operation(jvm, writer.operation, actions, writer.txn.snapshot())
        try:
            if writer.commit_if_needed:
                committed = writer.txn.commitIfNeeded(actions, op, jvm.empty_map())
                version = int(committed.get()) if committed.isDefined() else None
            else:
                version = int(writer.txn.commit(actions, op))
        except Exception as error:
            read_version = int(writer.txn.readVersion())
            writer.outcome = failure_outcome(error, read_version, self.root / "_delta_log")
            return writer.outcome
        writer.outcome = {"skipped": True} if version is None else self.committed(version)
        return writer.outcome

    def committed(self, version: int) -> dict[str, Any]:
        text = (self.root / "_delta_log" / f"{version:020d}.json").read_text(encoding="utf-8")
        infos = [
            json.loads(line)["commitInfo"] for line in text.splitlines() if '"commitInfo"' in line
        ]
        info = next((i for i in infos if isinstance(i, dict)), None)
        return (
            {"committed": version} if info is None else {"committed": version, "commit_info": info}
        )

    def checkpoint(self, version: int, now: int) -> None:
        self.clock.setTime(now)
        self.delta_log().checkpoint(self.at(version), self.jvm.none())

    def clean_up_log(self, version: int) -> None:
        """scenarios.md `clean_up_log`: the files of every version below a checkpointed
        `version` deleted, as log cleanup leaves them (delta-spark's own cleanup goes by file
        times against its retention, which a vector does not fix)."""
        if version not in self.checkpoints():
            raise BadRequest(f"clean_up_log {version}: version {version} has no checkpoint")
        for path in (self.root / "_delta_log").iterdir():
            name = path.name.removeprefix(".")  # Hadoop's .<file>.crc sidecars go with them
            if name[:20].isdigit() and int(name[:20]) < version:
                path.unlink()

    def checkpoints(self) -> list[int]:
        found = (CHECKPOINT_FILE.match(p.name) for p in (self.root / "_delta_log").glob("*"))
        return sorted({int(m.group(1)) for m in found if m})

    def snapshot(self, version: int | None) -> dict[str, Any]:
        if not self.exists():
            return {"version": -1}
        try:
            snapshot = self.at(version)
        except Exception as error:
            if java_failure(error) is None:
                raise
            return {}
        return snapshot_json(self.jvm, snapshot)


# --- the bridge -------------------------------------------------------------------------------


@dataclass
class Bridge:
    """Answers the requests of spec/bridge.md, one at a time."""

    source: str
    jvm_: Jvm | None = None
    table: Table | None = None
    scratch: Path = field(
        default_factory=lambda: Path(tempfile.mkdtemp(prefix="deltaspark-bridge-"))
    )

    @property
    def jvm(self) -> Jvm:
        if self.jvm_ is None:
            self.jvm_ = Jvm(start_spark(self.source))
        return self.jvm_

    def current(self) -> Table:
        if self.table is None:
            raise BadRequest("no table: send create first")
        return self.table

    def create(self, setup: dict[str, Any]) -> None:
        if setup.get("profile") not in (None, RELEASE):
            raise Unsupported(f"this bridge is delta-spark {RELEASE}, not {setup['profile']}")
        self.close()
        jvm = self.jvm
        for key, setting in CONF.items():
            value = setup["config"].get(key)
            if value is None:
                jvm.spark.conf.unset(setting)
            else:
                jvm.spark.conf.set(setting, str(value).lower())
        root = self.scratch / uuid.uuid4().hex
        root.mkdir()
        commits = ([version_zero(setup["table"])] if setup.get("table") else []) + [
            list(c) for c in setup.get("commits", [])
        ]
        state = State()
        for version, actions in enumerate(commits):
            resolved = [resolve(a, state, 0) for a in actions]
            write_commit(root / "_delta_log", version, resolved)
            state.apply(resolved)
        self.table = Table(jvm, root, jvm.jvm.org.apache.spark.util.ManualClock(0))

    def close(self) -> None:
        if self.table is not None:
            shutil.rmtree(self.table.root, ignore_errors=True)
            self.jvm.delta.DeltaLog.clearCache()  # one DeltaLog per vector: do not keep them all
        self.table = None

    def read_table(
        self, path: str, version: int | None, timestamp: int | None = None
    ) -> dict[str, Any]:
        jvm = self.jvm
        jvm.delta.DeltaLog.clearCache()
        try:  # forTable already loads the latest snapshot: a broken log fails here
            log = jvm.delta.DeltaLog.forTable(jvm.spark._jsparkSession, path)
            if timestamp is not None:  # ICT.TIME_TRAVEL: the last version at or before it
                moment = jvm.jvm.java.sql.Timestamp(timestamp)
                commit = log.history().getActiveCommitAtTime(moment, jvm.none(), False, True, False)
                version = int(commit.version())
            if version is None:
                snapshot = log.update(False, jvm.none(), jvm.none())
            elif not any((Path(path) / "_delta_log").glob("*")):
                return {"error": "TABLE_NOT_FOUND", "message": f"no _delta_log at {path}"}
            else:
                try:
                    snapshot = log.getSnapshotAt(version, jvm.none(), jvm.none(), False)
                except Exception as error:
                    failed = read_error(error, "READ_FAILED")
                    if "TRUNCATED_TRANSACTION_LOG" in failed["message"]:
                        # the latest loaded: only this version's commits are gone, as delta-spark's
                        # own time travel says (DELTA_VERSION_NOT_FOUND)
                        failed["error"] = "VERSION_NOT_FOUND"
                    return failed
            return snapshot_json(jvm, snapshot)
        except Exception as error:
            return read_error(error, "READ_FAILED")

    def clean_up_expired_logs(self, path: str) -> dict[str, Any] | None:
        """delta-spark's own log cleanup, as its checkpoint path runs it after writing
        ``_last_checkpoint``: ``doLogCleanup`` on the latest snapshot, with its clock."""
        jvm = self.jvm
        jvm.delta.DeltaLog.clearCache()
        try:
            log = jvm.delta.DeltaLog.forTable(jvm.spark._jsparkSession, path)
            log.doLogCleanup(log.update(False, jvm.none(), jvm.none()), jvm.none())
        except Exception as error:
            return read_error(error, "CLEANUP_FAILED")
        return None

    def answer(self, method: str, params: dict[str, Any]) -> Any:
        if method == "hello":
            return {
                "protocol": PROTOCOL,
                "name": f"delta-spark-{RELEASE}-bridge",
                "capabilities": CAPABILITIES,
            }
        if method == "create":
            return self.create(params["setup"])
        if method == "close":
            return self.close()
        if method == "read_table":
            return self.read_table(params["path"], params.get("version"), params.get("timestamp"))
        if method == "clean_up_expired_logs":
            return self.clean_up_expired_logs(params["path"])
        if method in ("try_write", "resolve"):
            raise Unsupported("delta-spark's commit loop is not driven one attempt at a time")
        if method == "verify":
            return []
        table = self.current()
        if method == "begin":
            return table.begin(
                params["writer"], params["spec"], params.get("version"), params["now"]
            )
        if method == "read":
            return table.read(params["writer"], params["read"])
        if method == "stage":
            return table.stage(params["writer"], params["actions"], params["now"])
        if method == "commit":
            return table.commit(params["writer"], params["now"])
        if method == "checkpoint":
            return table.checkpoint(params["version"], params["now"])
        if method == "clean_up_log":
            return table.clean_up_log(params["version"])
        if method == "checksum":  # the <v>.crc delta-spark wrote after the commit (CHECKSUM.WRITE)
            crc = table.root / "_delta_log" / f"{params['version']:020d}.crc"
            return json.loads(crc.read_text(encoding="utf-8")) if crc.is_file() else None
        if method == "checkpoints":
            return table.checkpoints()
        if method == "snapshot":
            return table.snapshot(params.get("version"))
        raise BadRequest(f"unknown method {method!r}")


def respond(bridge: Bridge, request: dict[str, Any]) -> dict[str, Any]:
    try:
        result = bridge.answer(request["method"], request.get("params") or {})
    except Unsupported as error:
        return {"id": request.get("id"), "error": {"kind": "UNSUPPORTED", "message": str(error)}}
    except (BadRequest, KeyError) as error:
        return {"id": request.get("id"), "error": {"kind": "BAD_REQUEST", "message": repr(error)}}
    except Exception as error:  # anything else fails the vector in progress, not the process
        traceback.print_exc(file=sys.stderr)
        failure = java_failure(error)
        message = failure[1][:2000] if failure else repr(error)
        return {"id": request.get("id"), "error": {"kind": "INTERNAL", "message": message}}
    return {"id": request.get("id"), "result": result}


def protocol_stream() -> TextIO:
    """The real stdout for protocol lines; fd 1 then points at stderr, so that nothing else
    (the JVM, Spark's log) can write to the protocol stream."""
    stream = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    return stream


def main() -> None:
    out = protocol_stream()
    bridge = Bridge(delta_spark_source(sys.argv[1:]))
    source = bridge.source
    if not source.startswith("maven:") and (Path(source) / "python").is_dir():
        sys.path.insert(0, str(Path(source) / "python"))
    try:
        for line in sys.stdin:
            if line.strip():
                out.write(json.dumps(respond(bridge, json.loads(line))) + "\n")
                out.flush()
    finally:
        bridge.close()
        shutil.rmtree(bridge.scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
