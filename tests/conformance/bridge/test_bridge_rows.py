"""read_rows (spec/bridge.md, "Rows in JSON"): the encoding both ways, the fixtures suite's row
checks over a bridge, and a bridge process that dies in the middle of the fixtures suite."""

from __future__ import annotations

import datetime
import decimal
import json
import shlex
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from deltaspec.cli import main
from deltaspec.conformance.harness.json_rows import JsonRows, decode_rows, encode_table

REFERENCE = f"cmd:{shlex.quote(sys.executable)} -m deltaspec.conformance.bridge.reference"
UTC = datetime.UTC


def _every_type() -> pa.Table:
    entries = pa.map_(pa.string(), pa.int32())
    return pa.table(
        {
            "b": pa.array([True, None], pa.bool_()),
            "i8": pa.array([-128, 7], pa.int8()),
            "l": pa.array([2**62, None], pa.int64()),
            "f": pa.array([float("nan"), float("-inf")], pa.float32()),
            "d": pa.array([1.5, float("inf")], pa.float64()),
            "dec": pa.array([decimal.Decimal("-12.50"), None], pa.decimal128(5, 2)),
            "s": pa.array(["é", ""], pa.string()),
            "bin": pa.array([b"\x00\xff", b""], pa.binary()),
            "date": pa.array([datetime.date(2021, 9, 8), datetime.date(1969, 12, 31)]),
            "ts": pa.array(
                [datetime.datetime(2021, 9, 8, 11, 11, 11, 5, tzinfo=UTC), None],
                pa.timestamp("us", tz="UTC"),
            ),
            "ntz": pa.array([datetime.datetime(1970, 1, 1, 0, 0, 1), None], pa.timestamp("us")),
            "st": pa.array(
                [{"x": 1, "y": {"z": "a"}}, {"x": None, "y": None}],
                pa.struct([("x", pa.int32()), ("y", pa.struct([("z", pa.string())]))]),
            ),
            "arr": pa.array([[{"v": 1}, None], []], pa.list_(pa.struct([("v", pa.int32())]))),
            "map": pa.array([[("k", 1), ("j", None)], None], entries),
        }
    )


def test_rows_cross_json_by_the_encoding_of_bridge_md_and_come_back_the_same():
    table = _every_type()
    wire = json.loads(json.dumps(encode_table(table), allow_nan=False))
    first = dict(zip(wire["columns"], wire["rows"][0], strict=True))
    assert first["f"] == "NaN" and first["d"] == 1.5 and first["dec"] == "-12.50"
    assert first["bin"] == "AP8=" and first["date"] == 18878
    assert first["ts"] == 1631099471000005 and first["ntz"] == 1_000_000
    assert first["map"] == [["k", 1], ["j", None]] and first["st"] == {"x": 1, "y": {"z": "a"}}
    assert wire["rows"][1][wire["columns"].index("date")] == -1
    back = decode_rows(JsonRows.of(wire), table.schema)
    assert back.schema == table.schema
    assert repr(back.to_pylist()) == repr(table.to_pylist())  # NaN compared by its repr


@pytest.mark.parametrize(
    ("column", "value"),
    [("ts", "2021-09-08T11:11:11Z"), ("dec", 1.5), ("date", True), ("bin", "not base64!")],
)
def test_a_value_not_in_the_encoding_is_refused(column, value):
    schema = _every_type().schema
    with pytest.raises((ValueError, TypeError, pa.ArrowException)):
        decode_rows(JsonRows((column,), ((value,),)), pa.schema([schema.field(column)]))


def _run(tmp_path: Path, adapter: str, fixtures_dir: Path, *cases: str) -> tuple[int, dict]:
    report = tmp_path / "report.json"
    selection = [arg for case in cases for arg in ("--case", case)]
    code = main(["conformance", "--adapter", adapter, "--suite", "fixtures", "--fixtures",
                 str(fixtures_dir), "--json", str(report), *selection])  # fmt: skip
    return code, json.loads(report.read_text())


def _verdicts(data: dict) -> dict[str, str]:
    return {case["case"]: case["verdict"] for case in data["suites"]["fixtures"]}


def test_the_reference_bridge_passes_the_row_checks_it_was_skipped_before(tmp_path, fixtures_dir):
    """Dates, binary (dat-multi-partitioned), zone-less timestamps (golden-timestamp-ntz-…) and
    four versions of one table: every row check runs over the bridge, and passes."""
    code, data = _run(tmp_path, REFERENCE, fixtures_dir, "fixtures/dat-multi-partitioned/*",
                      "fixtures/golden-timestamp-ntz-column-mapping-id/*")  # fmt: skip
    rows = {case: v for case, v in _verdicts(data).items() if "/rows@" in case}
    assert code == 0 and len(rows) == 5 and set(rows.values()) == {"pass"}


BAD_ROWS = """
import json, sys
from deltaspec.conformance.bridge import reference

server = reference.Server()
for line in sys.stdin:
    request = json.loads(line)
    method, params = request["method"], request["params"]
    result = server.handle(method, params)
    if method == "hello":
        result["capabilities"] = ["read_table", "read_rows"]
    if method == "read_rows" and params["version"] == 1:  # a date written as text
        result = {"columns": ["letter", "date"], "rows": [["a", "2021-09-08"]]}
    if method == "read_rows" and params["version"] == 2:  # one row too many
        result["rows"].append(result["rows"][0])
    print(json.dumps({"id": request["id"], "result": result}), flush=True)
"""


def test_rows_out_of_the_encoding_are_an_adapter_error_and_other_rows_are_unsafe(
    tmp_path, fixtures_dir
):
    program = tmp_path / "bad_rows.py"
    program.write_text(BAD_ROWS)
    adapter = f"cmd:{shlex.quote(sys.executable)} {program}"
    code, data = _run(tmp_path, adapter, fixtures_dir, "fixtures/dat-multi-partitioned/rows@*")
    verdicts = _verdicts(data)
    assert code == 1
    assert verdicts == {
        "fixtures/dat-multi-partitioned/rows@latest": "pass",  # asked as version null
        "fixtures/dat-multi-partitioned/rows@v0": "pass",
        "fixtures/dat-multi-partitioned/rows@v1": "error",
        "fixtures/dat-multi-partitioned/rows@v2": "unsafe",
    }
    v1 = next(c for c in data["suites"]["fixtures"] if c["case"].endswith("rows@v1"))
    assert "not in the JSON of spec/bridge.md" in v1["details"][0]


DYING = """
import json, os, sys
from deltaspec.conformance.bridge import reference

server = reference.Server()
for line in sys.stdin:
    request = json.loads(line)
    params = request["params"]
    if request["method"] == "read_table" and params["version"] == 2:
        os._exit(3)  # dies in the middle of the suite, every time it reads version 2
    result = server.handle(request["method"], params)
    print(json.dumps({"id": request["id"], "result": result}), flush=True)
"""


def test_a_bridge_that_exits_mid_suite_fails_that_case_alone(tmp_path, fixtures_dir):
    """The process dies on each read of version 2: those cases are errors, the driver starts a
    new process for the next one, and the run judges every other case of both tables."""
    program = tmp_path / "dying.py"
    program.write_text(DYING)
    adapter = f"cmd:{shlex.quote(sys.executable)} {program}"
    code, data = _run(tmp_path, adapter, fixtures_dir, "fixtures/golden-snapshot-history/*",
                      "fixtures/dat-multi-partitioned/*")  # fmt: skip
    verdicts = _verdicts(data)
    errors = sorted(case for case, v in verdicts.items() if v == "error")
    assert code == 1
    assert errors == ["fixtures/dat-multi-partitioned/v2", "fixtures/golden-snapshot-history/v2"]
    assert {v for case, v in verdicts.items() if case not in errors} == {"pass"}
    assert len(verdicts) == 8 + 13  # latest, every version, every row check of each table
    crash = next(c for c in data["suites"]["fixtures"] if c["case"] == errors[0])
    assert "exited (code 3) during read_table" in crash["details"][0]


def test_the_read_rows_transcript_of_bridge_md_is_what_the_reference_bridge_answers(
    fixtures_dir,
):
    """spec/bridge.md's read_table / read_rows transcript, replayed: the same answers (the
    table's absolute path in an error message aside)."""
    import subprocess

    from deltaspec.rules import spec_root

    text = (spec_root() / "bridge.md").read_text(encoding="utf-8")
    section = text.split("## A worked transcript: reading a table and its rows")[1]
    block = section.split("```\n")[1]
    sent = [line[2:] for line in block.splitlines() if line.startswith("→ ")]
    shown = [line[2:] for line in block.splitlines() if line.startswith("← ")]
    assert [json.loads(line)["method"] for line in sent] == [
        "hello", "read_table", "read_rows", "read_rows"]  # fmt: skip
    answered = subprocess.run(
        [sys.executable, "-m", "deltaspec.conformance.bridge.reference"],
        input="".join(line + "\n" for line in sent),
        capture_output=True, text=True, cwd=fixtures_dir, check=True, timeout=120,
    ).stdout.splitlines()  # fmt: skip
    here = str(fixtures_dir.resolve())
    assert [a.replace(here, "DIR") for a in answered] == [
        s.replace("/work/shared/fixtures/delta-spark", "DIR") for s in shown
    ]
