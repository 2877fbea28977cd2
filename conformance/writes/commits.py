"""A commit file as the writes suite compares it: one JSON object per action, in file order.
Both the fixtures' mode (suite.py) and the live mode (live.py) read commits with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Json = dict[str, Any]


def read_commit(path: Path) -> list[Json]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
