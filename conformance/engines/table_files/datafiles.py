"""Real data files behind scenario files, for the operation-level adapters (delta-rs, Spark).

The mapping is described in ``deltaspec.conformance.engines.operations``: every scenario file is
one row whose ``_file`` column holds its path. This module writes a scenario's setup as a real table
(version 0 and the setup commits, exactly as given, through the production codec, each added
file a one-row Parquet file with exact ``_file`` statistics), reads back which rows every live
data file holds, and keeps the catalogue that turns rows into scenario files: each path's
partition values, and the files compactions named after they committed.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ....impl import codec, predicates
from ....impl.actions import (
    Action,
    AddFile,
    CommitInfo,
    DomainMetadata,
    Metadata,
    Protocol,
    SetTransaction,
)
from ....impl.errors import DeltaError
from ....impl.log.local_store import LocalLogStore
from ....impl.log.names import commit_name
from ....impl.snapshot.delta_log import DeltaLog
from ....impl.table.releases import CURRENT
from ...harness import actions as staged
from ...harness.adapter import Json, TableSetup, Unsupported
from ...harness.scenarios import schema_string
from ...harness.snapshots import TableSnapshot
from ..operations import (
    FILE_COLUMN,
    ROW_COLUMN,
    DataFile,
    Merge,
    PartitionValues,
    View,
)
from .impl_actions import TABLE_ID, to_action

_ARROW = {"string": pa.string(), "long": pa.int64(), "integer": pa.int32(), "short": pa.int16(),
          "byte": pa.int8(), "boolean": pa.bool_(), "date": pa.date32(), "double": pa.float64(),
          "float": pa.float32(), "binary": pa.binary(), "timestamp": pa.timestamp("us", "UTC"),
          "timestamp_ntz": pa.timestamp("us")}  # fmt: skip
EXTRA_FIELDS: tuple[Json, ...] = tuple(
    {"name": name, "type": "string", "nullable": True, "metadata": {}}
    for name in (FILE_COLUMN, ROW_COLUMN)
)


def arrow_type(spark_type: Any) -> pa.DataType:
    if isinstance(spark_type, str) and spark_type.startswith("decimal("):
        precision, scale = (int(x) for x in spark_type[8:-1].split(","))
        return pa.decimal128(precision, scale)
    if not isinstance(spark_type, str) or spark_type not in _ARROW:
        raise Unsupported(f"no data files for a {spark_type!r} column")
    return _ARROW[spark_type]


def with_row_columns(schema_json: str) -> str:
    """A schemaString with the ``_file`` and ``_row`` columns appended (once)."""
    schema = json.loads(schema_json)
    present = {f["name"] for f in schema.get("fields", [])}
    schema.setdefault("fields", []).extend(f for f in EXTRA_FIELDS if f["name"] not in present)
    return json.dumps(schema, separators=(",", ":"))


def fields(schema_json: str) -> list[Json]:
    found: list[Json] = json.loads(schema_json).get("fields", [])
    return found


def arrow_schema(schema_json: str, partition_columns: Iterable[str] = ()) -> pa.Schema:
    """The table's columns as Arrow (without ``partition_columns``)."""
    skip = set(partition_columns)
    return pa.schema(
        [pa.field(f["name"], arrow_type(f["type"])) for f in fields(schema_json)
         if f["name"] not in skip]
    )  # fmt: skip


def rows_table(
    schema_json: str, rows: Sequence[tuple[str, PartitionValues]], partition_columns: Sequence[str]
) -> pa.Table:
    """One row per ``(name, partition values)``: ``_file`` and ``_row`` = name, partition columns
    typed from their serialized values, every other column NULL."""
    columns = {}
    for f in fields(schema_json):
        kind = arrow_type(f["type"])
        if f["name"] in {FILE_COLUMN, ROW_COLUMN}:
            columns[f["name"]] = pa.array([name for name, _ in rows], kind)
        elif f["name"] in partition_columns:
            try:
                values = [predicates.typed(v.get(f["name"]), f["type"]) for _, v in rows]
            except predicates.InvalidPredicateError as error:
                raise Unsupported(f"partition values of {f['name']}: {error}") from error
            columns[f["name"]] = pa.array(values, kind)
        else:
            columns[f["name"]] = pa.nulls(len(rows), kind)
    return pa.table(columns)


def merge_source(
    schema_json: str, partition_columns: Sequence[str], merge: Merge
) -> tuple[pa.Table, str]:
    """A MERGE's source rows and their Spark schema: ``old_file`` (the target row it matches,
    NULL for an insert), ``new_file`` (its new name, NULL to delete it) and the partition columns
    of the rows to insert."""
    types = {f["name"]: f["type"] for f in fields(schema_json)}
    source_fields = [
        {"name": "old_file", "type": "string", "nullable": True, "metadata": {}},
        {"name": "new_file", "type": "string", "nullable": True, "metadata": {}},
        *({"name": c, "type": types[c], "nullable": True, "metadata": {}}
          for c in partition_columns),
    ]  # fmt: skip
    renames = sorted(merge.renames.items())
    columns: dict[str, pa.Array] = {
        "old_file": pa.array([r for r, _ in renames] + [None] * len(merge.inserts), pa.string()),
        "new_file": pa.array(
            [n for _, n in renames] + [f.name for f in merge.inserts], pa.string()
        ),
    }
    for column in partition_columns:
        raw = [None] * len(renames) + [f.partition.get(column) for f in merge.inserts]
        try:
            values = [predicates.typed(v, types[column]) for v in raw]
        except predicates.InvalidPredicateError as error:
            raise Unsupported(f"partition values of {column}: {error}") from error
        columns[column] = pa.array(values, arrow_type(types[column]))
    schema = json.dumps({"type": "struct", "fields": source_fields}, separators=(",", ":"))
    return pa.table(columns), schema


def merge_inserts(partition_columns: Sequence[str]) -> dict[str, str]:
    """A MERGE's insert assignments over the source of :func:`merge_source` aliased ``s``."""
    inserted = {FILE_COLUMN: "s.new_file", ROW_COLUMN: "s.new_file"}
    return {**inserted, **{c: f"s.{c}" for c in partition_columns}}


def _stats(path: str, schema_json: str, partition_columns: Sequence[str]) -> str:
    nulls = {f["name"]: 1 for f in fields(schema_json) if f["name"] not in partition_columns}
    nulls.update({FILE_COLUMN: 0, ROW_COLUMN: 0})
    exact = {FILE_COLUMN: path, ROW_COLUMN: path}
    return json.dumps(
        {"numRecords": 1, "minValues": exact, "maxValues": exact, "nullCount": nulls},
        separators=(",", ":"),
    )


@dataclass
class Catalog:
    """Scenario files the table has held: partition values, and compaction aliases."""

    partitions: dict[str, PartitionValues] = field(default_factory=dict)
    aliases: list[tuple[int, str, frozenset[str]]] = field(default_factory=list)
    app_ids: set[str] = field(default_factory=set)
    """Every application id the scenario names (engines answer per id)."""

    def learn(self, actions: Iterable[staged.Action]) -> None:
        """Remember the files and app ids of scenario actions."""
        for action in actions:
            if isinstance(action, staged.Add):
                self.partitions.setdefault(action.path, action.partition_values)
            if isinstance(action, staged.Txn):
                self.app_ids.add(action.app_id)

    def name(self, rows: frozenset[str], version: int) -> frozenset[str]:
        """The scenario files a data file's rows are at ``version``."""
        names = set(rows)
        for since, alias, old in self.aliases:
            if since <= version and names & old:
                names = (names - old) | {alias}
        return frozenset(names)

    def add_alias(self, version: int, alias: str, old: frozenset[str]) -> None:
        """From ``version`` on, rows that are the files ``old`` are the file ``alias``."""
        self.aliases.append((version, alias, old))


def _features(names: list[str] | None) -> tuple[str, ...] | None:
    return None if names is None else tuple(names)


def _write_row_file(root: Path, add: AddFile, metadata: Metadata) -> AddFile:
    local = root / codec.decode_path(add.path)
    local.parent.mkdir(parents=True, exist_ok=True)
    columns = metadata.partition_columns
    table = rows_table(metadata.schema_string, [(add.path, add.partition_values)], columns)
    pq.write_table(table.select([n for n in table.column_names if n not in columns]), local)
    stats = _stats(add.path, metadata.schema_string, columns)
    return replace(add, size=os.path.getsize(local), stats=stats)


def _with_data(actions: Sequence[Action], root: Path, base: Metadata | None) -> list[Action]:
    """Setup actions with ``_file``/``_row`` in every schema and a one-row file under every add."""
    out: list[Action] = []
    metadata = base
    for action in actions:
        if isinstance(action, Metadata):
            action = replace(action, schema_string=with_row_columns(action.schema_string))
            metadata = action
        out.append(action)
    for index, action in enumerate(out):
        if isinstance(action, AddFile):
            if metadata is None:
                raise Unsupported("setup adds a file before the table has metadata")
            out[index] = _write_row_file(root, action, metadata)
    return out


def materialize(root: Path, setup: TableSetup) -> Catalog:
    """Write ``setup`` (version 0 from ``table``, then the setup commits) under ``root``."""
    if setup.profile not in (None, CURRENT):
        raise Unsupported(f"engines follow today's rules, not delta-spark {setup.profile}'s")
    catalog = Catalog()
    store = LocalLogStore(root)
    log = DeltaLog(str(root), store=store)
    version = 0
    if setup.table is not None:
        actions = _create_table(setup.table)
        store.write_new(commit_name(0), codec.encode_commit(_with_data(actions, root, None)))
        version = 1
    for commit in setup.commits:
        try:
            base = log.snapshot() if version > 0 else None
        except DeltaError as error:  # the defaults of spec/scenarios.md need the previous state
            raise Unsupported(f"deltaspec's reader refuses the setup table: {error}") from error
        actions = [to_action(a, base, 0) for a in commit]
        written = _with_data(actions, root, None if base is None else base.metadata)
        store.write_new(commit_name(version), codec.encode_commit(written))
        version += 1
    if setup.table is not None:
        columns = setup.table.get("partition_columns", [])
        catalog.learn(
            staged.Add(path=f["path"], partition_values=f.get("partition", dict.fromkeys(columns)))
            for f in setup.table.get("files", [])
        )
        catalog.app_ids.update(setup.table.get("app_txns", {}))
    for commit in setup.commits:
        catalog.learn(commit)
    return catalog


def _create_table(table: Json) -> list[Action]:
    """Version 0 of a setup ``table``: protocol, metadata, app ids, domains and files."""
    partition_columns = tuple(table.get("partition_columns", ()))
    metadata = Metadata(
        TABLE_ID,
        with_row_columns(schema_string(table["schema"])),
        partition_columns,
        dict(table.get("properties", {})),
        created_time=0,
    )
    protocol = table.get("protocol", {"minReaderVersion": 1, "minWriterVersion": 2})
    return [
        CommitInfo({"timestamp": 0, "operation": "CREATE TABLE", "isBlindAppend": False}),
        Protocol(
            protocol["minReaderVersion"],
            protocol["minWriterVersion"],
            _features(protocol.get("readerFeatures")),
            _features(protocol.get("writerFeatures")),
        ),
        metadata,
        *(SetTransaction(app, v) for app, v in table.get("app_txns", {}).items()),
        *(DomainMetadata(d, conf) for d, conf in table.get("domains", {}).items()),
        *(
            AddFile(f["path"], dict(f.get("partition", {c: None for c in partition_columns})),
                    1, 0, True)
            for f in table.get("files", [])
        ),
    ]  # fmt: skip


@dataclass(frozen=True)
class TableInfo:
    """What an engine's reader says about one version of its table."""

    version: int
    schema_json: str
    partition_columns: tuple[str, ...]
    configuration: Mapping[str, str]
    protocol: Json
    app_txns: Mapping[str, int]
    domains: Mapping[str, str] | None
    """None when this reader cannot list them."""
    files: tuple[tuple[str, str], ...]
    """``(path in the log, local path)`` of every live data file."""


def data_files(info: TableInfo, catalog: Catalog) -> tuple[DataFile, ...]:
    """The rows each live data file holds, as scenario files."""
    found = []
    for path, local in info.files:
        table = pq.read_table(local, columns=[FILE_COLUMN, ROW_COLUMN])
        values, ids = table[FILE_COLUMN].to_pylist(), table[ROW_COLUMN].to_pylist()
        if not values or None in values or None in ids:
            raise Unsupported(f"data file {path} holds rows without a scenario file")
        rows = frozenset(str(v) for v in values)
        names = catalog.name(rows, info.version)
        found.append(DataFile(path, rows, names, tuple(str(i) for i in ids)))
    return tuple(found)


def view(info: TableInfo, catalog: Catalog) -> View:
    """``info`` in scenario terms, the input of ``operations.translate``."""
    files = data_files(info, catalog)
    unknown = {n for f in files for n in f.names} - set(catalog.partitions)
    if unknown:
        raise Unsupported(f"rows for files the scenario never named: {sorted(unknown)}")
    return View(
        info.version,
        info.partition_columns,
        {f["name"]: f["type"] for f in fields(info.schema_json)},
        dict(info.configuration),
        dict(info.app_txns),
        files,
        catalog.partitions,
    )


def names_with_duplicates(files: Sequence[DataFile]) -> list[str]:
    """The live scenario files, each once, plus once more for every extra copy of a row (same
    ``_row``): duplicated data, so the list differs from any expected set."""
    counts = Counter(i for f in files for i in f.ids)
    holder = {i: min(f.names) for f in files for i in f.ids}
    extra = [holder[i] for i, count in counts.items() for _ in range(count - 1)]
    return sorted({n for f in files for n in f.names}) + sorted(extra)


def table_snapshot(info: TableInfo, catalog: Catalog) -> TableSnapshot:
    """The snapshot (spec/scenarios.md "Expected snapshot") of an engine's table: ``files`` are
    the scenario files of the live rows; no tombstones (physical files have none), no domains
    when the engine's reader cannot list them."""
    schema = json.loads(info.schema_json)
    hidden = {FILE_COLUMN, ROW_COLUMN}
    schema["fields"] = [f for f in schema.get("fields", []) if f["name"] not in hidden]
    files = data_files(info, catalog)
    return TableSnapshot(
        version=info.version,
        files=tuple(names_with_duplicates(files)),
        app_txns=dict(sorted(info.app_txns.items())),
        domains=None if info.domains is None else dict(sorted(info.domains.items())),
        properties=dict(info.configuration),
        schema=json.dumps(schema, separators=(",", ":")),
        partition_columns=tuple(info.partition_columns),
        protocol=staged.Protocol.of(info.protocol) if info.protocol else None,
    )


def latest_version(root: Path) -> int:
    """The newest commit version in ``root``'s log (-1 if none), from a listing."""
    log = root / "_delta_log"
    if not log.is_dir():
        return -1
    return max(_commit_versions(p.name for p in log.iterdir()), default=-1)


def _commit_versions(names: Iterable[str]) -> list[int]:
    return sorted(
        int(n[:20]) for n in names if len(n) == 25 and n.endswith(".json") and n[:20].isdigit()
    )


def commit_info(root: Path, version: int) -> Json:
    """The commitInfo written at ``version`` ({} if none)."""
    text = (root / "_delta_log" / f"{version:020d}.json").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.strip():
            found = json.loads(line)
            if "commitInfo" in found:
                info: Json = found["commitInfo"]
                return info
    return {}


def checkpoint_versions(root: Path) -> tuple[int, ...]:
    log = root / "_delta_log"
    if not log.is_dir():
        return ()
    return tuple(sorted({int(p.name[:20]) for p in log.iterdir() if ".checkpoint." in p.name}))


def log_problems(root: Path) -> list[str]:
    """LOG.CONTIGUITY and checkpoint pointers, from one listing of the log."""
    log = root / "_delta_log"
    if not log.is_dir():
        return []
    names = [p.name for p in log.iterdir()]
    versions = _commit_versions(names)
    problems = []
    if versions and versions != list(range(versions[0], versions[-1] + 1)):
        problems.append(f"commit versions are not contiguous: {versions}")
    checkpoints = checkpoint_versions(root)
    if versions and any(v > versions[-1] for v in checkpoints):
        problems.append(f"a checkpoint is newer than the latest commit: {checkpoints}")
    last = log / "_last_checkpoint"
    if last.exists():
        pointed = json.loads(last.read_text(encoding="utf-8")).get("version")
        if pointed not in checkpoints:
            problems.append(f"_last_checkpoint names version {pointed}, not written")
    return problems
