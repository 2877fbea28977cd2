"""The conflict matrix's vectors (deltaspec.conformance.workload.matrix_vectors, from
spec/data/conflict_matrix.json) and the writer-protocol vectors (deltaspec.spec.generators.
writer_protocols, from spec/data/releases.json): the committed vectors are their output."""

from __future__ import annotations

import json
from pathlib import Path

from deltaspec.conformance.workload import matrix_vectors
from deltaspec.spec.generators import writer_protocols

REPO = Path(__file__).resolve().parents[2]
MATRIX = REPO / "spec" / "scenarios" / "matrix"


def test_the_committed_matrix_is_the_generators_output():
    generated = matrix_vectors.generate()
    committed = {
        str(p.relative_to(MATRIX)): json.loads(p.read_text()) for p in MATRIX.rglob("*.json")
    }
    assert len(generated) == 100
    assert committed == generated


def test_a_changed_cell_changes_its_vector():
    matrix = json.loads((REPO / "spec" / "data" / "conflict_matrix.json").read_text())
    cell = next(c for c in matrix["cells"] if c["winner"] == "INSERT" and c["loser"] == "UPDATE"
                and c["isolation"] == "Serializable" and c["partitions"] == "same")  # fmt: skip
    assert matrix_vectors.vector(cell)["expect"]["loser"] == {
        "conflict": "CONCURRENT_APPEND",
        "winner": 1,
    }
    cell["outcome"] = {"committed": 2}
    changed = matrix_vectors.vector(cell)
    assert changed["expect"]["loser"] == {"committed": 2}
    assert changed["expect_snapshot"]["version"] == 2
    assert "p=a/loser-a1-updated.parquet" in changed["expect_snapshot"]["files"]


WRITER_PROTOCOL = REPO / "spec" / "scenarios" / "txn" / "writer-protocol"


def test_the_committed_writer_protocol_vectors_are_the_generators_output():
    generated = writer_protocols.generate()
    committed = {
        str(p.relative_to(WRITER_PROTOCOL)): json.loads(p.read_text())
        for p in WRITER_PROTOCOL.rglob("*.json")
    }
    assert len(generated) == 3 * 24  # every described release but 0.1.0
    assert committed == generated


def test_a_release_before_the_new_protocol_check_commits_the_winners_upgrade():
    before = writer_protocols.winner_sets_unwritable_protocol((3, 0, 0))["expect"]
    after = writer_protocols.winner_sets_unwritable_protocol((3, 1, 0))["expect"]
    assert before == {
        "upgrade": {"committed": 1},
        "append": {"error": "UNSUPPORTED_WRITE_PROTOCOL"},
    }
    assert after == {"upgrade": {"error": "UNSUPPORTED_WRITE_PROTOCOL"}, "append": {"committed": 1}}
