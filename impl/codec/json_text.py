"""JSON text as Jackson writes it and as this codec reads it (ACTION.LINE_FORMAT).

Writing: compact separators, non-ASCII characters raw (UTF-8), control characters escaped as
Jackson does (``\\n``, ``\\t``, ... or ``\\u00XX`` with upper-case hex), NaN refused. Reading:
``NaN`` and the infinities are not JSON and are refused.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

Json = Any


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


PARSER: Final = json.JSONDecoder(parse_constant=_reject_constant)
"""The strict JSON parser of log lines (``PARSER.decode(text)``)."""

_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# Python escapes the control characters without a short form as \u00xx (lower-case hex), Jackson
# as \u00XX; only 0x0B, 0x0E, 0x0F and 0x1A-0x1F contain a letter. The look-behind makes sure the
# backslash is not itself escaped (an even number of backslashes precedes it).
_LOWER_HEX_ESCAPE: Final = re.compile(r"(?<!\\)((?:\\\\)*)\\u00(0[bef]|1[a-f])")


def _upper_escape(match: re.Match[str]) -> str:
    return f"{match[1]}\\u00{match[2].upper()}"


def dumps(value: Json) -> str:
    """Compact JSON exactly as Jackson writes it (non-ASCII raw, upper-case \\u escapes)."""
    text = _ENCODER.encode(value)
    if "\\u00" in text:
        text = _LOWER_HEX_ESCAPE.sub(_upper_escape, text)
    return text


def type_name(value: object) -> str:
    """The JSON type of a parsed value, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else type(value).__name__
