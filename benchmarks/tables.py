"""Deterministic benchmark tables, written straight into ``_delta_log`` (no transaction overhead).

Every table is partitioned by one integer column ``p`` (10 partitions unless told otherwise) and
has a data column ``x``; every ``add`` carries delta-spark-shaped statistics. File names, sizes,
statistics and modification times come from a seeded :class:`random.Random`, so the same call
writes the same log bytes on every run. Data files are not written (loading a snapshot never
opens them) except by :func:`write_data_file`, for the commit benchmarks, where delta-rs may look.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from deltaspec.impl import codec
from deltaspec.impl.actions import Action, AddFile, CommitInfo, Metadata, Protocol, RemoveFile
from deltaspec.impl.checkpoint.write import write_checkpoint
from deltaspec.impl.log.names import LOG_DIR, commit_name
from deltaspec.impl.snapshot.delta_log import DeltaLog

SCHEMA = json.dumps(
    {
        "type": "struct",
        "fields": [
            {"name": "p", "type": "integer", "nullable": True, "metadata": {}},
            {"name": "x", "type": "long", "nullable": True, "metadata": {}},
        ],
    },
    separators=(",", ":"),
)
EPOCH_MS = 1_780_000_000_000
"""Modification times start here (late 2026) and advance one second per commit."""


def metadata(
    partitions: bool = True,
    configuration: dict[str, str] | None = None,
    schema_string: str = SCHEMA,
) -> Metadata:
    return Metadata(
        id="5f5d3b1c-0000-4000-8000-00000000bench",
        schema_string=schema_string,
        partition_columns=("p",) if partitions else (),
        configuration=dict(configuration or {}),
        created_time=EPOCH_MS,
    )


def _x_stats(rng: random.Random) -> str:
    low = rng.randrange(1_000_000)
    return json.dumps(
        {
            "numRecords": rng.randrange(1_000, 100_000),
            "minValues": {"x": low},
            "maxValues": {"x": low + rng.randrange(1_000_000)},
            "nullCount": {"x": 0},
        },
        separators=(",", ":"),
    )


class TableWriter:
    """Writes commits of random-but-seeded adds (and removes) into one table's log."""

    def __init__(
        self,
        root: Path,
        *,
        seed: int = 0,
        partitions: int = 10,
        configuration: dict[str, str] | None = None,
        schema_string: str = SCHEMA,
        stats: Callable[[random.Random], str] | None = None,
    ) -> None:
        """``stats`` makes one add's ``stats`` string (default: ``x``'s statistics) for a table
        whose schema is ``schema_string``."""
        self.root = root
        self.stats = stats or _x_stats
        self.random = random.Random(seed)
        self.partitions = partitions
        self.version = -1
        self.live: list[AddFile] = []
        self._counter = 0
        self._write(
            [Protocol(1, 2), metadata(partitions > 0, configuration, schema_string)],
            operation="CREATE TABLE",
        )

    def new_add(self, partition: int | None = None) -> AddFile:
        rng = self.random
        self._counter += 1
        p = rng.randrange(self.partitions) if partition is None else partition
        stats = self.stats(rng)
        name = f"part-{self._counter:05d}-{rng.getrandbits(64):016x}.c000.snappy.parquet"
        values: dict[str, str | None] = {"p": str(p)} if self.partitions else {}
        return AddFile(
            path=f"p={p}/{name}" if self.partitions else name,
            partition_values=values,
            size=rng.randrange(100_000, 10_000_000),
            modification_time=EPOCH_MS + 1000 * (self.version + 1),
            data_change=True,
            stats=stats,
        )

    def append(self, adds: int) -> int:
        """One blind-append commit of ``adds`` new files; returns its version."""
        files = [self.new_add() for _ in range(adds)]
        self.live.extend(files)
        return self._write(files, operation="WRITE", blind=True)

    def rewrite(self, removes: int, adds: int) -> int:
        """One commit removing ``removes`` random live files and adding ``adds`` new ones."""
        doomed = set(self.random.sample(range(len(self.live)), min(removes, len(self.live))))
        gone = [f for i, f in enumerate(self.live) if i in doomed]
        self.live = [f for i, f in enumerate(self.live) if i not in doomed]
        stamp = EPOCH_MS + 1000 * (self.version + 1)
        actions: list[Action] = [
            RemoveFile(
                f.path,
                deletion_timestamp=stamp,
                data_change=True,
                extended_file_metadata=True,
                partition_values=f.partition_values,
                size=f.size,
            )
            for f in gone
        ]
        new = [self.new_add() for _ in range(adds)]
        self.live.extend(new)
        actions.extend(new)
        return self._write(actions, operation="DELETE")

    def checkpoint(self) -> None:
        """A classic checkpoint of the latest version, written by deltaspec's checkpoint writer."""
        log = DeltaLog(self.root, clock=lambda: EPOCH_MS + 1000 * self.version)
        write_checkpoint(log, log.snapshot(self.version), now_ms=EPOCH_MS + 1000 * self.version)

    def _write(self, actions: Sequence[Action], *, operation: str, blind: bool = False) -> int:
        self.version += 1
        info = CommitInfo(
            {
                "timestamp": EPOCH_MS + 1000 * self.version,
                "operation": operation,
                "operationParameters": {"mode": "Append"},
                **({"readVersion": self.version - 1} if self.version else {}),
                "isolationLevel": "Serializable",
                "isBlindAppend": blind,
                "engineInfo": "deltaspec-benchmarks",
            }
        )
        # plain writes, no fsync: the tables are scratch inputs, and writing them should be quick
        path = self.root / LOG_DIR / commit_name(self.version)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(codec.encode_commit([info, *actions]))
        return self.version


def build(
    root: Path,
    *,
    commits: int,
    adds_per_commit: int = 5,
    checkpoint_at: Sequence[int] = (),
    seed: int = 0,
    partitions: int = 10,
    initial_files: int = 0,
    initial_commits: int = 0,
    configuration: dict[str, str] | None = None,
    writer: TableWriter | None = None,
) -> TableWriter:
    """A table: commit 0 creates it; ``initial_files`` spread over ``initial_commits`` commits;
    then ``commits`` commits of ``adds_per_commit`` adds, every fourth of them also removing one
    file (a DELETE), with classic checkpoints after the versions in ``checkpoint_at``.
    ``writer`` (already at ``root``) replaces the default one, e.g. for other statistics."""
    if writer is None:
        writer = TableWriter(root, seed=seed, partitions=partitions, configuration=configuration)
    wanted = set(checkpoint_at)
    for i in range(initial_commits):
        share = initial_files // initial_commits + (1 if i < initial_files % initial_commits else 0)
        writer.append(share)
        if writer.version in wanted:
            writer.checkpoint()
    for i in range(commits):
        if i % 4 == 3 and writer.live:
            writer.rewrite(1, adds_per_commit)
        else:
            writer.append(adds_per_commit)
        if writer.version in wanted:
            writer.checkpoint()
    return writer


def write_data_file(path: Path, rows: int = 10) -> int:
    """A small real Parquet data file (``x`` only: partition values live in the path)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"x": pa.array(range(rows), type=pa.int64())}), path)
    return path.stat().st_size
