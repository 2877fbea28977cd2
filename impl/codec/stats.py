"""The ``stats`` JSON string of an add (ACTION.ADD) as delta-spark writes it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from .java_text import datetime_text, java_floating
from .json_text import dumps


def _stats_value(value: Any) -> str:
    if isinstance(value, str):
        return dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = java_floating(value)
        return f'"{text}"' if not math.isfinite(value) else text
    if isinstance(value, Decimal):
        return str(value)  # Java BigDecimal.toString follows the same to-scientific-string rules
    if isinstance(value, datetime):
        text = f"{datetime_text(value, 'T')}.{value.microsecond // 1000:03d}"
        offset = value.utcoffset()
        if offset is not None:
            minutes = int(offset.total_seconds()) // 60
            sign = "-" if minutes < 0 else "+"
            text += (
                "Z" if not minutes else f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
            )
        return f'"{text}"'
    if isinstance(value, date):
        return f'"{value.year:04d}-{value.month:02d}-{value.day:02d}"'
    if isinstance(value, Mapping):
        items = (
            f"{dumps(str(key))}:{_stats_value(item)}"
            for key, item in value.items()
            if item is not None
        )
        return "{" + ",".join(items) + "}"
    raise TypeError(f"cannot write {type(value).__name__} into stats")


def encode_stats(
    num_records: int,
    min_values: Mapping[str, Any] | None,
    max_values: Mapping[str, Any] | None,
    null_count: Mapping[str, Any] | None,
    tight_bounds: bool | None = None,
) -> str:
    """The ``stats`` JSON string of an add (ACTION.ADD) in delta-spark's key order.

    ``{"numRecords":n,"minValues":{...},"maxValues":{...},"nullCount":{...}[,"tightBounds":b]}``.
    The three maps nest by struct field; ``None`` leaves its key out (delta-spark writes only
    ``numRecords`` when no column is indexed) and ``None`` values inside the maps are omitted, as
    Spark's ``to_json`` does. Floats print as Java's ``Double.toString`` (``NaN`` and infinities
    quoted, as Jackson does), decimals as ``BigDecimal.toString``, datetimes as
    ``yyyy-MM-ddTHH:mm:ss.SSS`` plus the offset for aware values (``Z`` for UTC), dates as
    ``yyyy-MM-dd``.
    """
    if isinstance(num_records, bool) or not isinstance(num_records, int):
        raise TypeError("numRecords must be an int")
    parts = [f'"numRecords":{num_records}']
    for key, values in (
        ("minValues", min_values),
        ("maxValues", max_values),
        ("nullCount", null_count),
    ):
        if values is not None:
            parts.append(f'"{key}":{_stats_value(values)}')
    if tight_bounds is not None:
        parts.append(f'"tightBounds":{"true" if tight_bounds else "false"}')
    return "{" + ",".join(parts) + "}"
