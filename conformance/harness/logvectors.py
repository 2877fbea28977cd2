"""Log vectors (spec/log-vectors.md): a ``_delta_log`` written out from JSON, read by any
``TableReader``, judged against the snapshot or error kind the spec requires.

This module sees neither the model nor the impl: it writes files (checkpoint Parquet with
pyarrow) and compares JSON.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Protocol, cast

import jsonschema
import pyarrow as pa
import pyarrow.parquet as pq
from referencing import Registry, Resource

from deltaspec.rules import spec_root

from .bugs import Bug
from .reading import ReadFailure
from .scenarios import schema as scenario_schema
from .verdicts import CaseResult, Verdict

Json = dict[str, Any]
SKIP_KINDS = frozenset({"UNSUPPORTED_FEATURE", "UNSUPPORTED_PROTOCOL"})
FAMILIES = ("log", "action", "snapshot", "checkpoint", "retention", "real-bugs")


class LogReader(Protocol):
    """What a log vector needs of a reader: the snapshot JSON of ``root`` at ``version``
    (None: latest), or ``ReadFailure`` (harness/reading.py) with a kind."""

    name: str

    def read(self, root: Path, version: int | None) -> Json: ...


class TimestampReader(LogReader, Protocol):
    """A reader that also travels by timestamp (log-vectors.md, "Reading by timestamp")."""

    def read_at_timestamp(self, root: Path, timestamp: int) -> Json: ...


def _read(reader: LogReader, root: Path, read: LogRead) -> Json:
    """The read a vector asks for: by version, or by timestamp when the reader can (a reader
    without ``read_at_timestamp`` declines the read, which skips it)."""
    if read.timestamp is None:
        return reader.read(root, read.version)
    by_timestamp = getattr(reader, "read_at_timestamp", None)
    if by_timestamp is None:
        raise ReadFailure("UNSUPPORTED_FEATURE", f"{reader.name} cannot read by timestamp")
    found: Json = by_timestamp(root, read.timestamp)
    return found


class CleaningReader(LogReader, Protocol):
    """A reader whose engine runs its own log cleanup by retention (RETENTION.LOG) on a table on
    disk, as a writer that has just written the checkpoint ``_last_checkpoint`` names
    (log-vectors.md, "The engine's log cleanup"; capability ``log_cleanup_by_retention``)."""

    def clean_up_expired_logs(self, root: Path) -> None: ...


class InterleavingReader(LogReader, Protocol):
    """A reader that calls ``after_listing`` once, when its engine has listed ``_delta_log`` for
    the load and before it opens a listed file (log-vectors.md, "A load interleaved with
    another writer"; capability ``load_interleaving``)."""

    def read_interleaved(
        self, root: Path, version: int | None, after_listing: Callable[[], None]
    ) -> Json: ...


def declined(reader: LogReader, vector: LogVector) -> str | None:
    """Why ``reader`` cannot be given ``vector`` (its capabilities), or None."""
    if vector.clean_up_expired_logs and not hasattr(reader, "clean_up_expired_logs"):
        return f"{reader.name} cannot run its own log cleanup (no log_cleanup_by_retention)"
    if vector.after_listing is not None and not hasattr(reader, "read_interleaved"):
        return f"{reader.name} cannot be interleaved with a load (no load_interleaving)"
    return None


class LogVectorError(ValueError):
    pass


@dataclass(frozen=True)
class LogRead:
    """One read of a log vector (log-vectors.md, ``reads``): at ``version`` (None: the latest)
    or, when ``timestamp`` is given, at that time; it must give the snapshot ``expect`` (judged
    on the keys the reader reports) or fail with the error kind ``error``."""

    version: int | None
    timestamp: int | None = None
    expect: Json | None = None
    error: str | None = None

    @classmethod
    def of(cls, read: Json) -> LogRead:
        return cls(read.get("version"), read.get("timestamp"), read.get("expect"),
                   read.get("error"))  # fmt: skip

    @property
    def at(self) -> Json:
        """Where the read looks, for its report entries: its version or its timestamp."""
        if self.timestamp is None:
            return {"version": self.version}
        return {"timestamp": self.timestamp}


@dataclass(frozen=True)
class LogVector:
    """A log vector, parsed once (log-vectors.md, "Fields"); ``data`` is the vector as written
    (what ``verified_live`` digests)."""

    source: str
    data: Json
    id: str
    rules: tuple[str, ...]
    log: Json
    reads: tuple[LogRead, ...]
    file_times: Json | None = None
    clean_up_expired_logs: bool = False
    after_listing: Json | None = None
    bug: Bug | None = None

    @classmethod
    def of(cls, source: str, data: Json) -> LogVector:
        return cls(
            source,
            data,
            id=str(data["id"]),
            rules=tuple(data["rules"]),
            log=data["log"],
            reads=tuple(LogRead.of(read) for read in data["reads"]),
            file_times=data.get("file_times"),
            clean_up_expired_logs=bool(data.get("clean_up_expired_logs")),
            after_listing=data.get("after_listing"),
            bug=Bug.of(data.get("bug"), data["rules"]),
        )

    @property
    def profile(self) -> None:
        """A log vector is for the newest release (its schema has no ``profile``)."""
        return None


@cache
def schema() -> Json:
    text = (spec_root() / "log-vector.schema.json").read_text(encoding="utf-8")
    loaded: Json = json.loads(text)
    return loaded


@cache
def validator() -> jsonschema.Draft202012Validator:
    """The log-vector schema's validator; it takes ``bug`` from the scenario schema."""
    documents = (schema(), scenario_schema())
    registry: Registry[Any] = Registry().with_resources(
        (d["$id"], Resource.from_contents(d)) for d in documents
    )
    return jsonschema.Draft202012Validator(schema(), registry=registry)


def parse(text: str, source: str) -> LogVector:
    data = json.loads(text)
    errors = list(validator().iter_errors(data))
    if errors:
        where = "/".join(str(p) for p in errors[0].path) or "(root)"
        raise LogVectorError(f"{source}: schema violation at {where}: {errors[0].message}")
    return LogVector.of(source, data)


def _walk(root: Traversable | Path, prefix: str) -> Iterator[tuple[str, Traversable | Path]]:
    for entry in sorted(root.iterdir(), key=lambda e: e.name):
        if entry.is_dir():
            yield from _walk(entry, f"{prefix}{entry.name}/")
        elif entry.name.endswith(".json"):
            yield f"{prefix}{entry.name}", entry


def load_log_vectors(
    directories: Iterable[Path] = (), *, include_spec: bool = True
) -> list[LogVector]:
    roots: list[Traversable | Path] = [spec_root() / "vectors"] if include_spec else []
    roots += list(directories)
    vectors = [
        parse(entry.read_text(encoding="utf-8"), f"{root}/{name}")
        for root in roots
        for name, entry in _walk(root, "")
    ]
    ids = [v.id for v in vectors]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise LogVectorError(f"duplicate log vector ids: {duplicates}")
    return vectors


# --- writing the log ---------------------------------------------------------------------------

_STRINGS = pa.map_(pa.string(), pa.string())
_DV = pa.struct([("storageType", pa.string()), ("pathOrInlineDv", pa.string()),
                 ("offset", pa.int32()), ("sizeInBytes", pa.int32()),
                 ("cardinality", pa.int64())])  # fmt: skip
CHECKPOINT_SCHEMA = pa.schema([
    ("txn", pa.struct([("appId", pa.string()), ("version", pa.int64()),
                       ("lastUpdated", pa.int64())])),
    ("add", pa.struct([("path", pa.string()), ("partitionValues", _STRINGS), ("size", pa.int64()),
                       ("modificationTime", pa.int64()), ("dataChange", pa.bool_()),
                       ("stats", pa.string()), ("tags", _STRINGS), ("deletionVector", _DV)])),
    ("remove", pa.struct([("path", pa.string()), ("deletionTimestamp", pa.int64()),
                          ("dataChange", pa.bool_()), ("extendedFileMetadata", pa.bool_()),
                          ("partitionValues", _STRINGS), ("size", pa.int64()),
                          ("deletionVector", _DV)])),
    ("metaData", pa.struct([("id", pa.string()), ("name", pa.string()),
                            ("description", pa.string()),
                            ("format", pa.struct([("provider", pa.string()),
                                                  ("options", _STRINGS)])),
                            ("schemaString", pa.string()),
                            ("partitionColumns", pa.list_(pa.string())),
                            ("configuration", _STRINGS), ("createdTime", pa.int64())])),
    ("protocol", pa.struct([("minReaderVersion", pa.int32()), ("minWriterVersion", pa.int32()),
                            ("readerFeatures", pa.list_(pa.string())),
                            ("writerFeatures", pa.list_(pa.string()))])),
    ("domainMetadata", pa.struct([("domain", pa.string()), ("configuration", pa.string()),
                                  ("removed", pa.bool_())])),
])  # fmt: skip
"""The checkpoint Parquet schema of spec/log-vectors.md."""


def write_log(root: Path, log: Json, file_times: Json | None = None) -> None:
    """Materialise a vector's ``log`` under ``root/_delta_log``: a file value is written, a null
    deletes the name (``after_listing``); ``file_times`` (milliseconds) become the files'
    modification times."""
    directory = root / "_delta_log"
    directory.mkdir(parents=True, exist_ok=True)
    for name, content in log.items():
        path = directory / name
        if content is None:
            path.unlink(missing_ok=True)
        elif isinstance(content, dict) and "symlink" in content:
            # PATH.NO_SYMLINKS: the content lives outside the table, the log name links to it
            outside = root.parent / "outside" / name
            outside.parent.mkdir(parents=True, exist_ok=True)
            _write_file(outside, content["symlink"])
            path.symlink_to(Path("..", "..", "outside", name))
        elif isinstance(content, dict) and content.get("special") == "directory":
            path.mkdir()  # PATH.REGULAR_FILES: a name listed like a file that is none
        else:
            _write_file(path, content)
    for name, millis in (file_times or {}).items():
        os.utime(directory / name, ns=(millis * 1_000_000, millis * 1_000_000))


def _write_file(path: Path, content: Any) -> None:
    """One regular file of the log, from a vector's file value (log-vectors.md)."""
    if isinstance(content, list):
        lines = (json.dumps(a, separators=(",", ":")) + "\n" for a in content)
        path.write_text("".join(lines), encoding="utf-8")
    elif "text" in content:
        path.write_bytes(content["text"].encode("utf-8"))
    elif "json" in content:
        path.write_text(json.dumps(content["json"], separators=(",", ":")) + "\n")
    else:
        table = pa.Table.from_pylist(content["checkpoint"], schema=CHECKPOINT_SCHEMA)
        pq.write_table(table, path)


# --- judging -----------------------------------------------------------------------------------


KEPT_BY_CLEANUP = "VERSION_NOT_FOUND"
"""The error a read expects of a version the engine's log cleanup had to delete: a cleanup that
kept it is *wrong*, not *unsafe* (log-vectors.md: deleting less loses nothing)."""


def _judge_read(
    reader: LogReader, root: Path, read: LogRead, cleaned: bool = False
) -> tuple[Verdict, list[Json]]:
    at = read.at
    try:
        got = _read(reader, root, read)
    except ReadFailure as failure:
        if failure.kind in SKIP_KINDS:
            return Verdict.SKIPPED, [{**at, "skipped": str(failure)}]
        if read.error is not None:
            ok = failure.kind == read.error
            verdict = Verdict.PASS if ok else Verdict.WRONG_KIND
        else:
            verdict = Verdict.WRONG
        entry = {**at, "verdict": verdict.value,
                 "expected": read.expect if read.error is None else read.error,
                 "got": {"error": failure.kind}, "message": str(failure)[:500]}  # fmt: skip
        return verdict, [] if verdict is Verdict.PASS else [entry]
    if read.error is not None:
        kept = cleaned and read.error == KEPT_BY_CLEANUP
        verdict = Verdict.WRONG if kept else Verdict.UNSAFE
        entry = {**at, "verdict": verdict.value, "expected": {"error": read.error},
                 "got": _comparable(got, read.expect or got)}  # fmt: skip
        if kept:
            entry["message"] = "the log cleanup kept a version it had to delete"
        return verdict, [entry]
    failures = []
    worst = Verdict.PASS
    for key, want in (read.expect or {}).items():
        if key not in got:
            continue  # the reader does not report it
        have = got[key]
        if key in {"files", "tombstones"}:
            want, have = sorted(want), sorted(have)
        if want != have:
            verdict = Verdict.UNSAFE if key == "files" else Verdict.WRONG
            failures.append({**at, "key": key, "verdict": verdict.value,
                             "expected": want, "got": have})  # fmt: skip
            worst = max(worst, verdict, key=lambda v: v.severity)
    return worst, failures


def _comparable(got: Json, want: Json) -> Json:
    return {k: got[k] for k in want if k in got}


def _clean_up(reader: LogReader, root: Path) -> tuple[Verdict, list[Json]]:
    """The engine's own log cleanup (``clean_up_expired_logs``): a typed refusal is *wrong* (the
    spec's cleanup deletes nothing rather than fail), a skip kind declines the vector."""
    step = "clean_up_expired_logs"
    try:
        cast(CleaningReader, reader).clean_up_expired_logs(root)
    except ReadFailure as failure:
        if failure.kind in SKIP_KINDS:
            why = str(failure).removeprefix(f"{failure.kind}: ")
            return Verdict.SKIPPED, [{"step": step, "skipped": why}]
        entry = {"step": step, "verdict": "wrong", "expected": None,
                 "got": {"error": failure.kind}, "message": str(failure)[:500]}  # fmt: skip
        return Verdict.WRONG, [entry]
    return Verdict.PASS, []


class _AfterListing:
    """The ``after_listing`` change, applied once when the reader's engine has listed the log."""

    def __init__(self, root: Path, change: Json) -> None:
        self.root, self.change, self.applied = root, change, False

    def __call__(self) -> None:
        if not self.applied:
            self.applied = True
            write_log(self.root, self.change)


def _interleaved(reader: LogReader, hook: _AfterListing) -> LogReader:
    """``reader`` whose next version read is ``read_interleaved`` with ``hook``."""

    class Once:
        name = reader.name

        def read(self, root: Path, version: int | None) -> Json:
            interleaving = cast(InterleavingReader, reader)
            return interleaving.read_interleaved(root, version, hook)

    return Once()


def run_log_vector(reader: LogReader, vector: LogVector) -> CaseResult:
    why = declined(reader, vector)
    if why is not None:
        return CaseResult(vector.id, Verdict.SKIPPED, (why,), vector.rules)
    with tempfile.TemporaryDirectory(prefix="deltaspec-log-vector-") as scratch:
        root = Path(scratch) / "table"
        write_log(root, vector.log, vector.file_times)
        worst, failures, skipped = Verdict.PASS, list[Json](), list[Json]()
        if vector.clean_up_expired_logs:
            worst, failures = _clean_up(reader, root)
            if worst is Verdict.SKIPPED:
                return CaseResult(vector.id, worst, (failures[0]["skipped"],), vector.rules)
        hook = None if vector.after_listing is None else _AfterListing(root, vector.after_listing)
        for index, read in enumerate(vector.reads):
            by = _interleaved(reader, hook) if hook is not None and index == 0 else reader
            try:
                verdict, found = _judge_read(by, root, read, vector.clean_up_expired_logs)
            except Exception as error:  # a reader crash fails the vector
                verdict = Verdict.ERROR
                found = [{**read.at, "verdict": "error",
                          "got": f"{type(error).__name__}: {error}"[:500]}]  # fmt: skip
            if (
                index == 0
                and hook is not None
                and not hook.applied
                and verdict is not Verdict.SKIPPED
            ):
                # the reader read the log as it was before the change: the vector proves nothing
                verdict = Verdict.ERROR
                found = [{**read.at, "verdict": "error",
                          "got": f"{reader.name} never called after_listing"}]  # fmt: skip
            if verdict is Verdict.SKIPPED:
                skipped += found
                continue
            failures += found
            worst = max(worst, verdict, key=lambda v: v.severity)
    if skipped and worst is Verdict.PASS and len(skipped) == len(vector.reads):
        return CaseResult(vector.id, Verdict.SKIPPED, (skipped[0]["skipped"],), vector.rules)
    details = tuple(json.dumps(f, sort_keys=True)[:400] for f in failures)
    return CaseResult(vector.id, worst, details, vector.rules, failures=tuple(failures))


def run_log_vectors(
    reader: LogReader,
    vectors: Sequence[LogVector],
    *,
    progress: Callable[[str], None] | None = None,
) -> list[CaseResult]:
    results = []
    for vector in vectors:
        if progress is not None:
            progress(vector.id)
        results.append(run_log_vector(reader, vector))
    return results
