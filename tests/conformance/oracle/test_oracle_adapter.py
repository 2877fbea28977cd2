"""``deltaspec oracle --adapter A``: the differential state machine against any adapter that
declares what it drives (actions, checkpoint, time travel), bridges included."""

from __future__ import annotations

import shlex
import sys

from deltaspec.cli import main

REFERENCE = f"cmd:{shlex.quote(sys.executable)} -m deltaspec.conformance.bridge.reference"
LOSES_A_FILE = """
import sys
from deltaspec.conformance.bridge import reference as bridge_reference

class Server(bridge_reference.Server):
    def handle(self, method, params):
        result = super().handle(method, params)
        if method == "snapshot" and isinstance(result, dict) and len(result.get("files", [])) > 1:
            result["files"] = result["files"][1:]
        return result

bridge_reference.Server = Server
bridge_reference.serve(sys.stdin, sys.stdout)
"""


def test_the_oracle_drives_a_bridge_and_finds_its_divergence(tmp_path, capsys):
    assert main(["oracle", "--examples", "3", "--adapter", REFERENCE]) == 0
    assert "model + cmd:" in capsys.readouterr().out
    program = tmp_path / "loses_a_file.py"
    program.write_text(LOSES_A_FILE)
    regressions = tmp_path / "regressions"
    code = main(["oracle", "--examples", "20", "--adapter", f"cmd:{sys.executable} {program}",
                 "--regressions", str(regressions)])  # fmt: skip
    assert code == 1
    assert "files" in capsys.readouterr().err
    assert list(regressions.glob("*.json"))  # the shrunk divergence, as a vector


def test_the_oracle_refuses_an_adapter_it_cannot_drive(capsys):
    assert main(["oracle", "--examples", "1", "--adapter", "deltars"]) == 2
    assert "lacks actions" in capsys.readouterr().err
    assert main(["oracle", "--adapter", "nope"]) == 2
