"""deltaspec: executable spec, reference implementation and test oracle for the Delta log."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("deltaspec")
except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
    __version__ = "0+unknown"
