"""A commit's ``add`` lines decoded for replay as one Arrow table (ACTION.LINE_FORMAT, ACTION.ADD).

A bulk commit is mostly ``add`` lines. :func:`decode_for_replay` reads them with pyarrow's JSON
reader into :data:`~deltaspec.impl.replay.layouts.FILES_SCHEMA` rows in one pass instead of one
``json.loads`` and one :class:`~deltaspec.impl.actions.AddFile` per line; every other line goes
through the strict codec as before. The fast path is taken only when it can show that the strict
decoder would read the file to the same actions; whenever it cannot (a field or key it does not
declare, a null where the strict decoder would see an absent key, a deletion vector, a path the
path rule must look at, a ``\\r``, a surrogate escape, invalid UTF-8, a line pyarrow reads as
two rows, any pyarrow error, any error of the strict decoder on another line), the whole file is
decoded by the strict path (:func:`~deltaspec.impl.replay.commits.read_checked_commit`'s), which
raises its typed errors naming the table, version, file and line exactly as before.

What pyarrow's reader refuses where Python's ``json`` would take it (checked when this was written,
pyarrow 26): a key given twice (the strict decoder keeps the last: fallback), a number where a
string is declared, ``1.0`` or ``1e2`` for a long, a long beyond 64 bits, ``NaN``; it reads the
same escapes (``\\"``, ``\\n``, ``\\u00e9``, surrogate pairs) to the same text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from .. import codec
from ..actions import Action
from ..errors import DeltaError
from ..table import paths
from .file_checks import check_commit_actions
from .layouts import FILES_SCHEMA

__all__ = ["MIN_FAST_ADDS", "ColumnarCommit", "decode_columnar"]

MIN_FAST_ADDS: Final = 64
"""Fewer ``add`` lines than this are decoded one by one: pyarrow's fixed cost per call (about
0.2 ms) is more than a small commit's per-line decoding costs."""

_ADD_PREFIX: Final = b'{"add":{'
_LINE_ADD: Final = b"\n" + _ADD_PREFIX
_SURROGATE_ESCAPE: Final = r"\\u[dD][89a-fA-F]"
_BLOCK_BYTES: Final = 64 << 20
_FALSE: Final = pa.scalar(False, pa.bool_())
_ZERO: Final = pa.scalar(0, pa.int64())
_NO_TAGS: Final = pa.struct([])
_STRING_MAP: Final = FILES_SCHEMA.field("partition_values").type

_PLAIN_FIELDS: Final = (
    ("path", pa.string()),
    ("size", pa.int64()),
    ("modificationTime", pa.int64()),
    ("dataChange", pa.bool_()),
    ("stats", pa.string()),
    ("tags", _NO_TAGS),
    ("baseRowId", pa.int64()),
    ("defaultRowCommitVersion", pa.int64()),
    ("clusteringProvider", pa.string()),
)
"""The ``add`` fields the fast path declares besides ``partitionValues``; any other field (a
deletion vector, a non-empty ``tags``, a field a later protocol adds) makes pyarrow fail, and
the strict decoder reads the file."""


@dataclass(frozen=True)
class ColumnarCommit:
    """A commit decoded for replay: ``entries`` are its actions in file order, an ``int`` standing
    for that row of ``adds`` (:data:`FILES_SCHEMA`, dataChange stored false, paths canonical);
    ``paths`` is ``adds``'s path column as Python strings (the rows' file keys, no deletion
    vectors)."""

    entries: list[Action | int]
    adds: pa.Table = field(repr=False)
    paths: list[str] = field(repr=False)

    def __len__(self) -> int:
        return len(self.entries)

    @property
    def actions(self) -> list[Action]:
        """The actions that are not rows of ``adds``, in file order (commitInfo among them)."""
        return [entry for entry in self.entries if not isinstance(entry, int)]

    def rows(self) -> Iterator[int]:
        return (entry for entry in self.entries if isinstance(entry, int))


def _partition_keys(first_line: bytes) -> list[str] | None:
    """The ``partitionValues`` keys of the first add line, in its order (None: not an object)."""
    try:
        values = json.loads(first_line)["add"]["partitionValues"]
    except (ValueError, KeyError, TypeError):
        return None
    if type(values) is not dict or not all(type(v) is str for v in values.values()):
        return None
    return list(values)


def _same_key_order(lines: pa.Array, keys: list[str]) -> bool:
    """Whether every line writes its partition values with ``keys`` in this order and plain
    string values: pyarrow's struct has one field order, the strict decoder's dict the file's.
    The pattern cannot match inside a JSON string (a quote there is escaped)."""
    values = ",".join(f'"{re.escape(key)}":"[^"\\\\]*"' for key in keys)
    pattern = f'"partitionValues":\\{{{values}\\}}'
    return bool(pc.all(pc.match_substring_regex(lines, pattern)).as_py())


def _read_adds(block: pa.Buffer, first: bytes, rows: int) -> pa.Table | None:
    """``block``, ``rows`` add lines separated by single newlines (``first`` the first one), as
    FILES_SCHEMA rows, or None when the fast path cannot prove them equal to the strict
    decoder's reading."""
    keys = _partition_keys(first)
    if keys is None or any(json.dumps(key, ensure_ascii=False)[1:-1] != key for key in keys):
        return None
    add_type = pa.struct(
        [("partitionValues", pa.struct([(key, pa.string()) for key in keys])), *_PLAIN_FIELDS]
    )
    try:
        table = pa_json.read_json(
            pa.BufferReader(block),
            read_options=pa_json.ReadOptions(block_size=_BLOCK_BYTES, use_threads=False),
            parse_options=pa_json.ParseOptions(
                explicit_schema=pa.schema([("add", add_type)]),
                unexpected_field_behavior="error",
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    if table.num_rows != rows:
        return None  # a line held more than one object
    adds = table.column("add").combine_chunks()
    if len(keys) > 1 and not _same_key_order(_lines(block), keys):
        return None
    return _files_rows(adds, keys)


def _lines(block: pa.Buffer) -> pa.Array:
    """The lines of ``block`` (valid UTF-8) as a string array."""
    return pc.split_pattern(_one_value(pa.string(), block), "\n").flatten()


def _one_value(kind: pa.DataType, data: pa.Buffer) -> pa.Array:
    """A one-element ``kind`` (string or binary) array over ``data``, without copying it."""
    return pa.Array.from_buffers(
        kind, 1, [None, pa.array([0, data.size], pa.int32()).buffers()[1], data]
    )


def _files_rows(adds: pa.StructArray, keys: list[str]) -> pa.Table | None:
    """``adds`` (the declared struct) as FILES_SCHEMA rows; None where a required field is null,
    a partition value null (absent and null differ to the strict decoder), a size or time
    negative, or a path one the path rule must look at."""
    column = {adds.type.field(i).name: adds.field(i) for i in range(adds.type.num_fields)}
    values = column["partitionValues"]
    required = [values, column["path"], column["size"], column["modificationTime"]]
    required.append(column["dataChange"])
    required += [values.field(i) for i in range(len(keys))]
    if any(array.null_count for array in required):
        return None
    path = column["path"]
    bad = pc.or_(
        pc.match_substring_regex(path, paths.SUSPICIOUS_PATH), pc.match_substring(path, "\n")
    )
    for name in ("size", "modificationTime"):
        bad = pc.or_(bad, pc.less(column[name], _ZERO))
    if pc.any(bad).as_py():
        return None
    rows = len(adds)
    return pa.Table.from_arrays(
        [
            path,
            _string_map(values, keys),
            column["size"],
            column["modificationTime"],
            pa.repeat(_FALSE, rows),
            _empty_maps(column["tags"]),
            pa.nulls(rows, FILES_SCHEMA.field("deletion_vector").type),
            column["baseRowId"],
            column["defaultRowCommitVersion"],
            column["clusteringProvider"],
            column["stats"],
        ],
        schema=FILES_SCHEMA,
    )


def _string_map(values: pa.StructArray, keys: list[str]) -> pa.MapArray:
    """A struct of non-null strings as a map with ``keys`` in this order in every row."""
    rows, width = len(values), len(keys)
    offsets = pa.array([i * width for i in range(rows + 1)], pa.int32())
    if width == 1:
        items = values.field(0)
    elif width == 0:
        items = pa.array([], pa.string())
    else:
        children = pa.concat_arrays([values.field(k) for k in range(width)])
        order = [k * rows + i for i in range(rows) for k in range(width)]
        items = children.take(pa.array(order, pa.int64()))
    return pa.MapArray.from_arrays(
        offsets, pa.array(keys * rows, pa.string()), items, type=_STRING_MAP
    )


def _empty_maps(tags: pa.StructArray) -> pa.MapArray:
    """``tags`` read as an empty struct: ``{}`` an empty map, null or absent a null."""
    rows = len(tags)
    return pa.MapArray.from_arrays(
        pa.array([0] * (rows + 1), pa.int32()),
        pa.array([], pa.string()),
        pa.array([], pa.string()),
        type=_STRING_MAP,
        mask=tags.is_null() if tags.null_count else None,
    )


def decode_columnar(
    data: bytes, *, table: str, version: int, file: str, min_adds: int = MIN_FAST_ADDS
) -> ColumnarCommit | None:
    """The commit ``data`` decoded for replay with its add lines as one Arrow table, or None when
    the fast path does not apply (fewer than ``min_adds`` add lines) or cannot prove its reading
    equal to the strict decoder's: the caller then decodes ``data`` strictly."""
    span = _add_span(data)
    if (data.count(_ADD_PREFIX) if span is None else span[2]) < min_adds:
        return None
    if b"\r" in data or not _plain_utf8(data):
        return None
    if span is not None:
        start, end, rows = span
        first_end = data.find(b"\n", start, end)
        first = data[start : end if first_end < 0 else first_end]
        adds = _read_adds(pa.py_buffer(memoryview(data)[start:end]), first, rows)
        head, tail = data[:start].split(b"\n"), data[end:].split(b"\n")
        lines: list[bytes | int] = [*head, rows, *tail]
    else:
        split = data.split(b"\n")
        add_lines = [line for line in split if line.startswith(_ADD_PREFIX)]
        if len(add_lines) < min_adds:
            return None
        adds = _read_adds(pa.py_buffer(b"\n".join(add_lines)), add_lines[0], len(add_lines))
        lines = [1 if line.startswith(_ADD_PREFIX) else line for line in split]
    if adds is None:
        return None
    entries: list[Action | int] = []
    others: list[Action] = []
    row = 0
    try:
        for line in lines:
            if isinstance(line, int):  # that many add lines, the next rows of ``adds``
                entries.extend(range(row, row + line))
                row += line
            elif line and not line.isspace():
                decoded = codec.decode_commit(line, table=table, version=version, file=file)
                entries.extend(decoded)
                others.extend(decoded)
        check_commit_actions(others, table, version, file)
    except DeltaError:
        return None  # the strict path raises it, located by line
    if others:  # canonical paths of removes were set in ``others``: put them back in order
        replaced = iter(others)
        entries = [entry if isinstance(entry, int) else next(replaced) for entry in entries]
    return ColumnarCommit(entries, adds, adds.column("path").to_pylist())


def _plain_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8 (Arrow's check, which refuses what Python's strict
    ``decode`` refuses: overlong forms, surrogates, code points past U+10FFFF) without a
    ``\\u`` escape of a surrogate (pyarrow and Python's ``json`` read a lone one differently)."""
    whole = _one_value(pa.binary(), pa.py_buffer(data))
    try:
        whole.cast(pa.string())
    except pa.ArrowInvalid:
        return False
    return not pc.any(pc.match_substring_regex(whole, _SURROGATE_ESCAPE)).as_py()


def _add_span(data: bytes) -> tuple[int, int, int] | None:
    """Where ``data``'s add lines are when they follow each other with no other line between
    them: (start, end, number of lines), ``data[start:end]`` exactly those lines; None when
    another line (or an empty one) falls between two add lines. A raw newline or an unescaped
    quote cannot occur inside a JSON string, so every ``\\n{"add":{`` starts an add line."""
    first = 0 if data.startswith(_ADD_PREFIX) else data.find(_LINE_ADD) + 1
    if first == 0 and not data.startswith(_ADD_PREFIX):
        return None
    last = data.rfind(_LINE_ADD) + 1 or first
    end = data.find(b"\n", last)
    end = len(data) if end < 0 else end
    rows = data.count(_LINE_ADD, first, end) + 1
    if data.count(b"\n", first, end) + 1 != rows:
        return None
    return first, end, rows
