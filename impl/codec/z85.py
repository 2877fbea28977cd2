"""Z85, the Base85 variant Delta encodes deletion-vector ids and inline deletion vectors with
(PROTOCOL.md "Deletion Vector Descriptor Schema").
"""

from __future__ import annotations

__all__ = ["z85_decode", "z85_encode"]

_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_Z85_INDEX = {c: i for i, c in enumerate(_Z85)}


def z85_decode(text: str) -> bytes:
    """Z85 (the Base85 variant Delta uses for DV ids and inline DVs); ValueError for text that
    is not (a length not a multiple of 5, a character outside the alphabet, a group past 2^32)."""
    if len(text) % 5:
        raise ValueError(f"Z85 text length {len(text)} is not a multiple of 5")
    out = bytearray()
    for start in range(0, len(text), 5):
        value = 0
        for char in text[start : start + 5]:
            digit = _Z85_INDEX.get(char)
            if digit is None:
                raise ValueError(f"{char!r} is not a Z85 character")
            value = value * 85 + digit
        if value >= 1 << 32:
            raise ValueError(f"Z85 group {text[start : start + 5]!r} is past 2^32")
        out += value.to_bytes(4, "big")
    return bytes(out)


def z85_encode(data: bytes) -> str:
    """Z85 of ``data`` zero-padded to a multiple of 4 bytes (a reader cuts an inline DV back to
    ``sizeInBytes``)."""
    padded = data + b"\0" * (-len(data) % 4)
    out: list[str] = []
    for start in range(0, len(padded), 4):
        value = int.from_bytes(padded[start : start + 4], "big")
        chunk = []
        for _ in range(5):
            value, digit = divmod(value, 85)
            chunk.append(_Z85[digit])
        out.extend(reversed(chunk))
    return "".join(out)
