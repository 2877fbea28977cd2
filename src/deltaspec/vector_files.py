"""Writing a generated corpus (``deltaspec.spec.generators``, and the conflict matrix's vectors in
``deltaspec.conformance.workload.matrix_vectors``): the target directory is replaced by the files,
so a vector the generator no longer makes disappears with it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .rules import spec_root


def spec_folder() -> Path:
    """The spec folder on disk, where a generator writes by default: the clone's ``spec/`` (an
    editable install's link tree holds symlinks to its files; replacing a folder there would
    leave the clone unchanged), or the installed package's."""
    return Path(str(spec_root() / "README.md")).resolve().parent


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
