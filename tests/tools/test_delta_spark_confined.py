"""delta-spark is driven from one place, its engine folder ``conformance/engines/deltaspark``. Its
Python package (``import delta``) is held there by the import contract
``delta-spark-through-its-engine``; its JVM classes
through py4j (``org.apache.spark.sql.delta``, ``io.delta``), ``format("delta")`` and SQL on
``delta.`path``` are no imports, so this scan of the package's source holds them there (the
spec-only delta-spark bridge, the one action-level driver, is one of the adapters). Exempt: the
engines' smoke script (run in a subprocess on a fetched release)."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ALLOWED = (
    "conformance/engines/deltaspark/",
    "conformance/releases/smoke.py",
)
_JVM = ("org.apache.spark.sql.delta", "io.delta")
_TEXT = re.compile(r"org\.apache\.spark\.sql\.delta|\bio\.delta\b|\bdelta\.`|\bUSING\s+delta\b",
                   re.IGNORECASE)  # fmt: skip


def _prose(tree: ast.AST) -> set[int]:
    """The ids of the strings that are statements of their own (docstrings, attribute
    docstrings): prose may name delta-spark's API."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _is_delta(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and node.value == "delta"


def offences(source: str) -> list[str]:
    """Where ``source`` drives delta-spark other than by an import: a py4j attribute chain into
    its JVM packages, a string naming them or ``delta.`path``` (prose aside), or
    ``format("delta")`` (``format=`` too)."""
    tree = ast.parse(source)
    prose = _prose(tree)
    found: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            dotted = f".{_dotted(node)}."
            found.update((node.lineno, f"py4j {p}") for p in _JVM if f".{p}." in dotted)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in prose and _TEXT.search(node.value):
                found.add((node.lineno, repr(node.value)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "format" and node.args and _is_delta(node.args[0]):
                found.add((node.lineno, 'format("delta")'))
            if any(k.arg == "format" and _is_delta(k.value) for k in node.keywords):
                found.add((node.lineno, 'format="delta"'))
    return [f"line {line}: {what}" for line, what in sorted(found)]


def package_sources() -> list[Path]:
    """Every Python file of the package: the folders pyproject's ``package-dir`` maps."""
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    folders = data["tool"]["setuptools"]["package-dir"].values()
    return sorted(path for folder in folders for path in (REPO / folder).rglob("*.py"))


def test_only_the_deltaspark_engine_drives_delta_spark() -> None:
    sources = package_sources()
    assert any(p.match("conformance/engines/deltaspark/spark_api.py") for p in sources)
    found = {}
    for path in sources:
        where = path.relative_to(REPO).as_posix()
        if not where.startswith(ALLOWED):
            found[where] = offences(path.read_text(encoding="utf-8"))
    assert {where: lines for where, lines in found.items() if lines} == {}


def test_the_scan_sees_each_way_of_driving_delta_spark() -> None:
    for source in (
        "log = spark._jvm.org.apache.spark.sql.delta.DeltaLog.forTable(s, p)",
        "v = jvm.io.delta.package.VERSION()",
        'df.write.format("delta").save(p)',
        "spark.read.load(p, format='delta')",
        'spark.sql(f"OPTIMIZE delta.`{p}`")',
        'spark.sql("CREATE TABLE t (id INT) USING delta")',
        'conf = {"spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension"}',
    ):
        assert len(offences(source)) == 1, source
    harmless = '"""Like ``format("delta")`` and ``delta.`p```."""\nx = e.fmt == "delta"\n'
    assert offences(harmless) == []
    assert offences((REPO / "conformance/engines/deltaspark/spark_api.py").read_text()) != []
