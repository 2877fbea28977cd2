"""The isolation checker (deltaspec.conformance.isolation.checker) on hand-made histories, on the
delta-spark fixture tables, and on a real table with a lost update forced into its log."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import networkx as nx
import pytest

from deltaspec.conformance.isolation.checker import (
    Anomaly,
    AnomalyKind,
    CommitRecord,
    Edge,
    EdgeKind,
    FileWrite,
    History,
    HistoryError,
    Level,
    check,
    dependency_graph,
    parse_level,
    to_dot,
)
from deltaspec.conformance.tools.inspect import history_from_log
from deltaspec.impl import codec
from deltaspec.impl.actions import AddFile, Metadata, RemoveFile
from deltaspec.impl.errors import DeltaError
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.predicates import parse
from deltaspec.impl.snapshot.delta_log import DeltaLog
from deltaspec.impl.txn.transaction import Operation, OptimisticTransaction

S, WS, SI = Level.SERIALIZABLE, Level.WRITE_SERIALIZABLE, Level.SNAPSHOT_ISOLATION
TYPES = {"p": "integer"}


def files(*paths: str, data_change: bool = True) -> dict[str, FileWrite]:
    """Writes of ``p=<n>/<name>`` paths, partition value taken from the directory."""
    return {path: FileWrite({"p": path.split("/")[0][2:]}, data_change) for path in paths}


def commit(version: int, read_version: int, level: Level = S, **kw) -> CommitRecord:
    kw.setdefault("blind_append", False)
    kw.setdefault("writer", f"T{version}")
    return CommitRecord(version=version, read_version=read_version, level=level, **kw)


def history(*commits: CommitRecord) -> History:
    return History(TYPES, commits)


def seed(*paths: str) -> CommitRecord:
    return commit(0, -1, adds=files(*paths), writer="init", operation="CREATE TABLE")


def edge(source: int, target: int, kind: EdgeKind, evidence: str) -> Edge:
    return Edge(source, target, kind, evidence)


def selects(predicate: list, path: str) -> str:
    """The evidence of a predicate edge: the predicate (compact JSON) and the add it selects."""
    value = path.split("/")[0][2:]
    return f'{json.dumps(predicate, separators=(",", ":"))} selects {path} {{"p":"{value}"}}'


def log_order(earlier: int, later: int) -> Edge:
    return edge(earlier, later, EdgeKind.LOG_ORDER, f"v{earlier} committed before v{later}")


def found(h: History) -> tuple[Anomaly, ...]:
    """``check(h)``, after checking that every witness edge but the log order is in the graph."""
    anomalies = check(h)
    graph = dependency_graph(h)
    for anomaly in anomalies:
        for e in anomaly.cycle:
            assert e.kind is EdgeKind.LOG_ORDER or graph.has_edge(e.source, e.target, key=e), e
    return anomalies


# --- the level promises ------------------------------------------------------------------------


def write_skew(level: Level) -> History:
    """T1 (read v0) reads p=1 and writes p=2; T2 (read v0) blind-appends to p=1 at v1; T1 at v2."""
    return history(
        seed("p=1/a.parquet", "p=2/b.parquet"),
        commit(1, 0, WS, blind_append=True, adds=files("p=1/c.parquet"), writer="T2"),
        commit(
            2, 0, level, read_predicates=(["=", "p", 1],), adds=files("p=2/d.parquet"), writer="T1"
        ),
    )


@pytest.mark.rules("ISOLATION.LEVELS")
def test_write_serializable_allows_the_blind_append_write_skew_serializable_does_not():
    assert found(write_skew(WS)) == ()
    (anomaly,) = found(write_skew(S))
    assert anomaly.kind is AnomalyKind.SERIALIZATION_ORDER
    assert anomaly.cycle == (
        edge(2, 1, EdgeKind.RW_PREDICATE, selects(["=", "p", 1], "p=1/c.parquet")),
        log_order(1, 2),
    )
    assert "T1 (v2)" in anomaly.explanation and "T2 (v1)" in anomaly.explanation
    assert "Serializable" in anomaly.explanation


@pytest.mark.rules("ISOLATION.LEVELS")
@pytest.mark.parametrize("level", [S, WS, SI])
def test_serialization_order_a_concurrent_remove_of_a_file_read_fails_every_level(level):
    """T1 (read v0) read p=1/a.parquet; T2 removed it at v1; T1 still committed at v2."""
    h = history(
        seed("p=1/a.parquet"),
        commit(1, 0, removes=files("p=1/a.parquet"), adds=files("p=1/a2.parquet")),
        commit(2, 0, level, read_files=frozenset({"p=1/a.parquet"}), adds=files("p=2/x.parquet")),
    )
    (anomaly,) = found(h)
    assert anomaly.kind is AnomalyKind.SERIALIZATION_ORDER
    assert anomaly.cycle == (edge(2, 1, EdgeKind.RW, "p=1/a.parquet"), log_order(1, 2))
    assert "removed it at v1" in anomaly.explanation


@pytest.mark.rules("ISOLATION.LEVELS")
@pytest.mark.parametrize("level", [S, WS, SI])
def test_a_whole_table_read_misses_concurrent_removes_at_every_level_appends_by_level(level):
    def reader(*winner: CommitRecord) -> History:
        whole = commit(2, 0, level, read_whole_table=True, adds=files("p=1/x.parquet"))
        return history(seed("p=1/a.parquet", "p=2/b.parquet"), *winner, whole)

    delete = commit(1, 0, removes=files("p=2/b.parquet"))
    (anomaly,) = found(reader(delete))
    assert anomaly.cycle == (
        edge(2, 1, EdgeKind.RW, "whole table: p=2/b.parquet removed"),
        log_order(1, 2),
    )
    append = commit(1, 0, blind_append=True, adds=files("p=1/c.parquet"))
    anomalies = found(reader(append))
    if level is S:
        (anomaly,) = anomalies
        evidence = 'whole table selects p=1/c.parquet {"p":"1"}'
        assert anomaly.cycle == (edge(2, 1, EdgeKind.RW_PREDICATE, evidence), log_order(1, 2))
    else:
        assert anomalies == ()
    # a remove the reader shares with the winner is a lost update, reported once
    both = history(
        seed("p=2/b.parquet"),
        delete,
        commit(2, 0, level, read_whole_table=True, removes=files("p=2/b.parquet")),
    )
    assert [a.kind for a in found(both)] == [AnomalyKind.LOST_UPDATE]


@pytest.mark.rules("ISOLATION.LEVELS")
def test_g2_write_skew_between_two_non_blind_write_serializable_commits():
    """T1 reads p=1 and writes p=2, T2 reads p=2 and writes p=1, both from v0."""
    h = history(
        seed("p=1/a.parquet", "p=2/b.parquet"),
        commit(1, 0, WS, read_predicates=(["=", "p", 2],), adds=files("p=1/y.parquet")),
        commit(2, 0, WS, read_predicates=(["=", "p", 1],), adds=files("p=2/x.parquet")),
    )
    order, g2 = found(h)
    assert order.kind is AnomalyKind.SERIALIZATION_ORDER
    assert order.cycle == (
        edge(2, 1, EdgeKind.RW_PREDICATE, selects(["=", "p", 1], "p=1/y.parquet")),
        log_order(1, 2),
    )
    assert g2.kind is AnomalyKind.G2
    assert g2.cycle == (
        edge(2, 1, EdgeKind.RW_PREDICATE, selects(["=", "p", 1], "p=1/y.parquet")),
        edge(1, 2, EdgeKind.RW_PREDICATE, selects(["=", "p", 2], "p=2/x.parquet")),
    )
    assert g2.explanation.startswith("dependency cycle")


def three_commits(level: Level) -> History:
    """T2 blind-appends to p=1 at v1; T3 (read v1) reads p=1 and p=2/f, adds in p=3 at v2;
    T1 (read v0) reads p=1 and p=2/f, rewrites f into g at v3."""
    return history(
        seed("p=1/a.parquet", "p=2/f.parquet"),
        commit(1, 0, WS, blind_append=True, adds=files("p=1/n.parquet"), writer="T2"),
        commit(
            2, 1, WS,
            read_predicates=(["=", "p", 1],), read_files=frozenset({"p=2/f.parquet"}),
            adds=files("p=3/c.parquet"), writer="T3",
        ),
        commit(
            3, 0, level,
            read_predicates=(["=", "p", 1],), read_files=frozenset({"p=2/f.parquet"}),
            removes=files("p=2/f.parquet"), adds=files("p=2/g.parquet"), writer="T1",
        ),
    )  # fmt: skip


@pytest.mark.rules("ISOLATION.LEVELS")
def test_three_commits_a_cycle_through_a_blind_append_is_not_reported_under_write_serializable():
    p1 = ["=", "p", 1]
    rw_predicate = edge(3, 1, EdgeKind.RW_PREDICATE, selects(p1, "p=1/n.parquet"))
    wr_append = edge(1, 2, EdgeKind.WR, selects(p1, "p=1/n.parquet"))
    rw_f = edge(2, 3, EdgeKind.RW, "p=2/f.parquet")
    graph = dependency_graph(three_commits(WS))
    assert set(graph.edges(keys=True)) == {
        (e.source, e.target, e)
        for e in (
            edge(0, 2, EdgeKind.WR, "p=2/f.parquet"),
            edge(0, 2, EdgeKind.WR, selects(p1, "p=1/a.parquet")),
            edge(0, 3, EdgeKind.WR, "p=2/f.parquet"),
            edge(0, 3, EdgeKind.WR, selects(p1, "p=1/a.parquet")),
            rw_predicate,
            wr_append,
            rw_f,
        )
    }
    assert graph.nodes[3]["record"].writer == "T1"
    assert graph.edges[3, 1, rw_predicate]["kind"] is EdgeKind.RW_PREDICATE
    # the full graph has the cycle T1 -> T2 -> T3 -> T1 ...
    assert sorted(map(sorted, nx.simple_cycles(nx.DiGraph(graph)))) == [[1, 2, 3]]
    # ... but T1 may order the blind append after itself under WriteSerializable
    assert found(three_commits(WS)) == ()
    order, g2 = found(three_commits(S))
    assert order.cycle == (rw_predicate, log_order(1, 3))
    assert g2.kind is AnomalyKind.G2
    assert g2.cycle == (rw_predicate, wr_append, rw_f)


@pytest.mark.parametrize("level", [S, WS, SI])
def test_lost_update_two_concurrent_removes_of_one_file_at_every_level(level):
    h = history(
        seed("p=1/a.parquet"),
        commit(1, 0, removes=files("p=1/a.parquet"), adds=files("p=1/a1.parquet")),
        commit(2, 0, level, removes=files("p=1/a.parquet"), adds=files("p=1/a2.parquet")),
    )
    (anomaly,) = found(h)
    assert anomaly.kind is AnomalyKind.LOST_UPDATE
    assert anomaly.cycle == (
        edge(1, 2, EdgeKind.WW, "p=1/a.parquet"),
        edge(2, 1, EdgeKind.RW, "p=1/a.parquet"),
    )
    assert "lost update" in anomaly.explanation


def test_g0_write_cycle_in_a_malformed_history():
    """v1 claims to have read v5, which removed the file v1 removes: each removed it first."""
    h = history(
        seed("p=1/a.parquet"),
        commit(1, 5, removes=files("p=1/a.parquet")),
        commit(5, 4, removes=files("p=1/a.parquet")),
    )
    (anomaly,) = found(h)
    assert anomaly.kind is AnomalyKind.G0
    assert anomaly.cycle == (
        edge(5, 1, EdgeKind.WW, "p=1/a.parquet"),
        edge(1, 5, EdgeKind.WW, "p=1/a.parquet"),
    )


def test_g1c_circular_information_flow_in_a_malformed_history():
    """v1 (claiming read version 3) read what v3 added, and v3 read what v1 added."""
    h = history(
        commit(1, 3, read_files=frozenset({"p=2/g.parquet"}), adds=files("p=1/f.parquet")),
        commit(3, 2, read_files=frozenset({"p=1/f.parquet"}), adds=files("p=2/g.parquet")),
    )
    (anomaly,) = found(h)
    assert anomaly.kind is AnomalyKind.G1C
    assert anomaly.cycle == (
        edge(3, 1, EdgeKind.WR, "p=2/g.parquet"),
        edge(1, 3, EdgeKind.WR, "p=1/f.parquet"),
    )


def test_duplicate_add_of_a_live_path_but_not_a_rewrite_or_a_re_add():
    h = history(
        seed("p=1/a.parquet"),
        commit(1, 0, blind_append=True, adds=files("p=1/a.parquet")),
        commit(2, 1, removes=files("p=1/a.parquet"), adds=files("p=1/a.parquet")),
        commit(3, 2, removes=files("p=1/a.parquet")),
        commit(4, 3, blind_append=True, adds=files("p=1/a.parquet")),
        commit(5, 4, adds={"p=1/a.parquet": FileWrite({"p": "1"}, data_change=False)}),
    )
    (anomaly,) = found(h)
    assert anomaly.kind is AnomalyKind.DUPLICATE_ADD
    assert anomaly.cycle == (edge(0, 1, EdgeKind.WW, "p=1/a.parquet added again"),)


def serial_history(seed_: int, commits: int = 40) -> History:
    """Each commit reads the version before it: reads, rewrites, deletes, compactions, appends."""
    rng = random.Random(seed_)
    live: dict[str, str] = {"p=0/s0.parquet": "0", "p=1/s1.parquet": "1"}
    records = [seed(*live)]
    for v in range(1, commits):
        part = rng.randrange(4)
        in_part = sorted(p for p, value in live.items() if value == str(part))
        victims = rng.sample(in_part, k=min(len(in_part), rng.randrange(3)))
        new = [f"p={rng.randrange(4)}/f{v}-{i}.parquet" for i in range(rng.randrange(1, 3))]
        kw: dict = {"level": rng.choice([S, WS, SI]), "adds": files(*new)}
        match rng.randrange(4):
            case 0:
                kw["blind_append"] = True
            case 1:
                kw.update(read_predicates=(["=", "p", part], ["in", "p", [part, 3]]))
                kw.update(read_files=frozenset(in_part), removes=files(*victims))
            case 2:
                kw.update(read_whole_table=True, removes=files(*victims))
            case _:
                target = f"p={part}/c{v}.parquet"
                kw.update(read_predicates=(["=", "p", part],), read_files=frozenset(victims))
                kw.update(removes=files(*victims, data_change=False))
                kw.update(adds=files(target, data_change=False), level=SI)
        record = commit(v, v - 1, **kw)
        for path in record.removes:
            del live[path]
        live.update({path: w.partition_values["p"] or "" for path, w in record.adds.items()})
        records.append(record)
    return History(TYPES, tuple(records))


@pytest.mark.parametrize("seed_", range(12))
def test_serial_histories_have_no_anomalies(seed_):
    h = serial_history(seed_)
    graph = dependency_graph(h)
    assert graph.number_of_edges() > len(h.commits)  # the reads and writes do overlap
    assert found(h) == ()


def test_histories_out_of_order_are_refused_and_levels_parse_case_insensitively():
    with pytest.raises(HistoryError, match="increasing"):
        check(history(commit(2, 1), commit(1, 0)))
    assert parse_level("writeserializable") is WS
    with pytest.raises(HistoryError):
        parse_level("ReadCommitted")


# --- DOT ---------------------------------------------------------------------------------------


def test_to_dot_highlights_the_cycle(tmp_path: Path):
    h = three_commits(S)
    order, g2 = found(h)
    for anomaly in (order, g2):
        dot = to_dot(h, anomaly)
        (tmp_path / f"{anomaly.kind.value}.dot").write_text(dot)
        assert dot.startswith("digraph") and dot.count("{") == dot.count("}")
        assert dot.rstrip().endswith("}")
        for e in anomaly.cycle:
            red = [
                line
                for line in dot.splitlines()
                if line.strip().startswith(f'"v{e.source}" -> "v{e.target}"')
                and f'label="{e.kind.value} ' in line
                and "color=red" in line
            ]
            assert len(red) == 1, (e, dot)
        assert '"v3" [label="v3 T1 WRITE (Serializable)", color=red' in dot
    plain = to_dot(h)
    assert "color=red" not in plain and "LOG_ORDER" not in plain
    assert '\\"p\\":\\"1\\"' in plain  # JSON evidence is escaped inside DOT strings
    if shutil.which("dot"):
        rendered = subprocess.run(
            ["dot", "-Tsvg", str(tmp_path / "G2.dot")], capture_output=True, check=False
        )
        assert rendered.returncode == 0, rendered.stderr


# --- real tables -------------------------------------------------------------------------------


def test_every_fixture_table_has_no_anomalies(fixtures_dir: Path):
    tables = json.loads((fixtures_dir / "MANIFEST.json").read_text())["tables"]
    checked = 0
    for table in tables:
        root = str(fixtures_dir / table["name"])
        if table["category"] == "negative":
            with pytest.raises(DeltaError):
                history_from_log(root)
            continue
        h = history_from_log(root)
        assert h.commits, table["name"]
        assert found(h) == (), table["name"]
        checked += 1
    assert checked == 50


SCHEMA = json.dumps(
    {"type": "struct", "fields": [
        {"name": "p", "type": "string", "nullable": True, "metadata": {}},
        {"name": "x", "type": "long", "nullable": True, "metadata": {}}]},
    separators=(",", ":"),
)  # fmt: skip


def test_a_lost_update_forced_into_a_real_log_is_found(tmp_path: Path):
    log = DeltaLog(str(tmp_path))
    seed_files = [AddFile(f"p=a/a{i}.parquet", {"p": "a"}, 10, 0, True) for i in range(2)]
    OptimisticTransaction(log).commit(
        [Metadata("t", SCHEMA, ("p",)), *seed_files], Operation("CREATE TABLE")
    )
    victim = RemoveFile("p=a/a0.parquet", 1, True, True, {"p": "a"}, 10)

    def rewrite(name: str) -> list:
        return [victim, AddFile(f"p=a/{name}.parquet", {"p": "a"}, 10, 0, True)]

    first = OptimisticTransaction(log)
    first.filter_files([parse(["=", "p", "a"])])
    first.stage(rewrite("u1"))
    assert first.commit(operation=Operation("DELETE")) == 1
    # a second writer that also read v0 and removed the same file, written without conflict checks
    info = codec.make_commit_info(
        {"timestamp": 2, "operation": "DELETE", "operationParameters": {}, "readVersion": 0,
         "isolationLevel": "Serializable", "isBlindAppend": False}
    )  # fmt: skip
    log.store.write_new(commit_name(2), codec.encode_commit([info, *rewrite("u2")]))

    h = history_from_log(str(tmp_path))
    assert [(c.version, c.read_version, c.level, c.blind_append) for c in h.commits] == [
        (0, -1, S, True), (1, 0, S, False), (2, 0, S, False),
    ]  # fmt: skip
    assert h.commits[2].read_files == {"p=a/a0.parquet"}
    assert h.commits[2].removes["p=a/a0.parquet"].partition_values == {"p": "a"}
    assert h.partition_types == {"p": "string"}
    (anomaly,) = found(h)
    assert anomaly.kind is AnomalyKind.LOST_UPDATE
    assert anomaly.cycle == (
        edge(1, 2, EdgeKind.WW, "p=a/a0.parquet"),
        edge(2, 1, EdgeKind.RW, "p=a/a0.parquet"),
    )


def test_history_from_log_raises_the_impl_errors(tmp_path: Path):
    with pytest.raises(DeltaError):
        history_from_log(str(tmp_path))
