"""A writer's reads as typed values (spec/scenarios.md, "Reads"), parsed once when a vector is
loaded. Predicates stay in the vectors' prefix form (a JSON array), which each side parses with
its own predicate parser."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .actions import Json, JsonFields

Predicate = Sequence[Any]
"""A predicate in prefix form: ``["=", "p", "a"]``, ``["and", p, q]``…"""


@dataclass(frozen=True, kw_only=True)
class Read(JsonFields):
    """One element of ``reads``: a ``filter`` scan (its ``files`` when data skipping picked some),
    a bare ``predicate``, bare ``files``, the ``whole_table``, or an ``app_id`` lookup. Absent
    parts are None (``whole_table`` False)."""

    JSON_NAMES: ClassVar[Mapping[str, str]] = {"whole_table": "whole_table", "app_id": "app_id"}
    TUPLES: ClassVar[frozenset[str]] = frozenset({"filter", "files"})
    filter: tuple[Predicate, ...] | None = None
    files: tuple[str, ...] | None = None
    predicate: Predicate | None = None
    whole_table: bool = False
    app_id: str | None = None

    @property
    def parts(self) -> frozenset[str]:
        """The JSON keys this read has (``whole_table`` only when true)."""
        return frozenset(k for k, v in self.body().items() if v is not None and v is not False)


def parse_read(data: Mapping[str, Any]) -> Read:
    return Read.of(data)


def read_json(read: Read) -> Json:
    return read.body()
