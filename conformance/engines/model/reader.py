"""The model (deltaspec.model) as a reader of tables on disk (the fixtures suite): the log listed
and its files decoded here, the state built by the model's own rules; a refusal is the harness's
``ReadFailure`` with the neutral error kind (impl/errors.py ``kind`` values)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq

from ....model.actions import Commit, Metadata, Protocol
from ....model.checkpoint import (
    checkpoint_actions,
    expired_log_versions,
    snapshot_from_checkpoint,
)
from ....model.features import unreadable
from ....model.paths import names_table_file
from ....model.profiles import profile
from ....model.snapshot import Snapshot, apply_commit
from ....model.timestamps import commit_timestamps, version_at
from ...harness.adapter import Json
from ...harness.reading import ReadFailure
from .adapter import read_log_action
from .adapter import snapshot_json as model_json


class ModelReader:
    """The model (deltaspec.model) as a reader: the log listed and its files decoded here, the
    state built by the model's own rules: the newest complete checkpoint at or below the target
    (CHECKPOINT.READ; ``_last_checkpoint`` is only a hint, so the whole log is listed), the
    commits after it (LOG.CONTIGUITY, SNAPSHOT.REPLAY), refused unless the newest release reads
    its protocol (SNAPSHOT.PROTOCOL_METADATA, the model's ``unreadable``; a v2 checkpoint's
    sidecars are read, whatever its name), then retention with this clock as the
    state delta-spark materialises (RETENTION.TOMBSTONES, RETENTION.SET_TRANSACTION). The listing
    is this reader's, not the model's (whose log is never listed), and so is what depends on it:
    listing again when a listed file is gone (SNAPSHOT.RELIST) and which checkpoints read back
    whole before log cleanup (RETENTION.VERIFIED_CHECKPOINT; the versions it deletes are the
    model's ``expired_log_versions``)."""

    name = "model"

    def read(self, root: Path, version: int | None) -> Json:
        return self.read_interleaved(root, version, lambda: None)

    def read_interleaved(
        self, root: Path, version: int | None, after_listing: Callable[[], None]
    ) -> Json:
        """A load that lists the log, calls ``after_listing``, and reads what it listed; a
        listed file gone by then (a cleanup raced the load) makes it list again, a few times
        (SNAPSHOT.RELIST)."""
        for attempt in range(RELIST_ATTEMPTS):
            commits, checkpoints = _list_log(root / "_delta_log")
            if attempt == 0:
                after_listing()
            try:
                return self._load(root, version, commits, checkpoints)
            except FileNotFoundError as gone:
                if attempt + 1 == RELIST_ATTEMPTS:
                    raise ReadFailure("VERSIONS_NOT_CONTIGUOUS", f"{root}: {gone}") from gone
        raise AssertionError("unreachable")

    def _load(
        self,
        root: Path,
        version: int | None,
        commits: dict[int, Path],
        checkpoints: dict[int, list[Path]],
    ) -> Json:

        if not commits and not checkpoints:
            if version is None:
                return model_json(Snapshot())
            raise ReadFailure("TABLE_NOT_FOUND", f"{root}: no commit and no checkpoint")
        latest = max([*commits, *checkpoints])
        target = latest if version is None else version
        if target > latest:
            raise ReadFailure("VERSION_NOT_FOUND", f"{root}: version {target} > {latest}")
        snapshot, start = Snapshot(), None
        for candidate in sorted((c for c in checkpoints if c <= target), reverse=True):
            try:  # a v2 checkpoint naming a missing sidecar is not complete (CHECKPOINT.READ)
                found = _checkpoint_actions(checkpoints[candidate], snapshot)
            except _MissingSidecar:
                continue
            snapshot, start = snapshot_from_checkpoint(candidate, found, []), candidate
            break
        if start is None and 0 not in commits:
            kind = "VERSION_NOT_FOUND" if version is not None else "VERSIONS_NOT_CONTIGUOUS"
            raise ReadFailure(kind, f"{root}: no checkpoint at or below {target}, no version 0")
        first = 0 if start is None else start + 1
        missing = [v for v in range(first, target + 1) if v not in commits]
        if missing:
            raise ReadFailure("VERSIONS_NOT_CONTIGUOUS", f"{root}: missing versions {missing}")
        for v in range(first, target + 1):
            snapshot = _apply_commit_file(snapshot, v, commits[v])
        try:
            kept = checkpoint_actions(snapshot, int(time.time() * 1000))
        except ValueError as error:
            raise ReadFailure("MISSING_PROTOCOL_OR_METADATA", f"{root}: {error}") from error
        assert snapshot.protocol is not None  # checkpoint_actions needs one
        refused = unreadable(snapshot.protocol, profile())
        if refused:
            raise ReadFailure("UNSUPPORTED_PROTOCOL", f"{root}: unsupported {', '.join(refused)}")
        return model_json(snapshot_from_checkpoint(snapshot.version, kept, []))

    def clean_up_expired_logs(self, root: Path) -> None:
        """RETENTION.LOG by the model's ``expired_log_versions`` (commit times: the files'
        modification times) after the checkpoint ``_last_checkpoint`` names, with the wall clock,
        at the newest release (RETENTION.CHECKPOINT_PROTECTION: in chunks); only checkpoints
        that read back whole count (RETENTION.VERIFIED_CHECKPOINT)."""

        log = root / "_delta_log"
        try:
            last = int(json.loads((log / "_last_checkpoint").read_text())["version"])
        except (OSError, ValueError, KeyError, TypeError):
            return  # no usable hint: no writer has just checkpointed
        commits, checkpoints = _list_log(log)
        if list(commits) != list(range(len(commits))):
            return

        def whole(paths: list[Path]) -> bool:
            try:
                found = _checkpoint_actions(paths, Snapshot())
            except Exception:  # torn Parquet, a malformed row: not read back whole
                return False
            kinds = {type(a) for a in found}
            return Protocol in kinds and Metadata in kinds

        usable = [c for c, paths in sorted(checkpoints.items()) if c <= last and whole(paths)]
        if not usable:
            return
        state = Snapshot()
        for v, path in sorted(commits.items()):
            state = _apply_commit_file(state, v, path)
        metadata = state.metadata
        if metadata is None or (
            (metadata.property("delta.enableExpiredLogCleanup") or "true").lower() == "false"
        ):
            return
        times = [int(commits[v].stat().st_mtime * 1000) for v in sorted(commits)]
        now = int(time.time() * 1000)
        doomed = expired_log_versions(times, usable[-1], now, metadata, usable[:-1], state.protocol)
        for path in sorted(log.iterdir()):
            found = _VERSIONED.fullmatch(path.name)
            if found and int(found[1]) in doomed:
                path.unlink()

    def read_at_timestamp(self, root: Path, timestamp: int) -> Json:
        """ICT.TIME_TRAVEL by the model's ``commit_timestamps`` over the listed commits, with the
        latest metadata, at the newest release profile."""

        files, _ = _list_log(root / "_delta_log")
        commits = [_read_commit(Snapshot(), v, path) for v, path in sorted(files.items())]
        found = [a for c in commits for a in c.actions if isinstance(a, Metadata)]
        times = commit_timestamps(commits, found[-1] if found else None, profile())
        version = version_at(times, timestamp)
        if version is None:
            raise ReadFailure("TIMESTAMP_EARLIER_THAN_COMMIT_RETENTION", f"{timestamp}: {times}")
        if timestamp > times[max(times)]:
            raise ReadFailure("TIMESTAMP_GREATER_THAN_COMMIT", f"{timestamp}: {times}")
        return self.read(root, version)

    def rows(self, root: Path, version: int | None) -> pa.Table | None:
        return None


# ASCII digits, whole names (fullmatch): ``\d`` takes any Unicode digit and ``$`` a trailing
# newline, neither of which a log name has (LOG.COMMIT_FILE_NAME).
_COMMIT = re.compile(r"([0-9]{20})\.json")
_CLASSIC = re.compile(r"([0-9]{20})\.checkpoint\.parquet")
_PART = re.compile(r"([0-9]{20})\.checkpoint\.([0-9]{10})\.([0-9]{10})\.parquet")
_VERSIONED = re.compile(r"([0-9]{20})\.(json|crc|checkpoint\..+)")
"""The files log cleanup deletes by version: commits, checksums, checkpoints (RETENTION.LOG)."""
RELIST_ATTEMPTS = 3
"""Loads from a fresh listing while listed files disappear under the load (SNAPSHOT.RELIST)."""


def _list_log(log: Path) -> tuple[dict[int, Path], dict[int, list[Path]]]:
    """LOG.COMMIT_FILE_NAME: the commits; CHECKPOINT.READ: the complete checkpoints (a classic
    one of non-zero size, or every part of a multi-part one)."""
    if not log.is_dir():
        return {}, {}
    commits: dict[int, Path] = {}
    classic: dict[int, list[Path]] = {}
    parts: dict[tuple[int, int], dict[int, Path]] = {}
    for path in sorted(log.iterdir()):
        if m := _COMMIT.fullmatch(path.name):
            commits[int(m[1])] = path
        elif (m := _CLASSIC.fullmatch(path.name)) and path.stat().st_size > 0:
            classic[int(m[1])] = [path]
        elif (m := _PART.fullmatch(path.name)) and path.stat().st_size > 0:
            parts.setdefault((int(m[1]), int(m[3])), {})[int(m[2])] = path
    complete = {
        version: [found[i] for i in sorted(found)]
        for (version, count), found in parts.items()
        if set(found) == set(range(1, count + 1))
    }
    return commits, {**complete, **classic}


def model_states(table: Path) -> Iterator[Json]:
    """The model's snapshot JSON after each commit of ``table``, for logs whose commits run from
    version 0 (the fixtures suite's expectation, harness/fixtures.py)."""

    commits, _ = _list_log(table / "_delta_log")
    if list(commits) != list(range(len(commits))):
        return
    snapshot = Snapshot()
    for version, path in commits.items():
        snapshot = _apply_commit_file(snapshot, version, path)
        yield model_json(snapshot)


def _plain(value: Any) -> Any:
    """A Parquet row value as JSON: maps (lists of pairs) become objects, nulls are dropped."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        if value and all(isinstance(x, tuple) and len(x) == 2 for x in value):
            return {k: v for k, v in value}
        return [_plain(x) for x in value]
    return value


def _check_data_path(line: Json) -> None:
    """PATH.DATA_FILE for the reader: a relative ``add``/``remove`` path must name a file of the
    table (the model's ``names_table_file``); otherwise the load is refused."""

    for key in ("add", "remove"):
        body = line.get(key)
        if not isinstance(body, dict) or not isinstance(body.get("path"), str):
            continue
        path = body["path"]
        if not names_table_file(path):
            raise ReadFailure("UNSAFE_PATH", f"{key}.path {path!r} names no file of the table")


class _MissingSidecar(Exception):
    """A v2 checkpoint names a sidecar that does not exist: the checkpoint is not complete."""


SIDECAR_ACTIONS = ("add", "remove")
"""What a sidecar holds: the checkpoint's file actions (CHECKPOINT.V2_WRITE)."""


def _checkpoint_actions(paths: list[Path], snapshot: Any) -> list[Any]:
    """The known actions of a checkpoint's files and, for a v2 checkpoint (whatever its name:
    delta-spark reads a classic-named file holding ``checkpointMetadata`` as one), of the
    sidecars its ``sidecar`` actions name, under ``_delta_log/_sidecars`` (CHECKPOINT.READ)."""

    def rows(path: Path, keys: tuple[str, ...] | None = None) -> list[Any]:
        found = []
        for row in pq.read_table(path).to_pylist():
            _check_data_path({k: _plain(v) for k, v in row.items() if v is not None})
            for key, body in row.items():
                if body is None or (keys is not None and key not in keys):
                    continue
                if key == "sidecar":
                    name = unquote(_plain(body)["path"]).rsplit("/", 1)[-1]
                    sidecar = path.parent / "_sidecars" / name
                    if not sidecar.is_file():
                        raise _MissingSidecar(f"{path.name} names a missing sidecar {name}")
                    found.extend(rows(sidecar, SIDECAR_ACTIONS))
                elif (action := read_log_action({key: _plain(body)}, snapshot)) is not None:
                    found.append(action)
        return found

    return [action for path in paths for action in rows(path)]


def _check_regular_file(path: Path) -> None:
    """PATH.NO_SYMLINKS and PATH.REGULAR_FILES for the reader: a commit name holding a link is
    never followed, one holding a directory, FIFO or device is never opened."""
    if path.is_symlink():
        raise ReadFailure("UNSAFE_PATH", f"{path.name} is a symbolic link")
    if not path.exists():  # listed, then deleted under the load: list again (SNAPSHOT.RELIST)
        raise FileNotFoundError(f"{path.name} is gone")
    if not path.is_file():
        raise ReadFailure("NOT_REGULAR_FILE", f"{path.name} is not a regular file")


def _read_commit(snapshot: Any, version: int, path: Path) -> Any:
    """The model ``Commit`` of one commit file (its time: the file's modification time)."""

    _check_regular_file(path)
    actions = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:  # ACTION.LINE_FORMAT: one JSON object holding at most one known action
                decoded = json.loads(line)
                if not isinstance(decoded, dict):
                    raise ValueError(f"a line that is not a JSON object: {line[:80]!r}")
                _check_data_path(decoded)
                found = read_log_action(decoded, snapshot)
            except ValueError as error:
                raise ReadFailure("CORRUPT_LOG_FILE", f"{path.name}: {error}") from error
            if found is not None:
                actions.append(found)
    return Commit(version, tuple(actions), int(path.stat().st_mtime * 1000))


def _apply_commit_file(snapshot: Any, version: int, path: Path) -> Any:

    return apply_commit(snapshot, _read_commit(snapshot, version, path))
