"""Numbers as delta-spark's JVM prints them, checked against a real JVM: the stats JSON and the
partition values the writer emits hold doubles and floats as ``Double.toString`` /
``Float.toString`` print them and decimals as ``BigDecimal.toString`` does (ACTION.ADD,
ACTION.PARTITION_VALUES). The values are those delta-spark's own tests use (boundaries, NaN,
infinities, signed zero, subnormals, the extremes) plus a deterministic spread of random bit
patterns; the JVM is a JDK 19 or later, whose ``Double.toString`` is the shortest-digits one the
impl follows (JDK 8-18 printed a few values with more digits than needed)."""

from __future__ import annotations

import random
import re
import shutil
import struct
import subprocess
from decimal import Decimal
from pathlib import Path

import pytest

from deltaspec.impl.codec.java_text import java_floating, to_float32
from deltaspec.impl.codec.stats import _stats_value

pytestmark = pytest.mark.rules("ACTION.ADD", "ACTION.PARTITION_VALUES")

PRINTER = """
import java.io.*;
import java.math.BigDecimal;
public class Printer {
  public static void main(String[] args) throws IOException {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    for (String line; (line = in.readLine()) != null; ) {
      String[] kv = line.split(" ", 2);
      switch (kv[0]) {
        case "d":
          long bits = Long.parseUnsignedLong(kv[1], 16);
          System.out.println(Double.toString(Double.longBitsToDouble(bits)));
          break;
        case "f":
          int single = Integer.parseUnsignedInt(kv[1], 16);
          System.out.println(Float.toString(Float.intBitsToFloat(single)));
          break;
        default: System.out.println(new BigDecimal(kv[1]).toString());
      }
    }
  }
}
"""
SPECIAL = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.1,
    0.5,
    1.5,
    2.5,
    3.14159,
    100.0,
    1e-3,
    9.99e-4,
    1e7,
    9999999.0,
    1e7 + 1,
    1.0e10,
    1.0e-10,
    123456789.0,
    1.1,
    2.2,
    0.3,
    1 / 3,
    2 / 3,
    1e21,
    1e22,
    1e23,
    2e23,
    5e-324,
    1e-323,
    2.2250738585072014e-308,
    2.225073858507201e-308,
    1.7976931628623157e308,
    float("nan"),
    float("inf"),
    float("-inf"),
    4.9e-324,
    1.0e-5,
    0.001,
    0.01,
    12345.678,
    -9.87654321e-7,
    2.0**63,
    2.0**53,
    2.0**53 + 2,
    1e16,
    1e15,
    123e18,
]
DECIMALS = [
    "0",
    "0.00",
    "1",
    "-1",
    "1.10",
    "123.456",
    "0.000001",
    "0.0000001",
    "1E+3",
    "1E-10",
    "12345678901234567890.123456789",
    "-0.0001",
    "99999999999999999999999999999999999999",
    "0.1234567890123456789012345678901234567",
    "1E+38",
    "5E-7",
]


def _java() -> str:
    """A JDK 19 or later (the machine's second JDK): its Double.toString is the spec's."""
    for candidate in sorted(Path("/usr/lib/jvm").glob("*/bin/java"), reverse=True):
        version = subprocess.run(
            [str(candidate), "-version"], capture_output=True, text=True, check=False
        ).stderr
        found = re.search(r'version "(\d+)', version)
        if found and int(found.group(1)) >= 19:
            return str(candidate)
    on_path = shutil.which("java")
    raise AssertionError(f"no JDK 19+ under /usr/lib/jvm (java on PATH: {on_path})")


def _doubles() -> list[float]:
    spread = random.Random(20261129)
    randoms = [struct.unpack("<d", spread.randbytes(8))[0] for _ in range(3000)]
    scaled = [spread.uniform(-1, 1) * 10.0 ** spread.randint(-12, 12) for _ in range(3000)]
    return SPECIAL + randoms + scaled


def _printed(java: str, tmp_path: Path, lines: list[str]) -> list[str]:
    source = tmp_path / "Printer.java"
    source.write_text(PRINTER, encoding="utf-8")
    done = subprocess.run(
        [java, str(source)], input="\n".join(lines) + "\n", capture_output=True, text=True,
        check=True, timeout=120,
    )  # fmt: skip
    return done.stdout.splitlines()


def _bits(value: float) -> str:
    return f"{struct.unpack('<Q', struct.pack('<d', value))[0]:x}"


def _float_bits(value: float) -> str:
    return f"{struct.unpack('<I', struct.pack('<f', value))[0]:x}"


def test_doubles_floats_and_decimals_print_as_the_jvm_prints_them(tmp_path: Path) -> None:
    doubles = _doubles()
    floats = [to_float32(v) for v in doubles if abs(v) < 3.4e38 or v != v]
    lines = [
        *(f"d {_bits(v)}" for v in doubles),
        *(f"f {_float_bits(v)}" for v in floats),
        *(f"b {d}" for d in DECIMALS),
    ]
    printed = _printed(_java(), tmp_path, lines)
    ours = [
        *(java_floating(v) for v in doubles),
        *(java_floating(v, single=True) for v in floats),
        *(_stats_value(Decimal(d)) for d in DECIMALS),
    ]
    wrong = [
        (line, mine, jvm)
        for line, mine, jvm in zip(lines, ours, printed, strict=True)
        if mine != jvm
    ]
    assert not wrong, f"{len(wrong)} of {len(lines)} differ, e.g. {wrong[:5]}"
