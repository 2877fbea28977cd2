"""Every vector and message schema carries its format version in its ``$id`` (spec/README.md,
"Formats and compatibility"), every reference between them names that version, and the bridge
protocol's name carries the bridge schemas' number."""

from __future__ import annotations

import json
import re
from typing import Any

from deltaspec.conformance.bridge.reference import PROTOCOL as REFERENCE_PROTOCOL
from deltaspec.conformance.engines.cmd.adapter import PROTOCOL as DRIVER_PROTOCOL
from deltaspec.rules import spec_root

VERSIONED = re.compile(
    r"^https://deltaspec\.dev/schema/(?P<format>[a-z-]+)-(?P<version>\d+)\.json$"
)


def _schemas() -> dict[str, Any]:
    return {
        path.relative_to(spec_root()).as_posix(): json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(spec_root().rglob("*.schema.json"))
    }


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for value in node.values() for r in _refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in _refs(value)]
    return []


def test_every_schema_has_a_versioned_id_listed_in_the_readme():
    schemas = _schemas()
    assert set(schemas) == {
        "scenario.schema.json",
        "log-vector.schema.json",
        "bridge/request.schema.json",
        "bridge/response.schema.json",
    }
    readme = (spec_root() / "README.md").read_text(encoding="utf-8")
    for name, schema in schemas.items():
        match = VERSIONED.match(schema["$id"])
        assert match, f"{name}: $id {schema['$id']!r} carries no format version"
        assert f"`{match['format']}-{match['version']}`" in readme, name


def test_references_between_schemas_name_an_existing_version():
    ids = {schema["$id"] for schema in _schemas().values()}
    for name, schema in _schemas().items():
        for ref in _refs(schema):
            target = ref.split("#")[0]
            assert not target or target in ids, f"{name} refers to {target}, not a schema here"


def test_the_bridge_protocol_name_carries_the_bridge_schemas_version():
    schemas = _schemas()
    versions = {VERSIONED.match(schemas[f"bridge/{n}.schema.json"]["$id"])["version"]
                for n in ("request", "response")}  # fmt: skip
    assert len(versions) == 1
    protocol = f"deltaspec-bridge/{versions.pop()}"
    assert DRIVER_PROTOCOL == REFERENCE_PROTOCOL == protocol
    hello = schemas["bridge/request.schema.json"]["$defs"]["hello"]["properties"]["protocol"]
    assert hello["const"] == protocol
    assert f"(`{protocol}`)" in (spec_root() / "bridge.md").read_text(encoding="utf-8")
