"""Bootstrap: create and reuse `.venv`, then run the main job or the test suite.

    python3 dev.py check          # the oracle's main job (`deltaspec check`)
    python3 dev.py test           # lint, types, the docs site build and the whole test suite
    python3 dev.py test --quick   # the same without the tests marked slow: no SparkSession,
                                  # no other engine process (the inner loop)
    python3 dev.py release        # the sdist and the wheel of the commit tagged v<version>,
                                  # into dist/ (refused on an untagged or modified checkout)

Needs nothing but python3 (and Java 17 once the Spark path is installed). The
package is installed in strict editable mode, so the installed `deltaspec`
tree mirrors the repo; it is reinstalled when pyproject.toml or the set of
package files changes.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".deltaspec-install"
PACKAGE_DIRS = tuple(
    folder.split("/")[0]
    for folder in tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"][
        "setuptools"
    ]["package-dir"].values()
)
"""The folders pyproject maps to packages: a file added to one re-links the editable install."""
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


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout  # fmt: skip


def version() -> str:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return str(pyproject["project"]["version"])


def export_tree(target: Path, *, commit: str | None) -> None:
    """The files of ``commit`` (``git archive``), or with None the working tree's files that git
    tracks or would (untracked ones not ignored included), into ``target``."""
    if commit is not None:
        archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=ROOT,
                                 check=True, capture_output=True).stdout  # fmt: skip
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(target, filter="data")
        return
    listed = _git("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


WARNING = re.compile(r"\bwarning\b|Warning:", re.IGNORECASE)
"""setuptools' ``warning: ...``, ``WARNING ...`` and ``...DeprecationWarning:`` lines."""


def build_distributions(source: Path, outdir: Path, python: Path = BIN / "python") -> list[Path]:
    """The sdist of ``source``, then the wheel built from that sdist (PyPA build, no network: the
    venv's setuptools), into ``outdir``; their paths in that order. Raises SystemExit when the
    build fails or prints a warning (byte-compiling is left to the installer, so
    PYTHONDONTWRITEBYTECODE is dropped)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    build = [str(python), "-m", "build", "--no-isolation", "--outdir", str(outdir), str(source)]
    done = subprocess.run(build, cwd=source, env=env, capture_output=True, text=True)
    output = done.stdout + done.stderr
    warnings = [line for line in output.splitlines() if WARNING.search(line)]
    if done.returncode != 0 or warnings:
        failed = done.returncode != 0
        sys.stderr.write(output if failed else "\n".join(warnings) + "\n")
        what = "failed" if failed else f"printed {len(warnings)} warnings"
        raise SystemExit(f"the build of {source} {what}")
    name = f"deltaspec-{version()}"
    return [outdir / f"{name}.tar.gz", outdir / f"{name}-py3-none-any.whl"]


def release() -> int:
    """Build the release of the commit tagged ``v<version>`` (HEAD) into dist/."""
    tag = f"v{version()}"
    if tag not in _git("tag", "--points-at", "HEAD").split():
        print(f"HEAD is not tagged {tag} (pyproject's version): tag the release first, "
              f"git tag -a {tag}", file=sys.stderr)  # fmt: skip
        return 2
    if _git("status", "--porcelain", "--untracked-files=no").strip():
        print("the checkout has uncommitted changes: a release is built from the tag alone",
              file=sys.stderr)  # fmt: skip
        return 2
    outdir = ROOT / "dist"
    outdir.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="deltaspec-release-") as source:
        export_tree(Path(source), commit=tag)
        for path in build_distributions(Path(source), outdir):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            print(f"{path.relative_to(ROOT)}  {path.stat().st_size:,} bytes  sha256 {digest}")
    return 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"check", "test", "release"}:
        print(__doc__)
        return 2
    ensure_venv()
    command, rest = argv[0], argv[1:]
    if command == "release":
        return release()
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
            # worksteal: an idle worker takes queued tests from a busy one, so the suite does
            # not end on one worker's backlog of slow tests
            [str(BIN / "pytest"), "-n", "auto", "--dist", "worksteal", *rest],
        ]
        for step in steps:
            code = subprocess.run(step, cwd=ROOT, env=STEP_ENV).returncode
            if code != 0:
                return code
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
