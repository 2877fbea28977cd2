"""Bad API arguments are one typed error, InvalidArgumentError (also a TypeError), naming the
table: a table root that is no path, a version that is not an int (a bool is no version, though
Python counts True as 1). Before, DeltaLog(None) failed inside os.fspath and
snapshot(version=True) returned the snapshot of version 1 with version True."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import append_rows, create_reliability_table

from deltaspec.impl.errors import InvalidArgumentError
from deltaspec.impl.snapshot.delta_log import DeltaLog

NOT_A_ROOT = (None, "", 3, 2.5, b"bytes-path", ["t"])
NOT_A_VERSION = (True, False, 1.0, "1", b"1", [1], 1j)


@pytest.fixture
def table(tmp_path: Path) -> DeltaLog:
    log = create_reliability_table(tmp_path / "t")
    append_rows(log, "a", [1, 2])
    return DeltaLog(log.table_path)


@pytest.mark.parametrize("root", NOT_A_ROOT, ids=repr)
def test_a_table_root_that_is_no_path_is_refused(root: object) -> None:
    with pytest.raises(InvalidArgumentError, match="table root"):
        DeltaLog(root)  # type: ignore[arg-type]


@pytest.mark.parametrize("version", NOT_A_VERSION, ids=repr)
@pytest.mark.parametrize("call", ["snapshot", "read_commit"])
def test_a_version_that_is_not_an_int_is_refused(table: DeltaLog, call: str, version: object):
    with pytest.raises(InvalidArgumentError, match="a version is an int") as caught:
        getattr(table, call)(version)
    assert isinstance(caught.value, TypeError) and caught.value.table == table.table_path


def test_int_versions_still_read(table: DeltaLog) -> None:
    assert table.snapshot(1).version == 1 and table.snapshot().version == 1
    assert table.read_commit(0) and DeltaLog(Path(table.table_path)).snapshot(0).version == 0
