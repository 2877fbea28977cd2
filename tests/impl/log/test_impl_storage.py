"""The production log store (deltaspec.impl.log.local_store): put-if-absent across threads and
processes, atomic visibility, consistent listing, temp-file hygiene (LOG.*)."""

from __future__ import annotations

import errno
import multiprocessing
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from deltaspec.impl.errors import DeltaError, VersionExistsError
from deltaspec.impl.log import atomic_files
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import commit_name, is_temp_name, parse_commit_name
from deltaspec.impl.log.store import FileInfo, LogStore

LOG = "_delta_log"


def temp_files(root: Path) -> list[str]:
    """Every temporary file left anywhere under the table root."""
    return sorted(
        os.path.relpath(os.path.join(folder, name), root)
        for folder, _, names in os.walk(root)
        for name in names
        if name.endswith(".tmp")
    )


# --------------------------------------------------------------------------------------------
# LOG.COMMIT_FILE_NAME
# --------------------------------------------------------------------------------------------


@pytest.mark.rules("LOG.COMMIT_FILE_NAME")
@pytest.mark.parametrize(
    ("version", "name"),
    [
        (0, "00000000000000000000.json"),
        (42, "00000000000000000042.json"),
        (2**63 - 1, "09223372036854775807.json"),
    ],
)
def test_commit_name_round_trips(version, name):
    assert commit_name(version) == name
    assert parse_commit_name(name) == version


@pytest.mark.rules("LOG.COMMIT_FILE_NAME")
@pytest.mark.parametrize(
    "name",
    [
        "0.json",
        "0000000000000000000.json",  # 19 digits
        "000000000000000000000.json",  # 21 digits
        "00000000000000000000.json.crc",
        ".00000000000000000000.json.crc",
        "00000000000000000000.crc",
        "00000000000000000010.checkpoint.parquet",
        "00000000000000000001.00000000000000000003.compacted.json",
        "_last_checkpoint",
        "_delta_log/00000000000000000000.json",
        "00000000000000000000.json\n",
        "\u0660" * 20 + ".json",  # Arabic-Indic digits are not commit names
        ".00000000000000000000.json.0123abcd.tmp",
    ],
)
def test_parse_commit_name_rejects_other_files(name):
    assert parse_commit_name(name) is None


@pytest.mark.rules("LOG.COMMIT_FILE_NAME")
@pytest.mark.parametrize("version", [-1, 10**20, True, 1.0, "1"])
def test_commit_name_rejects_bad_versions(version):
    with pytest.raises(ValueError):
        commit_name(version)


# --------------------------------------------------------------------------------------------
# LOG.PUT_IF_ABSENT
# --------------------------------------------------------------------------------------------

PROCESSES = 4
VERSIONS = 50


def payload(writer: int, version: int) -> bytes:
    """A payload that names its writer and version in every line, so a mix is detectable."""
    line = f'{{"commitInfo":{{"writer":{writer},"version":{version}}}}}\n'.encode()
    return line * 256  # ~12 KB


def race_versions(
    root: str, writer: int, barrier: Any, results: Any
) -> None:  # pragma: no cover - runs in a spawned process
    """Process body: try to create every version in order, moving on after each loss."""
    store = LocalLogStore(root)
    won: list[int] = []
    unlisted: list[int] = []
    barrier.wait(timeout=30)
    for version in range(VERSIONS):
        name = commit_name(version)
        try:
            store.write_new(name, payload(writer, version))
        except VersionExistsError:
            # LOG.LISTING: having learnt that the version exists, a later listing must show it.
            if name not in {info.name for info in store.list_from(name)}:
                unlisted.append(version)
        else:
            won.append(version)
            if name not in {info.name for info in store.list_from(name)}:
                unlisted.append(version)
    results.put((writer, won, unlisted))


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "LOG.ATOMIC_VISIBILITY", "LOG.LISTING")
def test_put_if_absent_across_processes(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(PROCESSES)
    results = ctx.Queue()
    processes = [
        ctx.Process(target=race_versions, args=(str(tmp_path), writer, barrier, results))
        for writer in range(PROCESSES)
    ]
    for process in processes:
        process.start()
    try:
        reports = [results.get(timeout=60) for _ in processes]
    finally:
        for process in processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
    assert [process.exitcode for process in processes] == [0] * PROCESSES

    wins = {writer: won for writer, won, _ in reports}
    print("wins per process:", {writer: len(won) for writer, won in wins.items()})
    assert sum(len(won) for won in wins.values()) == VERSIONS
    assert all(unlisted == [] for _, _, unlisted in reports)
    winner_of = {version: writer for writer, won in wins.items() for version in won}
    assert sorted(winner_of) == list(range(VERSIONS))  # every version won exactly once

    store = LocalLogStore(tmp_path)
    assert [info.name for info in store.list_from()] == [commit_name(v) for v in range(VERSIONS)]
    for version in range(VERSIONS):
        content = store.read(commit_name(version))
        # exactly the full payload of the process that reported the win: never mixed or partial
        assert content == payload(winner_of[version], version)
    assert temp_files(tmp_path) == []


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_put_if_absent_across_threads(tmp_path):
    store = LocalLogStore(tmp_path)
    name = commit_name(7)
    threads_count = 16
    barrier = threading.Barrier(threads_count)
    outcomes: dict[int, BaseException | None] = {}

    def attempt(writer: int) -> None:
        barrier.wait(timeout=10)
        try:
            store.write_new(name, payload(writer, 7))
        except BaseException as exc:
            outcomes[writer] = exc
        else:
            outcomes[writer] = None

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    winners = [writer for writer, exc in outcomes.items() if exc is None]
    losers = [exc for exc in outcomes.values() if exc is not None]
    assert len(outcomes) == threads_count
    assert len(winners) == 1
    assert all(isinstance(exc, VersionExistsError) for exc in losers)
    assert {exc.version for exc in losers if isinstance(exc, VersionExistsError)} == {7}
    assert store.read(name) == payload(winners[0], 7)
    assert temp_files(tmp_path) == []


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_existing_file_is_never_overwritten(tmp_path):
    store = LocalLogStore(tmp_path)
    store.write_new(commit_name(0), b"first")
    with pytest.raises(VersionExistsError):
        store.write_new(commit_name(0), b"second")
    with pytest.raises(VersionExistsError):
        store.write_new(commit_name(0), b"")
    assert store.read(commit_name(0)) == b"first"


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
@pytest.mark.parametrize(
    ("name", "version"),
    [
        ("00000000000000000003.json", 3),
        ("00000000000000000003.checkpoint.parquet", None),
        ("_last_checkpoint", None),
        ("_sidecars/0123.parquet", None),
    ],
)
def test_version_exists_error_names_table_version_and_file(tmp_path, name, version):
    store = LocalLogStore(tmp_path)
    store.write_new(name, b"x")
    with pytest.raises(VersionExistsError) as caught:
        store.write_new(name, b"y")
    error = caught.value
    assert isinstance(error, DeltaError)
    assert error.table == store.table_path == str(tmp_path)
    assert error.version == version
    assert error.file == name
    assert error.kind == "FILE_ALREADY_EXISTS"
    assert error.error_class == "DELTA_FILE_ALREADY_EXISTS"
    assert f"table={tmp_path}" in str(error)
    assert f"file={name}" in str(error)
    if version is not None:
        assert f"version={version}" in str(error)
    assert isinstance(error.__cause__, FileExistsError)


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "LOG.NEW_TABLE")
def test_write_new_creates_the_log_directory(tmp_path):
    root = tmp_path / "not" / "yet"
    store = LocalLogStore(root)
    assert store.list_from() == []
    assert store.list_dir("_sidecars") == []
    assert not store.exists(commit_name(0))
    store.write_new(commit_name(0), b"v0")
    store.write_new("_sidecars/a.parquet", b"sidecar")
    assert (root / LOG / commit_name(0)).read_bytes() == b"v0"
    assert (root / LOG / "_sidecars" / "a.parquet").read_bytes() == b"sidecar"


# --------------------------------------------------------------------------------------------
# Temporary files never remain and a failed write leaves nothing behind
# --------------------------------------------------------------------------------------------


@pytest.mark.rules("LOG.ATOMIC_VISIBILITY", "LOG.PUT_IF_ABSENT")
def test_no_temp_file_when_the_name_exists(tmp_path):
    store = LocalLogStore(tmp_path)
    store.write_new(commit_name(0), b"a")
    for _ in range(3):
        with pytest.raises(VersionExistsError):
            store.write_new(commit_name(0), b"b")
    assert temp_files(tmp_path) == []
    assert os.listdir(tmp_path / LOG) == [commit_name(0)]


@pytest.mark.rules("LOG.ATOMIC_VISIBILITY")
def test_no_temp_file_when_link_fails(tmp_path, monkeypatch):
    store = LocalLogStore(tmp_path)

    def broken_link(src: Any, dst: Any, **kwargs: Any) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "link", broken_link)
    with pytest.raises(OSError) as caught:
        store.write_new(commit_name(0), b"data")
    assert caught.value.errno == errno.EIO
    assert not isinstance(caught.value, VersionExistsError)
    assert temp_files(tmp_path) == []
    assert not store.exists(commit_name(0))
    assert store.list_from() == []


@pytest.mark.rules("LOG.ATOMIC_VISIBILITY")
def test_no_temp_file_when_writing_the_temp_fails(tmp_path, monkeypatch):
    store = LocalLogStore(tmp_path)

    def broken_fsync(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        store.write_new(commit_name(0), b"data")
    monkeypatch.undo()
    assert temp_files(tmp_path) == []
    assert store.list_from() == []
    store.write_new(commit_name(0), b"data")  # the version is still free
    assert store.read(commit_name(0)) == b"data"


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_fallback_without_hard_links_keeps_put_if_absent(tmp_path, monkeypatch):
    store = LocalLogStore(tmp_path)
    calls: list[str] = []

    def no_links(src: Any, dst: Any, **kwargs: Any) -> None:
        calls.append(str(dst))
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    store.write_new(commit_name(0), b"zero")
    store.write_new(commit_name(1), b"one")
    assert len(calls) == 1  # the store remembers that this file system has no hard links
    with pytest.raises(VersionExistsError) as caught:
        store.write_new(commit_name(1), b"other")
    assert caught.value.version == 1
    assert store.read(commit_name(0)) == b"zero"
    assert store.read(commit_name(1)) == b"one"
    assert temp_files(tmp_path) == []


@pytest.mark.rules("LOG.ATOMIC_VISIBILITY")
def test_fallback_removes_a_half_written_file(tmp_path, monkeypatch):
    store = LocalLogStore(tmp_path)

    def no_links(src: Any, dst: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOTSUP, "Operation not supported")

    monkeypatch.setattr(os, "link", no_links)
    store.write_new(commit_name(0), b"zero")  # switches the store to the fallback

    def broken_fsync(fd: int) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError):
        store.write_new(commit_name(1), b"one")
    assert not store.exists(commit_name(1))
    assert [info.name for info in store.list_from()] == [commit_name(0)]


# --------------------------------------------------------------------------------------------
# LOG.ATOMIC_VISIBILITY
# --------------------------------------------------------------------------------------------

BIG = 2 * 1024 * 1024


def big_payload(version: int) -> bytes:
    """2 MB whose every 16-byte block names the version; a prefix or a mix never equals it."""
    block = f"v{version:08d}-block\n".encode()
    assert len(block) == 16
    return f"HEAD {version}\n".encode() + block * (BIG // 16) + f"TAIL {version}\n".encode()


def slow_write_file(path: str, data: bytes) -> None:
    """atomic_files.write_file in 64 KiB chunks with pauses: a wide window for a partial read."""
    with open(path, "xb") as file:
        for offset in range(0, len(data), 64 * 1024):
            file.write(data[offset : offset + 64 * 1024])
            file.flush()
            time.sleep(0.0005)
        os.fsync(file.fileno())


@pytest.mark.rules("LOG.ATOMIC_VISIBILITY", "LOG.LISTING")
@pytest.mark.parametrize("writes", ["plain", "slow"])
def test_reader_never_sees_a_partial_commit(tmp_path, monkeypatch, writes):
    if writes == "slow":
        monkeypatch.setattr(atomic_files, "write_file", slow_write_file)
    store = LocalLogStore(tmp_path)
    versions = 12
    expected = {commit_name(v): big_payload(v) for v in range(versions)}
    done = threading.Event()
    problems: list[str] = []
    reads = 0
    temp_seen = 0

    def reader() -> None:
        nonlocal reads, temp_seen
        seen: set[str] = set()
        while True:
            finished = done.is_set()  # decided before listing: the last listing sees everything
            raw = os.listdir(tmp_path / LOG) if (tmp_path / LOG).exists() else []
            temp_seen += sum(1 for name in raw if is_temp_name(name))
            for info in store.list_from():
                if info.name not in expected:
                    problems.append(f"unexpected name {info.name}")
                    continue
                if info.size != len(expected[info.name]):
                    problems.append(f"{info.name} listed with size {info.size}")
                if info.name in seen and not finished:
                    continue
                content = store.read(info.name)
                reads += 1
                if content != expected[info.name]:
                    problems.append(f"{info.name}: partial or mixed ({len(content)} bytes)")
                seen.add(info.name)
            if finished:
                if seen != set(expected):
                    problems.append(f"final listing missed {sorted(set(expected) - seen)}")
                return

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for name, data in expected.items():
            store.write_new(name, data)
    finally:
        done.set()
        thread.join(timeout=60)
    assert problems == []
    assert reads >= versions
    if writes == "slow":
        # the temp files were there, being written, while no listing showed them
        assert temp_seen > 0
    assert temp_files(tmp_path) == []


# --------------------------------------------------------------------------------------------
# _last_checkpoint: the one overwritable file
# --------------------------------------------------------------------------------------------


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "CHECKPOINT.LAST_CHECKPOINT")
@pytest.mark.parametrize(
    "name", [commit_name(0), f"{0:020d}.crc", "_sidecars/x.parquet", "x", "_delta_log"]
)
def test_write_overwrite_only_for_the_hint_and_checkpoints(tmp_path, name):
    """_last_checkpoint and checkpoint files (a torn one is replaced, RETENTION.VERIFIED_CHECKPOINT)
    may be overwritten; a commit, a checksum, a sidecar or any other name never."""
    store = LocalLogStore(tmp_path)
    if name == commit_name(0):
        store.write_new(name, b"committed")
    with pytest.raises(ValueError):
        store.write_overwrite(name, b"overwritten")
    if name == commit_name(0):
        assert store.read(name) == b"committed"
    else:
        assert not store.exists(name)
    assert temp_files(tmp_path) == []


@pytest.mark.rules("RETENTION.VERIFIED_CHECKPOINT")
@pytest.mark.parametrize(
    "name",
    ["00000000000000000010.checkpoint.parquet",
     "00000000000000000010.checkpoint.0000000001.0000000002.parquet"],
)  # fmt: skip
def test_write_overwrite_replaces_a_checkpoint_file(tmp_path, name):
    store = LocalLogStore(tmp_path)
    store.write_new(name, b"PAR1 torn")
    store.write_overwrite(name, b"PAR1 whole PAR1")
    assert store.read(name) == b"PAR1 whole PAR1"
    assert temp_files(tmp_path) == []


@pytest.mark.rules("LOG.ATOMIC_VISIBILITY", "CHECKPOINT.LAST_CHECKPOINT")
def test_write_overwrite_is_atomic(tmp_path):
    store = LocalLogStore(tmp_path)
    contents = [b'{"version":%d,"size":1}\n' % i + bytes([65 + i]) * (512 * 1024) for i in range(4)]
    store.write_overwrite("_last_checkpoint", contents[0])
    assert store.read("_last_checkpoint") == contents[0]
    done = threading.Event()
    bad: list[int] = []
    reads = 0

    def reader() -> None:
        nonlocal reads
        while not done.is_set():
            content = store.read("_last_checkpoint")
            reads += 1
            if content not in contents:
                bad.append(len(content))

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for round_ in range(40):
            store.write_overwrite("_last_checkpoint", contents[round_ % len(contents)])
    finally:
        done.set()
        thread.join(timeout=30)
    assert bad == []
    assert reads > 0
    assert store.read("_last_checkpoint") == contents[39 % len(contents)]
    assert [info.name for info in store.list_from()] == ["_last_checkpoint"]
    assert temp_files(tmp_path) == []


@pytest.mark.rules("CHECKPOINT.LAST_CHECKPOINT")
def test_failed_overwrite_keeps_old_content_and_no_temp(tmp_path, monkeypatch):
    store = LocalLogStore(tmp_path)
    store.write_overwrite("_last_checkpoint", b"old")

    def broken_replace(src: Any, dst: Any, **kwargs: Any) -> None:
        raise OSError(errno.EIO, "I/O error")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        store.write_overwrite("_last_checkpoint", b"new")
    assert store.read("_last_checkpoint") == b"old"
    assert temp_files(tmp_path) == []


# --------------------------------------------------------------------------------------------
# LOG.LISTING
# --------------------------------------------------------------------------------------------


@pytest.mark.rules("LOG.LISTING")
def test_listing_is_sorted_hides_temp_files_and_shows_other_hidden_files(tmp_path):
    store = LocalLogStore(tmp_path)
    for version in (3, 0, 2, 1):
        store.write_new(commit_name(version), b"commit %d" % version)
    store.write_new("00000000000000000002.checkpoint.parquet", b"PAR1")
    store.write_new("00000000000000000002.crc", b"{}")
    store.write_overwrite("_last_checkpoint", b'{"version":2,"size":4}')
    store.write_new("_sidecars/0001.parquet", b"PAR1 sidecar")
    log = tmp_path / LOG
    (log / ".00000000000000000000.json.crc").write_bytes(b"hadoop crc")  # listed
    (log / ".x.tmp").write_bytes(b"stray temp")  # hidden
    (log / ".00000000000000000004.json.0123456789abcdef.tmp").write_bytes(b"half")  # hidden
    (log / "_staged_commits").mkdir()  # a directory is not a file

    everything = [
        ".00000000000000000000.json.crc",
        "00000000000000000000.json",
        "00000000000000000001.json",
        "00000000000000000002.checkpoint.parquet",
        "00000000000000000002.crc",
        "00000000000000000002.json",
        "00000000000000000003.json",
        "_last_checkpoint",
    ]
    listed = store.list_from()
    assert [info.name for info in listed] == everything
    assert all(isinstance(info, FileInfo) for info in listed)
    sizes = {info.name: info.size for info in listed}
    assert sizes[commit_name(3)] == len(b"commit 3")
    assert sizes[".00000000000000000000.json.crc"] == len(b"hadoop crc")
    now_ms = time.time() * 1000
    assert all(abs(info.modification_time - now_ms) < 60_000 for info in listed)

    # names >= start, in order; the start need not exist
    assert [i.name for i in store.list_from(commit_name(2))] == everything[5:]
    assert [i.name for i in store.list_from("00000000000000000002")] == everything[3:]
    assert [i.name for i in store.list_from(commit_name(4))] == ["_last_checkpoint"]
    assert [i.name for i in store.list_from("~")] == []

    [sidecar] = store.list_dir("_sidecars")
    assert (sidecar.name, sidecar.size) == ("_sidecars/0001.parquet", len(b"PAR1 sidecar"))
    assert store.read("_sidecars/0001.parquet") == b"PAR1 sidecar"
    assert store.list_dir("_staged_commits") == []


@pytest.mark.rules("LOG.LISTING")
def test_list_dir_hides_temp_files(tmp_path):
    store = LocalLogStore(tmp_path)
    store.write_new("_sidecars/b.parquet", b"b")
    store.write_new("_sidecars/a.parquet", b"a")
    (tmp_path / LOG / "_sidecars" / ".c.parquet.ff.tmp").write_bytes(b"c")
    assert [i.name for i in store.list_dir("_sidecars")] == [
        "_sidecars/a.parquet",
        "_sidecars/b.parquet",
    ]
    with pytest.raises(ValueError):
        store.list_dir("_sidecars/a.parquet")


@pytest.mark.rules("LOG.LISTING", "LOG.PUT_IF_ABSENT")
def test_listing_sees_every_completed_write(tmp_path):
    writer = LocalLogStore(tmp_path)
    reader = LocalLogStore(tmp_path)  # a second store on the same table: no shared state
    for version in range(20):
        writer.write_new(commit_name(version), b"%d" % version)
        assert reader.list_from(commit_name(version))[0].name == commit_name(version)
        with pytest.raises(VersionExistsError):
            reader.write_new(commit_name(version), b"late")
        assert commit_name(version) in {i.name for i in reader.list_from()}


# --------------------------------------------------------------------------------------------
# The rest of the interface
# --------------------------------------------------------------------------------------------


@pytest.mark.rules("RETENTION.LOG", "LOG.LISTING")
def test_read_exists_delete_and_local_path(tmp_path):
    store = LocalLogStore(tmp_path)
    assert isinstance(store, LogStore)
    with pytest.raises(FileNotFoundError):
        store.read(commit_name(0))
    store.write_new(commit_name(0), b"zero")
    store.write_new(commit_name(1), b"one")
    assert store.exists(commit_name(0))
    path = store.local_path(commit_name(0))
    assert path == str(tmp_path / LOG / commit_name(0))
    with open(path, "rb") as file:
        assert file.read() == b"zero"
    store.delete(commit_name(0))
    store.delete(commit_name(0))  # missing is not an error
    assert not store.exists(commit_name(0))
    assert [i.name for i in store.list_from()] == [commit_name(1)]


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
@pytest.mark.parametrize(
    "name",
    [
        "",
        "/abs.json",
        "../escape.json",
        "a/../b",
        "a/b/c",
        "./x",
        "a//b",
        "x\\y",
        ".a.tmp",
        "d/.b.tmp",
    ],
)
def test_invalid_names_are_rejected(tmp_path, name):
    store = LocalLogStore(tmp_path)
    with pytest.raises(ValueError):
        store.write_new(name, b"x")
    with pytest.raises(ValueError):
        store.read(name)
    assert not (tmp_path / LOG).exists() or temp_files(tmp_path) == []


@pytest.mark.rules("LOG.PUT_IF_ABSENT")
def test_write_new_rejects_text(tmp_path):
    store = LocalLogStore(tmp_path)
    with pytest.raises(TypeError):
        store.write_new(commit_name(0), "not bytes")  # type: ignore[arg-type]
    assert not store.exists(commit_name(0))


@pytest.mark.rules("LOG.LISTING")
def test_log_store_is_abstract():
    with pytest.raises(TypeError):
        LogStore()  # type: ignore[abstract]
