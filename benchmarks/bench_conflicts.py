"""Case 4: the cost of checking one transaction against N winning commits of 1k adds each.

The table is partitioned by ``p`` into 100 partitions. The transaction is a Serializable DELETE
in partition 0: it read ``p = 0`` (a read predicate and the 10 files it matched) and removes
one of them. Each winner is a blind append of 1,000 files spread over partitions 1..99, so no
winner conflicts and every check runs to its end: the append check must test every winning add
against the read predicate. Ours is ``deltaspec.impl.txn.conflicts.check_winner`` (the
production path, vectorised with pyarrow); the naive baseline is the model's
``deltaspec.model.conflicts.check_winner`` (the executable spec: every add's partition row is
built and the predicate evaluated in plain Python, one add at a time). Both get already decoded
winning commits (reading and decoding them is the same for both and is measured separately for
ours); both are run against 1, 10 and 100 winners, alternately, and the time per winning add
shows whether the cost is linear.

    .venv/bin/python -m benchmarks run --cases conflicts
"""

from __future__ import annotations

import random
import tempfile
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

from benchmarks.harness import Metric, Target, alternate
from benchmarks.tables import SCHEMA
from deltaspec.impl import codec
from deltaspec.impl import predicates as impl_predicates
from deltaspec.impl.actions import AddFile, CommitInfo, Metadata, Protocol, RemoveFile
from deltaspec.impl.table.releases import Profile as ImplProfile
from deltaspec.impl.txn.conflicts import check_winner
from deltaspec.impl.txn.current_transaction import CurrentTransactionInfo
from deltaspec.impl.txn.read_set import ReadSet
from deltaspec.impl.txn.winning_commit import WinningCommit
from deltaspec.model import conflicts as model_conflicts
from deltaspec.model import machine as model_machine
from deltaspec.model import transaction as model_transaction
from deltaspec.model.actions import AddFile as ModelAdd
from deltaspec.model.actions import CommitInfo as ModelCommitInfo
from deltaspec.model.actions import Metadata as ModelMetadata
from deltaspec.model.actions import Protocol as ModelProtocol
from deltaspec.model.actions import RemoveFile as ModelRemove
from deltaspec.model.actions import pairs
from deltaspec.model.log import Log
from deltaspec.model.predicates import parse
from deltaspec.model.profiles import Profile

PEER = "naive (model)"
PARTITIONS = 100
READ = ["=", "p", 0]
LIMIT = Target("ours", "<", 0.100, "100 winners × 1k adds under 100 ms")


def _adds(rng: random.Random, count: int, tag: str) -> list[tuple[str, int, int]]:
    """(path, partition, size) of ``count`` new files in partitions 1..99."""
    out = []
    for i in range(count):
        p = rng.randrange(1, PARTITIONS)
        out.append((f"p={p}/{tag}-{i:05d}.parquet", p, rng.randrange(1_000, 1_000_000)))
    return out


class Workload:
    """The same transaction and winners, once as impl objects and once as model objects."""

    def __init__(self, winners: int, adds_per_winner: int, seed: int = 0) -> None:
        rng = random.Random(seed)
        read_files = [(f"p=0/base-{i}.parquet", 0, 1_000 + i) for i in range(10)]
        self.winner_files = [_adds(rng, adds_per_winner, f"w{w:03d}") for w in range(winners)]
        # --- the impl's side
        metadata = Metadata("bench", SCHEMA, ("p",))
        protocol = Protocol(1, 2)
        files = {path: AddFile(path, {"p": str(p)}, size, 0, False) for path, p, size in read_files}
        victim = next(iter(files.values()))
        rewrite = AddFile("p=0/rewrite.parquet", {"p": "0"}, 10, 0, True)
        self.current = CurrentTransactionInfo(
            table="/bench",
            read_protocol=protocol,
            read_metadata=metadata,
            reads=ReadSet(
                predicates=(impl_predicates.parse(READ),), files=files, depends_on_files=True
            ),
            actions=(
                RemoveFile(victim.path, 0, True, True, victim.partition_values, victim.size),
                rewrite,
            ),
            isolation_level="Serializable",
            is_blind_append=False,
            protocol=protocol,
            metadata=metadata,
        )
        self.release = ImplProfile()
        # --- the model's side
        model_metadata = ModelMetadata("bench", SCHEMA, ("p",))
        base = [ModelAdd(path, pairs({"p": str(p)}), size) for path, p, size in read_files]
        log = Log().write_new(0, (ModelProtocol(1, 2), model_metadata, *base), 0)
        assert log is not None
        self.profile = Profile()
        began = model_machine.begin(model_machine.Machine(profile=self.profile, log=log), "w")
        assert isinstance(began, model_machine.Machine)

        def change(txn: model_transaction.Transaction) -> model_transaction.Transaction:
            txn = model_transaction.filter_files(txn, [parse(READ)])
            first = txn.reads.files[0]
            removal = ModelRemove(first.path, 0, partition_values=first.partition_values)
            added = ModelAdd("p=0/rewrite.parquet", pairs({"p": "0"}), 10)
            return model_transaction.stage(txn, [removal, added])

        txn = model_machine.update(began, "w", change).writer("w").txn
        prepared = model_transaction.prepare(txn, self.profile, 0)
        assert isinstance(prepared, model_transaction.PreparedCommit)
        self.prepared = prepared

    def impl_winners(self, count: int) -> list[WinningCommit]:
        """Fresh WinningCommit objects (their cached properties start empty)."""
        info = CommitInfo({"operation": "WRITE", "isBlindAppend": True})
        return [
            WinningCommit(
                v + 1,
                (info, *(AddFile(path, {"p": str(p)}, size, 0, True) for path, p, size in files)),
            )
            for v, files in enumerate(self.winner_files[:count])
        ]

    def model_winners(self, count: int) -> list[model_conflicts.WinningCommit]:
        info = ModelCommitInfo(0, "WRITE", is_blind_append=True)
        return [
            model_conflicts.WinningCommit(
                v + 1,
                (info, *(ModelAdd(path, pairs({"p": str(p)}), size) for path, p, size in files)),
            )
            for v, files in enumerate(self.winner_files[:count])
        ]

    def check_ours(self, count: int) -> float:
        winners = self.impl_winners(count)
        # a fresh read set, as each commit has: nothing kept from an earlier round
        current = replace(self.current, reads=replace(self.current.reads))
        start = time.perf_counter()
        for winner in winners:
            current = check_winner(current, winner, self.release)
        return time.perf_counter() - start

    def check_model(self, count: int) -> float:
        winners = self.model_winners(count)
        current: model_conflicts.Verdict = self.prepared
        start = time.perf_counter()
        for winner in winners:
            assert isinstance(current, model_transaction.PreparedCommit)
            current = model_conflicts.check_winner(current, winner, self.profile)
        elapsed = time.perf_counter() - start
        assert isinstance(current, model_transaction.PreparedCommit), current
        return elapsed

    def decode_seconds(self, count: int) -> float:
        """Ours only: reading and decoding the winners' commit files (as a retry does)."""
        with tempfile.TemporaryDirectory(prefix="deltaspec-bench-winners-") as work:
            paths = []
            for winner in self.impl_winners(count):
                path = Path(work) / f"{winner.version:020d}.json"
                path.write_bytes(codec.encode_commit(list(winner.actions)))
                paths.append(path)
            start = time.perf_counter()
            for path in paths:
                codec.decode_commit(path.read_bytes(), table=work, version=None, file=path.name)
            return time.perf_counter() - start


# --- scaling with read predicates x distinct partitions ------------------------------------------


class Scaling:
    """A transaction that read ``predicates`` partitions (``p = 0`` ... ``p = predicates - 1``)
    against ``winners`` blind appends of ``adds`` files each, spread over ``partitions`` other
    partitions: no conflict, so every check runs to its end. The floor is what any check
    must do at least: one pass over each winner's adds for the set of partitions they touch, and
    its intersection with the set of partitions read."""

    def __init__(self, predicates: int, partitions: int, winners: int, adds: int) -> None:
        rng = random.Random(predicates * 7919 + partitions)
        self.read = frozenset(str(k) for k in range(predicates))
        self.forms = [["=", "p", k] for k in range(predicates)]
        self.winner_values = [
            [str(rng.randrange(predicates, predicates + partitions)) for _ in range(adds)]
            for _ in range(winners)
        ]
        self.metadata = Metadata("bench", SCHEMA, ("p",))
        self.release = ImplProfile()

    def _current(self) -> CurrentTransactionInfo:
        protocol = Protocol(1, 2)
        reads = ReadSet(
            predicates=tuple(impl_predicates.parse(f) for f in self.forms), depends_on_files=True
        )
        return CurrentTransactionInfo(
            "/bench", protocol, self.metadata, reads, (), "Serializable", False, protocol,
            self.metadata,
        )  # fmt: skip

    def _winners(self) -> list[WinningCommit]:
        info = CommitInfo({"operation": "WRITE", "isBlindAppend": True})
        return [
            WinningCommit(
                v + 1,
                (
                    info,
                    *(AddFile(f"p={p}/{v}-{i}", {"p": p}, 1, 0, True) for i, p in enumerate(ps)),
                ),
            )
            for v, ps in enumerate(self.winner_values)
        ]

    def check_ours(self) -> float:
        winners, current = self._winners(), self._current()  # a fresh read set: nothing kept
        start = time.perf_counter()
        for winner in winners:
            current = check_winner(current, winner, self.release)
        return time.perf_counter() - start

    def floor(self) -> float:
        winners = self._winners()
        start = time.perf_counter()
        for winner in winners:
            touched = {a.partition_values["p"] for a in winner.actions if isinstance(a, AddFile)}
            if touched & self.read:
                raise AssertionError("the scaling workload must not conflict")
        return time.perf_counter() - start


def scaling(quick: bool) -> list[Metric]:
    winners, adds = (10, 100) if quick else (100, 1_000)
    grid = [(1, 100), (100, 100), (1, 10_000), (100, 10_000)]
    metrics = []
    for count, partitions in grid:
        workload = Scaling(count, partitions, winners, adds)
        ours, floor = alternate(workload.check_ours, workload.floor, 3 if quick else 5)
        metrics.append(
            Metric(
                id=f"conflicts.scaling.{count}_predicates_{partitions}_partitions",
                case=4,
                title=f"conflict check, {winners} winners x {adds:,} adds over {partitions:,} "
                f"partitions, {count} read predicate(s) (no conflict)",
                quantity="seconds",
                higher_is_better=False,
                ours=ours,
                peer=floor,
                peer_name="floor (set intersection)",
                extra={
                    "ours_us_per_add": [s / (winners * adds) * 1e6 for s in ours],
                    "predicates": count,
                    "partitions": partitions,
                },
            )
        )
    return metrics


def run(quick: bool = False) -> list[Metric]:
    return [*winner_counts(quick), *scaling(quick)]


def winner_counts(quick: bool) -> list[Metric]:
    counts = (1, 10) if quick else (1, 10, 100)
    adds = 100 if quick else 1_000
    rounds = 3 if quick else 7
    workload = Workload(max(counts), adds)
    metrics = []
    for count in counts:
        ours, model = alternate(
            partial(workload.check_ours, count), partial(workload.check_model, count), rounds
        )
        metrics.append(
            Metric(
                id=f"conflicts.{count}_winners",
                case=4,
                title=f"conflict check against {count} winning commit(s) of {adds:,} adds "
                "(100 partitions, read predicate p = 0, no conflict)",
                quantity="seconds",
                higher_is_better=False,
                ours=ours,
                peer=model,
                peer_name=PEER,
                target=LIMIT if count == 100 and adds == 1_000 else None,
                curve="conflict_check_scaling",
                x=count * adds,
                extra={
                    "winning_adds": count * adds,
                    "ours_us_per_add": [s / (count * adds) * 1e6 for s in ours],
                    "decode_seconds": workload.decode_seconds(count),
                },
            )
        )
    first, last = metrics[0].to_json()["summary"], metrics[-1].to_json()["summary"]
    adds_first = metrics[0].extra["winning_adds"]
    adds_last = metrics[-1].extra["winning_adds"]
    per_add_growth = (last["ours_median"] / adds_last) / (first["ours_median"] / adds_first)
    metrics[-1].extra["per_add_cost_vs_1_winner"] = per_add_growth
    metrics[-1].extra["linear"] = per_add_growth <= 1.5
    decode = metrics[-1].extra["decode_seconds"]
    metrics[-1].notes = (
        f"cost per winning add at {adds_last:,} adds / at {adds_first:,}: {per_add_growth:.2f} "
        f"({'linear' if per_add_growth <= 1.5 else 'NOT linear'}); reading and decoding these "
        f"winners' commit files, which a retry also does, takes {decode * 1e3:.0f} ms more"
    )
    return metrics
