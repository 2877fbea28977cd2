"""What the local store fsyncs: a commit (its file and its directory entry) before it is
reported, never an advisory ``<v>.crc`` (LOG.PUT_IF_ABSENT, CHECKSUM.WRITE); and the store's
cheap listings agree with :meth:`LogStore.list_from` (LOG.LISTING)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from deltaspec.impl.errors import VersionExistsError
from deltaspec.impl.log.local_store import LocalLogStore
from deltaspec.impl.log.names import commit_name
from deltaspec.impl.log.store import LogStore


def _counting_fsync(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        calls.append(fd)
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return calls


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "CHECKSUM.WRITE")
def test_a_commit_is_fsynced_and_a_checksum_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalLogStore(tmp_path / "t")
    store.write_new(commit_name(0), b"{}\n")  # creates _delta_log as well
    calls = _counting_fsync(monkeypatch)
    store.write_new(commit_name(1), b"{}\n")
    assert len(calls) == 2  # the file, then the directory entry
    calls.clear()
    store.write_new("00000000000000000001.crc", b"{}")
    assert calls == []
    assert store.read("00000000000000000001.crc") == b"{}"
    assert not [n for n in os.listdir(store.log_dir) if n.endswith(".tmp")]


@pytest.mark.rules("LOG.PUT_IF_ABSENT", "LOG.ATOMIC_VISIBILITY")
def test_a_store_that_is_not_durable_fsyncs_nothing_and_still_excludes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _counting_fsync(monkeypatch)
    store = LocalLogStore(tmp_path / "t", durable=False)
    store.write_new(commit_name(0), b"{}\n")
    store.write_overwrite("_last_checkpoint", b'{"version":0,"size":1}')
    assert calls == []
    assert not store.durable and LocalLogStore(tmp_path / "t").durable
    with pytest.raises(VersionExistsError):
        store.write_new(commit_name(0), b"[]\n")
    assert store.read(commit_name(0)) == b"{}\n"
    assert not [n for n in os.listdir(store.log_dir) if n.endswith(".tmp")]


class _Hiding(LocalLogStore):
    """A store whose listings hide commit 1."""

    def list_from(self, start: str = "") -> list:  # type: ignore[type-arg]
        return [i for i in super().list_from(start) if i.name != commit_name(1)]


@pytest.mark.rules("LOG.LISTING")
@pytest.mark.parametrize("kind", [LocalLogStore, _Hiding])
def test_names_and_stat_agree_with_the_listing(tmp_path: Path, kind: type[LogStore]) -> None:
    store = kind(tmp_path / "t")  # type: ignore[call-arg]
    for version in range(3):
        store.write_new(commit_name(version), b"{}\n")
    store.write_new("00000000000000000002.crc", b"{}")
    (Path(store.table_path) / "_delta_log" / ".x.tmp").write_bytes(b"")
    listed = store.list_from("")
    assert store.list_names() == [info.name for info in listed]
    for info in listed:
        assert store.stat(info.name) == info
    assert store.stat(commit_name(7)) is None
    if kind is _Hiding:
        assert store.stat(commit_name(1)) is None
