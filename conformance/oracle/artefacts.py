"""The services stage's checks of the modern-feature artefacts, judged by the model: checksum files
(CHECKSUM.WRITE, field by field, the file size histogram included, both as a writer counts it in
full and as it updates it from the previous version's), v2 checkpoints with their sidecar and
``_last_checkpoint`` (CHECKPOINT.V2_WRITE, CHECKPOINT.LAST_CHECKPOINT), and reads through log
compaction files (LOG.COMPACTION), which the impl reads but never writes: the stage writes them,
as the model's ``compacted_actions`` of their commits, and every version read through them must
be the model's, down to the version's own timestamp (its in-commit timestamp, which only the
commit itself carries).

Each check takes a scenario's table (``services.Table``) and ``model_at``, the model's snapshot
of a version; it raises ``Mismatch`` with what differs.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pyarrow.parquet as pq

from ...impl.checksum import checksum_name, write_checksum
from ...impl.log.names import SIDECARS_DIR, compaction_name
from ...model.actions import Action, Commit, CommitInfo
from ...model.checkpoint import checkpointed
from ...model.checksum import Checksum, version_checksum
from ...model.log import compacted_actions, compacted_deltas_for_segment
from ...model.profiles import profile
from ...model.snapshot import Snapshot, replay
from ...model.timestamps import in_commit_timestamps_enabled, version_timestamp
from ...model.v2_checkpoint import SIDECAR_COLUMNS, TOP_LEVEL_ORDER, v2_checkpoint
from ..engines.model.adapter import read_log_action

ModelAt = Callable[[int], Snapshot]
Json = dict[str, Any]
UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
CHECKSUM_ORDER = (
    "txnId",
    "tableSizeBytes",
    "numFiles",
    "numMetadata",
    "numProtocol",
    "inCommitTimestampOpt",
    "setTransactions",
    "domainMetadata",
    "metadata",
    "protocol",
    "fileSizeHistogram",
)
"""The fields of a checksum file in the order delta-spark 4.4.0 writes them (CHECKSUM.WRITE;
``allFiles`` and the deletion-vector counts, optional, are not written by the impl)."""


class Mismatch(AssertionError):
    """An artefact disagrees with what the model says it must hold."""


def agree(what: str, got: object, want: object) -> None:
    if got != want:
        raise Mismatch(f"{what}: impl {got!r}, model {want!r}")


def _decoded(kind: str, body: Any, model: Snapshot) -> Action | None:
    return read_log_action({kind: body}, model)


# --- checksum files ------------------------------------------------------------------------------


def commit_info(lines: Iterable[Json], model: Snapshot) -> CommitInfo | None:
    """The commitInfo among a commit's JSON lines, as the model reads it."""
    for line in lines:
        if "commitInfo" in line:
            found = read_log_action(line, model)
            return found if isinstance(found, CommitInfo) else None
    return None


def expected_checksum(model: Snapshot, info: CommitInfo | None) -> Checksum:
    """The model's checksum of version ``model.version``, whose commit carries ``info``."""
    enabled = in_commit_timestamps_enabled(model.metadata, profile(None))
    ict = model.in_commit_timestamp if enabled else None
    return version_checksum(model, ict, None if info is None else info.txn_id)


def checksum_mismatches(stored: Json, want: Checksum, model: Snapshot) -> list[str]:
    """Every field of the written checksum ``stored`` that is not what ``want`` says, with the
    two values; the keys must be the model's, in delta-spark's order."""
    wrong: list[str] = []

    def same(name: str, got: object, expected: object) -> None:
        if got != expected:
            wrong.append(f"{name}: impl {got!r}, model {expected!r}")

    keys = [k for k in CHECKSUM_ORDER if k in stored or _present(want, k)]
    same("keys in order", list(stored), keys)
    same("txnId", stored.get("txnId"), want.txn_id)
    same("tableSizeBytes", stored.get("tableSizeBytes"), want.table_size_bytes)
    same("numFiles", stored.get("numFiles"), want.num_files)
    same("numMetadata", stored.get("numMetadata"), want.num_metadata)
    same("numProtocol", stored.get("numProtocol"), want.num_protocol)
    same("inCommitTimestampOpt", stored.get("inCommitTimestampOpt"), want.in_commit_timestamp_opt)
    same("metadata", _decoded("metaData", stored.get("metadata"), model), want.metadata)
    same("protocol", _decoded("protocol", stored.get("protocol"), model), want.protocol)
    txns = [_decoded("txn", t, model) for t in stored.get("setTransactions") or ()]
    same("setTransactions", _by_key(txns), _by_key(want.set_transactions))
    domains = [_decoded("domainMetadata", d, model) for d in stored.get("domainMetadata") or ()]
    same("domainMetadata", _by_key(domains), _by_key(want.domain_metadata))
    same("fileSizeHistogram", stored.get("fileSizeHistogram"), want.file_size_histogram.as_json())
    return wrong


def _present(want: Checksum, key: str) -> bool:
    optional = {"txnId": want.txn_id, "inCommitTimestampOpt": want.in_commit_timestamp_opt}
    return key not in optional or optional[key] is not None


def check_checksums(table: Any, model_at: ModelAt, rng: random.Random) -> int:
    """CHECKSUM.WRITE: ``<v>.crc`` for every version, written as the post-commit step writes it
    (``write_checksum``) by two writers in turn: the first from version 0, the second from a
    version drawn in between; each counts its first checksum in full and updates every later
    one from its previous one (the histogram by the files the commit touched). Every field of
    every file must be the model's. The files are deleted afterwards: written now, they would
    move the commits' times as log cleanup adjusts them (RETENTION.LOG)."""
    latest = len(table.times) - 1
    oldest = 0
    turn = rng.randint(oldest, latest)
    for first, last in ((oldest, turn - 1), (turn, latest)):
        log = table.log()
        for version in range(first, last + 1):
            write_checksum(log, version)
    for version in range(oldest, latest + 1):
        stored = json.loads(table.store.read(checksum_name(version)))
        model = model_at(version)
        want = expected_checksum(model, commit_info(table.commit_lines(version), model))
        wrong = checksum_mismatches(stored, want, model)
        path = "in full" if version in (oldest, turn) else "updated from the previous one"
        if wrong:
            raise Mismatch(f"checksum {version} ({path}): " + "; ".join(wrong))
        table.store.delete(checksum_name(version))
    return latest + 1 - oldest


# --- v2 checkpoints ------------------------------------------------------------------------------


def _listed(table: Any, name: str) -> Any:
    directory, _, _ = name.rpartition("/")
    listed = table.store.list_dir(directory) if directory else table.store.list_from(name)
    found = [info for info in listed if info.name == name]
    if not found:
        raise Mismatch(f"{name} is not listed")
    return found[0]


def _file_row(kind: str, row: Json) -> tuple[Any, ...]:
    """What a sidecar row or a model action says of its file: path, size (adds) or deletion
    time (tombstones), and its deletion vector's place and cardinality."""
    dv = row.get("deletionVector") or {}
    file_fact = row.get("size") if kind == "add" else row.get("deletionTimestamp")
    return (kind, row["path"], file_fact, dv.get("pathOrInlineDv"), dv.get("cardinality"))


def _model_row(action: Any, dvs: dict[str, Json]) -> tuple[Any, ...]:
    dv = dvs.get(action.path) if action.dv_id is not None else None
    if hasattr(action, "modification_time"):
        fact: Any = action.size
        kind = "add"
    else:
        fact = action.deletion_timestamp
        kind = "remove"
    place = (dv or {}).get("pathOrInlineDv"), (dv or {}).get("cardinality")
    return (kind, action.path, fact, *place)


def check_v2_checkpoint(
    table: Any, files: Sequence[str], model: Snapshot, now: int, hint: Json | None
) -> None:
    """CHECKPOINT.V2_WRITE and CHECKPOINT.LAST_CHECKPOINT for the v2 checkpoint just written of
    ``model.version`` (its ``files``: the top-level file, then the sidecar): names, the
    top-level file's actions in order, the ``checkpointMetadata`` tags, the ``sidecar`` action,
    the sidecar's rows, and ``_last_checkpoint`` (``hint``)."""
    version = model.version
    want = v2_checkpoint(model, now)
    agree(f"v2 checkpoint {version} files", len(files), 2)
    top_name, sidecar_name = files
    if not re.fullmatch(rf"{version:020d}\.checkpoint\.{UUID}\.json", top_name):
        raise Mismatch(f"v2 checkpoint {version}: top-level file name {top_name!r}")
    bare = f"{version:020d}.checkpoint.{1:010d}.{1:010d}"
    if not re.fullmatch(rf"{SIDECARS_DIR}/{bare}\.{UUID}\.parquet", sidecar_name):
        raise Mismatch(f"v2 checkpoint {version}: sidecar name {sidecar_name!r}")
    top_info, sidecar_info = _listed(table, top_name), _listed(table, sidecar_name)
    lines = [json.loads(x) for x in table.store.read(top_name).decode().splitlines() if x]
    kinds = [next(iter(line)) for line in lines]
    order = sorted(kinds, key=lambda k: TOP_LEVEL_ORDER.index(k) if k in TOP_LEVEL_ORDER else 99)
    agree(f"v2 checkpoint {version} top-level actions in order", kinds, order)
    agree(f"v2 checkpoint {version} checkpointMetadata and sidecar actions",
          kinds[:2], ["checkpointMetadata", "sidecar"])  # fmt: skip
    marker, sidecar = lines[0]["checkpointMetadata"], lines[1]["sidecar"]
    agree(f"v2 checkpoint {version} checkpointMetadata.version", marker.get("version"), version)
    tags = marker.get("tags") or {}
    agree(f"v2 checkpoint {version} tags", {k: tags.get(k) for k in ("sidecarNumActions",
          "sidecarSizeInBytes", "numOfAddFiles")},
          {"sidecarNumActions": str(want.sidecar_num_actions),
           "sidecarSizeInBytes": str(sidecar_info.size),
           "numOfAddFiles": str(want.num_of_add_files)})  # fmt: skip
    agree(f"v2 checkpoint {version} sidecar action", sidecar,
          {"path": sidecar_name.rpartition("/")[2], "sizeInBytes": sidecar_info.size,
           "modificationTime": sidecar_info.modification_time})  # fmt: skip
    others = [_decoded(k, line[k], model) for k, line in zip(kinds, lines, strict=True)][2:]
    agree(f"v2 checkpoint {version} non-file actions", _by_key(others),
          _by_key(want.non_file_actions))  # fmt: skip
    rows = pq.read_table(table.store.open_file(sidecar_name))
    agree(f"v2 checkpoint {version} sidecar columns", rows.column_names[: len(SIDECAR_COLUMNS)],
          list(SIDECAR_COLUMNS))  # fmt: skip
    schema = json.loads(tags.get("sidecarFileSchema") or "{}")
    agree(f"v2 checkpoint {version} sidecarFileSchema columns",
          [f.get("name") for f in schema.get("fields", ())], rows.column_names)  # fmt: skip
    got = sorted(
        _file_row(kind, row)
        for kind in SIDECAR_COLUMNS
        for row in rows.column(kind).to_pylist()
        if row is not None
    )
    agree(f"v2 checkpoint {version} sidecar rows ({rows.num_rows})", got,
          sorted(_model_row(a, table.dvs) for a in want.sidecar_actions))  # fmt: skip
    agree(f"v2 checkpoint {version} sidecar row count", rows.num_rows, want.sidecar_num_actions)
    _check_v2_hint(version, hint or {}, want.size, want.num_of_add_files, top_info, sidecar_info,
                   lines)  # fmt: skip


def _by_key(actions: Iterable[Any]) -> list[str]:
    return sorted(repr(a) for a in actions)


def _check_v2_hint(
    version: int,
    hint: Json,
    size: int,
    adds: int,
    top: Any,
    sidecar: Any,
    lines: list[Json],
) -> None:
    agree(f"_last_checkpoint {version} of a v2 checkpoint",
          {k: hint.get(k) for k in ("version", "size", "parts", "sizeInBytes", "numOfAddFiles")},
          {"version": version, "size": size, "parts": None,
           "sizeInBytes": top.size + sidecar.size, "numOfAddFiles": adds})  # fmt: skip
    field = hint.get("v2Checkpoint") or {}
    agree(f"_last_checkpoint {version} v2Checkpoint", field,
          {"path": top.name, "sizeInBytes": top.size, "modificationTime": top.modification_time,
           "nonFileActions": [*lines[2:], lines[0]],
           "sidecarFiles": [lines[1]["sidecar"]]})  # fmt: skip


# --- log compaction files ------------------------------------------------------------------------


def plant_compactions(table: Any, model_at: ModelAt, draw: random.Random) -> list[tuple[int, int]]:
    """Up to three log compaction files over the table's commits, each the model's
    ``compacted_actions`` of its range (the commits' own JSON lines for the actions kept): some
    end at the latest version, some overlap, some start at 0."""
    latest = len(table.times) - 1
    ranges: set[tuple[int, int]] = set()
    for _ in range(draw.choice([0, 1, 2, 3])):
        last = draw.choice([latest, latest, draw.randint(1, latest)])
        first = draw.choice([0, draw.randint(0, last - 1)])
        ranges.add((first, last))
    for first, last in sorted(ranges):
        lines: dict[int, Json] = {}
        commits = []
        for version in range(first, last + 1):
            before = model_at(version - 1) if version else Snapshot()
            decoded = []
            for line in table.commit_lines(version):
                found = read_log_action(line, before)
                if found is not None:
                    lines[id(found)] = line
                    decoded.append(found)
            commits.append(Commit(version, tuple(decoded)))
        text = "".join(json.dumps(lines[id(a)]) + "\n" for a in compacted_actions(commits))
        table.store.write_new(compaction_name(first, last), text.encode("utf-8"))
    return sorted(ranges)


def _state(snapshot: Any) -> dict[str, Any]:
    """What a read of the impl gives, in the model's terms."""
    tombstones = snapshot.all_tombstones.column("path").to_pylist()
    return {
        "version": snapshot.version,
        "files": sorted((add.path, add.size) for add in snapshot.files.values()),
        "tombstones": sorted(tombstones),
        "app txns": {a: t.version for a, t in snapshot.all_app_transactions.items()},
        "domains": {d: m.configuration for d, m in snapshot.domains.items()},
        "configuration": dict(snapshot.metadata.configuration),
        "writer features": sorted(snapshot.protocol.writer_features or ()),
        "timestamp": snapshot.timestamp,
    }


def _model_state(model: Snapshot) -> dict[str, Any]:
    metadata, protocol = model.metadata, model.protocol
    return {
        "version": model.version,
        "files": sorted((a.path, a.size) for a in model.files.values()),
        "tombstones": sorted(r.path for r in model.tombstones.values()),
        "app txns": {a: t.version for a, t in model.app_txns.items()},
        "domains": {d: m.configuration for d, m in model.domains.items()},
        "configuration": dict(metadata.configuration) if metadata else {},
        "writer features": sorted(protocol.writer_features or ()) if protocol else [],
        "timestamp": version_timestamp(model, profile(None)),
    }


def check_compaction_reads(table: Any, model_at: ModelAt, ranges: Sequence[tuple[int, int]]) -> int:
    """LOG.COMPACTION: every version read by a fresh log (through the compaction files where the
    rule uses them) is the model's replay of the commits alone: state, and the version's
    timestamp (on a table with in-commit timestamps, the commit's own, which no compaction file
    carries). Returns the reads that went through a compaction file."""
    latest = len(table.times) - 1
    through = 0
    for version in range(latest + 1):
        units = compacted_deltas_for_segment(-1, version, range(latest + 1), ranges)
        through += any(first != last for first, last in units)
        got = _state(table.log().snapshot(version))
        want = _model_state(model_at(version))
        for key, value in want.items():
            agree(f"version {version} read through {list(ranges)}: {key}", got[key], value)
    return through


def check_reads_after_checkpoint(table: Any, checkpoint: int, until: int | None) -> int:
    """LOG.COMPACTION after a checkpoint: the versions after checkpoint ``checkpoint`` (just
    written, at its commit's time), up to the next checkpoint (``until``) or the latest, read by
    a fresh log from that checkpoint, through the compaction files that start after it: each
    the model's read of the checkpoint (``checkpointed``: what had expired when it was written
    left out) with the later commits replayed, the version's timestamp included."""
    latest = len(table.times) - 1
    last = latest if until is None else until - 1
    base = checkpointed(table.models[checkpoint], table.times[checkpoint])
    for version in range(checkpoint + 1, last + 1):
        model = replay(table.commits[checkpoint + 1 : version + 1], start=base)
        got = _state(table.log().snapshot(version))
        want = _model_state(model)
        where = f"version {version} read from checkpoint {checkpoint} through {table.compactions}"
        for key, value in want.items():
            agree(f"{where}: {key}", got[key], value)
    return max(0, last - checkpoint)


__all__ = [
    "Mismatch",
    "check_checksums",
    "check_compaction_reads",
    "check_reads_after_checkpoint",
    "check_v2_checkpoint",
    "plant_compactions",
]
