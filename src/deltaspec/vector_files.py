"""Writing a generated corpus (spec/generators/): the target directory is replaced by the files,
so a vector the generator no longer makes disappears with it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def write_tree(directory: Path, files: Mapping[str, Any]) -> int:
    """Replace ``directory`` by ``files`` (relative path → text, or a JSON value written with
    two-space indentation); returns how many were written."""
    if directory.exists():
        shutil.rmtree(directory)
    for relative, content in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        text = content if isinstance(content, str) else json.dumps(content, indent=2) + "\n"
        path.write_text(text, encoding="utf-8")
    return len(files)
