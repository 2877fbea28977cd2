"""One-off probes of the services stage: small tables on real files whose expected outcome the
spec states outright, for the rules the seeded scenarios of ``services`` never meet.

- ACTION.PROTOCOL: a table whose protocol names a reader feature this reader does not implement
  is refused at load, though every action parses.
- PATH.DATA_FILE: an absolute ``add.path`` in a sibling directory whose name starts with the
  table root's (``/t`` and ``/t-other/x``) lies outside the table: the load is refused.
- TXN.SET_TRANSACTION_DEDUP: two identical SetTransactions staged in one commit are written
  once.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...impl.actions import AddFile, SetTransaction
from ...impl.errors import UnsafePathError, UnsupportedProtocolError
from ...impl.snapshot.delta_log import DeltaLog
from ...impl.txn.transaction import OptimisticTransaction

SCHEMA = {"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": True, "metadata": {}}]}  # fmt: skip


class ProbeMismatch(AssertionError):
    """The impl disagrees with what the spec states for one probe."""


def _metadata() -> dict[str, Any]:
    return {"metaData": {"id": "probe", "format": {"provider": "parquet", "options": {}},
                         "schemaString": json.dumps(SCHEMA), "partitionColumns": [],
                         "configuration": {}, "createdTime": 0}}  # fmt: skip


def _add(path: str) -> dict[str, Any]:
    return {"add": {"path": path, "partitionValues": {}, "size": 1, "modificationTime": 0,
                    "dataChange": True}}  # fmt: skip


def _table(root: Path, actions: list[dict[str, Any]]) -> Path:
    """A table whose version 0 holds ``actions``."""
    log_dir = root / "_delta_log"
    log_dir.mkdir(parents=True)
    text = "".join(json.dumps(a) + "\n" for a in actions)
    (log_dir / f"{0:020d}.json").write_text(text, encoding="utf-8")
    return root


def _refused(root: Path, error: type[Exception], what: str) -> None:
    try:
        DeltaLog(str(root)).snapshot()
    except error:
        return
    raise ProbeMismatch(f"{what}: the load succeeded, the spec refuses it ({error.__name__})")


def unknown_reader_feature(workdir: Path) -> None:
    protocol = {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7,
                             "readerFeatures": ["deletionVectors", "futureReaderFeature"],
                             "writerFeatures": ["deletionVectors"]}}  # fmt: skip
    root = _table(workdir / "reader-feature", [protocol, _metadata(), _add("a.parquet")])
    _refused(root, UnsupportedProtocolError, "readerFeatures [futureReaderFeature]")


def sibling_of_the_root(workdir: Path) -> None:
    root = workdir / "t"
    outside = (workdir / "t-other" / "x.parquet").as_uri()
    protocol = {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}
    _table(root, [protocol, _metadata(), _add(outside)])
    _refused(root, UnsafePathError, f"add.path {outside} beside the table root {root}")


def repeated_set_transaction(workdir: Path) -> None:
    protocol = {"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}
    root = _table(workdir / "txn-dedup", [protocol, _metadata()])
    same = SetTransaction("job", 3, 0)
    new = AddFile("a.parquet", {}, 1, 0, True)
    version = OptimisticTransaction(DeltaLog(str(root))).commit([same, same, new])
    lines = (root / "_delta_log" / f"{version:020d}.json").read_text(encoding="utf-8")
    txns = [line for line in lines.splitlines() if line.strip() and "txn" in json.loads(line)]
    if len(txns) != 1:
        raise ProbeMismatch(f"two identical SetTransactions: {len(txns)} written, the spec keeps 1")


PROBES: tuple[Callable[[Path], None], ...] = (
    unknown_reader_feature,
    sibling_of_the_root,
    repeated_set_transaction,
)


def run_probes(workdir: Path) -> int:
    """Every probe, each in its own directory under ``workdir``; raises ProbeMismatch."""
    for probe in PROBES:
        directory = workdir / f"probe-{probe.__name__}"
        directory.mkdir()
        probe(directory)
    return len(PROBES)
