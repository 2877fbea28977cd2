"""delta-rs (the ``deltalake`` package) behind the adapter interface, at operation level.

Each writer becomes the operation ``engines/operations.py`` translates it to. The
interleaving is deterministic: ``begin`` loads a ``DeltaTable`` at the writer's read version and
keeps it; ``commit`` runs the operation on that stale object, so delta-rs reads that version,
writes at the next one and, finding it taken, runs its own conflict checker against every newer
commit. delta-rs reports conflicts as ``CommitFailedError`` with a message and nothing finer;
:data:`OUTCOMES` maps its message fragments to the scenario kinds (CONFLICT.KINDS). It does not
name the winning commit: with several commits in between, the operation is replayed on copies
of the table cut after each of them to find the first it fails on.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import deltalake
import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, PostCommitHookProperties, write_deltalake
from deltalake.exceptions import DeltaError, TableNotFoundError
from deltalake.transaction import Transaction

from ....impl import codec
from ....impl.errors import DeltaError as DeltaSpecError
from ....impl.snapshot.delta_log import DeltaLog
from ...harness import actions as staged
from ...harness import outcomes, wire
from ...harness.adapter import Capability, Json, TableSetup, Unsupported, WriterSpec
from ...harness.reads import Read
from ...harness.scenarios import schema_string
from ...harness.snapshots import NO_SNAPSHOT, NO_TABLE, TableSnapshot, protocol_json
from .. import operations as ops
from ..table_files import datafiles

DELTALAKE_VERSION: str = deltalake.__version__

OUTCOMES: tuple[tuple[str, Json], ...] = (
    ("a concurrent transactions added new data", {"conflict": "CONCURRENT_APPEND"}),
    ("deleted data this operation read", {"conflict": "CONCURRENT_DELETE_READ"}),
    ("deleted the same data your transaction deletes", {"conflict": "CONCURRENT_DELETE_DELETE"}),
    ("Metadata changed since last commit", {"conflict": "METADATA_CHANGED"}),
    ("Concurrent transaction failed", {"conflict": "CONCURRENT_TRANSACTION"}),
    ("Protocol changed since last commit", {"conflict": "PROTOCOL_CHANGED"}),
    ("Delta table is append-only", {"error": "APPEND_ONLY_VIOLATION"}),
)
"""delta-rs error message fragment -> scenario outcome (delta-rs's CommitConflictError and
TransactionError texts, crates/core/src/kernel/transaction)."""
_MAX_ATTEMPTS = re.compile(r"Failed to commit transaction: \d+$")
_BIG = 1 << 40  # a compaction target no scenario file reaches: one file per partition


def outcome_of(error: Exception) -> Json:
    """The scenario outcome of a delta-rs exception (``ENGINE_ERROR`` when unmapped)."""
    message = str(error)
    for fragment, outcome in OUTCOMES:
        if fragment in message:
            return dict(outcome)
    if _MAX_ATTEMPTS.search(message.strip()):
        return {"error": "MAX_COMMIT_RETRIES_EXCEEDED"}
    return {"error": "ENGINE_ERROR", "message": f"{type(error).__name__}: {message[:300]}"}


@dataclass
class _Writer:
    spec: WriterSpec
    table: DeltaTable | None
    read_version: int
    reads: list[Read] = field(default_factory=list)
    translation: ops.Translation | None = None


class DeltaRsAdapter:
    """The table lives in ``root``; one stale ``DeltaTable`` per open writer."""

    name = "deltars"
    capabilities = frozenset(
        {Capability.WRITE_APPEND, Capability.WRITE_OVERWRITE, Capability.WRITE_REPLACE_WHERE,
         Capability.DELETE, Capability.UPDATE, Capability.MERGE, Capability.COMPACTION,
         Capability.PROPERTY_CHANGE, Capability.TIME_TRAVEL, Capability.CHECKPOINT}
    )  # fmt: skip
    version = DELTALAKE_VERSION

    def __init__(self, root: Path) -> None:
        self.root = root
        self.catalog = datafiles.Catalog()
        self.max_retries: int | None = None
        self.writers: dict[str, _Writer] = {}

    def create(self, setup: TableSetup) -> None:
        if set(setup.config) - {"maxCommitAttempts"}:
            raise Unsupported(f"delta-rs has no setting for {sorted(setup.config)}")
        self.max_retries = setup.config.get("maxCommitAttempts")
        self.root.mkdir(parents=True, exist_ok=True)
        self.catalog = datafiles.materialize(self.root, setup)

    def _table(self, version: int | None) -> DeltaTable:
        return DeltaTable(str(self.root), version=version)

    def begin(
        self, writer: str, spec: WriterSpec, version: int | None, now: int
    ) -> outcomes.Outcome | None:
        table = None
        if version != -1:
            try:
                table = self._table(version)
            except TableNotFoundError:
                if version is not None:
                    return outcomes.Error("TABLE_NOT_FOUND")
            except DeltaError:
                return outcomes.Error("VERSION_NOT_FOUND")
        read_version = -1 if table is None else table.version()
        self.writers[writer] = _Writer(spec, table, read_version)
        return None

    def read(self, writer: str, read: Read) -> None:
        self.writers[writer].reads.append(read)

    def stage(self, writer: str, actions: Sequence[staged.Action], now: int) -> None:
        state = self.writers[writer]
        intent = ops.Intent.of(state.spec, state.reads, actions)
        view = (
            None if state.table is None else datafiles.view(self._info(state.table), self.catalog)
        )
        state.translation = ops.translate(intent, view)
        self.catalog.learn(actions)

    def _commit_properties(self, txn: tuple[str, int] | None) -> CommitProperties:
        return CommitProperties(
            max_commit_retries=self.max_retries,
            app_transactions=None if txn is None else [Transaction(txn[0], txn[1])],
        )

    def commit(self, writer: str, now: int) -> outcomes.Outcome:
        state = self.writers[writer]
        assert state.translation is not None
        before = datafiles.latest_version(self.root)
        try:
            self._run(state, state.translation)
        except DeltaError as error:
            outcome = outcome_of(error)
            if "conflict" in outcome:
                outcome["winner"] = self._winner(state, datafiles.latest_version(self.root))
            return wire.outcome_from_wire(outcome)
        landed = datafiles.latest_version(self.root)
        if landed == before:
            return outcomes.SKIPPED
        for alias, old in state.translation.aliases.items():
            self.catalog.add_alias(landed, alias, old)
        return outcomes.Committed(landed, datafiles.commit_info(self.root, landed))

    def _winner(self, state: _Writer, latest: int) -> int:
        """The first winning commit delta-rs's checker fails on (it does not say which): the one
        commit in between, or the first version at which the same operation, replayed on a copy
        of the table cut after that version, conflicts too."""
        if latest == state.read_version + 1:
            return latest
        assert state.translation is not None
        for version in range(state.read_version + 1, latest):
            with tempfile.TemporaryDirectory(prefix="deltaspec-deltars-") as directory:
                copy = Path(directory) / "table"
                _copy_until(self.root, copy, version)
                replay = DeltaRsAdapter(copy)
                replay.catalog, replay.max_retries = self.catalog, self.max_retries
                stale = _Writer(state.spec, replay._table(state.read_version), state.read_version)
                try:
                    replay._run(stale, state.translation)
                except DeltaError as error:
                    if "conflict" in outcome_of(error):
                        return version
        return latest

    def _run(self, state: _Writer, translation: ops.Translation) -> None:
        operation = translation.operation
        hooks = PostCommitHookProperties(create_checkpoint=True, cleanup_expired_logs=False)
        props = self._commit_properties(translation.txn)
        common: dict[str, Any] = {"commit_properties": props, "post_commithook_properties": hooks}
        if isinstance(operation, ops.Create):
            self._create(operation, common)
            return
        table = state.table
        assert table is not None
        match operation:
            case ops.Append(files=files):
                write_deltalake(table, self._rows(table, files), mode="append", **common)
            case ops.Overwrite(files=files):
                write_deltalake(table, self._rows(table, files), mode="overwrite", **common)
            case ops.ReplaceWhere(predicate=predicate, files=files):
                rows = self._rows(table, files)
                write_deltalake(table, rows, mode="overwrite", predicate=predicate, **common)
            case ops.Delete(condition=condition):
                table.delete(condition, **common)
            case ops.Update(condition=condition):
                table.update(updates={ops.FILE_COLUMN: operation.assignment}, predicate=condition,
                             **common)  # fmt: skip
            case ops.Merge():
                self._merge(table, operation, common)
            case ops.Compact(partitions=partitions):
                filters = _partition_filters(partitions, table.metadata().partition_columns)
                table.optimize.compact(partition_filters=filters, target_size=_BIG, **common)
            case ops.SetProperties(properties=properties):
                table.alter.set_table_properties(
                    dict(properties), raise_if_not_exists=False, **common
                )
            case _:
                raise Unsupported(f"no delta-rs call for {operation!r}")

    def _rows(self, table: DeltaTable, files: Sequence[ops.NewFile]) -> pa.Table:
        columns = table.metadata().partition_columns
        rows = [(f.name, f.partition) for f in files]
        return datafiles.rows_table(table.schema().to_json(), rows, columns)

    def _merge(self, table: DeltaTable, merge: ops.Merge, common: dict[str, Any]) -> None:
        columns = table.metadata().partition_columns
        source, _ = datafiles.merge_source(table.schema().to_json(), columns, merge)
        (
            table.merge(source, merge.on(), source_alias="s", target_alias="t", **common)
            .when_matched_delete("s.new_file IS NULL")
            .when_matched_update({ops.FILE_COLUMN: "s.new_file"})
            .when_not_matched_insert(datafiles.merge_inserts(columns))
            .execute()
        )

    def _create(self, create: ops.Create, common: dict[str, Any]) -> None:
        if datafiles.latest_version(self.root) >= 0:
            raise Unsupported(
                "delta-rs looks for an existing table when the write runs, not when it began, "
                "so concurrent creators cannot be interleaved"
            )
        schema = datafiles.with_row_columns(schema_string(list(create.columns)))
        rows = datafiles.rows_table(
            schema, [(f.name, f.partition) for f in create.files], create.partition_columns
        )
        write_deltalake(
            str(self.root),
            rows,
            mode="error",
            partition_by=list(create.partition_columns) or None,
            configuration=dict(create.configuration) or None,
            **common,
        )

    def _info(self, table: DeltaTable) -> datafiles.TableInfo:
        version = table.version()
        protocol = table.protocol()
        metadata = table.metadata()
        versions = {app: table.transaction_version(app) for app in sorted(self.catalog.app_ids)}
        paths = [str(p) for p in table.get_add_actions(flatten=True).column("path").to_pylist()]
        local = [str(self.root / codec.decode_path(p)) for p in paths]
        return datafiles.TableInfo(
            version,
            table.schema().to_json(),
            tuple(metadata.partition_columns),
            dict(metadata.configuration),
            protocol_json(protocol),
            {app: v for app, v in versions.items() if v is not None},
            _domains(self.root, version),
            tuple(zip(paths, local, strict=True)),
        )

    def try_write(self, writer: str, now: int) -> outcomes.Outcome:
        raise Unsupported("delta-rs runs its commit loop to the end")

    def resolve(self, writer: str) -> outcomes.Outcome:
        raise Unsupported("delta-rs runs its commit loop to the end")

    def checkpoint(self, version: int, now: int) -> None:
        self._table(version).create_checkpoint()

    def snapshot(self, version: int | None = None) -> TableSnapshot:
        try:
            table = self._table(version)
        except TableNotFoundError:
            return NO_TABLE if version in (None, -1) else NO_SNAPSHOT
        return datafiles.table_snapshot(self._info(table), self.catalog)

    def checkpoints(self) -> tuple[int, ...]:
        return datafiles.checkpoint_versions(self.root)

    def verify(self) -> list[str]:
        return datafiles.log_problems(self.root)

    def close(self) -> None:
        self.writers.clear()


def _copy_until(root: Path, copy: Path, version: int) -> None:
    """``root`` with its log cut after ``version`` (data files kept; no checkpoints)."""

    def later(directory: str, names: list[str]) -> set[str]:
        if Path(directory).name != "_delta_log":
            return set()
        return {n for n in names if not (n.endswith(".json") and n[:20].isdigit()
                                          and int(n[:20]) <= version)}  # fmt: skip

    shutil.copytree(root, copy, ignore=later)


def _domains(root: Path, version: int) -> dict[str, str] | None:
    """Domain metadata, which delta-rs's Python API does not list: read with deltaspec's own log
    reader (None when it refuses the table)."""
    try:
        snapshot = DeltaLog(str(root)).snapshot(version)
    except DeltaSpecError:
        return None
    return {d: dm.configuration for d, dm in snapshot.domains.items()}


def _partition_filters(
    partitions: Sequence[Mapping[str, str | None]] | None, columns: Sequence[str]
) -> list[tuple[str, str, Any]] | None:
    """delta-rs's conjunctive partition filter selecting exactly ``partitions``."""
    if partitions is None:
        return None
    if any(v is None for p in partitions for v in p.values()):
        raise Unsupported("delta-rs partition filters cannot select a null partition")
    if len(partitions) == 1:
        return [(c, "=", partitions[0][c]) for c in columns]
    if len(columns) == 1:
        return [(columns[0], "in", [p[columns[0]] for p in partitions])]
    raise Unsupported(
        "delta-rs partition filters are conjunctions: several multi-column partitions"
    )
