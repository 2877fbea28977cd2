"""Generates spec/scenarios/txn/writer-protocol/ from spec/data/releases.json
(``writer_protocols``): for every described release from v0.2.0, three vectors of
TXN.WRITER_PROTOCOL.

    python -m deltaspec.spec.generators.writer_protocols [OUT]
    # OUT defaults to spec/scenarios/txn/writer-protocol

- ``full-features/R``: a table whose protocol supports everything release R's writer can write
  (table features: reader version 3 and writer version 7 listing every such feature, reader-writer
  ones in ``readerFeatures`` too, as delta-spark's own tests create tables; before v2.3.0 the
  highest writer version R takes). Two concurrent blind appends both commit.
- ``unwritable-table/R``: the same table plus one writer feature R does not support (before
  v2.3.0: one writer version above R's). An append fails with UNSUPPORTED_WRITE_PROTOCOL.
- ``winner-sets-unwritable-protocol/R``: a legacy table; one writer upgrades the protocol to one
  R cannot write while another appends. From v3.1.0 the upgrade itself is refused and the append
  commits; before, the upgrade commits and the append then fails on it (v0.3.0+) or commits
  (v0.2.x, which does not check a winner's protocol).

The releases, their features and the behaviours come from releases.json; this script only
spells them out as vectors. tests/spec/test_generators.py checks that the committed vectors equal
its output.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from deltaspec.releases_table import (
    TABLE_FEATURES_WRITER_VERSION,
    ReleaseNumber,
    behaviours,
    described_releases,
    full_writer_protocol,
    unwritable_feature,
    unwritable_protocol,
    writer_support,
)
from deltaspec.vector_files import spec_folder, write_tree

Json = dict[str, Any]
RULES = ["TXN.WRITER_PROTOCOL", "ACTION.PROTOCOL"]
SCHEMA = [{"name": "x", "type": "long"}]
ROWS = '{"numRecords":1}'  # rowTracking tables assign row ids from it (ROWTRACKING.FRESH_ROW_IDS)


def _name(release: ReleaseNumber) -> str:
    return ".".join(str(part) for part in release)


def _append(path: str) -> Json:
    return {"operation": "WRITE", "actions": [{"add": {"path": path, "stats": ROWS}}]}


def full_features(release: ReleaseNumber) -> Json:
    name, protocol = _name(release), full_writer_protocol(release)
    return {
        "id": f"txn/writer-protocol/full-features/{name}",
        "description": (
            f"Profile {name}: a table whose protocol supports everything delta-spark {name}'s "
            "writer can write (TXN.WRITER_PROTOCOL; with table features, every such writer "
            "feature listed, reader-writer ones as reader features too) is written as any other: "
            "two concurrent blind appends commit at versions 1 and 2, the protocol unchanged."
        ),
        "rules": RULES,
        "profile": name,
        "table": {"schema": SCHEMA, "protocol": protocol},
        "writers": {"a": _append("a.parquet"), "b": _append("b.parquet")},
        "steps": [{"begin": "a"}, {"begin": "b"}, {"commit": "a"}, {"commit": "b"}],
        "expect": {"a": {"committed": 1}, "b": {"committed": 2}},
        "expect_snapshot": {
            "version": 2,
            "files": ["a.parquet", "b.parquet"],
            "protocol": protocol,
        },
    }


def unwritable_table(release: ReleaseNumber) -> Json:
    name = _name(release)
    protocol = unwritable_protocol(release, full_writer_protocol(release))
    return {
        "id": f"txn/writer-protocol/unwritable-table/{name}",
        "description": (
            f"Profile {name}: the table's protocol needs what delta-spark {name}'s writer does not "
            f"support ({_what(release, protocol)}), so an append fails with "
            "UNSUPPORTED_WRITE_PROTOCOL and writes nothing (TXN.WRITER_PROTOCOL)."
        ),
        "rules": RULES,
        "profile": name,
        "table": {"schema": SCHEMA, "protocol": protocol},
        "writers": {"a": _append("a.parquet")},
        "steps": [{"begin": "a"}, {"commit": "a"}],
        "expect": {"a": {"error": "UNSUPPORTED_WRITE_PROTOCOL"}},
        "expect_snapshot": {"version": 0, "files": []},
    }


def _what(release: ReleaseNumber, protocol: Json) -> str:
    if protocol["minWriterVersion"] < TABLE_FEATURES_WRITER_VERSION or (
        TABLE_FEATURES_WRITER_VERSION not in writer_support(release).writer_versions
    ):
        return f"minWriterVersion {protocol['minWriterVersion']}"
    return f"the writer feature {unwritable_feature(release)}"


def winner_sets_unwritable_protocol(release: ReleaseNumber) -> Json:
    name = _name(release)
    legacy = {"minReaderVersion": 1, "minWriterVersion": 2}
    support = writer_support(release)
    if TABLE_FEATURES_WRITER_VERSION in support.writer_versions:
        upgrade = {
            "minReaderVersion": 1,
            "minWriterVersion": TABLE_FEATURES_WRITER_VERSION,
            "writerFeatures": sorted(["appendOnly", "invariants", unwritable_feature(release)]),
        }
    else:
        upgrade = {"minReaderVersion": 1, "minWriterVersion": max(support.writer_versions) + 1}
    checks_new = behaviours()["new_protocol_write_check"].holds_in(release)
    checks_winner = behaviours()["winner_protocol_write_check"].holds_in(release)
    if checks_new:
        expect = {"upgrade": {"error": "UNSUPPORTED_WRITE_PROTOCOL"}, "append": {"committed": 1}}
        snapshot = {"version": 1, "files": ["a.parquet"], "protocol": legacy}
        story = "refuses the upgrade itself (v3.1.0+), so the append commits at version 1"
    elif checks_winner:
        expect = {"upgrade": {"committed": 1}, "append": {"error": "UNSUPPORTED_WRITE_PROTOCOL"}}
        snapshot = {"version": 1, "files": [], "protocol": upgrade}
        story = (
            "commits the upgrade (no check of a protocol a commit sets before v3.1.0); the "
            "append then fails on the winner's protocol (CONFLICT.PROTOCOL), an error, not a "
            "conflict"
        )
    else:
        expect = {"upgrade": {"committed": 1}, "append": {"committed": 2}}
        snapshot = {"version": 2, "files": ["a.parquet"], "protocol": upgrade}
        story = "commits the upgrade and, checking no winner's protocol before v0.3.0, the append"
    return {
        "id": f"txn/writer-protocol/winner-sets-unwritable-protocol/{name}",
        "description": (
            f"Profile {name}: on a (1, 2) table one writer commits a protocol delta-spark {name} "
            f"cannot write while another appends; the release {story} (TXN.WRITER_PROTOCOL)."
        ),
        "rules": [*RULES, "CONFLICT.PROTOCOL"],
        "profile": name,
        "table": {"schema": SCHEMA, "protocol": legacy},
        "writers": {
            "upgrade": {"operation": "UPGRADE PROTOCOL", "actions": [{"protocol": upgrade}]},
            "append": _append("a.parquet"),
        },
        "steps": [
            {"begin": "upgrade"},
            {"begin": "append"},
            {"commit": "upgrade"},
            {"commit": "append"},
        ],
        "expect": expect,
        "expect_snapshot": snapshot,
    }


def generate() -> dict[str, Json]:
    """Relative path -> vector, for every described release from v0.2.0."""
    out = {}
    for release in described_releases():
        if not behaviours()["retries"].holds_in(release):
            continue  # v0.1.0: any concurrent commit fails (CONFLICT.ANY_COMMIT_V01)
        for build in (full_features, unwritable_table, winner_sets_unwritable_protocol):
            item = build(release)
            out[item["id"].removeprefix("txn/writer-protocol/") + ".json"] = item
    return out


def write(directory: Path) -> int:
    return write_tree(directory, generate())


if __name__ == "__main__":
    default = spec_folder() / "scenarios" / "txn" / "writer-protocol"
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else default
    print(f"wrote {write(target)} writer-protocol vectors to {target}")
