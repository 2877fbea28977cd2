"""Scenario writers as engine operations: what an operation-level adapter runs for a writer.

A scenario vector describes a writer at the action level (spec/scenarios.md): its ``reads`` and
staged ``actions``, against its read snapshot. An engine such as delta-rs or the Spark path
offers operations instead (append, overwrite, DELETE, UPDATE, MERGE, OPTIMIZE, ALTER TABLE).
:func:`translate` picks the operation that records the same reads and stages the same file
changes, or raises :class:`Unsupported` with the reason. :data:`ENGINE_OPERATIONS` says which
engine operations each kind of the workload alphabet becomes.

The data model (``deltaspec.conformance.engines.table_files.datafiles`` writes and reads it):

- The table gets one more data column, ``_file`` (string). Every scenario file is one row whose
  ``_file`` is the scenario path, with the file's partition values and NULL in every other
  column; the snapshot's ``files`` are the distinct ``_file`` values of the live data. A second
  column, ``_row``, keeps the path that first wrote the row, so a row live twice (duplicated
  data) shows up however it was renamed since. Files the adapter writes itself (version 0 and
  setup commits) carry exact ``_file`` statistics, as the engines' own files do.
- A compaction keeps its rows (data does not change), so its new scenario file is an *alias*
  for the rows of the files it replaced, from its commit version on.
- Removing files is deleting their rows; a remove paired with an add in the same partition
  (a rewrite) renames the rows: ``SET _file = <new path>``. A DELETE that rewrites therefore
  runs as an UPDATE: the same condition, so the same reads, and both change data.
- Reads. A ``filter`` read's partition-only elements (PREDICATE.PARTITION_ONLY) become the
  condition's partition part, exactly as written; its data elements are dropped (the data
  columns hold NULLs) and replaced by conditions on ``_file``: ``_file IN (…)`` when data
  skipping returned only some files (``files``), which the statistics prune exactly
  (TXN.READ_FILES), and ``concat(_file, '') IN (…)`` to pick the rows to change, which no
  statistics can prune, so the files read stay those of the scan.

Limits, each an :class:`Unsupported` reason: protocol, domain metadata and CDC actions; reads an
operation does not record (a bare predicate or file list, a whole-table read, several filters);
removes of files not read; a rewrite that moves rows across partitions or cannot pair its removes
and adds; a compaction that is not "every partition with two or more data files in the
filter"; metadata changes other than setting table properties; a SetTransaction without the
lookup writers do, or at a version already applied (writer APIs skip those); a
``changes_data`` override; ``commit_if_needed: false``; engines that stored several scenario files
in one data file when a writer touches only some of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from ...impl import predicates
from ..harness import actions as staged
from ..harness.adapter import Unsupported, WriterSpec
from ..harness.reads import Read
from ..workload.alphabet import Kind

FILE_COLUMN = "_file"
ROW_COLUMN = "_row"
UNSKIPPABLE = f"concat({FILE_COLUMN}, '')"
"""The ``_file`` value behind a function call: engines evaluate it on rows but cannot prune
files with it (data skipping understands plain column references only)."""
STATS_PREFIX = 32
"""delta-spark and delta-rs cut string statistics to this many characters."""
_IDENTIFIER = re.compile(r"[a-z_][a-z0-9_]*")
_SQL_TYPES = {"string": "STRING", "long": "BIGINT", "integer": "INT", "short": "SMALLINT",
              "byte": "TINYINT", "double": "DOUBLE", "float": "FLOAT", "date": "DATE",
              "boolean": "BOOLEAN"}  # fmt: skip

PartitionValues = Mapping[str, str | None]


@dataclass(frozen=True)
class DataFile:
    """A live data file of the engine's table and the scenario files its rows stand for."""

    path: str
    rows: frozenset[str]
    """The distinct ``_file`` values in the file."""
    names: frozenset[str]
    """The scenario files those rows are (compaction aliases applied)."""
    ids: tuple[str, ...] = ()
    """Every row's ``_row`` identity (the scenario file that first wrote it)."""


@dataclass(frozen=True)
class View:
    """One version of the engine's table in scenario terms."""

    version: int
    partition_columns: tuple[str, ...]
    types: Mapping[str, str]
    """Column name -> Spark type name (the scenario's columns and ``_file``)."""
    configuration: Mapping[str, str]
    app_txns: Mapping[str, int]
    data_files: tuple[DataFile, ...]
    partitions: Mapping[str, PartitionValues]
    """Scenario file -> its partition values, for every file the scenario has named."""

    @property
    def names(self) -> frozenset[str]:
        return frozenset(n for f in self.data_files for n in f.names)

    def rows(self, names: Iterable[str]) -> list[str]:
        wanted = set(names)
        return sorted({r for f in self.data_files if f.names & wanted for r in f.rows})

    @property
    def schema(self) -> predicates.PartitionSchema:
        return predicates.PartitionSchema(
            tuple((c, self.types.get(c, "string"), c) for c in self.partition_columns)
        )

    def matching(self, predicate: predicates.Expr) -> frozenset[str]:
        """Live scenario files whose partition values satisfy ``predicate``."""
        names = sorted(self.names)
        if predicate == predicates.TRUE:
            return frozenset(names)
        values = [dict(self.partitions[n]) for n in names]
        hits = predicates.matching(predicate, values, self.schema)
        return frozenset(n for n, hit in zip(names, hits, strict=True) if hit)


@dataclass(frozen=True)
class NewFile:
    """A scenario ``add``: one new row."""

    name: str
    partition: PartitionValues


@dataclass(frozen=True)
class Append:
    """A blind append (TXN.BLIND_APPEND); no files is an empty commit."""

    files: tuple[NewFile, ...]


@dataclass(frozen=True)
class Overwrite:
    """A whole-table overwrite: a full scan, every file removed, ``files`` written."""

    files: tuple[NewFile, ...]


@dataclass(frozen=True)
class ReplaceWhere:
    """An overwrite of the partitions ``predicate`` (SQL over partition columns) selects."""

    predicate: str
    files: tuple[NewFile, ...]


@dataclass(frozen=True)
class Delete:
    """DELETE [WHERE condition]."""

    condition: str | None


@dataclass(frozen=True)
class Update:
    """UPDATE SET _file = <new name> [WHERE condition]: each row in ``renames`` gets its name."""

    condition: str | None
    renames: Mapping[str, str]

    @property
    def assignment(self) -> str:
        if not self.renames:
            return FILE_COLUMN
        cases = " ".join(f"WHEN {FILE_COLUMN} = {quote(r)} THEN {quote(n)}"
                         for r, n in sorted(self.renames.items()))  # fmt: skip
        return f"CASE {cases} ELSE {FILE_COLUMN} END"


@dataclass(frozen=True)
class Merge:
    """MERGE INTO t USING s ON t._file = s.old_file AND <target>: matched rows are renamed to
    ``s.new_file`` or, where it is NULL, deleted; source rows without an old file are inserted.
    ``target`` is SQL over ``t.``-qualified columns."""

    target: str | None
    renames: Mapping[str, str | None]
    inserts: tuple[NewFile, ...]

    def on(self, target_alias: str = "t", source_alias: str = "s") -> str:
        match = f"{target_alias}.{FILE_COLUMN} = {source_alias}.old_file"
        return match if self.target is None else f"{match} AND {self.target}"


@dataclass(frozen=True)
class Compact:
    """OPTIMIZE: every partition among ``partitions`` (None: the whole table) with two or more
    data files becomes one file."""

    partitions: tuple[PartitionValues, ...] | None


@dataclass(frozen=True)
class SetProperties:
    """ALTER TABLE SET TBLPROPERTIES."""

    properties: Mapping[str, str]


@dataclass(frozen=True)
class Create:
    """The first commit: a new table with ``columns`` (scenario schema form) and ``files``."""

    columns: tuple[Mapping[str, Any], ...]
    partition_columns: tuple[str, ...]
    configuration: Mapping[str, str]
    files: tuple[NewFile, ...]


Operation = (
    Append | Overwrite | ReplaceWhere | Delete | Update | Merge | Compact | SetProperties | Create
)


ENGINE_OPERATIONS: dict[Kind, tuple[type[Operation], ...]] = {
    Kind.APPEND: (Append,),
    Kind.READ_WRITE: (Merge,),
    Kind.DELETE: (Delete, Update),  # a DELETE that rewrites files runs as an UPDATE
    Kind.UPDATE: (Update,),
    Kind.MERGE: (Merge,),
    Kind.COMPACT: (Compact,),
    Kind.OVERWRITE: (Overwrite,),
    Kind.REPLACE_WHERE: (ReplaceWhere,),
    Kind.SET_TXN: (Append,),  # with its SetTransaction (Translation.txn)
    Kind.SET_PROPERTIES: (SetProperties,),
    Kind.EMPTY: (Append,),
    Kind.CREATE: (Create,),
    Kind.CHANGE_SCHEMA: (),
    Kind.UPGRADE_PROTOCOL: (),
    Kind.DOMAIN_METADATA: (),
    Kind.RECOMPUTE_STATS: (),
}
"""The engine operations a writer of each kind of the alphabet runs as (none: Unsupported)."""


@dataclass(frozen=True)
class Translation:
    """What to run for a writer: the operation, its SetTransaction, and the scenario files a
    compaction names after it commits (new name -> the names whose rows it holds)."""

    operation: Operation
    txn: tuple[str, int] | None = None
    aliases: Mapping[str, frozenset[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Intent:
    """A scenario writer: operation name, overrides, reads and actions (spec/scenarios.md)."""

    operation: str = "WRITE"
    changes_data: bool | None = None
    commit_if_needed: bool = True
    reads: tuple[Read, ...] = ()
    actions: tuple[staged.Action, ...] = ()

    @classmethod
    def of(
        cls, spec: WriterSpec, reads: Sequence[Read], actions: Sequence[staged.Action]
    ) -> Intent:
        return cls(
            spec.operation, spec.changes_data, spec.commit_if_needed, tuple(reads), tuple(actions)
        )


def quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _column(name: str) -> str:
    if not _IDENTIFIER.fullmatch(name):
        raise Unsupported(f"column {name!r} needs quoting, which SQL dialects spell differently")
    return name


def _literal(value: Any, kind: str) -> str:
    """A JSON literal read in the column's type (PREDICATE.TYPING), as SQL."""
    if value is None:
        return "NULL"
    try:
        typed = predicates.typed(value, kind)
    except predicates.InvalidPredicateError as error:
        raise Unsupported(f"literal {value!r} does not fit {kind}") from error
    if kind == "string":
        return quote(str(typed))
    if kind in {"long", "integer", "short", "byte"}:
        return str(typed)
    if kind == "boolean":
        return "TRUE" if typed else "FALSE"
    if kind in {"double", "float", "date"}:
        return f"CAST({quote(str(typed))} AS {_SQL_TYPES[kind]})"
    if kind.startswith("decimal"):
        try:
            text = str(Decimal(str(value)))
        except InvalidOperation as error:
            raise Unsupported(f"literal {value!r} does not fit {kind}") from error
        return f"CAST({quote(text)} AS {kind.upper()})"
    raise Unsupported(f"no portable SQL literal for a {kind} column")


def predicate_sql(expr: predicates.Expr, types: Mapping[str, str], qualifier: str = "") -> str:
    """A scenario predicate as SQL that Spark and DataFusion read alike (PREDICATE.LANGUAGE)."""

    def column(name: str) -> str:
        return qualifier + _column(name)

    def render(e: predicates.Expr) -> str:
        if e.op in {"true", "false"}:
            return e.op.upper()
        if e.op in {"and", "or"}:
            return "(" + f" {e.op.upper()} ".join(render(a) for a in e.args) + ")"
        if e.op == "not":
            return f"(NOT {render(e.args[0])})"
        name = e.args[0]
        kind = types.get(name, "string")
        if e.op == "is_null":
            return f"({column(name)} IS NULL)"
        if e.op == "is_not_null":
            return f"({column(name)} IS NOT NULL)"
        if e.op == "in":
            return f"({column(name)} IN ({', '.join(_literal(v, kind) for v in e.args[1])}))"
        return f"({column(name)} {'<>' if e.op == '!=' else e.op} {_literal(e.args[1], kind)})"

    return render(expr)


def _in(column: str, values: Sequence[str]) -> str:
    return f"({column} IN ({', '.join(quote(v) for v in values) or quote('')}))"


def _conjunction(parts: Iterable[str | None]) -> str | None:
    kept = [p for p in parts if p]
    return " AND ".join(kept) if kept else None


@dataclass(frozen=True)
class _Actions:
    adds: tuple[staged.Add, ...] = ()
    removes: tuple[staged.Remove, ...] = ()
    txns: tuple[staged.Txn, ...] = ()
    metadata: tuple[staged.MetaData, ...] = ()


def _split(actions: Sequence[staged.Action]) -> _Actions:
    adds, removes, txns, metadata = [], [], [], []
    for action in actions:
        match action:
            case staged.Add():
                adds.append(action)
            case staged.Remove():
                removes.append(action)
            case staged.Txn():
                txns.append(action)
            case staged.MetaData():
                metadata.append(action)
            case _:
                raise Unsupported(f"a {action.KIND} action is not something an operation stages")
    return _Actions(tuple(adds), tuple(removes), tuple(txns), tuple(metadata))


def _new_files(adds: Iterable[staged.Add]) -> tuple[NewFile, ...]:
    return tuple(NewFile(a.path, dict(a.partition_values)) for a in adds)


def _check_paths(parts: _Actions, view: View | None, partition_columns: Sequence[str]) -> None:
    """Engines name their own data files and derive partition values from the rows, so a commit
    that repeats a path, re-adds a live one or writes odd partition values has no operation."""
    added = [a.path for a in parts.adds]
    removed = [r.path for r in parts.removes]
    live = view.names if view is not None else frozenset()
    if len(set(added)) < len(added) or len(set(removed)) < len(removed):
        raise Unsupported("a path twice in one commit: engines name every data file afresh")
    if set(added) & (set(removed) | live):
        raise Unsupported("an add of a path that is live or removed in the same commit")
    if view is not None and set(added) & set(view.partitions):
        raise Unsupported("an add of a path the scenario named before: engines write new files")
    for add in parts.adds:
        if set(add.partition_values) != set(partition_columns):
            raise Unsupported("partition values other than the table's partition columns")


def _txn(intent: Intent, txns: Sequence[staged.Txn], view: View | None) -> tuple[str, int] | None:
    looked_up = {r.app_id for r in intent.reads if r.app_id is not None}
    if not txns:
        if looked_up:
            raise Unsupported("an app id looked up but not written: no operation does that")
        return None
    if len(txns) > 1:
        raise Unsupported("several SetTransactions in one commit")
    app, version = txns[0].app_id, txns[0].version
    if looked_up != {app}:
        raise Unsupported("a SetTransaction without its lookup (writers always read the app id)")
    if view is not None and view.app_txns.get(app, -1) >= version:
        raise Unsupported("a SetTransaction at a version already applied: writer APIs skip it")
    return (app, version)


@dataclass(frozen=True)
class _Scan:
    """A writer's one ``filter`` read: partition part, files scanned (names), SQL pieces."""

    predicate: predicates.Expr
    partition_names: frozenset[str]
    read: frozenset[str]
    explicit: bool


def _scan(intent: Intent, view: View) -> _Scan | None:
    reads = [r for r in intent.reads if r.parts != {"app_id"}]
    if not reads:
        return None
    first = reads[0]
    if len(reads) > 1 or first.parts - {"filter", "files"} or first.filter is None:
        raise Unsupported(
            f"reads {[r.body() for r in reads]!r}: operations record one filtered scan"
        )
    filters = [predicates.parse(f) for f in first.filter]
    predicate = predicates.partition_only(filters, view.partition_columns)
    in_partitions = view.matching(predicate)
    explicit = first.files is not None
    read = frozenset(first.files) if first.files is not None else in_partitions
    if not read <= in_partitions:
        raise Unsupported("read files outside the filter's partitions")
    return _Scan(predicate, in_partitions, read, explicit)


def _whole_packs(view: View, names: frozenset[str], what: str) -> None:
    for data_file in view.data_files:
        if data_file.names & names and not data_file.names <= names:
            raise Unsupported(
                f"the engine stored {sorted(data_file.names)} in one data file and the writer "
                f"{what} only {sorted(data_file.names & names)}"
            )


def _skipping_rows(view: View, scan: _Scan) -> list[str] | None:
    """The rows for ``_file IN (…)`` when data skipping returned fewer files than the partitions
    hold, after checking that exact ``_file`` statistics prune to exactly those files."""
    if scan.read == scan.partition_names:
        return None
    rows = view.rows(scan.read)
    kept: set[str] = set()
    for data_file in view.data_files:
        if not data_file.names & scan.partition_names:
            continue
        if any(len(r) > STATS_PREFIX for r in data_file.rows):
            raise Unsupported("statistics of paths longer than 32 characters are cut")
        low, high = min(data_file.rows), max(data_file.rows)
        if any(low <= r <= high for r in rows):
            kept |= data_file.names
    if kept != scan.read:
        raise Unsupported(f"data skipping on _file would read {sorted(kept)}")
    return rows


def _scan_sql(view: View, scan: _Scan, qualifier: str = "") -> list[str]:
    """The scan as condition parts: its partition predicate and its data-skipping term."""
    parts = []
    if scan.predicate != predicates.TRUE:
        parts.append(predicate_sql(scan.predicate, view.types, qualifier))
    skipped = _skipping_rows(view, scan)
    if skipped is not None:
        parts.append(_in(qualifier + FILE_COLUMN, skipped))
    return parts


def _condition(view: View, scan: _Scan | None, removed: frozenset[str]) -> str | None:
    """DELETE/UPDATE's condition: the scan's partition part and files, then the rows to change."""
    if scan is None:
        raise Unsupported("a DML writer without a filtered scan")
    if not removed <= scan.read:
        raise Unsupported(f"removes {sorted(removed - scan.read)} without reading them")
    _whole_packs(view, scan.read, "read")
    _whole_packs(view, removed, "removes")
    rows = None if removed == scan.read else _in(UNSKIPPABLE, view.rows(removed))
    return _conjunction([*_scan_sql(view, scan), rows])


def _pairs(
    view: View, removed: Sequence[str], adds: Sequence[NewFile]
) -> tuple[dict[str, str | None], list[NewFile]]:
    """Each removed file's rows -> the add of its partition they become, and the adds left over.

    Within a partition the i-th remove becomes the i-th add; with fewer adds than removes the
    rest become the last add (a rewrite that merges files); with no adds their rows are deleted
    (None)."""
    columns = view.partition_columns
    waiting: dict[tuple[str | None, ...], list[NewFile]] = {}
    for add in adds:
        waiting.setdefault(tuple(add.partition.get(c) for c in columns), []).append(add)
    used: dict[tuple[str | None, ...], int] = {}
    renames: dict[str, str | None] = {}
    for name in removed:
        key = tuple(view.partitions[name].get(c) for c in columns)
        queue = waiting.get(key, [])
        index = used.get(key, 0)
        used[key] = index + 1
        target = queue[min(index, len(queue) - 1)].name if queue else None
        renames.update((row, target) for row in view.rows([name]))
    left = [a for key, queue in waiting.items() for a in queue[used.get(key, 0) :]]
    return renames, left


def _dml(intent: Intent, view: View, parts: _Actions) -> Operation:
    scan = _scan(intent, view)
    removed = [r.path for r in parts.removes]
    condition = _condition(view, scan, frozenset(removed))
    adds = _new_files(parts.adds)
    if not adds and intent.operation == "DELETE":
        return Delete(condition)
    renames, extra = _pairs(view, removed, adds)
    if extra or None in renames.values():
        raise Unsupported("a rewrite whose removes and adds do not pair up by partition")
    return Update(condition, {row: str(name) for row, name in renames.items()})


def _merge(intent: Intent, view: View, parts: _Actions) -> Operation:
    scan = _scan(intent, view)
    removed = [r.path for r in parts.removes]
    if scan is None:
        raise Unsupported("a MERGE without a filtered scan")
    if not set(removed) <= scan.read:
        raise Unsupported("a MERGE removing files it did not read")
    _whole_packs(view, scan.read, "read")
    _whole_packs(view, frozenset(removed), "removes")
    target = _conjunction(_scan_sql(view, scan, qualifier="t."))
    renames, inserts = _pairs(view, removed, _new_files(parts.adds))
    return Merge(target, renames, tuple(inserts))


def _write(intent: Intent, view: View, parts: _Actions) -> Operation:
    files = _new_files(parts.adds)
    data_reads = [r for r in intent.reads if r.parts != {"app_id"}]
    if not data_reads and not parts.removes:
        return Append(files)
    if len(data_reads) != 1:
        raise Unsupported(f"reads {[r.body() for r in data_reads]!r}: a write records one scan")
    (read,) = data_reads
    removed = frozenset(r.path for r in parts.removes)
    if read.parts == {"predicate"} and read.predicate is not None:
        predicate = predicates.parse(read.predicate)
        if view.matching(predicate) or removed:
            raise Unsupported("a predicate read without its files: no operation records one")
    elif read.parts == {"filter"} and read.filter is not None:
        filters = [predicates.parse(f) for f in read.filter]
        if any(not f.columns() <= set(view.partition_columns) for f in filters):
            raise Unsupported("an overwrite condition over data columns")
        predicate = predicates.conjoin(filters)
        if removed != view.matching(predicate):
            raise Unsupported("an overwrite that does not remove every file it selects")
    else:
        raise Unsupported(f"read {read.body()!r}: no write records it")
    if predicate == predicates.TRUE:
        return Overwrite(files)
    fits = predicates.matching(predicate, [dict(f.partition) for f in files], view.schema)
    if not all(fits):
        raise Unsupported("replaceWhere with files outside its condition")
    return ReplaceWhere(predicate_sql(predicate, view.types), files)


def _groups(
    view: View, selected: frozenset[str] | None = None
) -> dict[tuple[str | None, ...], list[DataFile]]:
    """Data files by partition (those holding a ``selected`` scenario file, default all)."""
    groups: dict[tuple[str | None, ...], list[DataFile]] = {}
    for data_file in view.data_files:
        if selected is None or data_file.names & selected:
            values = view.partitions[min(data_file.names)]
            key = tuple(values.get(c) for c in view.partition_columns)
            groups.setdefault(key, []).append(data_file)
    return groups


def _compaction(intent: Intent, view: View, parts: _Actions) -> Translation:
    """OPTIMIZE compacts every partition with two or more data files within its filter."""
    scan = _scan(intent, view)
    if scan is not None and scan.explicit:
        raise Unsupported("a compaction of files picked by data skipping")
    selected = view.matching(predicates.TRUE if scan is None else scan.predicate)
    compacted = {k: g for k, g in _groups(view, selected).items() if len(g) > 1}
    names = {k: frozenset(n for f in g for n in f.names) for k, g in compacted.items()}
    if {r.path for r in parts.removes} != set().union(*names.values()):
        raise Unsupported("a compaction other than every multi-file partition it selects")
    adds = _new_files(parts.adds)
    columns = view.partition_columns
    by_key = {tuple(a.partition.get(c) for c in columns): a for a in adds}
    if len(by_key) != len(adds) or set(by_key) != set(compacted):
        raise Unsupported("a compaction that does not write one file per partition")
    everything = {k for k, g in _groups(view).items() if len(g) > 1}  # a whole-table OPTIMIZE
    partitions = None if set(compacted) == everything else tuple(
        dict(zip(columns, k, strict=True)) for k in sorted(compacted, key=str)
    )  # fmt: skip
    return Translation(Compact(partitions), aliases={by_key[k].name: names[k] for k in compacted})


def _properties(intent: Intent, view: View, parts: _Actions) -> Operation:
    if intent.reads or parts.adds or parts.removes or parts.txns or len(parts.metadata) != 1:
        raise Unsupported("a metadata change together with reads or other actions")
    (change,) = parts.metadata
    given = set(change.body())
    if given - {"configuration"}:
        raise Unsupported(f"a metadata change of {sorted(given - {'configuration'})}")
    new = dict(change.configuration if change.configuration is not None else view.configuration)
    if set(view.configuration) - set(new):
        raise Unsupported("unsetting table properties")
    return SetProperties({k: v for k, v in new.items() if view.configuration.get(k) != v})


def _create(intent: Intent, parts: _Actions) -> Operation:
    if intent.reads or parts.removes or parts.txns or len(parts.metadata) != 1:
        raise Unsupported("a first commit other than metadata and adds")
    (metadata,) = parts.metadata
    given = set(metadata.body())
    if metadata.schema is None or given - {"schema", "partitionColumns", "configuration"}:
        raise Unsupported("a first commit whose metadata is not a schema, partitioning and config")
    return Create(
        metadata.schema,
        metadata.partition_columns or (),
        dict(metadata.configuration or {}),
        _new_files(parts.adds),
    )


def translate(intent: Intent, view: View | None) -> Translation:
    """The operation that does what ``intent`` does on ``view`` (None: no table yet)."""
    if intent.changes_data is not None:
        raise Unsupported("a changes_data override: engines derive it from the operation")
    if not intent.commit_if_needed:
        raise Unsupported("commit_if_needed false: operations decide how they commit")
    parts = _split(intent.actions)
    changes = {a.data_change for a in parts.adds} | {r.data_change for r in parts.removes}
    if view is not None:
        _check_paths(parts, view, view.partition_columns)
    if False in changes or (intent.operation == "OPTIMIZE" and not changes):
        if view is None or intent.operation != "OPTIMIZE" or parts.txns or parts.metadata:
            raise Unsupported("dataChange=false outside a plain compaction")
        if True in changes:
            raise Unsupported("a compaction that also changes data")
        return _compaction(intent, view, parts)
    if view is None:
        created = _create(intent, parts)
        assert isinstance(created, Create)
        _check_paths(parts, None, created.partition_columns)
        return Translation(created)
    if parts.metadata:
        return Translation(_properties(intent, view, parts))
    txn = _txn(intent, parts.txns, view)
    match intent.operation:
        case "WRITE" | "STREAMING UPDATE":
            operation = _write(intent, view, parts)
        case "DELETE" | "UPDATE":
            operation = _dml(intent, view, parts)
        case "MERGE":
            operation = _merge(intent, view, parts)
        case other:
            raise Unsupported(f"operation {other!r} with these actions")
    return Translation(operation, txn)
