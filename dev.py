"""Bootstrap: create and reuse `.venv`, then run the main job or the test suite.

    python3 dev.py check          # the oracle's main job (`deltaspec check`)
    python3 dev.py test           # lint, types, the docs site build and the whole test suite
    python3 dev.py test --quick   # the same without the tests marked slow: no SparkSession,
                                  # no other engine process (the inner loop)

Needs nothing but python3 (and Java 17 once the Spark path is installed). The
package is installed in strict editable mode, so the installed `deltaspec`
tree mirrors the repo; it is reinstalled when pyproject.toml or the set of
package files changes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".deltaspec-install"
PACKAGE_DIRS = ("src", "model", "impl", "conformance", "spec")
# mkdocs-material prints a multi-line notice about MkDocs 2 on every build; it is not about us
STEP_ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}


def _install_fingerprint() -> str:
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes())
    for folder in PACKAGE_DIRS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(ROOT)).encode())
    return digest.hexdigest()


def _run(*args: str | Path) -> None:
    subprocess.run([str(a) for a in args], cwd=ROOT, check=True)


def ensure_venv() -> None:
    if not (BIN / "python").exists():
        _run(sys.executable, "-m", "venv", VENV)
        _run(BIN / "python", "-m", "pip", "install", "--quiet", "--upgrade", "pip")
    fingerprint = _install_fingerprint()
    if STAMP.exists() and STAMP.read_text() == fingerprint:
        return
    install = [
        str(BIN / "python"), "-m", "pip", "install", "--quiet",
        "--config-settings", "editable_mode=strict", "-e", ".[dev]",
    ]  # fmt: skip
    done = subprocess.run(install, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(done.returncode)
    STAMP.write_text(fingerprint)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"check", "test"}:
        print(__doc__)
        return 2
    ensure_venv()
    command, rest = argv[0], argv[1:]
    if command == "test" and "--quick" in rest:
        rest = [arg for arg in rest if arg != "--quick"] + ["-m", "not slow"]
    if command == "check":
        return subprocess.run([str(BIN / "deltaspec"), "check", *rest], cwd=ROOT).returncode
    with tempfile.TemporaryDirectory(prefix="deltaspec-site-") as site:
        steps = [
            [str(BIN / "ruff"), "check", "."],
            [str(BIN / "ruff"), "format", "--check", "."],
            [str(BIN / "mypy"), "-p", "deltaspec"],
            [str(BIN / "mypy"), "benchmarks"],
            [str(BIN / "lint-imports"), "--no-cache"],
            # the docs site (mkdocs.yml): every link resolves, the generated pages build; into a
            # temporary directory outside the clone, so no site/ is left in the checkout
            [str(BIN / "mkdocs"), "build", "--strict", "--site-dir", site],
            [str(BIN / "pytest"), "-n", "auto", *rest],
        ]
        for step in steps:
            code = subprocess.run(step, cwd=ROOT, env=STEP_ENV).returncode
            if code != 0:
                return code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
