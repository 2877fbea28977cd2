"""spec/data/file_size_histogram.json: the bins of a checksum file's ``fileSizeHistogram``
(CHECKSUM.WRITE), as delta-spark 4.4.0 writes them.

The model (``deltaspec.model.checksum``) and the impl (``deltaspec.impl.checksum``) both take the
boundaries from here, so the two sides of the rule cannot drift apart on a table of 95 numbers
(as ``deltaspec.releases_table`` is the one reader of the release behaviours).
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

HISTOGRAM_FILE = "file_size_histogram.json"


@cache
def bin_boundaries() -> tuple[int, ...]:
    """``sortedBinBoundaries`` in bytes, ascending, the first 0."""
    entry = resources.files("deltaspec.spec") / "data" / HISTOGRAM_FILE
    data = json.loads(entry.read_text(encoding="utf-8"))
    boundaries = tuple(int(b) for b in data["sortedBinBoundaries"])
    if not boundaries or boundaries[0] != 0 or list(boundaries) != sorted(set(boundaries)):
        raise ValueError(f"{HISTOGRAM_FILE}: the boundaries must ascend from 0")
    return boundaries
