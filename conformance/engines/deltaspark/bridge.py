"""A bridge to LIVE delta-spark, written from spec/ alone (it imports nothing of deltaspec).

    deltaspec conformance \\
        --adapter "cmd:python conformance/engines/deltaspark/bridge.py" \\
        --suite scenarios       # or fixtures, logs

It speaks ``deltaspec-bridge/1`` (spec/bridge.md, the messages of spec/bridge/*.schema.json) and
serves each request with delta-spark's own API through py4j: ``DeltaLog.forTable`` (with a
``ManualClock`` that follows the steps' clock), ``startTransaction`` on the latest or an older
snapshot, ``filterFiles`` / ``trackReadPredicates`` / ``trackFilesRead`` / ``readWholeTable`` /
``txnVersion`` for the reads, actions parsed by ``Action.fromJson``, ``commit`` or
``commitIfNeeded`` with the ``DeltaOperations`` case class the writer names, ``checkpoint``, and
``getSnapshotAt`` for snapshots and for ``read_table``. The initial table and the setup commits are
written as files, as spec/scenarios.md describes them (they are not validated).

It runs on every delta-spark release line from 2.1 to 4.4 (Scala 2.12 or 2.13), each with the
PySpark it was built for: the release is read from the engine (``io.delta.VERSION``, else the jar's
manifest or name) and names the bridge in ``hello``. Calls go by what the release has: the
parameters a release adds are filled with their Scala defaults (``Jvm.call``); where an API is
missing the nearest one of that release is used (``withFilesRead`` before ``trackFilesRead``, the
transaction's read predicates before ``trackReadPredicates``, ``commit`` before
``commitIfNeeded``, the ``OptimisticTransaction`` constructor before
``startTransaction(snapshot)``); before 3.0.0 a snapshot has no domains and no row IDs (``{}``,
``[null, null]``). Conflict and error kinds are read from the error
classes a release has, else from its exception classes and messages.

Capabilities: ``actions``, ``checkpoint``, ``time_travel``, ``read_table`` (with
``read_table_timestamp``), ``log_cleanup`` (the files below a checkpoint deleted), ``checksums``
(the ``<v>.crc`` files delta-spark writes), ``log_cleanup_by_retention`` (delta-spark's own
``doLogCleanup`` on a table on disk). Declined with ``UNSUPPORTED`` (the vector is skipped): a
``profile`` other than the newest (4.4.0) outside the engine's own minor line, a table whose
protocol the release cannot read or write, a ``changes_data`` that differs from the operation's own
flag, operation names with no ``DeltaOperations`` class here or in the release, and ``begin`` at
version -1 of an existing table. There is no ``commit_steps``: delta-spark's commit loop is not
driven one attempt at a time by a public API.

Where delta-spark comes from: ``--delta-spark DIR`` (a directory with ``jars/`` and
``python/``), ``--delta-spark maven:GROUP:ARTIFACT:VERSION`` (the published jar), else
``$DELTASPEC_DELTA_SPARK``, else published delta-spark 4.4.0 where ``deltaspec engines fetch 4.4.0``
leaves it (``$DELTASPEC_CACHE/delta-spark/4.4.0``, the cache defaulting to ``~/.cache/deltaspec``).

It is the one action-level driver of delta-spark: ``--adapter deltaspark@X.Y.Z`` runs this program
in the release's own pyspark venv, and ``--adapter deltaspark`` hosts its ``Bridge`` in process on
a running session (``Bridge.hosted``, ``respond``), so it must stay importable: nothing runs at
import, and nothing of deltaspec is imported.
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
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

PROTOCOL = "deltaspec-bridge/1"
NEWEST = "4.4.0"  # the newest release spec/ describes: its vectors are taken by every engine
CAPABILITIES = [
    "actions", "checkpoint", "time_travel", "read_table", "read_table_timestamp", "log_cleanup",
    "checksums", "log_cleanup_by_retention",
]  # fmt: skip
SESSION = {  # the delta-spark settings of every table driven here (runtime SQL confs)
    "spark.databricks.delta.history.metricsEnabled": "false",  # a hand-driven commit has none
    "spark.databricks.delta.snapshotPartitions": "2",  # a few files: not 50 tasks per replay
}
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
    ("UNSUPPORTED_FEATURES_FOR_WRITE", "UNSUPPORTED_WRITE_PROTOCOL"),
    ("DeltaUnsupportedTableFeatureException", "UNSUPPORTED_WRITE_PROTOCOL"),
    ("INVALID_PROTOCOL_VERSION", "UNSUPPORTED_WRITE_PROTOCOL"),
    ("InvalidProtocolVersionException", "UNSUPPORTED_WRITE_PROTOCOL"),
)
READ_ERRORS = (  # a marker in delta-spark's error class or message -> log-vectors.md kind
    ("TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION", "TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"),
    ("TimestampEarlierThanCommitRetention", "TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION"),  # < 4.0
    ("TIMESTAMP_GREATER_THAN_COMMIT", "TIMESTAMP_GREATER_THAN_COMMIT"),
    ("TemporallyUnstableInput", "TIMESTAMP_GREATER_THAN_COMMIT"),  # before 4.0
    ("URISyntaxException", "UNSAFE_PATH"),  # PATH.DATA_FILE: java.net.URI refuses the path
    ("VERSIONS_NOT_CONTIGUOUS", "VERSIONS_NOT_CONTIGUOUS"),
    ("TRUNCATED_TRANSACTION_LOG", "VERSIONS_NOT_CONTIGUOUS"),  # no start: commits before are gone
    ("log has been truncated", "VERSIONS_NOT_CONTIGUOUS"),  # the same before error classes
    ("STATE_RECOVER", "MISSING_PROTOCOL_OR_METADATA"),
    ("UNSUPPORTED_FEATURES", "UNSUPPORTED_FEATURE"),
    ("are not supported in this version of Delta Lake", "UNSUPPORTED_FEATURE"),  # 2.3 on DVs
    ("TABLE_FEATURES", "UNSUPPORTED_FEATURE"),
    ("INVALID_PROTOCOL_VERSION", "UNSUPPORTED_PROTOCOL"),
    ("InvalidProtocolVersionException", "UNSUPPORTED_PROTOCOL"),  # before error classes
    ("NOT_A_DELTA_TABLE", "TABLE_NOT_FOUND"),
    ("TABLE_NOT_FOUND", "TABLE_NOT_FOUND"),
    ("EMPTY_DIRECTORY", "TABLE_NOT_FOUND"),
    ("CORRUPT_LOG_FILE", "CORRUPT_LOG_FILE"),
    ("FAILED_READ_FILE.NO_HINT", "CORRUPT_LOG_FILE"),  # a commit line that does not parse
    ("MALFORMED_RECORD_IN_PARSING", "CORRUPT_LOG_FILE"),  # the same before 4.0
    ("Malformed records are detected in record parsing", "CORRUPT_LOG_FILE"),  # before 3.4
    ("VERSION", "VERSION_NOT_FOUND"),
    ("FILE_NOT_FOUND", "VERSION_NOT_FOUND"),
)
UNREADABLE = ("UNSUPPORTED_FEATURE", "UNSUPPORTED_PROTOCOL")  # kinds that decline a read
SQL_TYPES = {"long": "BIGINT", "integer": "INT", "short": "SMALLINT", "byte": "TINYINT"}
COMPARISONS = {"=", "!=", "<", "<=", ">", ">="}
DELTA_JAR = re.compile(r"^delta-(?:spark|core)_2\.1[23]-(\d+\.\d+\.\d+)")
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
    cache = os.environ.get("DELTASPEC_CACHE") or Path.home() / ".cache" / "deltaspec"
    default = Path(cache) / "delta-spark" / "4.4.0"
    return os.environ.get("DELTASPEC_DELTA_SPARK", str(default))


def start_spark(source: str) -> Any:
    from pyspark.sql import SparkSession  # lazy: pyspark is the release venv's, found at run time

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
        "spark.sql.shuffle.partitions": "2",
        **SESSION,
    }
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def engine_release(jvm: Any, source: str) -> str:
    """The delta-spark release the session runs: ``io.delta.VERSION`` (every release has it),
    else the delta jar's manifest or file name."""
    with contextlib.suppress(Exception):
        return release_of(str(jvm.io.delta.package.VERSION()))
    if source.startswith("maven:"):
        return release_of(source.rsplit(":", 1)[-1])
    for jar in sorted((Path(source) / "jars").glob("delta-*.jar")):
        with contextlib.suppress(Exception), zipfile.ZipFile(jar) as archive:
            manifest = archive.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
            stated = re.search(r"^Implementation-Version: *(\S+)", manifest, re.MULTILINE)
            if DELTA_JAR.match(jar.name) and stated:
                return release_of(stated.group(1))
        if DELTA_JAR.match(jar.name):
            return release_of(jar.name)
    raise RuntimeError(f"cannot tell the delta-spark release of {source}")


def release_of(text: str) -> str:
    found = re.search(r"\d+\.\d+\.\d+", text)
    if found is None:
        raise RuntimeError(f"not a delta-spark release: {text!r}")
    return found.group(0)


def minor(release: str) -> str:
    return ".".join(release.split(".")[:2])


@dataclass
class Jvm:
    """Conversions between Python values and the Scala values delta-spark's API takes, and calls
    that fill in the parameters a release adds (its Scala defaults, else ``None``)."""

    spark: Any
    signatures: dict[str, dict[str, list[list[str]]]] = field(default_factory=dict)

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
        # JavaConverters: in Scala 2.12 and 2.13 alike (2.13's javaapi is not in 2.12)
        return (
            self.jvm.scala.collection.JavaConverters.asScalaBufferConverter(java).asScala().toList()
        )

    def items(self, seq: Any) -> list[Any]:
        return list(self.jvm.scala.collection.JavaConverters.seqAsJavaListConverter(seq).asJava())

    def none(self) -> Any:
        return self.jvm.scala.Option.empty()

    def some(self, value: Any) -> Any:
        return self.jvm.scala.Option.apply(value)

    def empty_map(self) -> Any:
        return getattr(getattr(self.jvm.scala.collection.immutable, "Map$"), "MODULE$").empty()

    def methods(self, target: Any) -> dict[str, list[list[str]]]:
        """The public methods of ``target``'s class: name -> the parameter types of each."""
        name = str(target.getClass().getName())
        if name not in self.signatures:
            found: dict[str, list[list[str]]] = {}
            for method in target.getClass().getMethods():
                types = [str(t.getName()) for t in method.getParameterTypes()]
                found.setdefault(str(method.getName()), []).append(types)
            self.signatures[name] = found
        return self.signatures[name]

    def has(self, target: Any, name: str) -> bool:
        return name in self.methods(target)

    def arities(self, target: Any, name: str) -> list[int]:
        return sorted({len(types) for types in self.methods(target).get(name, [])})

    def call(self, target: Any, name: str, *leading: Any) -> Any:
        """``target.name(leading...)`` with the parameters after ``leading`` at their Scala
        defaults, or ``None`` for an ``Option`` without one, whatever parameters a release adds."""
        methods = self.methods(target)
        for types in sorted(methods.get(name, []), key=len):
            rest = self.fill(target, name, types, len(leading))
            if rest is not None:
                return getattr(target, name)(*leading, *rest)
        raise Unsupported(f"this delta-spark has no {name}() for {len(leading)} arguments")

    def fill(self, target: Any, name: str, types: list[str], given: int) -> list[Any] | None:
        if len(types) < given:
            return None
        rest = []
        for position in range(given + 1, len(types) + 1):
            default = f"{name}$default${position}"
            if default in self.methods(target):
                rest.append(getattr(target, default)())
            elif types[position - 1] == "scala.Option":
                rest.append(self.none())
            else:
                return None
        return rest

    def operation(self, name: str, *leading: Any) -> Any:
        """``DeltaOperations.<name>(leading...)``, the remaining parameters at their Scala
        defaults (so that it works whatever parameters a release adds at the end)."""
        qualified = f"org.apache.spark.sql.delta.DeltaOperations${name}"
        try:
            klass = self.jvm.py4j.reflection.ReflectionUtil.classForName(qualified)
        except Exception as error:
            raise Unsupported(f"this delta-spark has no DeltaOperations.{name}") from error
        arity = max(c.getParameterCount() for c in klass.getConstructors())
        companion = getattr(getattr(self.delta, f"DeltaOperations${name}$"), "MODULE$")
        defaults = [
            getattr(companion, f"$lessinit$greater$default${i}")()
            for i in range(len(leading) + 1, arity + 1)
        ]
        return getattr(self.delta, f"DeltaOperations${name}")(*leading[:arity], *defaults)

    def expression(self, sql: str) -> Any:
        return self.spark._jsparkSession.sessionState().sqlParser().parseExpression(sql)

    def rows(self, dataset: Any, column: str) -> list[Any]:
        return [row[0] for row in self.records(dataset, column)]

    def records(self, dataset: Any, *columns: str) -> list[Any]:
        from pyspark.sql import DataFrame  # lazy: pyspark is the release venv's, found at run time

        return list(DataFrame(dataset.toDF(), self.spark).select(*columns).collect())


def java_failure(error: Exception) -> tuple[list[str], str] | None:
    """The class names (with superclasses) and text of a Java exception, or None."""
    # py4j's Py4JJavaError carries it as java_exception; PySpark's converted errors as _origin
    java = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    if java is None:
        # delta-spark's Python package, when it is importable, converts its conflicts to
        # delta.exceptions classes named as the Java ones, without the Java object
        if not type(error).__module__.startswith("delta.exceptions"):
            return None
        return [c.__name__ for c in type(error).__mro__], str(error)
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
    txns = {t.appId(): t.version() for t in jvm.items(snapshot.setTransactions())}
    for features in ("readerFeatures", "writerFeatures"):  # sets: sorted (spec/bridge.md)
        if protocol.get(features) is not None:
            protocol[features] = sorted(protocol[features])
    found: dict[str, Any] = {
        "version": snapshot.version(),
        **live_files(jvm, snapshot),
        "tombstones": sorted(jvm.rows(snapshot.tombstones(), "path")),
        "app_txns": txns,
        "properties": metadata.get("configuration") or {},
        "partition_columns": metadata.get("partitionColumns") or [],
        "schema": metadata.get("schemaString"),
        "protocol": protocol,
        "domains": {},  # before 3.0.0 a snapshot keeps no domain metadata (the lines are ignored)
    }
    if jvm.has(snapshot, "domainMetadata"):
        found["domains"] = {
            d.domain(): d.configuration()
            for d in jvm.items(snapshot.domainMetadata())
            if not d.removed()
        }
    return found


def live_files(jvm: Jvm, snapshot: Any) -> dict[str, Any]:
    """``files``, their ``stats`` (the JSON text, or null) and ``row_ids``: ``[null, null]`` for
    every file where the release's AddFile has no row tracking fields (before 3.0.0)."""
    frame = snapshot.allFiles()
    tracked = "baseRowId" in list(frame.columns())
    row_ids = ("baseRowId", "defaultRowCommitVersion") if tracked else ()
    files = sorted(jvm.records(frame, "path", "stats", *row_ids), key=lambda r: r[0])
    return {
        "files": [f[0] for f in files],
        "stats": {f[0]: f[1] for f in files},
        "row_ids": {f[0]: [f[2], f[3]] if tracked else [None, None] for f in files},
    }


def track_predicates(jvm: Jvm, txn: Any, filters: list[Any], partition_only: bool) -> None:
    """``trackReadPredicates(filters, partitionOnly)`` (2.4.0 on). Before 2.4.0 there is no
    such call: what ``filterFiles`` records is appended to the transaction's read predicates
    directly, the AND of the partition-only filters (wrapped as a DeltaTablePartitionReadPredicate
    in 2.3.x), without the files its scan would add."""
    if jvm.has(txn, "trackReadPredicates"):
        txn.trackReadPredicates(jvm.seq(filters), partition_only, True)
        return
    columns, session = txn.metadata().partitionColumns(), jvm.spark._jsparkSession
    only = jvm.delta.DeltaTableUtils.isPredicatePartitionColumnsOnly
    kept = [f for f in filters if partition_only or only(f, columns, session)]
    expressions = jvm.jvm.org.apache.spark.sql.catalyst.expressions
    predicate = expressions.Literal.TrueLiteral()
    for position, condition in enumerate(kept):
        predicate = condition if position == 0 else expressions.And(predicate, condition)
    with contextlib.suppress(Exception):  # 2.3.x: the read predicates are wrapped
        predicate = jvm.delta.DeltaTablePartitionReadPredicate(predicate, True)
    getattr(txn.readPredicates(), "$plus$eq")(predicate)


def start_transaction(jvm: Jvm, log: Any, snapshot: Any) -> Any:
    """A transaction on the latest snapshot, or on ``snapshot``: ``startTransaction(catalogTable,
    snapshot)`` since 3.0.0, ``startTransaction(snapshot)`` in 2.2-2.4, the constructor in 2.1."""
    if snapshot is None:
        return log.startTransaction()
    arities = jvm.arities(log, "startTransaction")
    if 2 in arities:
        return log.startTransaction(jvm.none(), jvm.some(snapshot))
    if 1 in arities:
        return log.startTransaction(jvm.some(snapshot))
    return jvm.delta.OptimisticTransaction(log, snapshot, log.clock())


def commit_at_time(jvm: Jvm, log: Any, moment: Any) -> int:
    """The version of the last commit at or before ``moment`` (the history's
    ``getActiveCommitAtTime``; it takes the catalog table second since 4.0.0)."""
    history = log.history()
    if 5 in jvm.arities(history, "getActiveCommitAtTime"):
        commit = history.getActiveCommitAtTime(moment, jvm.none(), False, True, False)
    else:
        commit = history.getActiveCommitAtTime(moment, False, True, False)
    return int(commit.version())


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
    (``quotes``). A winner without a commitInfo falls back to the first
    version after the read."""
    stated = re.search(r"committed at version (\d+)", text) or re.search(
        r'"version"\s*:\s*(\d+)', text
    )
    if stated:
        return int(stated.group(1))
    quoted = re.search(r"Conflicting commit: (\{.*\})\s*$", text, re.MULTILINE)
    if quoted:
        for version, candidate in commit_infos(log, read_version):
            if quotes(quoted.group(1), candidate):
                return version
    return read_version + 1


def quotes(quoted: str, info: dict[str, Any]) -> bool:
    """Whether the commitInfo a conflict message quotes is ``info``: the same object, or the same
    txnId, or (no txnId, before 2.3.0) the same timestamp and operation. Older releases quote
    it as JSON with unquoted operation parameters, so the fields are matched as text."""
    with contextlib.suppress(ValueError):
        if json.loads(quoted) == info:
            return True
    txn_id = re.search(r'"txnId"\s*:\s*"([^"]+)"', quoted)
    if txn_id:
        return bool(info.get("txnId") == txn_id.group(1))
    moment = re.search(r'"timestamp"\s*:\s*(\d+)', quoted)
    name = re.search(r'"operation"\s*:\s*"([^"]+)"', quoted)
    if moment is None or name is None:
        return False
    return (info.get("timestamp"), info.get("operation")) == (int(moment.group(1)), name.group(1))


def decline_unreadable(error: Exception) -> None:
    """Declines the vector (UNSUPPORTED) when a Java failure says this release cannot read or
    write the table's protocol, as log-vectors.md's UNSUPPORTED_* kinds decline a read (an
    outcome of scenarios.md — a conflict or an error of ERRORS — is not declined)."""
    failure = java_failure(error)
    if failure is None or any(n in CONFLICTS for n in failure[0]):
        return
    if classify(failure[1], ERRORS) is None and classify(failure[1], READ_ERRORS) in UNREADABLE:
        raise Unsupported(f"this delta-spark cannot take the table: {failure[1][:1000]}") from error


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
            return self.jvm.call(log, "update")
        return self.jvm.call(log, "getSnapshotAt", version)

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
            decline_unreadable(error)  # a table this release cannot read is no missing version
            return {"error": "VERSION_NOT_FOUND", "message": failure[1][:2000]}
        txn = start_transaction(self.jvm, self.delta_log(), snapshot)
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
            raise Unsupported(
                f"delta-spark's operations fix changesData ({writer.operation} changes data: "
                f"{bool(op.changesData())}); no override to {changes_data}"
            )

    def read(self, name: str, read: dict[str, Any]) -> None:
        writer, jvm = self.writer(name), self.jvm
        txn = writer.txn
        if read.get("whole_table"):
            txn.readWholeTable()
        if "app_id" in read:
            txn.txnVersion(read["app_id"])
        if "filter" in read:
            filters = [jvm.expression(predicate_sql(p, writer.types)) for p in read["filter"]]
            if "files" in read:  # the listed files model data skipping
                track_predicates(jvm, txn, filters, partition_only=False)
            else:
                keep_records = 2 in jvm.arities(txn, "filterFiles")  # since 2.2.0
                txn.filterFiles(jvm.seq(filters), *([False] if keep_records else []))
        if "predicate" in read:
            predicate = jvm.expression(predicate_sql(read["predicate"], writer.types))
            track_predicates(jvm, txn, [predicate], partition_only=True)
        if "files" in read:
            wanted = set(read["files"])
            adds = [a for a in txn.snapshot().allFiles().collectAsList() if a.path() in wanted]
            track = "trackFilesRead" if jvm.has(txn, "trackFilesRead") else "withFilesRead"
            getattr(txn, track)(jvm.seq(adds))  # renamed in 2.4.0

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
            version = self.run_commit(writer, actions, op)
        except Exception as error:
            decline_unreadable(error)
            read_version = int(writer.txn.readVersion())
            writer.outcome = failure_outcome(error, read_version, self.root / "_delta_log")
            return writer.outcome
        writer.outcome = {"skipped": True} if version is None else self.committed(version)
        return writer.outcome

    def run_commit(self, writer: Writer, actions: Any, op: Any) -> int | None:
        """``commitIfNeeded`` (an Option of the version; Unit before 3.3.0: the version is found
        by the transaction's txnId in the log; absent before 2.3.0: ``commit``) or ``commit``."""
        txn, jvm = writer.txn, self.jvm
        if not writer.commit_if_needed or not jvm.has(txn, "commitIfNeeded"):
            return int(txn.commit(actions, op))
        committed = jvm.call(txn, "commitIfNeeded", actions, op)
        if committed is not None:
            return int(committed.get()) if committed.isDefined() else None
        txn_id = str(txn.txnId())
        found = commit_infos(self.root / "_delta_log", int(txn.readVersion()))
        return next((v for v, info in found if info.get("txnId") == txn_id), None)

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
        self.jvm.call(self.delta_log(), "checkpoint", self.at(version))

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
    release: str = ""
    table: Table | None = None
    scratch: Path = field(
        default_factory=lambda: Path(tempfile.mkdtemp(prefix="deltaspark-bridge-"))
    )

    @classmethod
    def hosted(cls, spark: Any, scratch: Path) -> Bridge:
        """The bridge on a SparkSession that is already running (delta-spark loaded), its tables
        under ``scratch``: the handlers without the program around them."""
        jvm = Jvm(spark)
        scratch.mkdir(parents=True, exist_ok=True)
        return cls("in-process", jvm, engine_release(jvm.jvm, "in-process"), scratch=scratch)

    @property
    def jvm(self) -> Jvm:
        if self.jvm_ is None:
            self.jvm_ = Jvm(start_spark(self.source))
            self.release = engine_release(self.jvm_.jvm, self.source)
        return self.jvm_

    def engine_release(self) -> str:
        """The release of the engine, which is started for it."""
        return self.release if self.jvm else ""

    def current(self) -> Table:
        if self.table is None:
            raise BadRequest("no table: send create first")
        return self.table

    def create(self, setup: dict[str, Any]) -> None:
        jvm = self.jvm
        profile = setup.get("profile")
        if profile not in (None, NEWEST) and minor(profile) != minor(self.release):
            raise Unsupported(
                f"this engine is delta-spark {self.release}; this vector is for release {profile}"
            )
        self.close()
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
                version = commit_at_time(jvm, log, moment)
            if version is None:
                snapshot = jvm.call(log, "update")
            elif not any((Path(path) / "_delta_log").glob("*")):
                return {"error": "TABLE_NOT_FOUND", "message": f"no _delta_log at {path}"}
            else:
                try:
                    snapshot = jvm.call(log, "getSnapshotAt", version)
                except Exception as error:
                    failed = read_error(error, "READ_FAILED")
                    truncated = ("TRUNCATED_TRANSACTION_LOG", "log has been truncated")
                    if any(m in failed["message"] for m in truncated) or (
                        failed["error"] == "TABLE_NOT_FOUND"  # before 4.0: DELTA_EMPTY_DIRECTORY
                        and jvm.call(log, "update").version() >= 0
                    ):
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
            jvm.call(log, "doLogCleanup", jvm.call(log, "update"))
        except Exception as error:
            return read_error(error, "CLEANUP_FAILED")
        return None

    def answer(self, method: str, params: dict[str, Any]) -> Any:
        try:
            return self.serve(method, params)
        except Exception as error:
            decline_unreadable(error)
            raise

    def serve(self, method: str, params: dict[str, Any]) -> Any:
        if method == "hello":
            return {
                "protocol": PROTOCOL,
                "name": f"delta-spark-{self.engine_release()}-bridge",
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


def respond(
    bridge: Bridge, request: dict[str, Any], log: TextIO | None = sys.stderr
) -> dict[str, Any]:
    """The response to one request; the stack of an INTERNAL error goes to ``log``."""
    try:
        result = bridge.answer(request["method"], request.get("params") or {})
    except Unsupported as error:
        return {"id": request.get("id"), "error": {"kind": "UNSUPPORTED", "message": str(error)}}
    except (BadRequest, KeyError) as error:
        return {"id": request.get("id"), "error": {"kind": "BAD_REQUEST", "message": repr(error)}}
    except Exception as error:  # anything else fails the vector in progress, not the process
        if log is not None:
            traceback.print_exc(file=log)
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
    # run as a script, this file's folder comes first on sys.path: it is a folder of deltaspec's
    # package (a sibling module could shadow one of the standard library), no place to import from
    here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != here]
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
