"""Data file paths on strings (PATH.DATA_FILE's string part): the model has no file system, so it
judges only what a relative path says — where it resolves is the impl's and the readers' work."""

from __future__ import annotations

import re
from urllib.parse import unquote

_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def names_table_file(path: str) -> bool:
    """Whether a relative ``add``/``remove`` path can name a data file of the table: it decodes
    (no stray ``%``, no NUL), has no ``..`` segment, is not the root and does not lie inside
    ``_delta_log``. Absolute paths and other schemes are accepted here: judging them needs the
    table's location."""
    if path.startswith("/") or ":" in path.split("/")[0]:
        return True
    decoded = unquote(path)
    segments = [s for s in decoded.split("/") if s not in ("", ".")]
    return not (
        _BAD_ESCAPE.search(path)
        or "\0" in decoded
        or ".." in segments
        or not segments
        or segments[0] == "_delta_log"
    )
