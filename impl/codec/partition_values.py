"""Partition values: the ``partitionValues`` string of each typed value (ACTION.PARTITION_VALUES).

One encoder and one decoder per Spark type, chosen by the column's type name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any, Final, TypeVar

from deltaspec.rules import rule

from .java_text import datetime_text, java_floating, to_float32

_INTEGRAL_RANGES: Final = {
    "byte": (-(2**7), 2**7 - 1),
    "short": (-(2**15), 2**15 - 1),
    "integer": (-(2**31), 2**31 - 1),
    "long": (-(2**63), 2**63 - 1),
}
_DECIMAL_TYPE: Final = re.compile(r"decimal\(\s*(\d+)\s*,\s*(-?\d+)\s*\)")
_INTEGER_TEXT: Final = re.compile(r"[+-]?[0-9]+")
_FLOATING_TEXT: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?")
_DATE_TEXT: Final = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIMESTAMP_TEXT: Final = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[ T]([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]{1,9}))?(Z|[+-][0-9]{2}:?[0-9]{2})?"
)


def _decimal_type(spark_type: str) -> tuple[int, int] | None:
    if spark_type == "decimal":
        return 10, 0
    match = _DECIMAL_TYPE.fullmatch(spark_type)
    return (int(match[1]), int(match[2])) if match else None


Entry = TypeVar("Entry")


def _by_type(table: dict[str, Entry], decimal: Entry, spark_type: str) -> tuple[str, Entry]:
    """The normalised type name and its entry in ``table`` (``decimal`` for decimal types)."""
    kind = spark_type.strip().lower()
    found = table.get(kind)
    if found is None:
        if _decimal_type(kind) is None:
            raise ValueError(f"unsupported partition column type {spark_type!r}")
        found = decimal
    return kind, found


# --- encoding: value -> string -----------------------------------------------------------------

ValueEncoder = Callable[[Any, str, bool], str | None]
"""``encode(value, kind, utc_timestamp)`` for a non-null value of Spark type ``kind``."""


def _require(value: Any, kind: str, accepted: type | tuple[type, ...], word: str) -> None:
    """A ``TypeError`` unless ``value`` is an instance of ``accepted`` (``bool`` is no number)."""
    refused = isinstance(value, bool) and bool not in (
        accepted if isinstance(accepted, tuple) else (accepted,)
    )
    if refused or not isinstance(value, accepted):
        raise TypeError(f"a {kind} partition value must be {word}, not {type(value).__name__}")


def _encode_string(value: Any, kind: str, utc: bool) -> str | None:
    _require(value, kind, str, "str")
    return value or None


def _encode_integral(value: Any, kind: str, utc: bool) -> str:
    _require(value, kind, int, "int")
    low, high = _INTEGRAL_RANGES[kind]
    if not low <= value <= high:
        raise ValueError(f"{value} is out of range for {kind}")
    return str(value)


def _encode_floating(value: Any, kind: str, utc: bool) -> str:
    _require(value, kind, (int, float), "float")
    return java_floating(float(value), single=kind == "float")


def _encode_boolean(value: Any, kind: str, utc: bool) -> str:
    _require(value, kind, bool, "bool")
    return "true" if value else "false"


def _encode_date(value: Any, kind: str, utc: bool) -> str:
    if isinstance(value, datetime):
        raise TypeError(f"a date partition value must be date, not {type(value).__name__}")
    _require(value, kind, date, "date")
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def _encode_timestamp(value: Any, kind: str, utc: bool) -> str:
    _require(value, kind, datetime, "datetime")
    if value.tzinfo is not None:
        if kind == "timestamp_ntz":
            raise ValueError("a timestamp_ntz partition value must be a naive datetime")
        value = value.astimezone(UTC).replace(tzinfo=None)
    if utc and kind == "timestamp":
        return f"{datetime_text(value, 'T')}.{value.microsecond:06d}Z"
    text = datetime_text(value, " ")
    if value.microsecond:
        text += f".{value.microsecond:06d}".rstrip("0")
    return text


def _encode_binary(value: Any, kind: str, utc: bool) -> str:
    _require(value, kind, (bytes, bytearray), "bytes")
    return bytes(value).decode("utf-8")


def _encode_decimal(value: Any, kind: str, utc: bool) -> str:
    _require(value, kind, (int, Decimal), "Decimal")
    precision, scale = _decimal_type(kind) or (0, 0)
    number = Decimal(value)
    if not number.is_finite():
        raise ValueError(f"{value} is not a {kind} value")
    try:
        scaled = number.quantize(Decimal(1).scaleb(-scale))
    except InvalidOperation:
        raise ValueError(f"{value} does not fit {kind}") from None
    whole_digits = max(scaled.adjusted() + 1, 0)
    if scaled != number or whole_digits > precision - scale:
        raise ValueError(f"{value} does not fit {kind}")
    return format(abs(scaled) if scaled.is_zero() else scaled, "f")


_ENCODERS: Final[dict[str, ValueEncoder]] = {
    "string": _encode_string,
    **dict.fromkeys(_INTEGRAL_RANGES, _encode_integral),
    "float": _encode_floating,
    "double": _encode_floating,
    "boolean": _encode_boolean,
    "date": _encode_date,
    "timestamp": _encode_timestamp,
    "timestamp_ntz": _encode_timestamp,
    "binary": _encode_binary,
}


def encode_partition_value(
    value: Any, spark_type: str, *, utc_timestamp: bool = False
) -> str | None:
    """The ``partitionValues`` string of a typed value (ACTION.PARTITION_VALUES).

    PROTOCOL.md "Partition Value Serialization" as delta-spark produces it (Spark's cast to
    string): integers in decimal; ``float``/``double`` as Java's ``Float``/``Double.toString``
    (``1.0``, ``1.0E10``, ``NaN``); decimals in plain notation with the type's scale (delta-spark on
    Spark < 3.4 wrote scientific notation below 1E-6); booleans ``true``/``false``; dates
    ``yyyy-MM-dd``; timestamps ``yyyy-MM-dd HH:mm:ss[.ffffff]`` with trailing zeros of the fraction
    dropped (an aware datetime is first converted to UTC, a naive one is taken as it is), or with
    ``utc_timestamp`` the ISO form ``yyyy-MM-ddTHH:mm:ss.ffffffZ`` newer delta-spark writes;
    ``binary`` as its UTF-8 text; ``None`` and the empty string give ``None`` (JSON null, written
    by deltaspec writers for every null). Raises ``ValueError``/``TypeError`` for a value that does
    not fit the type.
    """
    if value is None:
        return None
    kind, encode = _by_type(_ENCODERS, _encode_decimal, spark_type)
    return encode(value, kind, utc_timestamp)


# --- decoding: string -> value -----------------------------------------------------------------

ValueDecoder = Callable[[str, str], Any]
"""``decode(raw, kind)`` for a non-empty string of Spark type ``kind``."""


def _decode_string(raw: str, kind: str) -> str:
    return raw


def _decode_integral(raw: str, kind: str) -> int:
    if not _INTEGER_TEXT.fullmatch(raw):
        raise ValueError(f"{raw!r} is not a {kind} value")
    number = int(raw)
    low, high = _INTEGRAL_RANGES[kind]
    if not low <= number <= high:
        raise ValueError(f"{raw!r} is out of range for {kind}")
    return number


def _decode_floating(raw: str, kind: str) -> float:
    if raw in ("NaN", "Infinity", "-Infinity", "+Infinity"):
        return float(raw.lstrip("+").replace("Infinity", "inf"))
    if not _FLOATING_TEXT.fullmatch(raw):
        raise ValueError(f"{raw!r} is not a {kind} value")
    number = float(raw.rstrip("fFdD"))
    return to_float32(number) if kind == "float" else number


def _decode_boolean(raw: str, kind: str) -> bool:
    lowered = raw.lower()
    if lowered not in ("true", "false"):
        raise ValueError(f"{raw!r} is not a boolean value")
    return lowered == "true"


def _decode_date(raw: str, kind: str) -> date:
    match = _DATE_TEXT.fullmatch(raw)
    if not match:
        raise ValueError(f"{raw!r} is not a date value")
    return date(int(match[1]), int(match[2]), int(match[3]))


def _decode_binary(raw: str, kind: str) -> bytes:
    return raw.encode("utf-8")


def _decode_decimal(raw: str, kind: str) -> Decimal:
    try:
        number = Decimal(raw)
    except InvalidOperation:
        raise ValueError(f"{raw!r} is not a {kind} value") from None
    if not number.is_finite():
        raise ValueError(f"{raw!r} is not a {kind} value")
    return number


def _decode_timestamp(raw: str, kind: str) -> datetime:
    match = _TIMESTAMP_TEXT.fullmatch(raw)
    if not match:
        raise ValueError(f"{raw!r} is not a {kind} value")
    fraction = (match[7] or "").ljust(9, "0")
    if fraction[6:] != "000":
        raise ValueError(f"{raw!r} has more than microsecond precision")
    moment = datetime(
        int(match[1]),
        int(match[2]),
        int(match[3]),
        int(match[4]),
        int(match[5]),
        int(match[6]),
        int(fraction[:6]),
    )
    zone = match[8]
    if kind == "timestamp_ntz":
        if zone is not None:
            raise ValueError(f"{raw!r}: a timestamp_ntz value has no zone")
        return moment
    if zone is None or zone == "Z":
        return moment.replace(tzinfo=UTC)
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return (moment - sign * offset).replace(tzinfo=UTC)


_DECODERS: Final[dict[str, ValueDecoder]] = {
    "string": _decode_string,
    **dict.fromkeys(_INTEGRAL_RANGES, _decode_integral),
    "float": _decode_floating,
    "double": _decode_floating,
    "boolean": _decode_boolean,
    "date": _decode_date,
    "timestamp": _decode_timestamp,
    "timestamp_ntz": _decode_timestamp,
    "binary": _decode_binary,
}


@rule("ACTION.PARTITION_VALUES")
def decode_partition_value(raw: str | None, spark_type: str) -> Any:
    """The typed value of a ``partitionValues`` string (ACTION.PARTITION_VALUES).

    ``None`` and ``""`` are null. Returns ``str``, ``int``, ``float``, ``Decimal``, ``bool``,
    ``date``, ``datetime`` (``timestamp``: timezone-aware, a value without offset read as UTC as
    the model does; ``timestamp_ntz``: naive) or ``bytes``. Accepts both timestamp forms
    (``yyyy-MM-dd HH:mm:ss[.f]`` and ISO 8601 with ``T`` and ``Z``/offset) and scientific decimals.
    Raises ``ValueError`` for text that is not a value of the type.
    """
    if raw is None or raw == "":
        return None
    kind, decode = _by_type(_DECODERS, _decode_decimal, spark_type)
    return decode(raw, kind)
