"""Crash points: a real child process SIGKILLs itself at every point where a writer can die.

The child runs one scenario on a real table — two blind appends (the first one checkpoints and
cleans up the expired log, sweeping a stale temporary file left by an earlier killed writer), a
three-part checkpoint with log cleanup, and a VACUUM that removes an orphaned data file — with
one crash point armed (deltaspec.impl.log.crashpoints), and dies there. The parent then checks that
the table opens (with deltaspec and with delta-rs, agreeing), that its version is the one before
or the one after the interrupted commit (never torn), that every commit the child acknowledged is
there, that no temporary file is read as a commit, that the log checks pass, and that a new
writer commits the next version.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
import uuid
from pathlib import Path

import pytest
from support import (
    append_rows,
    create_reliability_table,
    deltalake_view,
    log_problems,
    snapshot_view,
    write_data_file,
)

from deltaspec.impl.checkpoint.policy import checkpoint_version
from deltaspec.impl.log import crashpoints
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import commit_name, is_temp_name
from deltaspec.impl.retention.log_cleanup import sweep_temp_files
from deltaspec.impl.retention.vacuum import vacuum
from deltaspec.impl.snapshot.delta_log import DeltaLog, wall_clock_ms

pytest.importorskip("deltalake")

DAY = 24 * 3600 * 1000
CLOCK_AHEAD = 60 * DAY  # the child lives 60 days ahead: the log before its checkpoints expires

# (point, n): die the n-th time the point is reached. Every point once, plus the later
# occurrences that stop a multi-part checkpoint or a second cleanup half-way.
CASES = [(point, 1) for point in crashpoints.POINTS] + [
    ("commit.after_link", 2),  # the second append
    ("checkpoint.after_link", 3),  # part 2 of 3 written
    ("checkpoint.temp_partial", 4),  # part 3 of 3 half written
    ("last_checkpoint.after_temp", 2),  # the multi-part checkpoint's hint
    ("cleanup.mid_delete", 3),  # the second cleanup, after deleting checkpoint 2
]
NOT_LANDED = {"commit.begin", "commit.temp_partial", "commit.after_temp"}
"""Points at which the interrupted commit has not landed yet (the others: it has)."""


def scenario(root: str, acks: str) -> None:
    """What the child does; each step is acknowledged in ``acks`` once it has returned."""
    log = DeltaLog(root, clock=lambda: wall_clock_ms() + CLOCK_AHEAD)

    def ack(**record: object) -> None:
        with open(acks, "a", encoding="utf-8") as file:
            file.write(json.dumps(record) + "\n")
            file.flush()
            os.fsync(file.fileno())

    for part, ids in (("a", [1, 2]), ("b", [3])):
        version, txn_id, path = append_rows(log, part, ids)
        ack(kind="commit", version=version, txn=txn_id, path=path)
    checkpoint_version(log, version, now_ms=log.clock(), parts=3)
    ack(kind="checkpoint", version=version)
    result = vacuum(log, retention_ms=0, enforce_retention=False, now_ms=log.clock())
    ack(kind="vacuum", deleted=list(result.deleted))


def child(root: str, acks: str, point: str, nth: int) -> None:  # pragma: no cover - spawned
    crashpoints.arm(point, nth=nth)
    scenario(root, acks)


def prepare(root: Path) -> dict[str, object]:
    """Version 0 and 1, a stale temporary commit file and an orphaned data file (both left by
    an earlier writer killed long ago)."""
    log = create_reliability_table(root, **{"delta.checkpointInterval": "2"})
    version, txn_id, path = append_rows(log, "a", [0])
    old = time.time() - 3 * 3600
    stale = root / "_delta_log" / f".{commit_name(9)}.{uuid.uuid4().hex}.tmp"
    stale.write_bytes(b'{"commitInfo":{"planted":true}}\n{"add":{"path":"evil"}}\n')
    os.utime(stale, (old, old))
    orphan = write_data_file(root, "z", [99])
    os.utime(root / orphan.path, (old - DAY, old - DAY))
    return {"kind": "commit", "version": version, "txn": txn_id, "path": path}


def read_acks(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def temp_files(root: Path) -> list[str]:
    return sorted(n for n in os.listdir(root / "_delta_log") if is_temp_name(n))


@pytest.mark.rules("LOG.ATOMIC_VISIBILITY", "LOG.PUT_IF_ABSENT", "LOG.LISTING", "CHECKPOINT.READ")
def test_every_crash_point_is_on_a_code_path_and_in_a_case(tmp_path: Path) -> None:
    root = tmp_path / "t"
    prepare(root)
    with crashpoints.record() as reached:
        scenario(str(root), str(tmp_path / "acks"))
    assert set(crashpoints.POINTS) <= set(reached)
    assert {p for p in reached if not p.startswith("log_file.")} <= set(crashpoints.POINTS)
    assert {point for point, _ in CASES} == set(crashpoints.POINTS)
    for point, nth in CASES:
        assert reached.count(point) >= nth, (point, nth)
    assert log_problems(root) == []


@pytest.mark.rules(
    "LOG.ATOMIC_VISIBILITY",
    "LOG.PUT_IF_ABSENT",
    "LOG.LISTING",
    "LOG.CONTIGUITY",
    "CHECKPOINT.READ",
    "CHECKPOINT.LAST_CHECKPOINT",
    "RETENTION.LOG",
)
@pytest.mark.parametrize(("point", "nth"), CASES, ids=[f"{p}#{n}" for p, n in CASES])
def test_sigkill_at_crash_point(tmp_path: Path, point: str, nth: int) -> None:
    root = tmp_path / "t"
    acks_path = tmp_path / "acks.jsonl"
    setup_ack = prepare(root)
    process = multiprocessing.get_context("spawn").Process(
        target=child, args=(str(root), str(acks_path), point, nth)
    )
    process.start()
    process.join(120)
    assert process.exitcode == -signal.SIGKILL, f"the child did not die at {point}#{nth}"

    acks = [setup_ack, *read_acks(acks_path)]
    commits = [a for a in acks if a["kind"] == "commit"]
    last_acked = max(int(str(a["version"])) for a in commits)
    log = DeltaLog(str(root))
    snapshot = log.snapshot()

    # never torn: the interrupted commit is either entirely there or entirely absent
    assert snapshot.version in (last_acked, last_acked + 1)
    if point in NOT_LANDED and nth == 1:
        assert snapshot.version == last_acked
    elif point.startswith("commit.") and nth == 1:
        assert snapshot.version == last_acked + 1
    # nothing acknowledged is lost
    live = {path for path, _ in snapshot.files}
    for commit in commits:
        assert commit["path"] in live
        if (root / "_delta_log" / commit_name(int(str(commit["version"])))).exists():
            info = log.read_commit(int(str(commit["version"])))[0]
            assert info.get("txnId") == commit["txn"]  # type: ignore[attr-defined]
    # no temporary file is listed or read as a commit (the planted one names version 9)
    assert not any(is_temp_name(i.name) for i in LocalLogStore(root).list_from())
    assert snapshot.version < 9
    if point.endswith((".temp_partial", ".after_temp", ".after_link")):
        assert temp_files(root), "the crash should have left a temporary file behind"
    assert log_problems(root) == []
    assert deltalake_view(root) == (snapshot.version, sorted(live))

    # a new writer commits the next version; both readers see it
    version, _, path = append_rows(DeltaLog(str(root)), "c", [7])
    assert version == snapshot.version + 1
    after = DeltaLog(str(root)).snapshot()
    assert after.version == version and (path, None) in after.files
    assert deltalake_view(root) == (version, sorted(p for p, _ in after.files))
    assert log_problems(root) == []

    # stale temporary files are swept (after the safety window) and nothing else changes
    sweep_temp_files(LocalLogStore(root), wall_clock_ms() + 2 * 3600 * 1000)
    assert temp_files(root) == []
    assert snapshot_view(DeltaLog(str(root)).snapshot()) == snapshot_view(after)
