"""``python -m benchmarks``: see :mod:`benchmarks.runner`."""

from __future__ import annotations

import sys

from benchmarks.runner import main

if __name__ == "__main__":
    sys.exit(main())
