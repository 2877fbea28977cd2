"""The one operation alphabet (conformance/workload): every tool's vocabulary maps onto it, and
its translations agree with one another."""

from __future__ import annotations

import json
import typing
from pathlib import Path

import pytest
from hypothesis.stateful import RULE_MARKER

from deltaspec.conformance.engines import operations as engine
from deltaspec.conformance.harness.scenarios import Writer
from deltaspec.conformance.oracle import machine
from deltaspec.conformance.workload.alphabet import (
    ALPHABET,
    EXPLORED,
    MATRIX_OPERATIONS,
    OPERATION_NAMES,
    AlphabetError,
    Kind,
    Operation,
    choices,
)
from deltaspec.conformance.workload.scenario import TableState, matrix_writer, writer_spec

REPO = Path(__file__).resolve().parents[3]


def test_the_oracle_has_one_rule_per_kind_named_as_the_kind() -> None:
    rules = vars(machine.OracleMachine).items()
    named = {name for name, method in rules if hasattr(method, RULE_MARKER)}
    assert {k.name.lower() for k in machine.KINDS} <= set(named)
    assert set(named) - {k.name.lower() for k in machine.KINDS} == {
        "commit", "commit_oldest", "maintain",
    }  # fmt: skip


def test_every_matrix_operation_is_a_kind() -> None:
    matrix = json.loads((REPO / "spec" / "data" / "conflict_matrix.json").read_text())
    assert set(MATRIX_OPERATIONS) == set(matrix["operations"])
    for name, kind in MATRIX_OPERATIONS.items():
        assert matrix_writer(kind, "w", "a")["operation"] == OPERATION_NAMES[kind], name


def test_every_kind_has_an_operation_name_and_an_engine_entry() -> None:
    assert set(OPERATION_NAMES) == set(Kind)
    assert set(engine.ENGINE_OPERATIONS) == set(Kind)
    reached = {cls for classes in engine.ENGINE_OPERATIONS.values() for cls in classes}
    assert reached == set(typing.get_args(engine.Operation))


def test_the_explorer_alphabet_is_kinds_by_value() -> None:
    assert tuple(k.value for k in EXPLORED) == ALPHABET
    assert [str(op) for op in choices(("append", "metadata"), 2)] == [
        "append(p=0)", "append(p=1)", "metadata",
    ]  # fmt: skip
    assert sorted([Operation(Kind.UPDATE, 0), Operation(Kind.APPEND, 1)])[0].kind is Kind.APPEND


def _view(state: TableState) -> engine.View:
    names = sorted(state.files)
    return engine.View(
        version=state.version,
        partition_columns=("p",),
        types={"p": "integer", engine.FILE_COLUMN: "string"},
        configuration=dict(state.configuration or {}),
        app_txns={},
        data_files=tuple(engine.DataFile(n, frozenset({n}), frozenset({n})) for n in names),
        partitions={n: state.files[n] for n in names},
    )


STATE = TableState(
    version=1,
    files={"p=0/a.parquet": {"p": "0"}, "p=0/b.parquet": {"p": "0"}, "p=1/c.parquet": {"p": "1"}},
    configuration={},
    app_version=-1,
)


@pytest.mark.parametrize("kind", EXPLORED, ids=str)
def test_an_explored_writer_runs_as_its_kinds_engine_operation(kind: Kind) -> None:
    op = Operation(kind, None if kind is Kind.SET_PROPERTIES else 0)
    spec = writer_spec(op, "w1-1", STATE)
    assert spec["operation"] == OPERATION_NAMES[kind]
    writer = Writer.of(spec)
    intent = engine.Intent(spec["operation"], None, True, writer.reads, writer.actions)
    translation = engine.translate(intent, _view(STATE))
    assert isinstance(translation.operation, engine.ENGINE_OPERATIONS[kind])


def test_the_explorer_and_the_matrix_run_only_their_kinds() -> None:
    with pytest.raises(AlphabetError):
        writer_spec(Operation(Kind.OVERWRITE, 0), "w", STATE)
    with pytest.raises(AlphabetError):
        matrix_writer(Kind.SET_TXN, "w", "a")
