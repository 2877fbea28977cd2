"""Table schemas on the write path (delta-spark's ImplicitMetadataOperation).

A Delta ``schemaString`` is Spark's ``StructType.json()``; the functions here compare and merge
them as JSON, field names case-insensitively as delta-spark does by default.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import IncompatibleSchemaMergeError, SchemaMismatchError

Schema = dict[str, Any]


def parse(schema_string: str | None) -> Schema:
    return json.loads(schema_string) if schema_string else {"type": "struct", "fields": []}


def dumps(schema: Schema) -> str:
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def field_names(schema: Schema) -> list[str]:
    return [f["name"] for f in schema.get("fields", [])]


def not_null_columns(schema: Schema) -> list[str]:
    """The top-level columns declared NOT NULL."""
    return [f["name"] for f in schema["fields"] if not f.get("nullable", True)]


def _without_nullability(kind: Any) -> Any:
    if isinstance(kind, dict):
        return {
            k: _without_nullability(v)
            for k, v in kind.items()
            if k not in {"nullable", "containsNull", "valueContainsNull", "metadata"}
        }
    if isinstance(kind, list):
        return [_without_nullability(v) for v in kind]
    return kind


def same_type(a: Any, b: Any) -> bool:
    """Equal types up to nullability, field metadata and field-name case."""
    return json.dumps(_lower_names(_without_nullability(a))) == json.dumps(
        _lower_names(_without_nullability(b))
    )


def _lower_names(kind: Any) -> Any:
    if isinstance(kind, dict):
        return {k: (v.lower() if k == "name" and isinstance(v, str) else _lower_names(v))
                for k, v in kind.items()}  # fmt: skip
    if isinstance(kind, list):
        return [_lower_names(v) for v in kind]
    return kind


def _merge_type(table: Any, data: Any, where: str) -> Any:
    if data == "void":
        return table
    structs = isinstance(table, dict) and isinstance(data, dict)
    if structs and table.get("type") == data.get("type") == "struct":
        return merge(table, data, where + ".")
    if same_type(table, data):
        return table
    raise IncompatibleSchemaMergeError(
        f"failed to merge fields '{where}': {json.dumps(table)} and {json.dumps(data)}"
    )


def merge(table: Schema, data: Schema, prefix: str = "") -> Schema:
    """mergeSchema: the table's fields (types merged recursively), then the data's new fields."""
    by_name = {f["name"].lower(): f for f in data.get("fields", [])}
    fields = []
    for field in table.get("fields", []):
        incoming = by_name.pop(field["name"].lower(), None)
        if incoming is None:
            fields.append(field)
        else:
            merged = _merge_type(field["type"], incoming["type"], prefix + field["name"])
            fields.append({**field, "type": merged})
    fields.extend({**f, "nullable": True} for f in by_name.values())
    return {"type": "struct", "fields": fields}


def mismatches(table: Schema, data: Schema) -> list[str]:
    """Why ``data`` cannot be written as it is into ``table`` (empty: it can). Fewer columns is
    fine; an extra column or a different type is not."""
    by_name = {f["name"].lower(): f for f in table.get("fields", [])}
    problems = []
    for field in data.get("fields", []):
        existing = by_name.get(field["name"].lower())
        if existing is None:
            problems.append(f"column {field['name']!r} is not in the table")
        elif field["type"] != "void" and not same_type(existing["type"], field["type"]):
            problems.append(
                f"column {field['name']!r} is {json.dumps(field['type'])} in the data "
                f"and {json.dumps(existing['type'])} in the table"
            )
    return problems


def require_compatible(table: Schema, data: Schema, *, path: str) -> None:
    problems = mismatches(table, data)
    if problems:
        raise SchemaMismatchError(
            "A schema mismatch detected when writing to the Delta table: "
            + "; ".join(problems)
            + ". To enable schema migration, set the option mergeSchema to true.",
            table=path,
        )
