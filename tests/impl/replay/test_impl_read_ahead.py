"""Large commits read ahead of their replay on a second thread (impl/replay/read_ahead.py).

The replay must see what reading one by one gives: the same snapshot, each commit's error at its
own version, every read-ahead thread gone when the load returns or fails.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from deltaspec.impl.errors import CorruptLogError
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.replay import compaction
from deltaspec.impl.replay.read_ahead import READ_AHEAD_BYTES, ReadAhead
from deltaspec.impl.snapshot.delta_log import DeltaLog

_FIELD = {"name": "s", "type": "string", "nullable": True, "metadata": {}}
_SCHEMA = json.dumps({"type": "struct", "fields": [_FIELD]})

NOW = int(time.time() * 1000)


def _line(action: str, body: dict[str, object]) -> str:
    return json.dumps({action: body}, separators=(",", ":"))


def _bulk_commit(version: int, adds: int) -> str:
    """``adds`` add lines with long statistics: a commit file over READ_AHEAD_BYTES."""
    long = "v" * 900
    lines = [_line("commitInfo", {"timestamp": 1_700_000_000_000 + version, "operation": "WRITE"})]
    for i in range(adds):
        stats = json.dumps({"numRecords": 1, "minValues": {"s": long}, "maxValues": {"s": long}})
        body = {
            "path": f"v{version}-{i:05d}.parquet",
            "partitionValues": {},
            "size": 100 + i,
            "modificationTime": 1,
            "dataChange": True,
            "stats": stats,
        }
        lines.append(_line("add", body))
    if version % 2 == 0:  # a DELETE of a file of the commit before
        gone = {"path": f"v{version - 1}-00000.parquet", "deletionTimestamp": NOW}
        lines.append(_line("remove", gone))
    return "\n".join(lines) + "\n"


def _table(root: Path, commits: int, adds: int = 300) -> Path:
    log = root / "_delta_log"
    log.mkdir(parents=True)
    first = [
        _line("protocol", {"minReaderVersion": 1, "minWriterVersion": 2}),
        _line(
            "metaData",
            {
                "id": "t",
                "format": {"provider": "parquet", "options": {}},
                "schemaString": _SCHEMA,
                "partitionColumns": [],
                "configuration": {},
            },
        ),
    ]
    (log / commit_name(0)).write_text("\n".join(first) + "\n")
    for version in range(1, commits + 1):
        (log / commit_name(version)).write_text(_bulk_commit(version, adds))
    assert (log / commit_name(1)).stat().st_size >= READ_AHEAD_BYTES
    return root


def _view(root: Path) -> tuple[int, list[str], list[str], list[object]]:
    snapshot = DeltaLog(root, cache=False).snapshot()
    files = snapshot.files_table().sort_by("path")
    return (
        snapshot.version,
        files.column("path").to_pylist(),
        sorted(path for path, _ in snapshot.tombstones),
        snapshot.stats_table.to_pylist()[:3],
    )


def _read_ahead_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("deltaspec-read-ahead")]


@pytest.mark.rules("SNAPSHOT.REPLAY", "SNAPSHOT.RECONCILE")
def test_a_log_of_large_commits_replays_the_same_read_ahead_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _table(tmp_path / "t", commits=6)
    threads: set[str] = set()
    real = ReadAhead.__init__

    def counting(self: ReadAhead[object], read: object, versions: list[int]) -> None:
        def reading(version: int) -> object:
            threads.add(threading.current_thread().name)
            return read(version)  # type: ignore[operator]

        real(self, reading, versions)

    monkeypatch.setattr(ReadAhead, "__init__", counting)
    ahead = _view(root)
    assert any(name.startswith("deltaspec-read-ahead") for name in threads)
    monkeypatch.setattr(compaction, "READ_AHEAD_BYTES", 1 << 60)
    threads.clear()
    one_by_one = _view(root)
    assert threads == {threading.current_thread().name}
    assert ahead == one_by_one
    assert ahead[0] == 6 and len(ahead[1]) == 6 * 300 - 3 and len(ahead[2]) == 3
    assert not _read_ahead_threads()


@pytest.mark.rules("SNAPSHOT.REPLAY")
def test_a_corrupt_commit_among_large_ones_fails_at_its_own_version(tmp_path: Path) -> None:
    root = _table(tmp_path / "t", commits=6)
    for version in (3, 5):  # two torn commits: the first one read in order is the error
        name = root / "_delta_log" / commit_name(version)
        name.write_bytes(name.read_bytes()[:-5000] + b"\n{not json\n")
    with pytest.raises(CorruptLogError) as error:
        DeltaLog(root, cache=False).snapshot()
    assert error.value.version == 3
    assert error.value.file == commit_name(3)
    assert not _read_ahead_threads()


def test_read_ahead_gives_each_version_once_in_order_and_stops_on_close() -> None:
    calls: list[int] = []
    lock = threading.Lock()

    def read(version: int) -> int:
        with lock:
            calls.append(version)
        if version == 4:
            raise ValueError(version)
        return version * 10

    ahead = ReadAhead(read, [1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert [ahead(v) for v in (0, 1, 2, 3)] == [0, 10, 20, 30]
    with pytest.raises(ValueError, match="4"):
        ahead(4)
    ahead.close()
    assert not _read_ahead_threads()
    assert sorted(calls) == sorted(set(calls))  # nothing read twice
    assert 9 not in calls  # the window bounds what was read past the error
    assert ReadAhead(read, [7])(7) == 70  # one large commit: read in place, no thread
