"""deltaspec: executable spec, reference implementation and test oracle for the Delta log."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("deltaspec")
except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
    __version__ = "0+unknown"

if __import__("os").environ.get("DELTASPEC_MUTANT"):  # an oracle run's mutant (Spark workers too)
    from deltaspec.conformance.oracle.mutant_env import install_from_environment

    install_from_environment()
