"""Helpers shared by the test modules."""

from __future__ import annotations

import ast
import os
import uuid
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from hypothesis import settings


def cited_by_tests(root: Path, pattern: str = "*.py") -> set[str]:
    """Rule IDs named in ``pytest.mark.rules(...)`` in files under ``root`` matching ``pattern``."""
    cited: set[str] = set()
    for path in root.rglob(pattern):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "rules"
            ):
                cited |= {a.value for a in node.args if isinstance(a, ast.Constant)}
    return cited


def examples(fraction: float) -> settings:
    """A share of the active profile's example budget (``ci`` stays fast, ``deep`` goes deep)."""
    return settings(max_examples=max(10, int(settings.default.max_examples * fraction)))


# --- reliability (crash points, faulty storage, stress, hostile logs): real tables on disk ------

RELIABILITY_SCHEMA = (
    '{"type":"struct","fields":['
    '{"name":"id","type":"long","nullable":true,"metadata":{}},'
    '{"name":"p","type":"string","nullable":true,"metadata":{}}]}'
)


def reliability_metadata(**configuration: str) -> Any:
    """Metadata of the reliability tests' table: ``id long``, partitioned by ``p``."""
    from deltaspec.impl.actions import Metadata

    return Metadata("reliability", RELIABILITY_SCHEMA, ("p",), dict(configuration), created_time=0)


def write_data_file(root: str | Path, part: str, ids: Sequence[int]) -> Any:
    """A real Parquet data file under ``p=<part>/`` holding ``ids``; returns its AddFile."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from deltaspec.impl.actions import AddFile
    from deltaspec.impl.codec import encode_stats

    relative = f"p={part}/part-{uuid.uuid4().hex}.parquet"
    path = Path(root) / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(list(ids), pa.int64())}), path)
    stat = path.stat()
    stats = encode_stats(
        len(ids),
        {"id": min(ids)} if ids else None,
        {"id": max(ids)} if ids else None,
        {"id": 0},
    )
    return AddFile(relative, {"p": part}, stat.st_size, stat.st_mtime_ns // 1_000_000, True, stats)


def create_reliability_table(root: str | Path, **configuration: str) -> Any:
    """Commit version 0 (metadata, protocol) of the reliability table; returns its DeltaLog."""
    from deltaspec.impl.snapshot.delta_log import DeltaLog
    from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

    log = DeltaLog(str(root))
    OptimisticTransaction(log).commit(
        [reliability_metadata(**configuration)], Operation("CREATE TABLE")
    )
    return log


def append_rows(log: Any, part: str, ids: Sequence[int]) -> tuple[int, str, str]:
    """A blind append of one new data file: (version, txnId, data file path)."""
    from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

    add = write_data_file(log.table_path, part, ids)
    txn = OptimisticTransaction(log, clock=log.clock)
    version = txn.commit([add], Operation("WRITE", {"mode": "Append"}))
    return version, txn.txn_id, add.path


def tree_state(root: str | Path) -> dict[str, tuple[str, bytes]]:
    """Every entry under ``root``: relative path -> (kind, content or link target). FIFOs and
    other special files are recorded by kind (never opened); a regular file over 64 MiB (a sparse
    one) by its size and modification time."""
    import stat

    out: dict[str, tuple[str, bytes]] = {}
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            full = os.path.join(directory, name)
            relative = os.path.relpath(full, root)
            info = os.lstat(full)
            if stat.S_ISLNK(info.st_mode):
                out[relative] = ("link", os.readlink(full).encode())
            elif stat.S_ISDIR(info.st_mode):
                out[relative] = ("dir", b"")
            elif not stat.S_ISREG(info.st_mode):
                out[relative] = ("special", str(stat.S_IFMT(info.st_mode)).encode())
            elif info.st_size > 64 * 1024 * 1024:
                out[relative] = ("big file", f"{info.st_size} {info.st_mtime_ns}".encode())
            else:
                out[relative] = ("file", Path(full).read_bytes())
    return out


def snapshot_view(snapshot: Any) -> tuple[Any, ...]:
    """What two snapshots of one version must agree on."""
    return (
        snapshot.version,
        sorted(snapshot.files),
        snapshot.protocol,
        snapshot.metadata,
        sorted(snapshot.app_transactions),
        sorted(snapshot.domains),
    )


def json_only_log(root: str | Path) -> Any:
    """A DeltaLog of ``root`` that sees no checkpoint and no ``_last_checkpoint``: pure replay."""
    from deltaspec.impl.log.local_store import LocalLogStore
    from deltaspec.impl.log.names import is_checkpoint_name
    from deltaspec.impl.snapshot.delta_log import DeltaLog

    class _NoCheckpoints(LocalLogStore):
        def list_from(self, start: str = "") -> list[Any]:
            return [i for i in super().list_from(start) if not is_checkpoint_name(i.name)]

        def read(self, name: str) -> bytes:
            if name == "_last_checkpoint":
                raise FileNotFoundError(name)
            return super().read(name)

    return DeltaLog(str(root), store=_NoCheckpoints(str(root)))


def log_problems(root: str | Path) -> list[str]:
    """The log checks: contiguous commits that all decode, no temporary file listed, every
    complete checkpoint equal to JSON replay (where its commits are kept), ``_last_checkpoint``
    naming a checkpoint that exists, and every live data file present on disk."""
    from deltaspec.impl.errors import DeltaError
    from deltaspec.impl.log.names import is_temp_name, parse_commit_name
    from deltaspec.impl.snapshot.delta_log import DeltaLog

    log = DeltaLog(str(root))
    problems: list[str] = []
    listing = log.list_log(None)
    names = [info.name for info in listing.files]
    problems += [f"temporary file listed: {n}" for n in names if is_temp_name(n)]
    versions = sorted(v for n in names if (v := parse_commit_name(n)) is not None)
    if versions and versions != list(range(versions[0], versions[-1] + 1)):
        problems.append(f"commits not contiguous: {versions}")
    for version in versions:
        try:
            log.read_commit(version)
        except DeltaError as exc:
            problems.append(f"commit {version} unreadable: {exc}")
    replay = json_only_log(root)
    for version in sorted(listing.checkpoints):
        if versions and versions[0] == 0:
            try:
                if snapshot_view(log.snapshot(version)) != snapshot_view(replay.snapshot(version)):
                    problems.append(f"checkpoint {version} differs from JSON replay")
            except DeltaError as exc:
                problems.append(f"checkpoint {version}: {exc}")
    hint = log.read_last_checkpoint()
    if hint is not None and int(hint["version"]) not in listing.checkpoints:
        problems.append(f"_last_checkpoint names {hint['version']}, which is not complete")
    try:
        latest = log.snapshot()
    except DeltaError as exc:
        return [*problems, f"latest snapshot: {exc}"]
    missing = [p for p, _ in latest.files if not (Path(root) / p).exists()]
    problems += [f"live file missing: {p}" for p in missing]
    return problems


def deltalake_view(root: str | Path) -> tuple[int, list[str]]:
    """delta-rs's version and live file paths of the table at ``root``."""
    import pyarrow as pa
    from deltalake import DeltaTable

    table = DeltaTable(str(root))
    return table.version(), sorted(pa.table(table.get_add_actions()).column("path").to_pylist())


OPERATIONS = ("append", "delete", "compact", "checkpoint")


def run_operation(
    log: Any, kind: str, rng: Any, started: list[Any] | None = None
) -> tuple[Any, int | None]:
    """One operation of the reliability workloads on ``log``, drawn with ``rng`` (a
    random.Random): a blind append of a new file; a DELETE of one file of a partition (it reads
    the partition); an OPTIMIZE of up to three files of a partition into one (dataChange=false,
    rows copied); or a checkpoint of the latest version (single, 2 or 3 parts). Returns the
    transaction (None for a checkpoint or a skipped operation) and the committed version; the
    transaction is appended to ``started`` before it commits, so that a caller can look for
    its txnId in the log when committing raises."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from deltaspec.impl.actions import RemoveFile
    from deltaspec.impl.checkpoint.policy import checkpoint_version
    from deltaspec.impl.predicates import parse
    from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

    part = rng.choice("abc")
    if kind == "checkpoint":
        version = log.latest_version()
        checkpoint_version(log, version, now_ms=log.clock(), parts=rng.choice([None, 2, 3]))
        return None, version
    if kind == "append":
        add = write_data_file(log.table_path, part, [rng.randrange(10_000)])
        txn = OptimisticTransaction(log, clock=log.clock)
        if started is not None:
            started.append(txn)
        return txn, txn.commit([add], Operation("WRITE", {"mode": "Append"}))
    txn = OptimisticTransaction(log, clock=log.clock)
    if started is not None:
        started.append(txn)
    files = sorted(txn.filter_files([parse(["=", "p", part])]), key=lambda f: f.path)
    now = log.clock()
    if kind == "delete" and files:
        victim = rng.choice(files)
        remove = RemoveFile(victim.path, now, True, True, victim.partition_values, victim.size)
        operation = Operation("DELETE", {"predicate": [f"p = '{part}'"]})
        return txn, txn.commit([remove], operation)
    if kind == "compact" and len(files) >= 2:
        chosen = rng.sample(files, min(3, len(files)))
        ids = pa.concat_tables(
            [pq.read_table(os.path.join(log.table_path, f.path)) for f in chosen]
        ).column("id")
        merged = write_data_file(log.table_path, part, ids.to_pylist())
        actions: list[Any] = [
            RemoveFile(f.path, now, False, True, f.partition_values, f.size) for f in chosen
        ]
        actions.append(replace(merged, data_change=False))
        return txn, txn.commit(actions, Operation("OPTIMIZE", {"predicate": []}))
    return None, None


def txn_ids_in_log(root: str | Path) -> dict[str, list[int]]:
    """Every commitInfo.txnId in the table's commit files -> the versions carrying it."""
    from deltaspec.impl.actions import CommitInfo
    from deltaspec.impl.snapshot.delta_log import DeltaLog

    log = DeltaLog(str(root))
    found: dict[str, list[int]] = {}
    for version in log.list_commit_versions(-1):
        for action in log.read_commit(version):
            if isinstance(action, CommitInfo) and isinstance(action.get("txnId"), str):
                found.setdefault(str(action.get("txnId")), []).append(version)
    return found
