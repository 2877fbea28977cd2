"""spec/bridge/*.schema.json: every message the reference bridge exchanges over the whole corpus
(scenario vectors, log vectors through read_table) matches the request and response schemas."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from deltaspec.conformance.engines.cmd.adapter import BridgeAdapter, BridgeProcess, BridgeReader
from deltaspec.conformance.harness.logvectors import load_log_vectors, run_log_vectors
from deltaspec.conformance.harness.scenarios import load_scenarios
from deltaspec.conformance.harness.suites import run_scenario_suite
from deltaspec.rules import spec_root

REFERENCE = [sys.executable, "-m", "deltaspec.conformance.bridge.reference"]


def _schema(name: str) -> Any:
    return json.loads((spec_root() / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def validators() -> tuple[Any, Any]:
    names = ("scenario.schema.json", "log-vector.schema.json", "bridge/request.schema.json",
             "bridge/response.schema.json")  # fmt: skip
    documents = [_schema(n) for n in names]
    registry = Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in documents)
    request, response = documents[2], documents[3]
    make = jsonschema.Draft202012Validator
    return make(request, registry=registry), make(response, registry=registry)


def _result(response_validator: Any, method: str) -> Any:
    """A validator of method's result: $defs/results/<method> of the response schema."""
    ref = f"{response_validator.schema['$id']}#/$defs/results/{method}"
    return jsonschema.Draft202012Validator({"$ref": ref}, registry=response_validator._registry)


def _check(wire: list[str], validators: tuple[Any, Any]) -> int:
    request_validator, response_validator = validators
    results: dict[str, Any] = {}
    for sent, answer in zip(wire[::2], wire[1::2], strict=True):
        request, response = json.loads(sent), json.loads(answer)
        request_validator.validate(request)
        response_validator.validate(response)
        if "result" in response:
            method = request["method"]
            results.setdefault(method, _result(response_validator, method))
            results[method].validate(response["result"])
    return len(wire) // 2


def test_every_reference_bridge_message_matches_the_schemas(validators, tmp_path: Path):
    process = BridgeProcess(REFERENCE)
    process.wire = []
    try:
        process._start()
        run_scenario_suite(lambda _root: BridgeAdapter(process), load_scenarios())
        run_log_vectors(BridgeReader(process), load_log_vectors())
    finally:
        process.stop()
    methods = {json.loads(line).get("method") for line in process.wire[::2]}
    assert {"hello", "create", "begin", "read", "stage", "commit", "snapshot", "close",
            "read_table"} <= methods  # fmt: skip
    assert _check(process.wire, validators) > 2000


def test_the_schemas_reject_a_conflict_without_its_winner(validators):
    commit = _result(validators[1], "commit")
    assert commit.is_valid({"conflict": "CONCURRENT_APPEND", "winner": 1})
    assert not commit.is_valid({"conflict": "CONCURRENT_APPEND"})
    assert not commit.is_valid({"committed": -1})


def test_read_rows_messages_match_the_schemas(validators, fixtures_dir):
    """The reference bridge and the spec-only delta-rs bridge over fixture tables of every type
    the corpus has (dates, binary, timestamps, decimals, nested structs and lists)."""
    from deltaspec.conformance.engines.model.reader import model_states
    from deltaspec.conformance.harness.fixtures import load_manifest, run_fixtures

    chosen = {"dat-multi-partitioned", "golden-partition-values-all-types",
              "golden-timestamp-ntz-column-mapping-id"}  # fmt: skip
    tables = [t for t in load_manifest(fixtures_dir) if t.name in chosen]
    example = Path(__file__).parents[2] / "conformance/bridge/examples/deltars_read_table.py"
    for command in (REFERENCE, [sys.executable, str(example)]):
        process = BridgeProcess(command)
        process.wire = []
        try:
            process._start()
            run_fixtures(BridgeReader(process), fixtures_dir, expected_states=model_states,
                         tables=tables)  # fmt: skip
        finally:
            process.stop()
        sent = [json.loads(line)["method"] for line in process.wire[::2]]
        assert sent.count("read_rows") == 5, command  # the labelled versions of two tables
        _check(process.wire, validators)
    rows = _result(validators[1], "read_rows")
    assert rows.is_valid({"columns": ["a"], "rows": [[{"x": [1, None]}]]})
    assert not rows.is_valid({"columns": ["a"]})
    assert not rows.is_valid({"columns": ["a"], "rows": [{"a": 1}]})
