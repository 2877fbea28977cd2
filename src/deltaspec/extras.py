"""Optional parts of the install and the extra that brings each (pyproject.toml)."""

from __future__ import annotations

from importlib.util import find_spec

EXTRAS = {"pyspark": "spark", "py4j": "spark", "deltalake": "deltars"}
"""Top-level module → the extra that installs it."""


def install_hint(extra: str) -> str:
    """How to install ``extra``: from the repository (a clone or its git URL), as there is no
    ``deltaspec`` package on PyPI to install it from (docs/install.md)."""
    return f"pip install 'path/to/deltaspec[{extra}]' (from a clone of the repository)"


def missing_extra(error: ImportError) -> str | None:
    """A friendly message when ``error`` is an optional module that is not installed."""
    root = (error.name or "").split(".")[0]
    extra = EXTRAS.get(root)
    if extra is None:
        return None
    return f"this needs {root}, which is not installed: {install_hint(extra)}"


def available(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False
