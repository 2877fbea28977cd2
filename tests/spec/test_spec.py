"""The spec's own consistency: rule catalogue, citations, data tables, scenario vectors."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from support import cited_by_tests

from deltaspec.conformance.harness.scenarios import Scenario, load_scenarios, schema
from deltaspec.model.outcomes import ConflictKind, ErrorKind
from deltaspec.rules import SpecError, load_rules, parse_rules, spec_root

TESTS = Path(__file__).resolve().parents[1]
MATRIX_OPS = ["INSERT", "UPDATE", "DELETE", "MERGE", "COMPACTION"]


def data(name: str) -> Any:
    return json.loads((spec_root() / "data" / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    return load_scenarios()


def test_the_catalogue_has_enough_rules_each_with_releases() -> None:
    rules = load_rules()
    assert len(rules) >= 40
    assert all(rule.releases and rule.title for rule in rules)
    prefixes = {rule.id.split(".")[0] for rule in rules}
    expected = {"LOG", "ACTION", "SNAPSHOT", "TXN", "ISOLATION", "CONFLICT", "RETRY"}
    assert expected | {"CHECKPOINT", "RETENTION", "PREDICATE"} <= prefixes


def test_a_malformed_rule_heading_is_an_error() -> None:
    with pytest.raises(SpecError, match="no Releases line"):
        parse_rules("### LOG.X — A rule\n\nprose without releases\n", "bad.md")
    with pytest.raises(SpecError, match="malformed"):
        parse_rules("### LOG.X - hyphen instead of dash\nReleases: all\n", "bad.md")


def test_every_rule_is_checked_by_a_test_or_a_scenario(scenarios: list[Scenario]) -> None:
    cited = cited_by_tests(TESTS) | {rule for s in scenarios for rule in s.rules}
    unchecked = sorted({rule.id for rule in load_rules()} - cited)
    assert not unchecked, f"rules with neither a test nor a scenario: {unchecked}"


def test_the_citation_scan_sees_a_missing_rule(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(
        'import pytest\n@pytest.mark.rules("LOG.LISTING", "LOG.CONTIGUITY")\ndef test_x(): ...\n'
    )
    assert cited_by_tests(tmp_path) == {"LOG.LISTING", "LOG.CONTIGUITY"}


def test_scenarios_cite_only_known_rules(scenarios: list[Scenario]) -> None:
    known = {rule.id for rule in load_rules()}
    unknown = {(s.id, rule) for s in scenarios for rule in s.rules if rule not in known}
    assert not unknown


def test_every_conflict_and_isolation_rule_has_a_scenario(scenarios: list[Scenario]) -> None:
    in_scenarios = {rule for s in scenarios for rule in s.rules}
    needed = {r.id for r in load_rules() if r.id.split(".")[0] in {"CONFLICT", "ISOLATION"}}
    assert not sorted(needed - in_scenarios)


def test_the_conflict_matrix_is_complete() -> None:
    cells = data("conflict_matrix.json")["cells"]
    keys = [(c["winner"], c["loser"], c["isolation"], c["partitions"]) for c in cells]
    expected = set(
        itertools.product(
            MATRIX_OPS, MATRIX_OPS, ["Serializable", "WriteSerializable"], ["same", "disjoint"]
        )
    )
    assert len(keys) == len(set(keys)) and set(keys) == expected


def test_matrix_and_scenarios_agree(scenarios: list[Scenario]) -> None:
    by_cell: dict[tuple[str, ...], list[Scenario]] = {}
    for s in scenarios:
        if s.matrix_cell is not None:
            cell = s.matrix_cell
            key = (cell.winner, cell.loser, cell.isolation, cell.partitions)
            by_cell.setdefault(key, []).append(s)
    for cell in data("conflict_matrix.json")["cells"]:
        key = (cell["winner"], cell["loser"], cell["isolation"], cell["partitions"])
        assert key in by_cell, f"no scenario for matrix cell {key}"
        for s in by_cell[key]:
            loser = {k: v for k, v in s.expect["loser"].as_json().items() if k != "winner"}
            assert loser == cell["outcome"], s.id
            assert s.expect["winner"].as_json() == {"committed": 1}, s.id
            assert (s.table or {})["properties"]["delta.isolationLevel"] == cell["isolation"]


def test_conflict_kinds_table_matches_schema_and_model() -> None:
    kinds = data("conflict_kinds.json")
    defs = schema()["$defs"]
    assert set(kinds["conflicts"]) == set(defs["conflict_kind"]["enum"])
    assert set(kinds["conflicts"]) == {k.value for k in ConflictKind}
    assert set(kinds["errors"]) == set(defs["error_kind"]["enum"]) == {k.value for k in ErrorKind}
    concurrency = [k for k in kinds["conflicts"].values() if k["error_class"]]
    assert all(k["sqlstate"] == "2D521" for k in concurrency)


def test_isolation_levels_table_names_the_default() -> None:
    levels = data("isolation_levels.json")
    names = [level["name"] for level in levels["levels"]]
    assert names == ["Serializable", "WriteSerializable", "SnapshotIsolation"]
    assert levels["default"] == "Serializable"
