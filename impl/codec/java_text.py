"""Numbers and datetimes as Java prints them (``Double.toString``, ``Float.toString``, dates)."""

from __future__ import annotations

import math
import struct
from datetime import datetime
from decimal import Decimal


def _digits_exponent(text: str) -> tuple[str, int]:
    """Significant digits (no leading/trailing zeros) and scientific exponent of a decimal text."""
    _, digit_tuple, exponent = Decimal(text).as_tuple()
    digits = "".join(map(str, digit_tuple))
    assert isinstance(exponent, int)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return stripped, exponent + len(stripped) - 1


def to_float32(value: float) -> float:
    """Round a double to the nearest float32 (Java's ``(float)`` cast)."""
    try:
        result: float = struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    return result


def java_floating(value: float, *, single: bool = False) -> str:
    """``Double.toString`` (or ``Float.toString`` with ``single``) as specified since JDK 19.

    Shortest digits that read back to the value, plain between 1E-3 and 1E7, else computerized
    scientific notation (``1.0E10``). JDK 8-18 printed a few values with more digits than needed.
    """
    if single:
        value = to_float32(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    magnitude = abs(value)
    if single:
        text = repr(magnitude)
        for precision in range(9):
            candidate = f"{magnitude:.{precision}e}"
            if to_float32(float(candidate)) == magnitude:
                text = candidate
                break
    else:
        text = repr(magnitude)
    digits, exponent = _digits_exponent(text)
    if len(digits) == 1:
        # JDK 19+ (the Double.toString spec): when one digit suffices, the closest decimal of one
        # or two digits is printed; it differs from the one-digit one only for tiny subnormals
        # (Double.MIN_VALUE prints as 4.9E-324, not 5.0E-324).
        closest = f"{magnitude:.1e}"
        back = to_float32(float(closest)) if single else float(closest)
        if back == magnitude:
            digits, exponent = _digits_exponent(closest)
    if 1e-3 <= magnitude < 1e7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            fraction = digits[exponent + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{fraction}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def datetime_text(moment: datetime, separator: str) -> str:
    """``yyyy-MM-dd<sep>HH:mm:ss`` (strftime's year is not zero-padded below 1000 on Linux)."""
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}{separator}"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    )
