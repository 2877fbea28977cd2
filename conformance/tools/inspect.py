"""``deltaspec inspect``: validate a real Delta table on disk and the history its log tells.

Everything is read through the production implementation (``deltaspec.impl``: ``DeltaLog``,
its listing and its typed errors). The checks, each problem a :class:`Finding` citing the
rule it concerns:

- **log**: what the listing shows (LOG.LISTING); contiguous commit versions (LOG.CONTIGUITY;
  a gap that a later checkpoint covers only costs time travel); every commit parses
  (ACTION.LINE_FORMAT); ``_last_checkpoint`` names a complete checkpoint
  (CHECKPOINT.LAST_CHECKPOINT);
- **snapshot**: the latest snapshot loads, with a protocol this reader supports
  (SNAPSHOT.REPLAY, CHECKPOINT.READ, SNAPSHOT.PROTOCOL_METADATA), from the newest
  checkpoint;
- **checkpoints**: each checkpoint whose version the commits reach from version 0 holds what
  replaying those commits gives: live files, protocol, metadata, app ids, domains
  (CHECKPOINT.CONTENTS);
- **paths**: every path a commit or the snapshot adds is relative, decodes, has no ``..``
  segment and is outside ``_delta_log`` (ACTION.ADD);
- **history**: each commitInfo is consistent (a read version before the commit, a known
  isolation level, ``isBlindAppend`` only on commits that only add: ACTION.COMMIT_INFO,
  ISOLATION.RECORDED, TXN.BLIND_APPEND), and the history the commitInfos describe
  (:func:`history_from_log`) keeps its isolation promises (ISOLATION.LEVELS).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ...impl import codec, errors
from ...impl.actions import Action, AddFile, CommitInfo, RemoveFile
from ...impl.log.listing import LogListing
from ...impl.log.local_store import LocalLogStore
from ...impl.log.names import LAST_CHECKPOINT, is_checkpoint_name
from ...impl.log.store import FileInfo
from ...impl.predicates import PartitionSchema
from ...impl.snapshot.delta_log import DeltaLog
from ...impl.snapshot.state import Snapshot
from ..harness.snapshots import protocol_json
from ..isolation import checker as isolation

Json = dict[str, Any]
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
LOAD_RULES: dict[type[errors.DeltaError], str] = {
    errors.MissingVersionsError: "LOG.CONTIGUITY",
    errors.UnsupportedProtocolError: "SNAPSHOT.PROTOCOL_METADATA",
    errors.MissingProtocolOrMetadataError: "SNAPSHOT.PROTOCOL_METADATA",
    errors.CorruptLogError: "ACTION.LINE_FORMAT",
    errors.TableNotFoundError: "LOG.LISTING",
}
"""The rule a failed snapshot load breaks, by the impl's error type (nearest base first)."""


class Severity(Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True)
class Finding:
    check: str
    severity: Severity
    rule: str
    message: str
    kind: str | None = None
    """The impl's error kind (``errors.DeltaError.kind``) when reading raised one."""

    def json(self) -> Json:
        return {
            "check": self.check,
            "severity": self.severity.value,
            "rule": self.rule,
            "message": self.message,
            "kind": self.kind,
        }


@dataclass
class Inspection:
    """What ``inspect`` found; ``lines`` is the readable summary, ``json`` the full report."""

    path: str
    commits: tuple[int, ...] = ()
    checkpoints: tuple[int, ...] = ()
    snapshot: Snapshot | None = None
    checked_checkpoints: tuple[int, ...] = ()
    paths: int = 0
    history: isolation.History | None = None
    anomalies: tuple[isolation.Anomaly, ...] = ()
    operations: Counter[str] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    assumptions: list[str] = field(default_factory=list)
    """What the history check assumed because the log does not say it (a missing readVersion,
    isolationLevel or commitInfo): delta-rs, for one, records none of the first two."""

    def error(self, check: str, rule: str, message: str, kind: str | None = None) -> None:
        self.findings.append(Finding(check, Severity.ERROR, rule, message, kind))

    def warning(self, check: str, rule: str, message: str, kind: str | None = None) -> None:
        self.findings.append(Finding(check, Severity.WARNING, rule, message, kind))

    def note(self, check: str, rule: str, message: str) -> None:
        self.findings.append(Finding(check, Severity.NOTE, rule, message))

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def ok(self) -> bool:
        return not self.errors

    def kinds(self) -> set[str]:
        return {f.kind for f in self.findings if f.kind is not None}

    def json(self) -> Json:
        snap = self.snapshot
        return {
            "path": self.path,
            "ok": self.ok,
            "commits": list(self.commits),
            "checkpoints": list(self.checkpoints),
            "version": None if snap is None else snap.version,
            "checkpoint_version": None if snap is None else snap.checkpoint_version,
            "live_files": None if snap is None else snap.num_files,
            "protocol": None if snap is None else protocol_json(snap.protocol),
            "checkpoints_equal_replay": list(self.checked_checkpoints),
            "paths_checked": self.paths,
            "operations": dict(sorted(self.operations.items())),
            "history_commits": None if self.history is None else len(self.history.commits),
            "anomalies": [
                {"kind": a.kind.value, "explanation": a.explanation} for a in self.anomalies
            ],
            "assumptions": list(self.assumptions),
            "findings": [f.json() for f in self.findings],
        }

    def lines(self) -> list[str]:
        out = [f"table        {self.path}"]
        if self.commits:
            first, last = self.commits[0], self.commits[-1]
            checkpoints = ", ".join(map(str, self.checkpoints)) or "none"
            out.append(
                f"log          commits {first}..{last} ({len(self.commits)} files), "
                f"checkpoints: {checkpoints}"
            )
        snap = self.snapshot
        if snap is not None:
            start = _start(snap.checkpoint_version)
            out.append(
                f"snapshot     version {snap.version} from {start}, {snap.num_files} live files"
            )
            protocol = protocol_json(snap.protocol)
            readers = ", ".join(protocol.get("readerFeatures", [])) or "none"
            writers = ", ".join(protocol.get("writerFeatures", [])) or "none"
            out.append(
                f"protocol     reader {protocol['minReaderVersion']} (features: {readers}), "
                f"writer {protocol['minWriterVersion']} (features: {writers}); "
                "readable by deltaspec.impl"
            )
        if self.checked_checkpoints:
            checked = ", ".join(map(str, self.checked_checkpoints))
            out.append(f"checkpoints  {checked}: equal to replaying the commits from version 0")
        if self.paths:
            out.append(f"paths        {self.paths} added paths checked")
        if self.commits:
            ops = ", ".join(f"{op} {n}" for op, n in self.operations.most_common())
            out.append(f"operations   {ops or 'none recorded (no commitInfo)'}")
        if self.history is not None:
            verdict = f"{len(self.anomalies)} anomalies" if self.anomalies else "no anomaly"
            out.append(
                f"history      {len(self.history.commits)} contiguous commits up to the "
                f"latest; isolation checker: {verdict}"
            )
        out += [f"assumed      {assumption}" for assumption in self.assumptions]
        for finding in self.findings:
            kind = f" [{finding.kind}]" if finding.kind else ""
            out.append(f"{finding.severity.value:<12} {finding.rule}{kind}: {finding.message}")
        warnings = sum(f.severity is Severity.WARNING for f in self.findings)
        verdict = "OK" if self.ok else "PROBLEMS"
        out.append(f"verdict      {verdict} ({len(self.errors)} errors, {warnings} warnings)")
        return out


def _start(checkpoint: int | None) -> str:
    return "version 0" if checkpoint is None else f"checkpoint {checkpoint}"


class _CommitsOnlyStore(LocalLogStore):
    """The table's log with its checkpoints and ``_last_checkpoint`` hidden: snapshots replay
    the commits from version 0."""

    def list_from(self, start: str = "") -> list[FileInfo]:
        return [f for f in super().list_from(start) if not is_checkpoint_name(f.name)]

    def read(self, name: str) -> bytes:
        if name == LAST_CHECKPOINT:
            raise FileNotFoundError(name)
        return super().read(name)


def path_problem(path: str) -> str | None:
    """Why an ``add`` path is not safe to join to the table root, or None (ACTION.ADD)."""
    if path.startswith("/") or _SCHEME.match(path):
        return "is absolute"
    try:
        decoded = codec.decode_path(path)
    except ValueError as error:
        return f"does not decode: {error}"
    parts = decoded.split("/")
    if ".." in parts:
        return "has a '..' segment"
    if parts[0] == "_delta_log":
        return "points into _delta_log"
    return None


def _load_rule(error: errors.DeltaError) -> str:
    return next((r for t, r in LOAD_RULES.items() if isinstance(error, t)), "SNAPSHOT.REPLAY")


def _check_log(report: Inspection, log: DeltaLog, listing: LogListing) -> dict[int, list[Action]]:
    commits = report.commits
    newest_checkpoint = max(listing.checkpoints, default=-1)
    for before, after in itertools.pairwise(commits):
        if after == before + 1:
            continue
        missing = (
            f"commits {before + 1}..{after - 1} are"
            if after > before + 2
            else f"commit {before + 1} is"
        )
        if newest_checkpoint >= after - 1:
            report.warning(
                "log",
                "LOG.CONTIGUITY",
                f"{missing} missing; checkpoint {newest_checkpoint} covers the gap, but "
                "the versions before it cannot be read back",
            )
        else:
            report.error(
                "log",
                "LOG.CONTIGUITY",
                f"{missing} missing and no checkpoint covers the gap",
            )
    if commits and commits[0] > 0:
        report.note(
            "log",
            "RETENTION.LOG",
            f"the log starts at version {commits[0]}: older commits were cleaned up",
        )
    decoded: dict[int, list[Action]] = {}
    for version in commits:
        try:
            decoded[version] = log.read_commit(version)
        except errors.DeltaError as error:
            report.error("log", "ACTION.LINE_FORMAT", str(error), kind=error.kind)
    if log.store.exists(LAST_CHECKPOINT):
        hint = log.read_last_checkpoint()
        if hint is None:
            report.warning(
                "log",
                "CHECKPOINT.LAST_CHECKPOINT",
                "_last_checkpoint cannot be read; readers ignore it and list the log",
            )
        elif hint["version"] not in listing.checkpoints:
            report.warning(
                "log",
                "CHECKPOINT.LAST_CHECKPOINT",
                f"_last_checkpoint names version {hint['version']}, which has no complete "
                "checkpoint; readers fall back to listing",
            )
    return decoded


def _same_state(a: Snapshot, b: Snapshot) -> list[str]:
    """What differs between two snapshots of one version (CHECKPOINT.CONTENTS)."""
    differences = []
    if set(a.files) != set(b.files):
        only_a, only_b = sorted(set(a.files) - set(b.files)), sorted(set(b.files) - set(a.files))
        differences.append(
            f"live files (only in the checkpoint: {only_a[:3]}; only in the replay: {only_b[:3]})"
        )
    if a.metadata != b.metadata:
        names = [
            f.name
            for f in fields(a.metadata)
            if getattr(a.metadata, f.name) != getattr(b.metadata, f.name)
        ]
        differences.append(f"metadata ({', '.join(names)})")
    for what, x, y in (
        ("protocol", a.protocol, b.protocol),
        (
            "app ids",
            {k: t.version for k, t in a.all_app_transactions.items()},
            {k: t.version for k, t in b.all_app_transactions.items()},
        ),
        ("domains", a.domains, b.domains),
    ):
        if x != y:
            differences.append(what)
    return differences


def _check_checkpoints(report: Inspection, log: DeltaLog, listing: LogListing) -> None:
    replayer = DeltaLog(log.table_path, store=_CommitsOnlyStore(log.table_path), clock=log.clock)
    checked = []
    for version in sorted(listing.checkpoints):
        if any(v not in listing.commits for v in range(version + 1)):
            report.note(
                "checkpoints",
                "CHECKPOINT.CONTENTS",
                f"checkpoint {version}: commits 0..{version} are not all there, so it "
                "cannot be compared with a replay",
            )
            continue
        try:
            from_checkpoint = log.snapshot(version)
            replayed = replayer.snapshot(version)
        except errors.DeltaError as error:
            report.warning(
                "checkpoints",
                "CHECKPOINT.READ",
                f"checkpoint {version}: {error}",
                kind=error.kind,
            )
            continue
        if from_checkpoint.checkpoint_version != version:
            report.warning(
                "checkpoints",
                "CHECKPOINT.READ",
                f"checkpoint {version} is unusable: readers start from "
                f"{_start(from_checkpoint.checkpoint_version)} instead",
            )
            continue
        differences = _same_state(from_checkpoint, replayed)
        if differences:
            report.error(
                "checkpoints",
                "CHECKPOINT.CONTENTS",
                f"checkpoint {version} differs from replaying commits 0..{version}: "
                + "; ".join(differences),
            )
        else:
            checked.append(version)
    report.checked_checkpoints = tuple(checked)


def _added_paths(decoded: dict[int, list[Action]], snapshot: Snapshot | None) -> Iterator[str]:
    for actions in decoded.values():
        yield from (a.path for a in actions if isinstance(a, AddFile))
    if snapshot is not None:
        yield from (path for path, _ in snapshot.files)


def _check_paths(report: Inspection, decoded: dict[int, list[Action]]) -> None:
    paths = set(_added_paths(decoded, report.snapshot))
    report.paths = len(paths)
    for path in sorted(paths):
        problem = path_problem(path)
        if problem is not None:
            report.error("paths", "ACTION.ADD", f"add path {path!r} {problem}")


def _note_assumptions(report: Inspection, decoded: dict[int, list[Action]]) -> None:
    """Say what :func:`history_from_log` assumes for commits whose commitInfo is silent."""
    infos = {
        v: next((a for a in actions if isinstance(a, CommitInfo)), None)
        for v, actions in decoded.items()
        if v > 0  # the creating commit reads nothing
    }
    if not infos:
        return
    total = len(infos)
    bare = sorted(v for v, info in infos.items() if info is None)
    unread = sorted(
        v for v, i in infos.items() if i is not None and _int(i.get("readVersion")) is None
    )
    unleveled = sorted(
        v
        for v, i in infos.items()
        if i is not None and not isinstance(i.get("isolationLevel"), str)
    )
    if bare:
        report.assumptions.append(
            f"{len(bare)} of {total} commits after version 0 have no commitInfo ({_span(bare)}): "
            "each assumed to read the version before it at Serializable, not a blind append "
            "(ACTION.COMMIT_INFO)"
        )
    if unread:
        report.assumptions.append(
            f"{len(unread)} of {total} commits after version 0 record no readVersion "
            f"({_span(unread)}; delta-rs writes none): each assumed to read the version right "
            "before it, so the isolation check cannot see concurrency among them"
        )
    if unleveled:
        report.assumptions.append(
            f"{len(unleveled)} of {total} commits after version 0 record no isolationLevel "
            f"({_span(unleveled)}): each assumed Serializable (ISOLATION.RECORDED, "
            "ISOLATION.TABLE_DEFAULT)"
        )


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _span(versions: list[int]) -> str:
    shown = ", ".join(map(str, versions[:5]))
    return f"versions {shown}" + (f" … {versions[-1]}" if len(versions) > 5 else "")


def _check_commit_infos(report: Inspection, decoded: dict[int, list[Action]]) -> None:
    _note_assumptions(report, decoded)
    for version, actions in sorted(decoded.items()):
        info = next((a for a in actions if isinstance(a, CommitInfo)), None)
        if info is None:
            continue
        report.operations[str(info.get("operation", "UNKNOWN"))] += 1
        read = info.get("readVersion")
        if isinstance(read, int) and not isinstance(read, bool) and read >= version:
            report.error(
                "history",
                "ACTION.COMMIT_INFO",
                f"version {version} claims to have read version {read}",
            )
        level = info.get("isolationLevel")
        if isinstance(level, str):
            try:
                isolation.parse_level(level)
            except isolation.HistoryError as error:
                report.warning("history", "ISOLATION.RECORDED", f"version {version}: {error}")
        removes = any(isinstance(a, RemoveFile) and a.data_change for a in actions)
        if info.get("isBlindAppend") is True and removes:
            report.error(
                "history",
                "TXN.BLIND_APPEND",
                f"version {version} says isBlindAppend but removes files",
            )


def _logged_commit(
    version: int, actions: Sequence[Action], keys: Mapping[str, str]
) -> isolation.CommitRecord:
    def write(
        partition_values: Mapping[str, str | None] | None, data_change: bool
    ) -> isolation.FileWrite:
        values = {name: (partition_values or {}).get(key) for name, key in keys.items()}
        return isolation.FileWrite(values, data_change)

    info = next((a for a in actions if isinstance(a, CommitInfo)), None)
    adds = {a.path: write(a.partition_values, a.data_change) for a in actions
            if isinstance(a, AddFile)}  # fmt: skip
    removes = {r.path: write(r.partition_values, r.data_change) for r in actions
               if isinstance(r, RemoveFile)}  # fmt: skip
    return isolation.logged_commit(version, None if info is None else info.fields, adds, removes)


def history_from_log(table_path: str) -> isolation.History:
    """The committed history of a real table: its contiguous run of commit files that ends
    at the latest version (commits before a gap, or cleaned up, are not part of it), each
    commit as :func:`isolation.logged_commit` reads it.

    Raises the impl's DeltaError subclasses when the table cannot be read, and
    :class:`isolation.HistoryError` for an unknown ``isolationLevel``.
    """
    log = DeltaLog(table_path)
    snapshot = log.snapshot()
    schema = PartitionSchema.of(snapshot.metadata)
    keys = {name: key for name, _, key in schema.columns}
    available = set(log.list_commit_versions(-1))
    versions: list[int] = []
    version = snapshot.version
    while version in available:
        versions.append(version)
        version -= 1
    records = tuple(_logged_commit(v, log.read_commit(v), keys) for v in reversed(versions))
    types = {name: type_name for name, type_name, _ in schema.columns}
    return isolation.History(MappingProxyType(types), records)


def _check_history(report: Inspection) -> None:
    try:
        history = history_from_log(report.path)
    except (errors.DeltaError, isolation.HistoryError) as error:
        report.warning("history", "ISOLATION.LEVELS", f"no history to check: {error}")
        return
    report.history = history
    report.anomalies = isolation.check(history)
    for anomaly in report.anomalies:
        report.error(
            "history",
            "ISOLATION.LEVELS",
            f"{anomaly.kind.value}: {anomaly.explanation}",
        )


def inspect(path: str | Path) -> Inspection:
    """Every check above on the table at ``path``; never raises for what is in the table."""
    report = Inspection(str(path))
    log = DeltaLog(str(path))
    if not Path(log.store.table_path, "_delta_log").is_dir():
        report.error(
            "log",
            "LOG.LISTING",
            "no _delta_log directory: not a table",
            kind=errors.TableNotFoundError.kind,
        )
        return report
    listing = log.list_log()
    report.commits = tuple(sorted(listing.commits))
    report.checkpoints = tuple(sorted(listing.checkpoints))
    decoded = _check_log(report, log, listing)
    try:
        report.snapshot = log.snapshot()
    except errors.DeltaError as error:
        report.error(
            "snapshot",
            _load_rule(error),
            f"the latest snapshot cannot be loaded: {error}",
            kind=error.kind,
        )
    snapshot = report.snapshot
    newest = max(
        (v for v in listing.checkpoints if snapshot and v <= snapshot.version), default=None
    )
    if snapshot is not None and newest is not None and snapshot.checkpoint_version != newest:
        report.warning(
            "snapshot",
            "CHECKPOINT.READ",
            f"checkpoint {newest} is unusable; the snapshot starts from "
            + _start(snapshot.checkpoint_version),
        )
    _check_checkpoints(report, log, listing)
    _check_paths(report, decoded)
    _check_commit_infos(report, decoded)
    if snapshot is not None:
        _check_history(report)
    return report


def dot(report: Inspection) -> str:
    """The history's dependency graph in Graphviz DOT, the first anomaly's cycle in red."""
    if report.history is None:
        return "digraph history {\n}\n"
    return isolation.to_dot(report.history, report.anomalies[0] if report.anomalies else None)
