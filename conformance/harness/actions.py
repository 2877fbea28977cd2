"""A writer's staged actions as typed values, parsed once when a vector is loaded.

One frozen dataclass per action kind of spec/scenario.schema.json (``add``, ``remove``,
``metaData``, ``protocol``, ``txn``, ``domainMetadata``, ``cdc``, ``commitInfo``), its fields the
JSON keys in snake_case. A field the vector leaves out holds the default spec/scenarios.md gives
it, or None where the default depends on the writer (the step's clock, the read snapshot's
metadata or the live file a remove names): the adapters resolve those. ``given`` keeps the JSON
keys the vector wrote, in its order, so :meth:`JsonFields.body` writes the action back exactly as
the vector spelled it (the bridge's wire, harness/wire.py); ``extra`` keeps the fields the schema
lets through that no adapter reads (an add's ``tags`` stay typed; a commitInfo's free fields
do not).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Self

Json = dict[str, Any]
PartitionValues = Mapping[str, str | None]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


@dataclass(frozen=True, kw_only=True)
class JsonFields:
    """A JSON object of the vectors as a frozen value: each dataclass field is the JSON key of
    its camelCase name (``JSON_NAMES`` for the exceptions); fields in ``TUPLES`` are JSON arrays
    held as tuples."""

    JSON_NAMES: ClassVar[Mapping[str, str]] = {}
    TUPLES: ClassVar[frozenset[str]] = frozenset()

    given: tuple[str, ...] = field(default=(), compare=False, repr=False)
    """The JSON keys the vector wrote, in its order (empty: built in code, every field given)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Fields beyond the typed ones, as written."""

    @classmethod
    def _defaults(cls) -> dict[str, Any]:
        """Field name -> its default, for the fields that have one."""
        out: dict[str, Any] = {}
        for f in fields(cls):
            if f.default is not MISSING:
                out[f.name] = f.default
            elif f.default_factory is not MISSING:
                out[f.name] = f.default_factory()
        return out

    @classmethod
    def keys(cls) -> dict[str, str]:
        """JSON key -> field name, for the typed fields."""
        names = [f.name for f in fields(cls) if f.name not in {"given", "extra"}]
        return {cls.JSON_NAMES.get(name, _camel(name)): name for name in names}

    @classmethod
    def of(cls, body: Mapping[str, Any]) -> Self:
        keys = cls.keys()
        values = {
            keys[k]: tuple(v) if keys[k] in cls.TUPLES and v is not None else v
            for k, v in body.items()
            if k in keys
        }
        extra = {k: v for k, v in body.items() if k not in keys}
        return cls(**values, given=tuple(body), extra=extra)

    def gave(self, key: str) -> bool:
        """Whether the vector wrote the JSON key ``key`` (built in code: whether the field
        differs from its default)."""
        return key in (self.given or self.body())

    def kept(self, name: str, base: Any) -> Any:
        """The field ``name``, or ``base`` (the read snapshot's) when the vector left it out."""
        key = next(k for k, n in self.keys().items() if n == name)
        return getattr(self, name) if self.gave(key) else base

    def body(self) -> Json:
        """The JSON object: the keys given, in their order (built in code: every typed field
        that differs from its default, then ``extra``)."""
        names, defaults = self.keys(), self._defaults()
        missing = object()
        order = self.given or (
            *(k for k, name in names.items()
              if getattr(self, name) != defaults.get(name, missing)),
            *self.extra,
        )  # fmt: skip
        out: Json = {}
        for key in order:
            if key in names:
                value = getattr(self, names[key])
                out[key] = list(value) if isinstance(value, tuple) else value
            else:
                out[key] = self.extra[key]
        return out


@dataclass(frozen=True, kw_only=True)
class Add(JsonFields):
    KIND: ClassVar[str] = "add"
    path: str
    partition_values: PartitionValues = field(default_factory=dict)
    size: int = 1
    modification_time: int = 0
    data_change: bool = True
    stats: str | None = None
    tags: Mapping[str, Any] | None = None
    deletion_vector: Mapping[str, Any] | None = None
    """The descriptor as written (its fields are free in the schema)."""
    base_row_id: int | None = None
    default_row_commit_version: int | None = None


@dataclass(frozen=True, kw_only=True)
class Remove(JsonFields):
    KIND: ClassVar[str] = "remove"
    path: str
    partition_values: PartitionValues | None = None
    """None: those of the live file it removes."""
    deletion_timestamp: int | None = None
    """None: the step's clock."""
    data_change: bool = True
    size: int | None = None
    deletion_vector: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class MetaData(JsonFields):
    """A metaData action; a field left out (``gave`` is False) keeps the read snapshot's."""

    KIND: ClassVar[str] = "metaData"
    TUPLES: ClassVar[frozenset[str]] = frozenset({"schema", "partition_columns"})
    id: str | None = None
    name: str | None = None
    description: str | None = None
    schema: tuple[Mapping[str, Any], ...] | None = None
    """The scenario's column list (``schema_string`` makes the schemaString)."""
    schema_string: str | None = None
    partition_columns: tuple[str, ...] | None = None
    configuration: Mapping[str, str] | None = None
    created_time: int | None = None


@dataclass(frozen=True, kw_only=True)
class Protocol(JsonFields):
    KIND: ClassVar[str] = "protocol"
    TUPLES: ClassVar[frozenset[str]] = frozenset({"reader_features", "writer_features"})
    min_reader_version: int
    min_writer_version: int
    reader_features: tuple[str, ...] | None = None
    writer_features: tuple[str, ...] | None = None


@dataclass(frozen=True, kw_only=True)
class Txn(JsonFields):
    KIND: ClassVar[str] = "txn"
    app_id: str
    version: int
    last_updated: int | None = None


@dataclass(frozen=True, kw_only=True)
class DomainMetadata(JsonFields):
    KIND: ClassVar[str] = "domainMetadata"
    domain: str
    configuration: str = ""
    removed: bool = False


@dataclass(frozen=True, kw_only=True)
class Cdc(JsonFields):
    KIND: ClassVar[str] = "cdc"
    path: str
    partition_values: PartitionValues = field(default_factory=dict)
    size: int = 1
    data_change: bool = False


@dataclass(frozen=True, kw_only=True)
class CommitInfo(JsonFields):
    """A staged commitInfo: the fields the model reads typed, any other in ``extra``."""

    KIND: ClassVar[str] = "commitInfo"
    timestamp: int | None = None
    """None: the step's clock."""
    operation: str | None = None
    read_version: int | None = None
    isolation_level: str | None = None
    is_blind_append: bool | None = None
    txn_id: str | None = None
    in_commit_timestamp: int | None = None


Action = Add | Remove | MetaData | Protocol | Txn | DomainMetadata | Cdc | CommitInfo
KINDS: dict[str, type[Action]] = {
    kind.KIND: kind for kind in (Add, Remove, MetaData, Protocol, Txn, DomainMetadata, Cdc,
                                 CommitInfo)
}  # fmt: skip


class UnknownAction(ValueError):
    """A JSON object naming no action kind of the schema."""


def parse_action(data: Mapping[str, Any]) -> Action:
    """One action of the vectors' JSON (``{"add": {...}}``) as its typed value."""
    ((kind, body),) = data.items()
    if kind not in KINDS:
        raise UnknownAction(f"unknown action {kind!r}")
    return KINDS[kind].of(body)


def action_json(action: Action) -> Json:
    """The action in the vectors' JSON, as the vector wrote it."""
    return {action.KIND: action.body()}
