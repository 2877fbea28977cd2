"""Field tables: one declaration per JSON object drives both its decoding and its encoding.

A :class:`FieldTable` lists an object's fields in the order delta-spark writes them, each a
:class:`Field` naming its JSON key, the attribute of the dataclass holding it, its :class:`Kind`
(how a value is checked when read and shaped when written) and whether it is required.

Reading (ACTION.UNKNOWN): keys the table does not list are ignored; a field whose value is
``null`` counts as absent; an absent required field, or a value of the wrong JSON type, is a
:class:`~deltaspec.impl.errors.CorruptLogError`; an absent optional field takes the dataclass's
default (delta-spark's constructor defaults) unless the field names its own. Integers must be JSON
integers within a Java long, booleans JSON booleans: Jackson would coerce ``"12"`` or ``12.0``,
this reader reports a corrupt log instead.

Writing (Jackson ``NON_ABSENT``): fields in table order, ``None`` values omitted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Final

from ..errors import CorruptLogError
from .json_text import type_name

MISSING: Final = object()
"""Marks a key absent from a JSON object (as opposed to present with ``null``)."""

Reader = Callable[[str, str, Any], Any]
"""``read(where, name, value)``: check a non-null JSON value of field ``where.name``; the value."""


def bad(where: str, name: str, value: object, expected: str) -> CorruptLogError:
    """The error for field ``where.name`` holding ``value`` (or :data:`MISSING`)."""
    if value is MISSING:
        return CorruptLogError(f"{where} lacks the required field {name!r}")
    return CorruptLogError(f"{where}.{name} must be {expected}, not {type_name(value)}")


def json_object(where: str, value: object) -> dict[str, Any]:
    """``value`` as a JSON object, or the error naming ``where``."""
    if type(value) is not dict:
        raise CorruptLogError(f"the {where} action must be a JSON object, not {type_name(value)}")
    return value


@dataclass(frozen=True, slots=True)
class Kind:
    """How the values of one sort of field are read and written.

    ``accepts``: a Python condition on ``{v}``, true only of a value ``read`` returns unchanged;
    the decoders written out for a table test it inline and call ``read`` only when it fails (the
    fast path of strings, booleans and longs). ``write`` shapes the attribute's value for JSON
    (``None``: written as it is)."""

    expected: str
    read: Reader
    accepts: str | None = None
    write: Callable[[Any], Any] | None = None


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1


def _read_string(where: str, name: str, value: Any) -> str:
    if type(value) is not str:
        raise bad(where, name, value, "a string")
    return value


def _read_long(where: str, name: str, value: Any) -> int:
    """Delta's integers are Java longs: one beyond 64 bits is as malformed as a string (a
    checkpoint could not even hold it)."""
    if type(value) is not int or not _LONG_MIN <= value <= _LONG_MAX:
        raise bad(where, name, value, "a 64-bit integer")
    return value


def _read_int(where: str, name: str, value: Any) -> int:
    """A Java int (the protocol versions, int32 checkpoint columns)."""
    if not _INT_MIN <= _read_long(where, name, value) <= _INT_MAX:
        raise bad(where, name, value, "a 32-bit integer")
    return value  # type: ignore[no-any-return]


def _read_boolean(where: str, name: str, value: Any) -> bool:
    if type(value) is not bool:
        raise bad(where, name, value, "a boolean")
    return value


def _read_string_map(where: str, name: str, value: Any) -> dict[str, str]:
    if type(value) is not dict:
        raise bad(where, name, value, "an object of strings")
    for item in value.values():
        if type(item) is not str:
            raise CorruptLogError(f"{where}.{name} values must be strings, not {type_name(item)}")
    return value


def _read_partition_values(where: str, name: str, value: Any) -> dict[str, str | None]:
    """ACTION.PARTITION_VALUES: an object of strings or nulls."""
    if type(value) is not dict:
        raise bad(where, name, value, "an object")
    for item in value.values():
        if item is not None and type(item) is not str:
            raise CorruptLogError(
                f"{where}.{name} values must be strings or null, not {type_name(item)}"
            )
    return value


def _without_nulls(values: dict[str, str | None]) -> dict[str, str | None]:
    if None in values.values():
        return {key: value for key, value in values.items() if value is not None}
    return values


def _read_string_list(where: str, name: str, value: Any) -> tuple[str, ...]:
    if type(value) is not list:
        raise bad(where, name, value, "an array of strings")
    for item in value:
        if type(item) is not str:
            raise CorruptLogError(f"{where}.{name} items must be strings, not {type_name(item)}")
    return tuple(value)


STRING: Final = Kind("a string", _read_string, "type({v}) is str")
LONG: Final = Kind(
    "a 64-bit integer", _read_long, f"type({{v}}) is int and {_LONG_MIN} <= {{v}} <= {_LONG_MAX}"
)
INT: Final = Kind("a 32-bit integer", _read_int)
BOOLEAN: Final = Kind("a boolean", _read_boolean, "type({v}) is bool")
STRING_MAP: Final = Kind("an object of strings", _read_string_map)
STRING_LIST: Final = Kind("an array of strings", _read_string_list)  # a tuple writes as an array
PARTITION_VALUES: Final = Kind("an object", _read_partition_values)
"""Written with its ``null`` values (``Include.ALWAYS``)."""
NON_NULL_PARTITION_VALUES: Final = Kind("an object", _read_partition_values, write=_without_nulls)
"""Written without its ``null`` values (``NON_ABSENT`` applied to the map's contents)."""


@dataclass(frozen=True, slots=True)
class Field:
    """One JSON field: its key, the dataclass attribute, its kind and how absence is handled.

    ``default``: the value of an absent optional field when it is not the dataclass's default.
    ``omit_empty``: an empty value is not written (and reads back as ``default``)."""

    name: str
    attr: str
    kind: Kind
    required: bool = False
    default: Any = None
    omit_empty: bool = False


Decoder = Callable[[str, dict[str, Any]], Any]
Encoder = Callable[[Any], dict[str, Any]]


class FieldTable:
    """The fields of one JSON object held by dataclass ``cls``, in delta-spark's write order.

    ``decode(where, body)`` gives the ``cls`` instance a JSON object describes (``where`` names the
    object in errors); ``encode(instance)`` gives the JSON object, fields in table order, ``None``
    omitted. With ``whole`` set, the object has no fixed fields: the dataclass keeps the whole
    JSON object as read in that attribute (commitInfo).

    Both functions are written out from the table when it is built, as :mod:`dataclasses` writes
    ``__init__``: a call then does what a hand-written decoder or encoder would do, with no loop
    over the fields and a positional constructor call, which matters on the hot paths of log
    replay and commit (a loop costs about three times as much to encode an add)."""

    decode: Decoder
    encode: Encoder

    def __init__(self, cls: type, fields: tuple[Field, ...] = (), whole: str | None = None) -> None:
        self.cls, self.fields, self.whole = cls, fields, whole
        if whole is None:
            self.decode = _compile_decoder(cls, fields)
            self.encode = _compile_encoder(fields)
        else:
            self.decode = lambda where, body: cls(**{whole: body})
            self.encode = attrgetter(whole)


def _missing(where: str, name: str, body: dict[str, Any], kind: Kind) -> CorruptLogError:
    return bad(where, name, body.get(name, MISSING), kind.expected)


def _compile(source: list[str], env: dict[str, Any], name: str) -> Any:
    exec("\n".join(source), env)  # the source is built from the tables
    return env[name]


def _compile_decoder(cls: type, fields: tuple[Field, ...]) -> Decoder:
    """``decode(where, body)``: each field checked in table order, ``cls`` built by position."""
    env: dict[str, Any] = {"cls": cls, "missing": _missing}
    source = ["def decode(where, body):", "    get = body.get"]
    for i, f in enumerate(fields):
        env |= {f"read{i}": f.kind.read, f"kind{i}": f.kind}
        read = f"v{i} = read{i}(where, {f.name!r}, v{i})"
        accepts = f.kind.accepts
        checks = [f"if not ({accepts.format(v=f'v{i}')}):", f"    {read}"] if accepts else [read]
        source.append(f"    v{i} = get({f.name!r})")
        if f.required:
            source.append(f"    if v{i} is None: raise missing(where, {f.name!r}, body, kind{i})")
            source += [f"    {line}" for line in checks]
        else:
            source.append(f"    if v{i} is not None:")
            source += [f"        {line}" for line in checks]
    index = {f.attr: i for i, f in enumerate(fields)}
    args = []
    for slot in dataclasses.fields(cls):
        i = index[slot.name]  # every attribute is in the table
        env[f"default{i}"] = _absent_value(fields[i], slot)
        absent = f"default{i}() if v{i} is None else v{i}"
        args.append(f"v{i}" if env[f"default{i}"] is None else absent)
    source.append(f"    return cls({', '.join(args)})")
    decoder: Decoder = _compile(source, env, "decode")
    return decoder


def _absent_value(field: Field, slot: dataclasses.Field[Any]) -> Callable[[], Any] | None:
    """What makes the value of an absent optional field: its own default, else the dataclass's."""
    if field.required:
        return None
    if field.default is not None:
        return lambda: field.default
    if slot.default_factory is not dataclasses.MISSING:
        return slot.default_factory
    if slot.default is not dataclasses.MISSING and slot.default is not None:
        return lambda: slot.default
    return None


def _compile_encoder(fields: tuple[Field, ...]) -> Encoder:
    """``encode(instance)``: the fields in table order, ``None`` (or empty) values left out."""
    env: dict[str, Any] = {}
    source = ["def encode(instance):", "    out = {}"]
    for i, f in enumerate(fields):
        env[f"write{i}"] = f.kind.write
        value = f"v{i}" if f.kind.write is None else f"write{i}(v{i})"
        present = f"v{i}" if f.omit_empty else f"v{i} is not None"
        source.append(f"    v{i} = instance.{f.attr}")
        source.append(f"    if {present}: out[{f.name!r}] = {value}")
    source.append("    return out")
    encoder: Encoder = _compile(source, env, "encode")
    return encoder


def object_kind(table: FieldTable) -> Kind:
    """The kind of a nested JSON object described by ``table`` (a deletion vector, a format)."""

    def read(where: str, name: str, value: Any) -> Any:
        inside = f"{where}.{name}"
        return table.decode(inside, json_object(inside, value))

    return Kind("an object", read, write=table.encode)
