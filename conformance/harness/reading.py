"""What the suites that read tables on disk (fixtures, log vectors) need of a reader: the
snapshot JSON of a table at a version, its rows where it can scan (an Arrow table, or a bridge's
``read_rows`` answer: json_rows.py), and ``ReadFailure`` carrying the
neutral error kind (impl/errors.py ``kind`` values) when it refuses the table."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from .json_rows import JsonRows

Json = dict[str, Any]


class ReadFailure(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind


class TableReader(Protocol):
    name: str

    def read(self, root: Path, version: int | None) -> Json: ...

    def rows(self, root: Path, version: int | None) -> pa.Table | JsonRows | None: ...
