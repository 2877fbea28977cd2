"""Partition directories as Spark names them, checked against Spark itself: the directory the
writer makes for a partition value (``col=value``) escapes exactly the characters Spark's
``ExternalCatalogUtils.escapePathName`` does, and a null or empty value is
``__HIVE_DEFAULT_PARTITION__`` (ACTION.PARTITION_VALUES). The values are the special characters
delta-spark's own partitioning tests write (space, ``%``, ``=``, ``/``, ``:``, quotes, brackets,
control characters, non-ASCII) plus a seeded spread of random strings; the oracle is the class in
the installed pyspark's own catalyst jar, run on the machine's JVM."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pyspark
import pytest

from deltaspec.impl.codec.paths import HIVE_DEFAULT_PARTITION, partition_directory

pytestmark = pytest.mark.rules("ACTION.PARTITION_VALUES")

PRINTER = """
import java.io.*;
import java.nio.charset.StandardCharsets;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils;
public class Escape {
  public static void main(String[] args) throws IOException {
    InputStreamReader utf8 = new InputStreamReader(System.in, StandardCharsets.UTF_8);
    BufferedReader in = new BufferedReader(utf8);
    PrintStream out = new PrintStream(System.out, true, "UTF-8");
    for (String line; (line = in.readLine()) != null; ) {
      StringBuilder value = new StringBuilder();
      for (String code : line.split(" ")) {
        if (!code.isEmpty()) value.appendCodePoint(Integer.parseInt(code, 16));
      }
      String text = value.toString();
      out.println(ExternalCatalogUtils.getPartitionPathString("p", text.isEmpty() ? null : text));
    }
  }
}
"""
DELTA_SPARK_VALUES = [
    "a b",
    "a%b",
    "a=b",
    "a/b",
    "a:b",
    "a#b",
    "a?b",
    "a*b",
    "a'b",
    'a"b',
    "a\\b",
    "a{b",
    "a[b",
    "a]b",
    "a^b",
    "a}b",
    "a|b",
    "a<b>",
    "a,b",
    "a;b",
    "a+b",
    "a&b",
    "a@b",
    "a$b",
    "a!b",
    "a~b",
    "a`b",
    "\x01",
    "\x1f",
    "\x7f",
    "tab\there",
    "new\nline",
    "é",
    "中文",
    "🦀",
    "%25",
    "..",
    ".",
    "__HIVE_DEFAULT_PARTITION__",
    "-1",
    "1.0E10",
    "2024-01-01 00:00:00",
    "",
]


def _values() -> list[str]:
    spread = random.Random(20261129)
    alphabet = [chr(c) for c in range(1, 128)] + ["é", "ß", "中", "\u2028", "🦀"]
    randoms = ["".join(spread.choices(alphabet, k=spread.randint(1, 8))) for _ in range(1500)]
    return DELTA_SPARK_VALUES + randoms


def _spark_directories(tmp_path: Path, values: list[str]) -> list[str]:
    jars = Path(pyspark.__file__).parent / "jars"
    classpath = ":".join(str(j) for j in sorted(jars.glob("*.jar")))
    java = shutil.which("java")
    assert java is not None, "no java on PATH"
    source = tmp_path / "Escape.java"
    source.write_text(PRINTER, encoding="utf-8")
    lines = [" ".join(f"{ord(c):x}" for c in value) for value in values]
    done = subprocess.run(
        [java, "-cp", classpath, str(source)], input="\n".join(lines) + "\n",
        capture_output=True, text=True, encoding="utf-8", check=True, timeout=180,
    )  # fmt: skip
    return done.stdout.split("\n")[: len(values)]


def test_partition_directories_are_named_as_spark_names_them(tmp_path: Path) -> None:
    values = _values()
    spark = _spark_directories(tmp_path, values)
    ours = [partition_directory([("p", value or None)]) for value in values]
    wrong = [(v, mine, s) for v, mine, s in zip(values, ours, spark, strict=True) if mine != s]
    assert not wrong, f"{len(wrong)} of {len(values)} differ, e.g. {wrong[:5]}"
    assert spark[values.index("")] == f"p={HIVE_DEFAULT_PARTITION}"
