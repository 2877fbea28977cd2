"""Seeded bugs in the impl, to measure how much the oracle catches.

A mutant replaces one snippet of one impl function by a slightly wrong one: the kind
of mistake a Delta writer's author makes. ``apply`` recompiles just that function
from its mutated source inside a process and rebinds it everywhere it was imported;
nothing on disk changes. ``run_mutants`` runs each mutant in its own spawned process
through the ``ci`` oracle (the spec's vectors, the put-if-absent race, then the
differential state machine) and reports whether it was killed, by which stage and how fast.
"""

from __future__ import annotations
import __future__

import importlib
import inspect
import multiprocessing
import sys
import textwrap
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any


class MutantError(Exception):
    """A mutant that no longer applies: its snippet is not found exactly once."""


@dataclass(frozen=True)
class Mutant:
    id: str
    description: str
    target: str
    """``module:qualified.name`` of the function to mutate; ``old`` and ``new`` are written
    as in its dedented source."""
    old: str
    new: str


def _m(id: str, description: str, target: str, old: str, new: str) -> Mutant:
    return Mutant(id, description, f"deltaspec.impl.{target}", old, new)


CATALOG: tuple[Mutant, ...] = (
    _m("delete-delete-skipped", "the delete/delete check is not run",
       "txn.conflicts:check_order",
       "(check_added_files, check_deleted_vs_read, check_deleted_vs_deleted)",
       "(check_added_files, check_deleted_vs_read)"),
    _m("serializable-as-write-serializable", "Serializable ignores blind appends, as WS does",
       "txn.conflicts:candidate_adds",
       'if level == "WriteSerializable" and win.is_blind_append:',
       'if level in ("WriteSerializable", "Serializable") and win.is_blind_append:'),
    _m("whole-table-read-ignored", "a whole-table read does not conflict with deletes",
       "txn.conflicts:check_deleted_vs_read",
       'if win.removed and cur.reads.whole_table and profile.has("whole_table_delete_read"):',
       "if False:"),
    _m("data-predicates-for-appends", "data filters join the read predicate",
       "predicates:partition_predicate",
       "conjoin(f for f in filters if f.columns() <= allowed)",
       "conjoin(filters)"),
    _m("only-last-winner", "only the latest winning commit is checked",
       "txn.transaction:OptimisticTransaction._resolve",
       "range(attempt_version, latest + 1)", "range(latest, latest + 1)"),
    _m("retry-skips-first-winner", "off by one: the first winner after the read is not checked",
       "txn.transaction:OptimisticTransaction._resolve",
       "range(attempt_version, latest + 1)", "range(attempt_version + 1, latest + 1)"),
    _m("retry-version-off-by-one", "the retry aims one version too far, leaving a gap",
       "txn.transaction:OptimisticTransaction._resolve",
       "return latest + 1, current", "return latest + 2, current"),
    _m("no-snapshot-isolation-downgrade", "no-data-change commits keep the table's level",
       "txn.transaction:OptimisticTransaction._isolation_level",
       "if only_files and not changes and may_downgrade:", "if False:"),
    _m("downgrade-despite-metadata", "a metadata change still downgrades to SnapshotIsolation",
       "txn.transaction:OptimisticTransaction._isolation_level",
       "if only_files and not changes and may_downgrade:",
       "if not changes and may_downgrade:"),
    _m("blind-append-without-reads", "isBlindAppend ignores what the transaction read",
       "txn.prepare:is_blind_append",
       "return only_adds and not reads.predicates and not reads.files", "return only_adds"),
    _m("replay-keeps-first-add", "replay keeps the first add of a re-added path",
       "replay.commits:reconcile",
       "adds.pop(key, None)\n                adds[key] = action",
       "adds.setdefault(key, action)"),
    _m("tombstone-dropped-early", "the checkpoint drops tombstones still within retention",
       "checkpoint:checkpoint_table",
       "snapshot.tombstones_table(now_ms)",
       "snapshot.tombstones_table(now_ms + snapshot.deleted_file_retention_ms)"),
    _m("checkpoint-at-version-zero", "version 0 counts as a multiple of the interval",
       "checkpoint:needs_checkpoint",
       "return version != 0 and version % checkpoint_interval(metadata) == 0",
       "return version % checkpoint_interval(metadata) == 0"),
    _m("put-if-absent-by-exists-then-write", "put-if-absent checks existence, then writes",
       "log.store:LocalLogStore.write_new",
       "kind = crashpoints.file_kind(name)",
       "if os.path.exists(final):\n        raise self._exists_error(name)\n"
       "    with open(final, 'wb') as file:\n        file.write(data)\n    return"),
    _m("metadata-conflict-ignored", "a concurrent metadata change is silently adopted",
       "txn.conflicts:check_metadata",
       'return _raise(errors.MetadataChangedException, "the metadata changed", cur, win)',
       "return replace(cur, metadata=win.metadata)"),
    _m("protocol-conflict-ignored", "two protocol changes do not conflict",
       "txn.conflicts:check_protocol",
       "if cur.commits_protocol:", "if False:"),
    _m("app-txn-conflict-ignored", "a winner's SetTransaction for a read app id is ignored",
       "txn.conflicts:check_app_txns",
       "clash = sorted(cur.reads.app_ids & win.app_ids)", "clash: list[str] = []"),
    _m("domain-conflict-ignored", "two commits of the same metadata domain do not conflict",
       "txn.conflicts:check_domains",
       "clash = sorted(cur.domains & win.domains)", "clash: list[str] = []"),
    _m("compaction-removes-ignored", "delete/read skips the winner's dataChange=false removes",
       "txn.conflicts:check_deleted_vs_read",
       "for removed in win.removed:",
       "for removed in [r for r in win.removed if r.data_change]:"),
    _m("compaction-adds-not-candidates", "append check skips the winner's dataChange=false adds",
       "txn.conflicts:candidate_adds",
       "    return win.added\n", "    return [a for a in win.added if a.data_change]\n"),
    _m("app-id-read-not-recorded", "txn_version does not record the app id as read",
       "txn.transaction:OptimisticTransaction.txn_version",
       "self._app_ids.add(app_id)", "pass"),
    _m("append-only-not-enforced", "delta.appendOnly is not enforced",
       "txn.prepare:check_append_only",
       "if append_only and any(", "if False and any("),
    _m("empty-commit-never-skipped", "commitIfNeeded records empty commits",
       "txn.prepare:skips_empty_commit",
       "and skippable_level\n", "and False\n"),
    _m("null-partition-matches", "an unknown (null) predicate result selects the file",
       "predicates:matching",
       "pc.fill_null(truth, False)", "pc.fill_null(truth, True)"),
    _m("read-version-recorded-wrong", "commitInfo.readVersion records the attempt version",
       "txn.transaction:OptimisticTransaction._commit_info",
       'fields["readVersion"] = self.read_version',
       'fields["readVersion"] = self.read_version + 1'),
    _m("max-retries-off-by-one", "maxCommitAttempts allows one attempt fewer",
       "txn.transaction:OptimisticTransaction._after_collision",
       "attempt > profile.max_commit_attempts", "attempt >= profile.max_commit_attempts"),
)  # fmt: skip


def _resolve(target: str) -> tuple[Any, str, Any]:
    module_name, qualname = target.split(":")
    owner: Any = importlib.import_module(module_name)
    *path, name = qualname.split(".")
    for part in path:
        owner = getattr(owner, part)
    return owner, name, inspect.getattr_static(owner, name)


def mutated_source(mutant: Mutant) -> str:
    _, _, original = _resolve(mutant.target)
    source = textwrap.dedent(inspect.getsource(original))
    if source.count(mutant.old) != 1:
        raise MutantError(f"{mutant.id}: snippet found {source.count(mutant.old)} times")
    return source.replace(mutant.old, mutant.new)


def apply(mutant: Mutant) -> None:
    """Swap the mutated function in, in this process only."""
    owner, name, original = _resolve(mutant.target)
    module = sys.modules[mutant.target.split(":")[0]]
    code = compile(
        mutated_source(mutant),
        f"<mutant {mutant.id}>",
        "exec",
        flags=__future__.annotations.compiler_flag,
        dont_inherit=True,
    )
    namespace: dict[str, Any] = {}
    exec(code, module.__dict__, namespace)
    replacement = namespace[name]
    setattr(owner, name, replacement)
    for other in list(sys.modules.values()):
        if getattr(other, "__name__", "").startswith("deltaspec."):
            for attr, value in list(vars(other).items()):
                if value is original:
                    setattr(other, attr, replacement)


@dataclass(frozen=True)
class MutantResult:
    id: str
    killed: bool
    stage: str | None
    """The oracle stage that failed: ``machine``, ``race`` or ``vectors``."""
    seconds: float
    detail: str = ""


STAGES: tuple[str, ...] = ("vectors", "race", "services", "machine", "spark")
"""The stages a mutant runs, in order: ``IMPL_STAGE_NAMES`` of conformance/oracle/stages.py, the
registry ``deltaspec check`` runs too (spelled out so that importing this module stays light; a
test keeps them equal). The vectors on the model alone are left out: a mutant of the impl
cannot fail them."""


def run_in_process(mutant_id: str | None, stages: Sequence[str] = STAGES) -> MutantResult:
    """Apply ``mutant_id`` (None: no mutant) here, then run the chosen stages in order; the
    first that fails kills the mutant. A stage that cannot run here (no Spark) kills nothing."""
    from deltaspec.conformance.oracle.stages import StageOptions, chosen, run_stage

    started = time.perf_counter()
    if mutant_id is not None:
        apply(next(m for m in CATALOG if m.id == mutant_id))
    options = StageOptions(shrink=False, verbose=False)
    for stage in chosen(list(stages)):
        result = run_stage(stage, options)
        if not result.passed:
            return MutantResult(
                mutant_id or "", True, stage.name, time.perf_counter() - started,
                result.summary[:300],
            )  # fmt: skip
    return MutantResult(mutant_id or "", False, None, time.perf_counter() - started)


def _child(mutant_id: str | None, stages: Sequence[str], queue: Any) -> None:
    queue.put(asdict(run_in_process(mutant_id, stages)))


def run_isolated(
    mutant_id: str | None, timeout: float, stages: Sequence[str] = STAGES
) -> MutantResult:
    """``run_in_process`` in a fresh spawned interpreter, killed after ``timeout`` seconds."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    started = time.perf_counter()
    process = context.Process(target=_child, args=(mutant_id, tuple(stages), queue))
    process.start()
    process.join(timeout)
    if process.is_alive():
        process.kill()
        process.join()
        return MutantResult(mutant_id or "", False, None, timeout, f"timed out after {timeout} s")
    if queue.empty():  # a dead oracle proves nothing: not counted as a kill
        return MutantResult(
            mutant_id or "", False, None, time.perf_counter() - started,
            f"the oracle process died with exit code {process.exitcode}",
        )  # fmt: skip
    return MutantResult(**queue.get())


def run_mutants(
    ids: Iterable[str] | None = None,
    timeout: float = 60.0,
    jobs: int = 2,
    progress: Callable[[MutantResult], None] | None = None,
    stages: Sequence[str] = STAGES,
) -> tuple[MutantResult, list[MutantResult]]:
    """The unmutated baseline, then each mutant (``jobs`` at a time)."""
    from concurrent.futures import ThreadPoolExecutor

    chosen: Sequence[str] = list(ids) if ids is not None else [m.id for m in CATALOG]
    unknown = set(chosen) - {m.id for m in CATALOG}
    if unknown:
        raise MutantError(f"no such mutants: {sorted(unknown)}")
    for mutant_id in chosen:
        mutated_source(next(m for m in CATALOG if m.id == mutant_id))
    baseline = run_isolated(None, timeout * 3, stages)
    results: list[MutantResult] = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for result in pool.map(lambda i: run_isolated(i, timeout, stages), chosen):
            results.append(result)
            if progress is not None:
                progress(result)
    return baseline, results
