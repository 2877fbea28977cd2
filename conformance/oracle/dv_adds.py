"""The services stage's check of deletion-vector adds (DV.WRITE, DV.ADD_CHECKS), judged by the
model: what a DELETE, UPDATE or MERGE commits for the rows it removes from files on a table that
enables deletion vectors.

The Spark path's three commands make those actions with one function,
``spark.deletion_vectors.mark_deleted``; it runs without a SparkSession (the rows to mark are
given), on a table of a few files, some already carrying a vector. For every file it touched it
must give what the model's ``mark_deleted`` says: the file removed with its old vector and its
stats reduced to ``numRecords``, then, unless every row is gone, added again with a vector whose
rows (read back from the file it wrote) are the old and the new ones, its ``cardinality`` their
number, and the file's stats unchanged but ``tightBounds: false``. The actions are then
committed as a DELETE by the impl, which must accept them as the model's DV.ADD_CHECKS does, and
the table's files are then the model's. Without pyspark (an optional dependency) the function
cannot be imported, and the check says so instead of running.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from ...impl import codec
from ...impl.actions import AddFile, Metadata, Protocol
from ...impl.deletion_vectors import deleted_rows, inline_deletion_vector
from ...impl.errors import DeltaError
from ...impl.snapshot.delta_log import DeltaLog
from ...impl.txn.transaction import Operation, OptimisticTransaction
from ...model import deletion_vectors as model_dvs
from ...model.actions import Commit
from ...model.outcomes import ErrorKind
from ...model.profiles import profile
from ...model.snapshot import Snapshot, apply_commit
from ...model.transaction_state import Operation as ModelOperation
from ...model.transaction_state import Transaction
from ..engines.model.adapter import read_log_action
from .artefacts import Mismatch, agree

ROUNDS = 24
NOW = 1_700_000_000_000
SCHEMA = {"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": True, "metadata": {}}]}  # fmt: skip


def _stats(rows: int) -> str:
    stats = {"numRecords": rows, "minValues": {"id": 0}, "maxValues": {"id": rows - 1},
             "nullCount": {"id": 0}, "tightBounds": True}  # fmt: skip
    return json.dumps(stats, separators=(",", ":"))


def _table(root: Path, rng: random.Random) -> tuple[DeltaLog, dict[str, int], dict[str, set[int]]]:
    """A table enabling deletion vectors with two to four files of one to six rows, some with
    an inline vector marking some of their rows; the rows per file and the rows marked."""
    root.mkdir(parents=True)
    log = DeltaLog(str(root))
    rows: dict[str, int] = {}
    old: dict[str, set[int]] = {}
    adds = []
    for index in range(rng.randint(2, 4)):
        path = f"part-{index}.parquet"
        rows[path] = rng.randint(1, 6)
        marked = {r for r in range(rows[path]) if rng.random() < 0.25}
        if len(marked) == rows[path]:
            marked.discard(0)
        old[path] = marked
        vector = inline_deletion_vector(marked) if marked else None
        adds.append(AddFile(path, {}, 100 + index, NOW, True, _stats(rows[path]), None, vector))
    protocol = Protocol(3, 7, ("deletionVectors",), ("deletionVectors",))
    metadata = Metadata("dv-adds", json.dumps(SCHEMA),
                        configuration={"delta.enableDeletionVectors": "true"})  # fmt: skip
    OptimisticTransaction(log, None).commit([protocol, metadata, *adds])
    return log, rows, old


def _marked(
    rng: random.Random, rows: dict[str, int], old: dict[str, set[int]]
) -> dict[str, set[int]]:
    """The rows a command removes: per file none, some of the live ones, or every live one."""
    out: dict[str, set[int]] = {}
    for path, count in rows.items():
        live = sorted(set(range(count)) - old[path])
        choice = rng.choice(["none", "some", "all"])
        if choice == "all" or (choice == "some" and len(live) == 1):
            out[path] = set(live)
        elif choice == "some" and live:
            out[path] = set(rng.sample(live, rng.randint(1, len(live) - 1)))
    return {path: marked for path, marked in out.items() if marked}


def _model_actions(actions: list[Any], snapshot: Snapshot) -> tuple[Any, ...]:
    """The impl's actions as the model reads their Delta JSON."""
    lines = [json.loads(codec.encode_action(a)) for a in actions]
    return tuple(a for a in (read_log_action(line, snapshot) for line in lines) if a is not None)


def _model_table(log: DeltaLog) -> Snapshot:
    """The model's snapshot of the table's version 0."""
    lines = log.store.read(f"{0:020d}.json").decode().splitlines()
    found = [read_log_action(json.loads(line), Snapshot()) for line in lines if line.strip()]
    return apply_commit(Snapshot(), Commit(0, tuple(a for a in found if a is not None)))


def _expected_files(rows: dict[str, int], old: dict[str, set[int]],
                    outcomes: tuple[Any, ...]) -> list[tuple[str, int]]:  # fmt: skip
    """The live files after the commit, as (path, rows marked): the untouched ones as they
    were, the touched ones as the model's outcome left them."""
    by_path = {o.path: o.deleted for o in outcomes}
    files = [(p, len(old[p])) for p in rows if p not in by_path]
    files += [(p, len(d)) for p, d in by_path.items() if d is not None]
    return sorted(files)


def check_round(root: Path, seed: int, mark_deleted: Any) -> int:
    """One table, one command's deletion-vector actions; returns the files it touched."""
    rng = random.Random(f"deletion vectors {seed}")
    log, rows, old = _table(root, rng)
    marked = _marked(rng, rows, old)
    snapshot = log.snapshot()
    files = sorted(snapshot.files.values(), key=lambda f: f.path)
    changes = mark_deleted(str(root), files, marked, NOW)
    before = {f.path: f for f in files}
    outcomes = model_dvs.mark_deleted(
        tuple(model_dvs.MarkedFile(p, rows[p], frozenset(old[p])) for p in sorted(rows)),
        {p: frozenset(m) for p, m in marked.items()},
    )
    what = f"deletion vectors {seed} (rows {rows}, marked {old}, removed {marked})"
    agree(f"{what}: files removed", sorted(r.path for r in changes.removes),
          sorted(o.path for o in outcomes))  # fmt: skip
    for remove in changes.removes:
        agree(f"{what}: remove {remove.path} vector", remove.deletion_vector,
              before[remove.path].deletion_vector)  # fmt: skip
        agree(f"{what}: remove {remove.path} stats", json.loads(remove.stats or "null"),
              {"numRecords": rows[remove.path]})  # fmt: skip
    kept = {o.path: o.deleted for o in outcomes if o.deleted is not None}
    agree(f"{what}: files added again", sorted(a.path for a in changes.adds), sorted(kept))
    for add in changes.adds:
        vector = add.deletion_vector
        if vector is None:
            raise Mismatch(f"{what}: add {add.path} has no deletion vector")
        marks = _rows_marked(root, vector, f"{what}: add {add.path}")
        agree(f"{what}: add {add.path} rows marked", marks, set(kept[add.path]))
        agree(f"{what}: add {add.path} cardinality", vector.cardinality, len(kept[add.path]))
        stats = json.loads(before[add.path].stats or "{}") | {"tightBounds": False}
        agree(f"{what}: add {add.path} stats", json.loads(add.stats or "null"), stats)
    _check_commit(log, [*changes.removes, *changes.adds], what)
    agree(f"{what}: files after the commit",
          sorted((p, 0 if f.deletion_vector is None else f.deletion_vector.cardinality)
                 for (p, _), f in log.snapshot().files.items()),
          _expected_files(rows, old, outcomes))  # fmt: skip
    return len(outcomes)


def _rows_marked(root: Path, vector: Any, what: str) -> set[int]:
    """The rows ``vector`` marks, read back from where it is stored; one that cannot be read
    (its cardinality or size not what is stored) is a mismatch."""
    try:
        return deleted_rows(root, vector)
    except (DeltaError, ValueError) as error:
        raise Mismatch(f"{what}: its deletion vector does not read back: {error}") from None


def _check_commit(log: DeltaLog, actions: list[Any], what: str) -> None:
    """DV.ADD_CHECKS: the impl commits the actions as a DELETE where the model accepts them,
    and refuses them where it does not."""
    model = _model_table(log)
    txn = Transaction("dv-adds", model, ModelOperation("DELETE"))
    verdict = model_dvs.check_deletion_vector_adds(txn, _model_actions(actions, model), profile())
    want = verdict.name if isinstance(verdict, ErrorKind) else "committed"
    try:
        OptimisticTransaction(log).commit(actions, Operation("DELETE"))
        got = "committed"
    except DeltaError as error:
        got = f"{type(error).__name__}: {error}"
    if (got == "committed") != (want == "committed"):
        agree(f"{what}: DV.ADD_CHECKS", got, want)


def run_dv_adds(workdir: Path, rounds: int = ROUNDS) -> int | None:
    """Every round, each on its own table under ``workdir``; the files touched, or None
    without pyspark. Raises Mismatch."""
    try:
        from ...spark.deletion_vectors import mark_deleted  # lazy: pyspark is optional
    except ImportError:
        return None
    return sum(check_round(workdir / f"dv-{seed}", seed, mark_deleted) for seed in range(rounds))
