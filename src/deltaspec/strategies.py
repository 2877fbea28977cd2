"""Public Hypothesis strategies for Delta actions and concurrent interleavings, in the JSON shapes
of the scenario vectors (spec/scenarios.md), so another engine's property tests can draw them:

    from . import strategies as ds

    @given(ds.scenarios())
    def test_my_engine(vector): ...   # a schema-valid vector without expectations

``actions`` draws staged actions for a writer; ``interleavings`` orders writers' ``begin`` and
``commit`` steps (each writer begins before it commits); ``scenarios`` puts a table, writers and
an interleaving together. To learn what the spec requires of a drawn vector, run it on the model
(``deltaspec.conformance.engines.model.adapter.run``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

Json = dict[str, Any]
PARTITIONS = ("a", "b", "c")
SCHEMA = [{"name": "p", "type": "string"}, {"name": "x", "type": "long"}]


def file_paths(partition: str | None = None) -> st.SearchStrategy[str]:
    """Relative data file paths (``p=a/f3.parquet`` when partitioned)."""
    names = st.integers(0, 999).map(lambda n: f"f{n}.parquet")
    return names if partition is None else names.map(lambda n: f"p={partition}/{n}")


@st.composite
def add_actions(draw: st.DrawFn, partitioned: bool = True) -> Json:
    """ACTION.ADD in the scenario shape."""
    partition = draw(st.sampled_from(PARTITIONS)) if partitioned else None
    body: Json = {"path": draw(file_paths(partition))}
    if partition is not None:
        body["partitionValues"] = {"p": partition}
    if draw(st.booleans()):
        body["dataChange"] = draw(st.booleans())
    return {"add": body}


def remove_actions(live: Sequence[str]) -> st.SearchStrategy[Json]:
    """ACTION.REMOVE of one of ``live`` (partition values default from the snapshot)."""
    return st.sampled_from(list(live)).map(lambda path: {"remove": {"path": path}})


def txn_actions() -> st.SearchStrategy[Json]:
    """ACTION.TXN."""
    return st.builds(
        lambda app, version: {"txn": {"appId": app, "version": version}},
        st.sampled_from(["stream-1", "stream-2"]),
        st.integers(0, 20),
    )


def actions(live: Sequence[str] = (), partitioned: bool = True) -> st.SearchStrategy[list[Json]]:
    """A writer's staged actions: adds, removes of distinct live files, at most one txn."""
    removes = (
        st.lists(st.sampled_from(list(live)), unique=True, max_size=2).map(
            lambda paths: [{"remove": {"path": p}} for p in paths]
        )
        if live
        else st.just([])
    )
    adds = st.lists(add_actions(partitioned), max_size=3, unique_by=lambda a: a["add"]["path"])
    txns = st.lists(txn_actions(), max_size=1)
    return st.tuples(adds, removes, txns).map(lambda parts: [*parts[0], *parts[1], *parts[2]])


@st.composite
def interleavings(draw: st.DrawFn, writers: Sequence[str]) -> list[Json]:
    """An order of every writer's ``begin`` and ``commit`` steps, each begin before its commit."""
    pending = [[{"begin": w}, {"commit": w}] for w in writers]
    steps: list[Json] = []
    while any(pending):
        index = draw(st.sampled_from([i for i, queue in enumerate(pending) if queue]))
        steps.append(pending[index].pop(0))
    return steps


@st.composite
def scenarios(draw: st.DrawFn, max_writers: int = 3) -> Json:
    """A scenario vector (schema-valid, ``expect`` empty): a partitioned table at version 0,
    2..max_writers writers with reads and actions, and an interleaving of their steps."""
    every = [f"p={p}/f{n}.parquet" for p in PARTITIONS for n in range(3)]
    files = sorted(draw(st.sets(st.sampled_from(every), min_size=1, max_size=5)))
    names = [f"w{i}" for i in range(draw(st.integers(2, max_writers)))]
    writers: Json = {}
    for name in names:
        staged = draw(actions(files))
        removes = any("remove" in a for a in staged)
        reads = [{"filter": [["=", "p", draw(st.sampled_from(PARTITIONS))]]}] if removes else []
        writers[name] = {"operation": "DELETE" if removes else "WRITE", "reads": reads,
                         "actions": staged}  # fmt: skip
    return {
        "id": "drawn/scenario",
        "description": "drawn by deltaspec.strategies.scenarios",
        "rules": ["CONFLICT.PER_WINNER"],
        "table": {
            "schema": SCHEMA,
            "partition_columns": ["p"],
            "files": [{"path": f, "partition": {"p": f[2]}} for f in files],
        },
        "writers": writers,
        "steps": draw(interleavings(names)),
        "expect": {},
    }
