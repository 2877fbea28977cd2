"""Generates spec/scenarios/matrix/ from spec/data/conflict_matrix.json: one scenario vector per
cell (winner operation × loser operation × isolation level × same or disjoint partitions).

    python -m deltaspec.conformance.workload.matrix_vectors [OUT]   # default: spec/scenarios/matrix

The cell's outcome, rules and reasoning ("why") come from the matrix data; this script only
spells them out as vectors: each matrix operation is a kind of the workload alphabet
(``MATRIX_OPERATIONS``), written as ``workload.scenario.matrix_writer`` spells it. It lives here,
beside the alphabet, and not in ``deltaspec.spec.generators``: the spec is the chain's bottom
layer.
tests/spec/test_log_vectors.py checks that the committed vectors equal its output.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from deltaspec.vector_files import spec_folder, write_tree

from .alphabet import MATRIX_OPERATIONS
from .scenario import matrix_writer

Json = dict[str, Any]
INITIAL = ["p=a/a1.parquet", "p=a/a2.parquet", "p=b/b1.parquet", "p=b/b2.parquet"]
NOTE = (
    "Table: p:string partition column, x:long; version 0 holds p=a/a1, p=a/a2, p=b/b1, p=b/b2. "
    "A table carrying delta.isolationLevel=WriteSerializable is honoured on read (reference 0.1) "
    "even though OSS delta-spark refuses to set it."
)


def writer(operation: str, name: str, partition: str) -> Json:
    """A matrix operation (conflict_matrix.json's "operations") run by ``name`` in ``partition``."""
    return matrix_writer(MATRIX_OPERATIONS[operation], name, partition)


def _apply(files: list[str], writer_: Json) -> list[str]:
    removed = {a["remove"]["path"] for a in writer_["actions"] if "remove" in a}
    added = [a["add"]["path"] for a in writer_["actions"] if "add" in a]
    return sorted({*files, *added} - removed)


def vector(cell: Json) -> Json:
    win_part = "a" if cell["partitions"] == "same" else "b"
    winner, loser = writer(cell["winner"], "winner", win_part), writer(cell["loser"], "loser", "a")
    committed = "committed" in cell["outcome"]
    files = _apply(INITIAL, winner)
    if committed:
        files = _apply(files, loser)
    slug = f"{cell['winner'].lower()}-vs-{cell['loser'].lower()}"
    description = (
        f"Conflict-matrix cell: winner {cell['winner']} on partition p={win_part}, loser "
        f"{cell['loser']} on partition p=a, table property delta.isolationLevel="
        f"{cell['isolation']}, profile 4.4.0. Both writers begin at version 0; the winner commits "
        f"version 1 first, then the loser runs its commit loop. {cell['why']} {NOTE}"
    )
    return {
        "id": f"matrix/{slug}/{cell['isolation'].lower()}/{cell['partitions']}",
        "description": description,
        "rules": cell["rules"],
        "profile": "4.4.0",
        "matrix_cell": {k: cell[k] for k in ("winner", "loser", "isolation", "partitions")},
        "table": {
            "schema": [{"name": "p", "type": "string"}, {"name": "x", "type": "long"}],
            "partition_columns": ["p"],
            "properties": {"delta.isolationLevel": cell["isolation"]},
            "files": [{"path": f, "partition": {"p": f[2]}} for f in INITIAL],
        },
        "writers": {"winner": winner, "loser": loser},
        "steps": [
            {"begin": "winner"},
            {"begin": "loser"},
            {"commit": "winner"},
            {"commit": "loser"},
        ],
        # a conflict names the winning commit that caused it: version 1
        "expect": {
            "winner": {"committed": 1},
            "loser": cell["outcome"] if committed else {**cell["outcome"], "winner": 1},
        },
        "expect_snapshot": {"version": 2 if committed else 1, "files": files},
    }


def generate(matrix: Json | None = None) -> dict[str, Json]:
    """Relative path -> vector, for every cell."""
    if matrix is None:
        source = spec_folder() / "data" / "conflict_matrix.json"
        matrix = json.loads(source.read_text(encoding="utf-8"))
    out = {}
    for cell in matrix["cells"]:
        item = vector(cell)
        out[item["id"].removeprefix("matrix/") + ".json"] = item
    return out


def write(directory: Path) -> int:
    return write_tree(directory, generate())


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else spec_folder() / "scenarios" / "matrix"
    print(f"wrote {write(target)} matrix vectors to {target}")
