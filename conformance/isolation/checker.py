"""The isolation checker: dependency graphs of committed Delta transactions, Elle-style.

A :class:`History` lists committed transactions (:class:`CommitRecord`) with what each read
and wrote. :func:`dependency_graph` derives the edges between them (write-write,
write-read, anti-dependencies on files and on read predicates) and :func:`check` reports
the promises of ISOLATION.LEVELS that the history breaks, each as an :class:`Anomaly`
carrying a minimal witness cycle and an English explanation. :func:`logged_commit` reads
one commit as a log records it (the caller reads the table), :func:`to_dot` draws a history
for Graphviz. The checker judges both the model and the impl, so it evaluates predicates with
its own :mod:`~deltaspec.conformance.isolation.predicates`.

A commit's *reads* are its read files plus the paths it removes: a remove implies the
file was read (CONFLICT.DELETE_DELETE treats them alike). Predicates are evaluated on
partition values only, with three-valued logic, as conflict detection does
(CONFLICT.APPEND_MATCH, PREDICATE.NULLS).
"""

from __future__ import annotations

import bisect
import itertools
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any

import networkx as nx

from . import predicates
from .predicates import Row

Json = dict[str, Any]
PredicateForm = Sequence[Any]
"""A partition predicate in the prefix form of spec/scenarios.md, e.g. ``["=", "p", 1]``."""

MAX_CYCLE_SEARCHES = 16
"""Candidate edges tried per strongly connected component when looking for a short cycle."""


class HistoryError(ValueError):
    """A history the checker cannot interpret (versions out of order, an unknown level)."""


class Level(Enum):
    """ISOLATION.LEVELS, strongest first."""

    SERIALIZABLE = "Serializable"
    WRITE_SERIALIZABLE = "WriteSerializable"
    SNAPSHOT_ISOLATION = "SnapshotIsolation"


def parse_level(name: str) -> Level:
    """A level name as written in ``commitInfo.isolationLevel``, case-insensitively."""
    for level in Level:
        if level.value.lower() == name.lower():
            return level
    raise HistoryError(f"unknown isolation level {name!r}")


def _empty() -> Mapping[str, FileWrite]:
    return MappingProxyType({})


@dataclass(frozen=True)
class FileWrite:
    """An add or remove of one path: its partition values (by logical column) and dataChange."""

    partition_values: Mapping[str, str | None]
    data_change: bool = True


@dataclass(frozen=True)
class CommitRecord:
    """One committed transaction: where it read, what it read, what it wrote."""

    version: int
    read_version: int
    level: Level
    blind_append: bool
    read_predicates: tuple[PredicateForm, ...] = ()
    read_files: frozenset[str] = frozenset()
    read_whole_table: bool = False
    adds: Mapping[str, FileWrite] = field(default_factory=_empty)
    removes: Mapping[str, FileWrite] = field(default_factory=_empty)
    operation: str = "WRITE"
    writer: str = ""


@dataclass(frozen=True)
class History:
    """Committed transactions in log order, with the partition schema (column -> Spark type)."""

    partition_types: Mapping[str, str]
    commits: tuple[CommitRecord, ...]


class EdgeKind(Enum):
    """Dependencies between committed transactions (Adya's ww, wr, rw; plus the log order)."""

    WW = "WW"
    WR = "WR"
    RW = "RW"
    RW_PREDICATE = "RW_PREDICATE"
    LOG_ORDER = "LOG_ORDER"


class AnomalyKind(Enum):
    """What :func:`check` reports."""

    SERIALIZATION_ORDER = "SERIALIZATION_ORDER"
    G2 = "G2"
    LOST_UPDATE = "LOST_UPDATE"
    G0 = "G0"
    G1C = "G1C"
    DUPLICATE_ADD = "DUPLICATE_ADD"


@dataclass(frozen=True)
class Edge:
    """``source`` must precede ``target`` in any equivalent serial order (versions)."""

    source: int
    target: int
    kind: EdgeKind
    evidence: str


@dataclass(frozen=True)
class Anomaly:
    """A broken promise: its kind, the edges that witness it, and what happened in English."""

    kind: AnomalyKind
    cycle: tuple[Edge, ...]
    explanation: str


ANTI_DEPENDENCIES = frozenset({EdgeKind.RW, EdgeKind.RW_PREDICATE})
FLOWS = frozenset({EdgeKind.WW, EdgeKind.WR})
_KIND_RANK = {kind: rank for rank, kind in enumerate(EdgeKind)}
_ANOMALY_RANK = {kind: rank for rank, kind in enumerate(AnomalyKind)}

PartitionKey = tuple[tuple[str, str | None], ...]


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _name(commit: CommitRecord) -> str:
    return f"{commit.writer} (v{commit.version})" if commit.writer else f"v{commit.version}"


def _edge_order(edge: Edge) -> tuple[int, int, int, str]:
    return (edge.source, edge.target, _KIND_RANK[edge.kind], edge.evidence)


# --- deriving the edges --------------------------------------------------------------------


@dataclass(frozen=True)
class _Reader:
    commit: CommitRecord
    reads: tuple[str, ...]  # read files and removed paths, sorted
    predicates: tuple[tuple[str, PredicateForm], ...]  # (compact JSON, checked form)


@dataclass
class _Index:
    """Who adds, removes and reads what, by path and by partition."""

    commits: dict[int, CommitRecord]
    readers: list[_Reader]
    adders: dict[str, list[int]]  # path -> versions adding it, ascending
    removers: dict[str, list[int]]  # path -> versions removing it, ascending
    # partition -> one (version, path) per commit with a dataChange add in it, ascending
    partitions: dict[PartitionKey, list[tuple[int, str]]]
    data_adders: list[tuple[int, str]]  # (version, first dataChange add) per commit
    removing: list[tuple[int, tuple[str, ...]]]  # commits with removes: their paths, sorted
    values: dict[str, str]  # path of a dataChange add -> its partition values (compact JSON)


def _partition_key(values: Mapping[str, str | None]) -> PartitionKey:
    return tuple(sorted(values.items()))


def _validate(history: History) -> None:
    previous: int | None = None
    for commit in history.commits:
        if previous is not None and commit.version <= previous:
            raise HistoryError(
                f"commits must be in strictly increasing version order: v{commit.version} "
                f"follows v{previous}"
            )
        previous = commit.version


def _index(history: History) -> _Index:
    _validate(history)
    index = _Index({}, [], defaultdict(list), defaultdict(list), {}, [], [], {})
    for commit in history.commits:
        index.commits[commit.version] = commit
        for form in commit.read_predicates:
            predicates.check_form(form)
        forms = tuple((_compact(list(p)), p) for p in commit.read_predicates)
        reads = tuple(sorted(set(commit.read_files) | set(commit.removes)))
        index.readers.append(_Reader(commit, reads, forms))
        seen: set[PartitionKey] = set()
        for path in sorted(commit.adds):
            write = commit.adds[path]
            index.adders[path].append(commit.version)
            if not write.data_change:
                continue
            key = _partition_key(write.partition_values)
            index.values[path] = _compact(dict(key))
            if not seen:
                index.data_adders.append((commit.version, path))
            if key not in seen:
                seen.add(key)
                index.partitions.setdefault(key, []).append((commit.version, path))
        for path in commit.removes:
            index.removers[path].append(commit.version)
        if commit.removes:
            index.removing.append((commit.version, tuple(sorted(commit.removes))))
    return index


class _Matcher:
    """Which partitions a read predicate selects: evaluated once per (predicate, partition)."""

    def __init__(self, types: Mapping[str, str], partitions: Iterable[PartitionKey]) -> None:
        self.types = types
        self.partitions = tuple(partitions)
        self.selected: dict[str, tuple[PartitionKey, ...]] = {}

    def row(self, key: PartitionKey) -> Row:
        return predicates.typed_row(dict(key), self.types)

    def select(self, text: str, form: PredicateForm) -> tuple[PartitionKey, ...]:
        if text not in self.selected:
            if predicates.selects_everything(form):
                chosen = self.partitions
            else:
                chosen = tuple(
                    key
                    for key in self.partitions
                    if predicates.evaluate(form, self.row(key), self.types) is True
                )
            self.selected[text] = chosen
        return self.selected[text]


WHOLE_TABLE = "whole table"


@dataclass
class _Selections:
    """The predicate edges of one reader: at most one WR and one RW_PREDICATE per writer."""

    reader: CommitRecord
    values: Mapping[str, str]
    out: list[Edge]
    seen: set[int] = field(default_factory=set)

    def add(self, text: str, entries: Iterable[tuple[int, str]]) -> None:
        """``text`` (a predicate, or the whole table) selects each entry's add."""
        me, rv = self.reader.version, self.reader.read_version
        for version, path in entries:
            if version == me or version in self.seen:
                continue
            self.seen.add(version)
            evidence = f"{text} selects {path} {self.values[path]}"
            if version <= rv:
                self.out.append(Edge(version, me, EdgeKind.WR, evidence))
            else:
                self.out.append(Edge(me, version, EdgeKind.RW_PREDICATE, evidence))


def _duplicate_adds(history: History) -> list[Edge]:
    """Data-changing adds of a path that is live at that point (added earlier, not removed
    since); re-adding a live file with ``dataChange = false`` (new statistics) is allowed."""
    live: dict[str, int] = {}
    found = []
    for commit in history.commits:
        for path in commit.removes:
            live.pop(path, None)
        for path in sorted(commit.adds):
            if path in live and commit.adds[path].data_change:
                found.append(Edge(live[path], commit.version, EdgeKind.WW, f"{path} added again"))
            live[path] = commit.version
    return found


def _file_edges(reader: _Reader, index: _Index, out: list[Edge]) -> None:
    """WR from the add each read path came from; RW to every later remove of it."""
    me, rv = reader.commit.version, reader.commit.read_version
    for path in reader.reads:
        adders = index.adders.get(path, [])
        visible = [v for v in adders[: bisect.bisect_right(adders, rv)] if v != me]
        if visible:
            out.append(Edge(visible[-1], me, EdgeKind.WR, path))
        removers = index.removers.get(path, [])
        out += (
            Edge(me, v, EdgeKind.RW, path)
            for v in removers[bisect.bisect_right(removers, rv) :]
            if v != me
        )
    if reader.commit.read_whole_table:
        for version, paths in index.removing:
            own = [p for p in paths if p not in reader.commit.removes]
            if version > rv and version != me and own:  # shared removes: per-path edges
                out.append(Edge(me, version, EdgeKind.RW, f"{WHOLE_TABLE}: {own[0]} removed"))


def _derive(history: History) -> tuple[_Index, list[Edge]]:
    """Every dependency edge, in a deterministic order (by reader, then by path)."""
    index = _index(history)
    out: list[Edge] = []
    matcher = _Matcher(history.partition_types, index.partitions)
    for reader in index.readers:
        _file_edges(reader, index, out)
        selections = _Selections(reader.commit, index.values, out)
        for text, predicate in reader.predicates:
            for key in matcher.select(text, predicate):
                selections.add(text, index.partitions[key])
        if reader.commit.read_whole_table:
            selections.add(WHOLE_TABLE, index.data_adders)
    for path, versions in sorted(index.removers.items()):
        for i, first in enumerate(versions):
            for later in versions[i + 1 :]:
                out.append(Edge(first, later, EdgeKind.WW, path))
                if later <= index.commits[first].read_version:  # malformed: read past it
                    out.append(Edge(later, first, EdgeKind.WW, path))
    out += _duplicate_adds(history)
    return index, out


def _describe(edge: Edge, commits: Mapping[int, CommitRecord]) -> str:
    """One edge in English."""
    s, t = commits[edge.source], commits[edge.target]
    source, target, evidence = _name(s), _name(t), edge.evidence
    match edge.kind:
        case EdgeKind.WR if " selects " in evidence:
            return f"{target} read v{t.read_version} where {evidence}, a file {source} added"
        case EdgeKind.WR:
            return f"{target} read {evidence}, which {source} added at v{s.version}"
        case EdgeKind.RW if evidence.startswith(f"{WHOLE_TABLE}: "):
            removed = evidence.removeprefix(f"{WHOLE_TABLE}: ").removesuffix(" removed")
            return (
                f"{source} read the whole table at v{s.read_version}; {target} removed "
                f"{removed} at v{t.version}, which {source} did not see"
            )
        case EdgeKind.RW:
            return (
                f"{source} read {evidence} at v{s.read_version}; {target} removed it at "
                f"v{t.version}, which {source} did not see"
            )
        case EdgeKind.RW_PREDICATE:
            return (
                f"{source} read v{s.read_version} where {evidence}, but {target} added that "
                f"file at v{t.version}, which {source} did not see"
            )
        case EdgeKind.WW if evidence.endswith(" added again"):
            path = evidence.removesuffix(" added again")
            return (
                f"{source} added {path}; {target} added it again at v{t.version} while it was live"
            )
        case EdgeKind.WW if edge.source < edge.target:
            return f"{source} removed {evidence}, then {target} removed it again"
        case EdgeKind.WW:
            return (
                f"{target} claims to have read v{t.read_version}, after {source} removed "
                f"{evidence}, yet removed it too"
            )
    return f"{source} committed at v{s.version}, before {target} at v{t.version}"


def dependency_graph(history: History) -> nx.MultiDiGraph[int]:
    """Nodes: versions, with the :class:`CommitRecord` as ``record``. Edges: keyed by their
    :class:`Edge`, with ``kind`` and ``evidence`` attributes. No LOG_ORDER edges."""
    _, edges = _derive(history)
    return _graph(history, edges)


def _graph(history: History, edges: Iterable[Edge]) -> nx.MultiDiGraph[int]:
    graph: nx.MultiDiGraph[int] = nx.MultiDiGraph()
    graph.add_nodes_from((c.version, {"record": c}) for c in history.commits)
    for e in edges:
        graph.add_edge(e.source, e.target, key=e, kind=e.kind, evidence=e.evidence)
    return graph


# --- checking the promises -----------------------------------------------------------------


def _allowed(edge: Edge, commits: Mapping[int, CommitRecord]) -> bool:
    """A backward anti-dependency that the source's level permits.

    WriteSerializable lets a blind append that committed during the transaction come after
    it (CONFLICT.APPEND_CANDIDATES); SnapshotIsolation does not check concurrent adds at
    all. Nothing permits missing a concurrent remove (CONFLICT.DELETE_READ applies at every
    level).
    """
    source, target = commits[edge.source], commits[edge.target]
    if edge.kind is not EdgeKind.RW_PREDICATE or edge.target > edge.source:
        return False
    if source.level is Level.SNAPSHOT_ISOLATION:
        return True
    return source.level is Level.WRITE_SERIALIZABLE and target.blind_append


def _log_order(earlier: CommitRecord, later: CommitRecord) -> tuple[Edge, str]:
    edge = Edge(
        earlier.version,
        later.version,
        EdgeKind.LOG_ORDER,
        f"v{earlier.version} committed before v{later.version}",
    )
    note = (
        f"{_name(later)} still committed after it, at v{later.version}, under {later.level.value}"
    )
    return edge, note


def _lost_updates(index: _Index) -> tuple[list[Anomaly], set[Edge]]:
    """Concurrent removes of one path; the RW edges that witness them."""
    pairs: dict[tuple[int, int], list[str]] = defaultdict(list)
    for path, versions in index.removers.items():
        for i, first in enumerate(versions):
            for later in versions[i + 1 :]:
                if index.commits[later].read_version < first:
                    pairs[(first, later)].append(path)
    anomalies, witnesses = [], set()
    for (first, later), paths in sorted(pairs.items()):
        paths.sort()
        witnesses |= {Edge(later, first, EdgeKind.RW, p) for p in paths}
        a, b = index.commits[first], index.commits[later]
        cycle = (
            Edge(first, later, EdgeKind.WW, paths[0]),
            Edge(later, first, EdgeKind.RW, paths[0]),
        )
        more = f" (and {len(paths) - 1} more paths)" if len(paths) > 1 else ""
        explanation = (
            f"lost update: {_name(a)} removed {paths[0]}{more} at v{first}; {_name(b)} read "
            f"v{b.read_version}, did not see that remove, and removed {paths[0]} again at "
            f"v{later}: one of the two rewrites is lost or its rows are duplicated"
        )
        anomalies.append(Anomaly(AnomalyKind.LOST_UPDATE, cycle, explanation))
    return anomalies, witnesses


def _serialization_order(
    backward: Iterable[Edge], commits: Mapping[int, CommitRecord], excluded: set[Edge]
) -> list[Anomaly]:
    """Backward anti-dependencies the source's level does not permit, one anomaly per pair."""
    groups: dict[tuple[int, int], list[Edge]] = defaultdict(list)
    for edge in backward:
        if (
            edge.kind in ANTI_DEPENDENCIES
            and not (excluded and edge in excluded)
            and not _allowed(edge, commits)
        ):
            groups[(edge.source, edge.target)].append(edge)
    anomalies = []
    for (source, target), group in sorted(groups.items()):
        group.sort(key=_edge_order)
        order, order_note = _log_order(commits[target], commits[source])
        more = f" ({len(group) - 1} more dependencies like it)" if len(group) > 1 else ""
        explanation = f"{_describe(group[0], commits)}{more}; {order_note}"
        anomalies.append(Anomaly(AnomalyKind.SERIALIZATION_ORDER, (group[0], order), explanation))
    return anomalies


def _shortest_cycle(
    graph: nx.DiGraph[int], pairs: Mapping[tuple[int, int], list[Edge]], start: Edge
) -> tuple[Edge, ...] | None:
    """The shortest cycle that begins with ``start``, through ``graph``'s edges."""
    try:
        path = nx.bidirectional_shortest_path(graph, start.target, start.source)
    except nx.NetworkXNoPath:
        return None
    hops = [min(pairs[(u, v)], key=_edge_order) for u, v in itertools.pairwise(path)]
    return (start, *hops)


def _cycles(
    edges: Iterable[Edge],
    starts: frozenset[EdgeKind],
    kind: AnomalyKind,
    commits: Mapping[int, CommitRecord],
    title: str,
) -> list[Anomaly]:
    """One short cycle per strongly connected component of ``edges`` that contains an
    edge of a kind in ``starts``; the cycle begins with such an edge, backward ones first."""
    pairs: dict[tuple[int, int], list[Edge]] = defaultdict(list)
    for edge in edges:
        pairs[(edge.source, edge.target)].append(edge)
    graph: nx.DiGraph[int] = nx.DiGraph()
    graph.add_edges_from(pairs)
    anomalies = []
    components = [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    for component in sorted(components, key=min):
        sub = graph.subgraph(component)
        candidates = sorted(
            (
                e
                for (u, v), group in pairs.items()
                if u in component and v in component
                for e in group
                if e.kind in starts
            ),
            key=lambda e: (e.target > e.source, *_edge_order(e)),
        )
        best: tuple[Edge, ...] | None = None
        for start in candidates[:MAX_CYCLE_SEARCHES]:
            cycle = _shortest_cycle(sub, pairs, start)
            if cycle is not None and (best is None or len(cycle) < len(best)):
                best = cycle
        if best is not None:
            steps = "; ".join(_describe(e, commits) for e in best)
            anomalies.append(Anomaly(kind, best, f"{title}: {steps}"))
    return anomalies


def check(history: History) -> tuple[Anomaly, ...]:
    """Every broken promise of the history, ordered by kind, then by the versions involved.

    - SERIALIZATION_ORDER: a commit depends backwards on one that committed while it ran
      (it missed that commit's remove, or an add its read predicates select) and its level
      does not permit it (:func:`_allowed`).
    - G2: a dependency cycle with an anti-dependency, after dropping permitted edges.
    - LOST_UPDATE: two concurrent commits removed the same path.
    - G0 / G1C: cycles of WW edges / of WW and WR edges (malformed histories only).
    - DUPLICATE_ADD: a path added while it was already live.

    Versions only grow along forward edges, so every cycle has a backward edge: the cycle
    searches run only when one is left.
    """
    index, edges = _derive(history)
    commits = index.commits
    lost, witnesses = _lost_updates(index)
    backward = [e for e in edges if e.target < e.source]
    anomalies = [*_serialization_order(backward, commits, witnesses), *lost]

    def kept(edge: Edge) -> bool:
        return not (witnesses and edge in witnesses) and not _allowed(edge, commits)

    if any(kept(e) for e in backward):
        anomalies += _cycles(
            filter(kept, edges), ANTI_DEPENDENCIES, AnomalyKind.G2, commits,
            "dependency cycle with an anti-dependency (G2)",
        )  # fmt: skip
    if any(e.kind is EdgeKind.WW for e in backward):
        anomalies += _cycles(
            (e for e in edges if e.kind is EdgeKind.WW), frozenset({EdgeKind.WW}),
            AnomalyKind.G0, commits, "write cycle (G0)",
        )  # fmt: skip
    if any(e.kind in FLOWS for e in backward):
        anomalies += _cycles(
            (e for e in edges if e.kind in FLOWS), frozenset({EdgeKind.WR}),
            AnomalyKind.G1C, commits, "circular information flow (G1c)",
        )  # fmt: skip
    anomalies += (
        Anomaly(AnomalyKind.DUPLICATE_ADD, (e,), f"duplicate add: {_describe(e, commits)}")
        for e in _duplicate_adds(history)
    )
    return tuple(
        sorted(
            anomalies,
            key=lambda a: (_ANOMALY_RANK[a.kind], [_edge_order(e) for e in a.cycle]),
        )
    )


# --- DOT -----------------------------------------------------------------------------------


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(history: History, anomaly: Anomaly | None = None) -> str:
    """Graphviz DOT for the dependency graph; the anomaly's cycle, if given, in red."""
    graph = dependency_graph(history)
    cycle = () if anomaly is None else anomaly.cycle
    marked = {v for e in cycle for v in (e.source, e.target)}
    lines = ["digraph history {", "  rankdir=LR;", '  node [shape=box, fontname="monospace"];']
    for commit in history.commits:
        parts = [f"v{commit.version}", commit.writer, commit.operation, f"({commit.level.value})"]
        label = " ".join(p for p in parts if p)
        style = ", color=red, penwidth=2" if commit.version in marked else ""
        lines.append(f"  {_quote(f'v{commit.version}')} [label={_quote(label)}{style}];")
    drawn: set[Edge] = set()
    for _, _, edge in graph.edges(keys=True):
        assert isinstance(edge, Edge)
        drawn.add(edge)
        lines.append(_dot_edge(edge, edge in cycle))
    lines += [_dot_edge(edge, True) for edge in cycle if edge not in drawn]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _dot_edge(edge: Edge, highlight: bool) -> str:
    label = _quote(f"{edge.kind.value} {edge.evidence}")
    style = ", color=red, fontcolor=red, penwidth=2" if highlight else ""
    if edge.kind is EdgeKind.LOG_ORDER:
        style += ", style=dashed"
    return f"  {_quote(f'v{edge.source}')} -> {_quote(f'v{edge.target}')} [label={label}{style}];"


# --- real tables ---------------------------------------------------------------------------


def logged_commit(
    version: int,
    info: Mapping[str, Any] | None,
    adds: Mapping[str, FileWrite],
    removes: Mapping[str, FileWrite],
) -> CommitRecord:
    """One commit as its log records it: its ``commitInfo`` (None when it has none) and the
    adds and removes by path, partition values by logical column.

    Reads are what the log records: the paths it removes; no read predicates. A commit without
    a readVersion read the version before it; without an isolationLevel it ran Serializable.
    Raises :class:`HistoryError` for an unknown ``isolationLevel``.
    """
    if info is None:
        return CommitRecord(
            version, version - 1, Level.SERIALIZABLE, False,
            adds=MappingProxyType(dict(adds)), removes=MappingProxyType(dict(removes)),
            operation="UNKNOWN",
        )  # fmt: skip
    read_version = info.get("readVersion")
    if isinstance(read_version, bool) or not isinstance(read_version, int):
        read_version = version - 1
    level = info.get("isolationLevel")
    return CommitRecord(
        version=version,
        read_version=read_version,
        level=parse_level(level) if isinstance(level, str) else Level.SERIALIZABLE,
        blind_append=info.get("isBlindAppend") is True,
        read_files=frozenset(removes),
        adds=MappingProxyType(dict(adds)),
        removes=MappingProxyType(dict(removes)),
        operation=str(info.get("operation", "UNKNOWN")),
    )
