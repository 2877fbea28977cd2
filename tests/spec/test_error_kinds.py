"""spec/data/conflict_kinds.json is the one source of the conflict and error kinds: the impl
reads its error classes and SQLSTATEs from it, the model's enums are checked against it (an enum
built from the file at import would hide its members from the type checker)."""

from __future__ import annotations

import json

from deltaspec.impl import errors
from deltaspec.model.outcomes import ConflictKind, ErrorKind
from deltaspec.rules import spec_root


def _table() -> dict[str, dict[str, dict[str, str | None]]]:
    text = (spec_root() / "data" / "conflict_kinds.json").read_text(encoding="utf-8")
    data: dict[str, dict[str, dict[str, str | None]]] = json.loads(text)
    return data


def _impl_classes() -> list[type[errors.DeltaError]]:
    found: list[type[errors.DeltaError]] = []
    pending: list[type[errors.DeltaError]] = [errors.DeltaError]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return [c for c in found if c.__module__ == errors.__name__]


def test_every_kind_has_exactly_one_impl_error_with_the_spec_error_class() -> None:
    table = _table()
    rows = {**table["conflicts"], **table["errors"]}
    for kind, row in rows.items():
        classes = [c for c in _impl_classes() if "kind" in vars(c) and c.kind == kind]
        assert len(classes) == 1, (kind, classes)
        if row["error_class"] is not None:
            assert (classes[0].error_class, classes[0].sqlstate) == (
                row["error_class"],
                row["sqlstate"],
            ), kind
        else:  # delta-spark has no error class: the impl's own name must not borrow one
            spec_classes = {r["error_class"] for r in rows.values()}
            assert classes[0].error_class not in spec_classes, kind


def test_conflict_kinds_are_the_concurrent_modification_errors() -> None:
    conflicts = set(_table()["conflicts"])
    concurrent = {
        c.kind
        for c in _impl_classes()
        if issubclass(c, errors.DeltaConcurrentModificationException) and "kind" in vars(c)
    }
    assert concurrent == conflicts


def test_the_model_enums_are_the_spec_kinds_by_name_and_value() -> None:
    table = _table()
    assert [k.name for k in ConflictKind] == [k.value for k in ConflictKind]
    assert [k.name for k in ErrorKind] == [k.value for k in ErrorKind]
    assert {k.value for k in ConflictKind} == set(table["conflicts"])
    assert {k.value for k in ErrorKind} == set(table["errors"])


def test_the_scenario_schema_and_scenarios_md_list_exactly_the_spec_error_kinds() -> None:
    """spec/data/conflict_kinds.json is the source; scenario.schema.json's `error_kind` and the
    error-kind table of scenarios.md follow it (kinds in the same order as the file)."""
    import re

    kinds = list(_table()["errors"])
    schema = json.loads((spec_root() / "scenario.schema.json").read_text(encoding="utf-8"))
    assert sorted(schema["$defs"]["error_kind"]["enum"]) == sorted(kinds)
    text = (spec_root() / "scenarios.md").read_text(encoding="utf-8")
    table = text.split("Error kinds and the rules that raise them")[1].split("\n## ")[0]
    listed = re.findall(r"^\| `([A-Z_]+)` \|", table, re.MULTILINE)
    assert sorted(listed) == sorted(kinds)
