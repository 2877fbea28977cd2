"""The table services on real files, judged by the model: tombstone and app-transaction retention
(RETENTION.TOMBSTONES, RETENTION.SET_TRANSACTION, CHECKPOINT.CONTENTS), checkpoints written and
read back, log cleanup (RETENTION.LOG; on tables with ``checkpointProtection``, as the newest
release and as 3.3.2 do, RETENTION.CHECKPOINT_PROTECTION), VACUUM, and time travel by timestamp.

Each scenario is a seeded random table: commits written as Delta JSON with chosen modification
times (steps of six hours, some equal to or earlier than the previous one, so cut-offs land on
file times and clocks go backwards), data files on disk with their commit's time, orphans and
hidden files beside them. The impl (``DeltaLog``, ``checkpoint_table``, ``write_checkpoint``,
``cleanup_expired_logs``, ``vacuum``, ``version_at``) runs on those files; what it must give
comes from the model (``model.checkpoint``: ``checkpoint_actions``,
``min_file_retention_timestamp``, ``expired_log_versions``; the model's replay of the same
commit files) or, where the model has no function, from the spec's text: VACUUM
(RETENTION.TOMBSTONES and impl/retention/vacuum.py's three conditions) and the version at a
timestamp (the last commit at or before it, with times made strictly increasing). The probe times
are chosen at the boundaries: exactly at a cut-off, and one millisecond after.

The same tables carry the modern-feature artefacts (``artefacts``, ``dv_adds``): file sizes on and
beside the checksum histogram's bin boundaries, txnIds, in-commit timestamps on a table in three,
v2 checkpoints on a table in three, log compaction files the model writes; every checksum file,
v2 checkpoint and read through a compaction file is judged by the model, and so are the
deletion-vector adds of DELETE, UPDATE and MERGE.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from deltaspec.checksum_bins import bin_boundaries
from deltaspec.releases_table import behaviours, release_text

from ...impl.checkpoint.contents import checkpoint_table
from ...impl.checkpoint.write import write_checkpoint
from ...impl.errors import (
    DeltaError,
    InvalidTableLocationError,
    VacuumRetentionTooShortError,
)
from ...impl.log import crashpoints
from ...impl.log.listing import list_log
from ...impl.log.stores import log_store_for
from ...impl.retention.log_cleanup import cleanup_expired_logs
from ...impl.retention.vacuum import vacuum
from ...impl.snapshot.delta_log import DeltaLog
from ...impl.snapshot.time_travel import version_at
from ...impl.table.releases import CURRENT, Profile
from ...model.actions import AddFile, Commit, DomainMetadata, RemoveFile, SetTransaction
from ...model.checkpoint import (
    checkpoint_actions,
    checkpoint_file_names,
    expired_log_versions,
    interval_ms,
    min_file_retention_timestamp,
)
from ...model.profiles import profile
from ...model.snapshot import Snapshot, apply_commit
from ..engines.model.adapter import read_log_action
from ..servers.hostile import STRAY_KEYS, hostile_urls, plant_local_strays
from .artefacts import (
    Mismatch,
    check_checksums,
    check_compaction_reads,
    check_reads_after_checkpoint,
    check_v2_checkpoint,
    plant_compactions,
)
from .dv_adds import run_dv_adds
from .service_probes import ProbeMismatch, run_probes
from .stage_result import StageResult

if TYPE_CHECKING:
    from ..servers.serving import ObjectStoreServer

HOUR = 3_600_000
DAY = 24 * HOUR
MIDNIGHT = 1_699_920_000_000
"""2023-11-14 00:00 UTC: every scenario starts at a midnight, so cut-offs (midnights) can equal
commit times."""
SCENARIOS = 24
PROTECTED_BEFORE = "delta.requireCheckpointProtectionBeforeVersion"
ICT_PROPERTY = "delta.enableInCommitTimestamps"
ONE_GO_RELEASE = "3.3.2"
"""A release whose cleanup deletes nothing below ``delta.requireCheckpointProtectionBeforeVersion``
until it can reach it in one go; the newest truncates below it in chunks
(``checkpoint_protection_chunked_cleanup``, RETENTION.CHECKPOINT_PROTECTION)."""
CHUNKED_SINCE = release_text(behaviours()["checkpoint_protection_chunked_cleanup"].since)
"""The first release that truncates in chunks: a protected table's cleanup runs there too, so a
boundary moved to a later release is seen."""


class ServiceMismatch(AssertionError):
    """The impl disagrees with the model (or the spec) on one check of one scenario."""


@dataclass
class Table:
    """A scenario's table on disk and what was written into it; with ``server``, its log is
    then copied to a table on that object-store server, where the checks run (the data files
    and the log's local copy stay on disk for the model)."""

    root: Path
    server: ObjectStoreServer | None = None
    url: str | None = None
    """The table's root on the server (``server`` given), else None."""
    times: list[int] = field(default_factory=list)
    """Each commit file's modification time, by version."""
    checkpoints: list[int] = field(default_factory=list)
    stamps: list[int] = field(default_factory=list)
    """The deletion and lastUpdated times written: the retention probes start from these."""
    configuration: dict[str, str] = field(default_factory=dict)
    dvs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Data file path -> the deletion vector (storage type ``p``) its add and remove carry."""
    extras: random.Random = field(default_factory=random.Random)
    """The draws of the modern-feature artefacts (file sizes, txnIds, in-commit timestamps, v2
    checkpoints, compaction files): a generator of their own, so that every other draw of a
    scenario stays as it was."""
    v2: bool = False
    """Checkpointed as v2 checkpoints (``v2Checkpoint``, ``delta.checkpointPolicy = v2``)."""
    icts: list[int] = field(default_factory=list)
    """Each commit's in-commit timestamp, by version, on a table with them (else empty)."""
    lines: list[list[dict[str, Any]]] = field(default_factory=list)
    """Each commit's actions as written, by version (kept: cleanup deletes the files)."""
    models: dict[int, Snapshot] = field(default_factory=dict)
    """The model's snapshot of each version, replayed once."""
    commits: list[Commit] = field(default_factory=list)
    """Each commit as the model reads it, by version."""
    compactions: list[tuple[int, int]] = field(default_factory=list)
    """The commit ranges of the log compaction files written."""
    artefact_reads: bool = True
    """Whether the checks that read every version again run (the checksums, the reads through
    compaction files): on every table on disk, on one in three on a server, where each read is
    a round trip."""
    store: Any = field(init=False)
    """The log store of the table where the checks run (disk, or the server): one per table."""

    def __post_init__(self) -> None:
        if self.server is None:
            self.store = log_store_for(self.root)
        else:
            self.store = log_store_for(self.uri, self.server.options)

    @property
    def log_dir(self) -> Path:
        return self.root / "_delta_log"

    @property
    def uri(self) -> str:
        """The table root as the URIs in its actions name it."""
        return self.url if self.url is not None else self.root.as_uri()

    def commit_lines(self, version: int) -> list[dict[str, Any]]:
        return self.lines[version]

    @property
    def version_times(self) -> list[int]:
        """Each version's timestamp: its in-commit timestamp on a table with them, else its
        commit file's time (ICT.TIME_TRAVEL)."""
        return self.icts or self.times

    def log(self, clock: Callable[[], int] | None = None) -> Any:
        """A fresh ``DeltaLog`` (nothing read yet) on the table's store."""
        return DeltaLog(self.store.table_path, self.store, clock=clock)

    def touch_log_file(self, name: str, ms: int) -> None:
        """Time a log file, where the store lets the caller choose (an object store times
        every object itself)."""
        local = self.store.local_path(name)
        if local is not None:
            _touch(Path(local), ms)


def _touch(path: Path, ms: int) -> None:
    os.utime(path, (ms / 1000, ms / 1000))


def _data_file(table: Table, name: str, ms: int) -> None:
    path = table.root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"PAR1")
    _touch(path, ms)


def _configuration(rng: random.Random) -> dict[str, str]:
    conf = {
        "delta.logRetentionDuration": f"interval {rng.choice([1, 2, 3])} days",
        "delta.deletedFileRetentionDuration": f"interval {rng.choice([6, 12, 24, 48])} hours",
    }
    if rng.random() < 0.7:
        conf["delta.setTransactionRetentionDuration"] = f"interval {rng.choice([1, 2])} days"
    return conf


def _protect(table: Table, seed: int) -> None:
    """Three tables in four list the writer feature ``checkpointProtection`` with
    ``delta.requireCheckpointProtectionBeforeVersion`` (RETENTION.CHECKPOINT_PROTECTION): on two
    of them just past the latest checkpoint version, so that any cleanup starts the log below
    it; on the third at the first or the latest checkpoint version (drawn from a generator of
    its own, so every other draw of the scenario stays as it was), so that a cleanup may start
    at or past it."""
    first, latest = table.checkpoints[0], table.checkpoints[-1]
    if seed % 4 == 0:
        return
    if seed % 4 == 3:
        protected_before = random.Random(f"checkpoint protection {seed}").choice([first, latest])
    else:
        protected_before = latest + 1
    table.configuration[PROTECTED_BEFORE] = str(protected_before)


def _modern_features(table: Table) -> None:
    """A table in three is checkpointed as v2 checkpoints, one in three has in-commit
    timestamps from version 0 (drawn from the table's own generator), on disk only (a read by
    timestamp reads every commit's commitInfo, a round trip each on a server)."""
    table.v2 = table.extras.random() < 1 / 3
    if table.v2:
        table.configuration["delta.checkpointPolicy"] = "v2"
    if table.extras.random() < 1 / 3 and table.server is None:
        table.configuration[ICT_PROPERTY] = "true"


def _first_commit(table: Table, rng: random.Random) -> list[dict[str, Any]]:
    schema = {"type": "struct", "fields": [
        {"name": "id", "type": "long", "nullable": True, "metadata": {}}]}  # fmt: skip
    metadata = {"id": f"services-{rng.random()}", "format": {"provider": "parquet", "options": {}},
                "schemaString": json.dumps(schema), "partitionColumns": [],
                "configuration": table.configuration, "createdTime": MIDNIGHT}  # fmt: skip
    writer_features = ["deletionVectors", "domainMetadata"]
    reader_features = ["deletionVectors"]
    if PROTECTED_BEFORE in table.configuration:
        writer_features.append("checkpointProtection")
    if table.v2:
        writer_features.append("v2Checkpoint")
        reader_features.append("v2Checkpoint")
    if ICT_PROPERTY in table.configuration:
        writer_features.append("inCommitTimestamp")
    protocol = {
        "minReaderVersion": 3,
        "minWriterVersion": 7,
        "readerFeatures": reader_features,
        "writerFeatures": writer_features,
    }
    return [{"protocol": protocol}, {"metaData": metadata}]  # fmt: skip


def _next_time(table: Table, rng: random.Random, version: int) -> int:
    """Steps of six hours, some equal or backwards; a checkpointed version moves strictly past
    every earlier time (cleanup then adjusts the same times on both sides)."""
    if version == 0:
        return MIDNIGHT
    if version in table.checkpoints:
        return max(table.times) + 6 * HOUR
    return table.times[-1] + rng.choice([6, 6, 12, 18, 24, 0, -6]) * HOUR


def _deletion_vector(table: Table, name: str, version: int, moment: int) -> None:
    """Every third data file has a deletion vector stored in its own file (storage type ``p``,
    an absolute URI inside the table), written at the commit's time: VACUUM must keep it as long
    as it keeps the data file (RETENTION.TOMBSTONES)."""
    if version % 3:
        return
    dv_name = f"deletion_vector_{version:03d}.bin"
    _data_file(table, dv_name, moment)
    table.dvs[name] = {"storageType": "p", "pathOrInlineDv": f"{table.uri}/{dv_name}",
                       "offset": 1, "sizeInBytes": 3, "cardinality": 1}  # fmt: skip


def _domains(version: int) -> list[dict[str, Any]]:
    """Domain metadata on some commits: user.a set again and again, user.b set and removed."""
    if version % 4 == 1:
        return [{"domainMetadata": {"domain": "user.a", "configuration": str(version),
                                    "removed": False}}]  # fmt: skip
    if version % 4 == 3:
        return [{"domainMetadata": {"domain": "user.b", "configuration": str(version),
                                    "removed": version % 8 == 7}}]  # fmt: skip
    return []


def _size(table: Table) -> int:
    """A file's size in bytes (its add says so; the file on disk is 4 bytes): on a bin boundary
    of the checksum's file size histogram, one byte either side of it, or anywhere."""
    boundaries = bin_boundaries()
    if table.extras.random() < 0.2:
        return table.extras.randint(0, 2**40)
    return max(0, table.extras.choice(boundaries[:40]) + table.extras.choice([-1, 0, 0, 1]))


def _commit_info(table: Table, version: int, moment: int) -> list[dict[str, Any]]:
    """The commitInfo: on a table with in-commit timestamps every commit's, first, with its
    timestamp (strictly increasing, unrelated to the file times); elsewhere on half the commits,
    last; half of them with a ``txnId`` (CHECKSUM.WRITE)."""
    ict = ICT_PROPERTY in table.configuration
    if not ict and table.extras.random() < 0.5:
        return []
    info: dict[str, Any] = {"timestamp": moment, "operation": "WRITE"}
    if ict:
        table.icts.append(MIDNIGHT + version * HOUR + 17 + table.extras.randint(0, 999))
        info["inCommitTimestamp"] = table.icts[-1]
    if table.extras.random() < 0.5:
        info["txnId"] = f"txn-{version}-{table.extras.randrange(10**6)}"
    return [{"commitInfo": info}]


def _commit(table: Table, rng: random.Random, version: int, live: list[str]) -> None:
    moment = _next_time(table, rng, version)
    info = _commit_info(table, version, moment)
    first = info if ICT_PROPERTY in table.configuration else []
    actions = first + (_first_commit(table, rng) if version == 0 else [])
    name = f"part-{version:03d}.parquet"
    _deletion_vector(table, name, version, moment)
    dv = {"deletionVector": table.dvs[name]} if name in table.dvs else {}
    actions.append({"add": {"path": name, "partitionValues": {}, "size": _size(table),
                            "modificationTime": moment, "dataChange": True, **dv}})  # fmt: skip
    _data_file(table, name, moment)
    if live and rng.random() < 0.6:
        gone = live.pop(rng.randrange(len(live)))
        remove: dict[str, Any] = {"path": gone, "dataChange": True}
        if gone in table.dvs:
            remove["deletionVector"] = table.dvs[gone]
        if rng.random() < 0.85:
            # every other writer's clock runs 12 hours ahead of the file system's: the
            # tombstone outlives the cut-off that already passed its commit's file time
            stamp = moment + (12 * HOUR if version % 2 else 0)
            remove["deletionTimestamp"] = stamp
            table.stamps.append(stamp)
        actions.append({"remove": remove})
    actions.extend(_domains(version))
    if rng.random() < 0.5:
        txn: dict[str, Any] = {"appId": rng.choice("abc"), "version": version}
        if rng.random() < 0.85:
            txn["lastUpdated"] = moment
            table.stamps.append(moment)
        actions.append({"txn": txn})
    live.append(name)
    actions += [] if first else info
    table.lines.append(actions)
    path = table.log_dir / f"{version:020d}.json"
    path.write_text("".join(json.dumps(a) + "\n" for a in actions), encoding="utf-8")
    _touch(path, moment)
    table.times.append(moment)


def build_table(root: Path, seed: int, server: ObjectStoreServer | None = None) -> Table:
    """Scenario ``seed``: 6 to 14 commits, one to three checkpoint versions (not yet written),
    data files, two orphans and hidden files; with ``server``, the commits are then copied in
    order to a table there, and the times are the server's."""
    rng = random.Random(seed)
    count = rng.randint(6, 14)
    url = server.table_url(root.name) if server is not None else None
    table = Table(root, server, url, configuration=_configuration(rng))
    table.extras = random.Random(f"artefacts {seed}")
    table.artefact_reads = server is None or seed % 3 == 0
    table.checkpoints = sorted(rng.sample(range(2, count), rng.randint(1, 3)))
    _protect(table, seed)
    _modern_features(table)
    table.log_dir.mkdir(parents=True)
    live: list[str] = []
    for version in range(count):
        _commit(table, rng, version, live)
    for k in range(2):
        _data_file(table, f"orphan-{k}.parquet", rng.choice(table.times))
    _data_file(table, "_hidden/kept.parquet", MIDNIGHT)
    _data_file(table, ".kept.parquet", MIDNIGHT)
    _data_file(table, "_x=1/kept.parquet", MIDNIGHT)  # no partition column is named _x
    _data_file(table, "_change_data/cdc-00000.parquet", MIDNIGHT)  # not hidden: cleaned
    if server is not None:
        _copy_log_to_server(table)
    table.compactions = plant_compactions(table, _model_at(table), table.extras)
    return table


def _copy_log_to_server(table: Table) -> None:
    """Write the commits to the server in version order; the file times the checks use from
    then on are the server's (whole seconds, many equal: ties the spec's adjustment breaks)."""
    store = table.store
    for version in range(len(table.times)):
        name = f"{version:020d}.json"
        store.write_new(name, (table.log_dir / name).read_bytes())
    table.times = [
        info.modification_time for info in store.list_from() if info.name.endswith(".json")
    ]


# --- the model's view of the same files ----------------------------------------------------------


def model_snapshot(table: Table, version: int) -> Any:
    """The model's replay of commits 0..version (each at its file's time), decoded by the model
    adapter; replayed once per table."""
    if version not in table.models:
        snapshot = Snapshot()
        table.commits.clear()
        for v in range(len(table.times)):
            found = [read_log_action(line, snapshot) for line in table.commit_lines(v)]
            commit = Commit(v, tuple(a for a in found if a is not None), table.times[v])
            table.commits.append(commit)
            snapshot = table.models[v] = apply_commit(snapshot, commit)
    return table.models[version]


def _model_at(table: Table) -> Callable[[int], Snapshot]:
    return lambda version: model_snapshot(table, version)


def model_kept(snapshot: Any, now: int) -> dict[str, set[str]]:
    """What CHECKPOINT.CONTENTS keeps as of ``now``: live paths, tombstone paths, app ids."""
    kept = checkpoint_actions(snapshot, now)
    return {
        "add": {a.path for a in kept if isinstance(a, AddFile)},
        "remove": {a.path for a in kept if isinstance(a, RemoveFile)},
        "txn": {a.app_id for a in kept if isinstance(a, SetTransaction)},
        "domain": {a.domain for a in kept if isinstance(a, DomainMetadata) and not a.removed},
    }


def _agree(what: str, got: object, want: object) -> None:
    if got != want:
        raise ServiceMismatch(f"{what}: impl {got!r}, model {want!r}")


def _sorted(values: set[str]) -> list[str]:
    return sorted(values)


def _arrow_kept(rows: Any) -> dict[str, set[str]]:
    """The same three sets from a checkpoint's Arrow rows."""

    def paths(column: str, key: str) -> set[str]:
        if column not in rows.column_names:
            return set()
        return set(pc.struct_field(rows.column(column).drop_null(), key).to_pylist())

    return {"add": paths("add", "path"), "remove": paths("remove", "path"),
            "txn": paths("txn", "appId"), "domain": paths("domainMetadata", "domain")}  # fmt: skip


# --- the checks ----------------------------------------------------------------------------------

KINDS = ("add", "remove", "txn", "domain")
"""What a checkpoint holds, compared by key: file paths, tombstone paths, app ids, domains."""


def _retention_probes(table: Table) -> list[int]:
    """``now`` values at which a written tombstone or lastUpdated time is exactly at the
    tombstone or app-transaction cut-off, or one millisecond inside it."""
    durations = [interval_ms(v) for k, v in table.configuration.items() if "Retention" in k]
    probes = {stamp + d + delta for stamp in table.stamps for d in durations for delta in (0, 1)}
    return sorted(probes)[:: max(1, len(probes) // 12)]


def _fixed(now: int) -> Callable[[], int]:
    return lambda: now


def check_retention(table: Table) -> int:
    """RETENTION.TOMBSTONES, RETENTION.SET_TRANSACTION, CHECKPOINT.CONTENTS at every probe: the
    impl's snapshot as of ``now`` and its checkpoint rows against the model's checkpoint."""
    latest = len(table.times) - 1
    model = model_snapshot(table, latest)
    probes = _retention_probes(table)
    for now in probes:
        want = model_kept(model, now)
        snapshot = table.log(clock=_fixed(now)).snapshot()
        got_tombstones = {path for path, _ in snapshot.tombstones}
        _agree(f"tombstones at now={now}", _sorted(got_tombstones), _sorted(want["remove"]))
        _agree(f"app ids at now={now}", _sorted(set(snapshot.app_transactions)),
               _sorted(want["txn"]))  # fmt: skip
        rows = _arrow_kept(checkpoint_table(snapshot, now_ms=now))
        for kind in KINDS:
            _agree(f"checkpoint {kind} at now={now}", _sorted(rows[kind]), _sorted(want[kind]))
    return len(probes)


def _adjusted(times: list[int]) -> list[int]:
    out: list[int] = []
    for moment in times:
        out.append(moment if not out or moment > out[-1] else out[-1] + 1)
    return out


def expected_version_at(times: list[int], timestamp: int) -> int | str:
    """The spec's time travel by timestamp: the last version whose (strictly increasing) commit
    time is at or before ``timestamp``; before the first or after the last commit is an error."""
    adjusted = _adjusted(times)
    if timestamp < adjusted[0]:
        return "TimestampEarlierThanCommitRetentionError"
    if timestamp > adjusted[-1]:
        return "TimestampGreaterThanCommitError"
    return max(v for v, t in enumerate(adjusted) if t <= timestamp)


def check_time_travel(table: Table) -> int:
    log = table.log()
    times = table.version_times
    probes = sorted({t + d for t in _adjusted(times) for d in (-1, 0, 1)})
    for timestamp in probes:
        got: int | str
        try:
            got = version_at(log, timestamp)
        except DeltaError as error:
            got = type(error).__name__
        _agree(f"version at {timestamp}", got, expected_version_at(times, timestamp))
    return len(probes)


def expected_vacuum(table: Table, now: int) -> list[str]:
    """What VACUUM deletes at ``now``: regular files outside ``_delta_log`` and hidden names,
    modified before the cut-off, that no version within retention references (live, an
    unexpired tombstone, or removed by a commit made after the cut-off). A name is hidden when
    it starts with ``_`` or ``.``, unless it starts with ``_delta_index``, ``_change_data`` or a
    partition column's ``col=`` (delta-spark's isHiddenDirectory)."""
    model = model_snapshot(table, len(table.times) - 1)
    cutoff = min_file_retention_timestamp(model.metadata, now)
    kept = model_kept(model, now)
    referenced = kept["add"] | kept["remove"]
    for version, moment in enumerate(table.times):
        if moment > cutoff:
            lines = (table.log_dir / f"{version:020d}.json").read_text().splitlines()
            referenced |= {json.loads(x)["remove"]["path"] for x in lines if '"remove"' in x}
    root_uri = table.root.as_uri() + "/"
    referenced |= {
        table.dvs[path]["pathOrInlineDv"].removeprefix(root_uri)
        for path in referenced
        if path in table.dvs
    }
    doomed = []
    for path in table.root.rglob("*"):
        relative = path.relative_to(table.root).as_posix()
        hidden = any(
            part.startswith(("_", "."))
            and not part.startswith(("_delta_index", "_change_data"))
            and not any(part.startswith(f"{c}=") for c in model.metadata.partition_columns)
            for part in relative.split("/")
        )
        if (
            path.is_file()
            and not hidden
            and relative not in referenced
            and path.stat().st_mtime_ns // 1_000_000 < cutoff
        ):
            doomed.append(relative)
    return sorted(doomed)


def check_vacuum(table: Table) -> int:
    """Dry runs at every probe (cut-offs at each commit time and deletion timestamp, and one
    millisecond after), then one real VACUUM at the last probe; a retention one millisecond
    shorter than the table's is refused unless the check is turned off."""
    retention = interval_ms(table.configuration["delta.deletedFileRetentionDuration"])
    probes = sorted({t + retention + d for t in {*table.times, *table.stamps} for d in (0, 1)})
    log = DeltaLog(str(table.root))
    try:
        vacuum(log, retention_ms=retention - 1, dry_run=True, now_ms=probes[-1])
        raise ServiceMismatch(f"VACUUM accepted a retention of {retention - 1} ms, shorter "
                              f"than the table's {retention} ms")  # fmt: skip
    except VacuumRetentionTooShortError:
        pass
    unchecked = vacuum(log, retention_ms=retention - 1, dry_run=True, enforce_retention=False,
                       now_ms=probes[-1] - 1)  # fmt: skip
    _agree("VACUUM (dry run, check off)", list(unchecked.deleted),
           expected_vacuum(table, probes[-1]))  # fmt: skip
    for now in probes:
        got = list(vacuum(log, dry_run=True, now_ms=now).deleted)
        _agree(f"VACUUM (dry run) at now={now}", got, expected_vacuum(table, now))
    want = expected_vacuum(table, probes[-1])
    vacuum(log, now_ms=probes[-1])
    gone = sorted(p for p in want if not (table.root / p).exists())
    _agree("files VACUUM deleted", gone, want)
    return len(probes) + 1


class _Interrupted(Exception):
    """A checkpoint write stopped between two parts."""


def _interrupt() -> None:
    raise _Interrupted


def _hint(table: Table) -> dict[str, Any] | None:
    try:
        hint: dict[str, Any] = json.loads(table.store.read("_last_checkpoint"))
    except FileNotFoundError:
        return None
    return hint


def _interrupted_write(table: Table, log: Any, version: int, parts: int, now: int) -> None:
    """CHECKPOINT.LAST_CHECKPOINT: a multi-part write that stops after its first part leaves
    ``_last_checkpoint`` as it was (the hint is written after every part exists)."""
    before = _hint(table)
    crashpoints.arm("checkpoint.between_parts", action=_interrupt)
    try:
        write_checkpoint(log, log.snapshot(version), parts=parts, now_ms=now)
        raise ServiceMismatch(f"checkpoint {version}: the armed crash point was not reached")
    except _Interrupted:
        pass
    finally:
        crashpoints.disarm()
    _agree(f"_last_checkpoint after checkpoint {version} stopped between parts", _hint(table),
           before)  # fmt: skip


def _check_hint(table: Table, version: int, rows: Any, want: dict[str, set[str]]) -> None:
    """CHECKPOINT.LAST_CHECKPOINT: the hint names the checkpoint just written, with ``version``,
    ``size`` and ``parts`` first and in that order, and its counts of rows and adds."""
    hint = _hint(table) or {}
    keys = [k for k in hint if k in ("version", "size", "parts")]
    _agree(f"_last_checkpoint {version} first keys", list(hint)[: len(keys)], keys)
    _agree(f"_last_checkpoint {version} version and size", (hint.get("version"), hint.get("size")),
           (version, rows.num_rows))  # fmt: skip
    _agree(f"_last_checkpoint {version} numOfAddFiles", hint.get("numOfAddFiles"),
           len(want["add"]))  # fmt: skip


def _check_files(table: Table, version: int, parts: int | None) -> None:
    """CHECKPOINT.READ's completeness of what was written: the checkpoint files of ``version``
    on disk are exactly the model's names for ``parts`` (every part of one part count), none of
    them empty, and ``_last_checkpoint`` gives their number as ``parts`` (multi-part only,
    CHECKPOINT.LAST_CHECKPOINT) — else a reader would not take the checkpoint as complete."""
    files = _checkpoint_files(table, version)
    _agree(f"checkpoint {version} files", [f.name for f in files],
           list(checkpoint_file_names(version, parts)))  # fmt: skip
    _agree(f"checkpoint {version} empty files", [f.name for f in files if not f.size],
           [])  # fmt: skip
    want_parts = parts if parts is not None and parts > 1 else None
    _agree(f"_last_checkpoint {version} parts", (_hint(table) or {}).get("parts"), want_parts)


def _checkpoint_files(table: Table, version: int) -> list[Any]:
    """The Parquet checkpoint files of ``version`` in the log, listed by its store."""
    prefix = f"{version:020d}.checkpoint"
    listed = table.store.list_from(prefix)
    return [f for f in listed if f.name.startswith(prefix) and f.name.endswith(".parquet")]


def write_checkpoints(table: Table, rng: random.Random) -> int:
    """Each chosen version checkpointed (classic or multi-part) as of its commit time, its files
    timed earlier than any commit; read back, they hold what the model's checkpoint holds, they
    are the complete set of files the model names, and ``_last_checkpoint`` describes them. A
    multi-part one is first stopped after its first part."""
    log = table.log()
    for version in table.checkpoints:
        now = table.times[version]
        parts = rng.choice([None, 2, 3])
        if parts is not None:
            _interrupted_write(table, log, version, parts, now)
        result = write_checkpoint(log, log.snapshot(version), parts=parts, now_ms=now)
        following = [v for v in table.checkpoints if v > version]
        if table.artefact_reads:
            check_reads_after_checkpoint(table, version, following[0] if following else None)
        if table.v2:
            model = model_snapshot(table, version)
            check_v2_checkpoint(table, result.files, model, now, _hint(table))
            _check_read_back(table, version, model_kept(model, now))
        else:
            _check_classic(table, log, version, parts, result, now)
        for name in result.files:
            table.touch_log_file(name, 1000)
    return len(table.checkpoints)


def _check_classic(
    table: Table, log: Any, version: int, parts: int | None, result: Any, now: int
) -> None:
    """A classic or multi-part checkpoint just written, read back: what the model's checkpoint
    holds, the complete set of files the model names, described by ``_last_checkpoint``."""
    rows = pa.concat_tables([pq.read_table(log.store.open_file(n)) for n in result.files],
                            promote_options="default")  # fmt: skip
    want = model_kept(model_snapshot(table, version), now)
    got = _arrow_kept(rows)
    for kind in KINDS:
        _agree(f"checkpoint {version} {kind}", _sorted(got[kind]), _sorted(want[kind]))
    _check_hint(table, version, rows, want)
    _check_files(table, version, parts)


def _check_read_back(table: Table, version: int, want: dict[str, set[str]]) -> None:
    """A fresh load of ``version`` starts at the checkpoint just written and gives the model's
    live files and tombstones (CHECKPOINT.READ of a v2 checkpoint: its sidecar read)."""
    snapshot = table.log(clock=_fixed(table.times[version])).snapshot(version)
    _agree(f"checkpoint {version} read back: its start", snapshot.checkpoint_version, version)
    _agree(f"checkpoint {version} read back: live files", _sorted({p for p, _ in snapshot.files}),
           _sorted(want["add"]))  # fmt: skip
    _agree(f"checkpoint {version} read back: tombstones",
           _sorted({p for p, _ in snapshot.tombstones}), _sorted(want["remove"]))  # fmt: skip


def _tear_earlier_checkpoints(table: Table) -> list[int]:
    """On every other table, the checkpoints before the latest are torn (their first file
    holds a Parquet magic and nothing else, still timed as written): cleanup must not start
    the kept log at one (RETENTION.VERIFIED_CHECKPOINT). The earlier checkpoints left whole,
    and so are v2 checkpoints (their top-level file is JSON)."""
    earlier = table.checkpoints[:-1]
    if len(table.times) % 2 or table.v2:
        return earlier
    for version in earlier:
        first = _checkpoint_files(table, version)[0].name
        table.store.write_overwrite(first, b"PAR1\0\0\0\0PAR1")
        table.touch_log_file(first, 1000)
    return []


def _is_commit(name: str) -> bool:
    """A commit file's name (not a v2 checkpoint's ``<v>.checkpoint.<uuid>.json``)."""
    return re.fullmatch(r"[0-9]{20}\.json", name) is not None


def check_cleanup(table: Table, rng: random.Random) -> int:
    """RETENTION.LOG at a cut-off equal to a commit's midnight: the commits deleted are the
    model's ``expired_log_versions`` (with only the whole checkpoints as starts); the latest
    state and the kept versions still read. On a table with ``checkpointProtection``
    (RETENTION.CHECKPOINT_PROTECTION), a cleanup as 3.3.2 does first (nothing below the
    protected version but in one go), then as the first release that truncates in chunks does,
    then as the newest does, at the same time: the commits deleted are the model's for each."""
    latest_checkpoint = table.checkpoints[-1]
    retention = interval_ms(table.configuration["delta.logRetentionDuration"])
    pivot = table.times[rng.randrange(latest_checkpoint)]
    now = pivot - pivot % DAY + rng.choice([0, DAY]) + retention + rng.choice([0, 1, HOUR])
    model = model_snapshot(table, len(table.times) - 1)
    whole = _tear_earlier_checkpoints(table)
    chunked = [CHUNKED_SINCE, None]  # the first release that truncates in chunks, the newest
    releases = [None] if PROTECTED_BEFORE not in table.configuration else [ONE_GO_RELEASE, *chunked]
    log = table.log()
    latest = log.snapshot()
    got: list[int] = []
    for release in releases:
        follows = Profile.parse(release or CURRENT)
        deleted = cleanup_expired_logs(log, latest_checkpoint, now, latest.metadata,
                                       latest.protocol, follows)  # fmt: skip
        got = sorted([*got, *(int(n[:20]) for n in deleted if _is_commit(n))])
        want = expired_log_versions(table.times, latest_checkpoint, now, model.metadata, whole,
                                    model.protocol, profile(release))  # fmt: skip
        at = "" if release is None else f" as {release} does"
        _agree(f"commits cleaned up at now={now}{at}", got, list(want))
    after = table.log().snapshot()
    _agree("live files after cleanup", sorted(p for p, _ in after.files),
           sorted(model.live_paths()))  # fmt: skip
    return 1 + len(releases)


def check_strays(table: Table) -> int:
    """PATH.STRAY_KEYS and PATH.TABLE_LOCATION: stray objects planted under the table (keys no
    client can name on a server, names that are no log file name on disk) change neither its
    latest version nor its listing, and every checks after this one runs with them present; on
    a server, every hostile URL aimed at the table is refused before any request."""
    server, url = table.server, table.url
    if server is None or url is None:
        planted = len(plant_local_strays(table.log_dir))
    else:
        for key in STRAY_KEYS:
            server.put_raw(f"{table.store.location.key(key)}")
        planted = len(STRAY_KEYS)
    listing = list_log(table.store)
    _agree("commits listed among strays", sorted(listing.commits), list(range(len(table.times))))
    _agree("latest version among strays", table.log().snapshot().version, len(table.times) - 1)
    refused = 0
    if server is not None and url is not None:
        for hostile in hostile_urls(server.base_url, table.store.location.prefix):
            try:
                DeltaLog(hostile, storage_options=server.options)
            except InvalidTableLocationError:
                refused += 1
            else:
                raise ServiceMismatch(f"the table URL {hostile!r} was taken")
    return planted + refused


CHECKS: tuple[tuple[str, Callable[[Table, random.Random], int]], ...] = (
    ("strays", lambda table, rng: check_strays(table)),
    ("compaction reads", lambda t, rng: check_compaction_reads(t, _model_at(t), t.compactions)),
    ("checksums", lambda table, rng: check_checksums(table, _model_at(table), table.extras)),
    ("time travel", lambda table, rng: check_time_travel(table)),
    ("retention", lambda table, rng: check_retention(table)),
    ("vacuum", lambda table, rng: check_vacuum(table)),
    ("checkpoints", write_checkpoints),
    ("cleanup", check_cleanup),
)
"""In this order: VACUUM before cleanup (it reads the commits cleanup deletes); the compaction
reads and the checksums before any checkpoint (a read from a checkpoint would skip the
compaction files, and holds no app transaction that had expired when it was written)."""
NOT_ON_SERVERS = frozenset({"vacuum"})
"""What does not run on an object store: VACUUM lists the table's data files on disk only."""
ARTEFACT_READS = frozenset({"compaction reads", "checksums"})
"""The checks that read every version again: only on a table with ``artefact_reads``."""


def run_scenario(
    seed: int, workdir: Path, server: ObjectStoreServer | None = None
) -> dict[str, int]:
    """Build scenario ``seed`` under ``workdir`` (its log on ``server`` where given) and run
    every check (but VACUUM on a server); raises ServiceMismatch."""
    table = build_table(workdir / f"table-{seed}", seed, server)
    rng = random.Random(seed + 1)
    counts: dict[str, int] = {}
    for name, check in CHECKS:
        if server is not None and name in NOT_ON_SERVERS:
            continue
        if name in ARTEFACT_READS and not table.artefact_reads:
            continue
        try:
            counts[name] = check(table, rng)
        except (ServiceMismatch, Mismatch) as mismatch:
            raise ServiceMismatch(f"scenario {seed}, {name}: {mismatch}") from None
    return counts


def run_services(
    scenarios: int = SCENARIOS, server: ObjectStoreServer | None = None
) -> StageResult:
    """The one-off probes, then every scenario; the first disagreement fails the stage."""
    workdir = Path(tempfile.mkdtemp(prefix="deltaspec-services-"))
    totals: dict[str, int] = {}
    notes: list[str] = []
    try:
        if server is None:
            totals["probe"] = run_probes(workdir)  # first: 40 ms, where the scenarios take 7 s
            touched = run_dv_adds(workdir)
            if touched is None:
                notes.append("no deletion-vector adds judged: pyspark is not installed")
            else:
                totals["deletion-vector file"] = touched
        for seed in range(scenarios):
            for name, count in run_scenario(seed, workdir, server).items():
                totals[name] = totals.get(name, 0) + count
    except (ServiceMismatch, ProbeMismatch, Mismatch) as mismatch:
        return StageResult(False, str(mismatch)[:500], {"mismatch": str(mismatch)})
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    checks = ", ".join(f"{count} {name}" for name, count in totals.items())
    where = "" if server is None else f" with the log on {server.kind} (no VACUUM: data on disk)"
    note = "".join(f"; {n}" for n in notes)
    summary = f"{scenarios} tables{where}: {checks} checks{note}"
    return StageResult(True, summary, {"checks": totals, "notes": notes})
