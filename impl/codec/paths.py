"""Data file paths in the log: URI references and Hive partition directories (ACTION.ADD).

``add.path`` is a URI reference: delta-spark builds it with Hadoop's ``Path(...).toUri.toString``,
i.e. ``java.net.URI``'s multi-argument constructor, which percent-encodes (UTF-8, upper-case hex)
every character that is not legal in a URI path, ``%`` included, and leaves other non-ASCII
characters raw. Partition directories are first escaped the Hive way (Spark's
``ExternalCatalogUtils.escapePathName``), so a ``%`` in a partition value shows up as ``%25`` in
the directory name and as ``%2525`` in the log.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final
from urllib.parse import unquote

HIVE_DEFAULT_PARTITION: Final = "__HIVE_DEFAULT_PARTITION__"
"""The directory name of a null (or empty) partition value (ACTION.PARTITION_VALUES)."""

# java.net.URI, path component: unreserved (alphanumerics and -_.!~*'()), the punctuation
# ;:@&=+$, and the separator / stay; every other ASCII character (% included) is escaped; non-ASCII
# characters stay unless Character.isSpaceChar or Character.isISOControl holds for them.
_URI_PATH_UNSAFE: Final = re.compile(
    r"[^A-Za-z0-9\-_.!~*'();:@&=+$,/\u00a1-\ud7ff\ue000-\U0010ffff]"
    r"|[\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)
_BAD_ESCAPE: Final = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _percent_encode(match: re.Match[str]) -> str:
    return "".join(f"%{byte:02X}" for byte in match[0].encode("utf-8"))


def encode_path(relative: str) -> str:
    """The URI form of a path as ``add.path`` holds it (ACTION.ADD): Hadoop ``Path.toUri``.

    Percent-encodes (UTF-8, upper-case hex) each character that ``java.net.URI`` does not allow
    raw in a path: ASCII other than letters, digits and ``-_.!~*'();:@&=+$,/``, which includes
    ``%``, space, ``#``, ``?``, ``"``, ``[``, ``]``, ``{``, ``}`` and control characters, and the
    non-ASCII space and control characters (U+0080-U+00A0, U+2028, ...). Other non-ASCII text stays
    raw. Unlike Hadoop the path is not normalised (no ``//`` or ``.`` collapsing), so
    ``decode_path(encode_path(s)) == s`` for every string. A ``:`` stays raw as Hadoop leaves it;
    a relative path with a ``:`` before its first ``/`` reads as an absolute URI, which is why
    partition directories escape ``:`` (see :func:`partition_directory`).
    Raises ``ValueError`` on lone surrogates.
    """
    return _URI_PATH_UNSAFE.sub(_percent_encode, relative)


def decode_path(uri_path: str) -> str:
    """The file path an ``add.path`` URI names (ACTION.ADD): ``java.net.URI.getPath`` decoding.

    Every ``%XX`` escape is decoded, runs of escapes as UTF-8 (invalid UTF-8 becomes U+FFFD, as
    in Java); ``+`` stays ``+``. A ``%`` not followed by two hex digits raises ``ValueError``
    (``java.net.URI`` refuses such a string).
    """
    if "%" not in uri_path:
        return uri_path
    if _BAD_ESCAPE.search(uri_path):
        raise ValueError(f"malformed percent escape in path {uri_path!r}")
    return unquote(uri_path, errors="replace")


# Spark's ExternalCatalogUtils.escapePathName (non-Windows): 0x01-0x1F, "#%'*/:=?\ 0x7F {[]^.
# NUL is not in Spark's list and stays raw.
_HIVE_UNSAFE: Final = re.compile("[\x01-\x1f\"#%'*/:=?\\\\\x7f{\\[\\]^]")


def _hive_escape_char(match: re.Match[str]) -> str:
    return f"%{ord(match[0]):02X}"


def _hive_escape(name: str) -> str:
    return _HIVE_UNSAFE.sub(_hive_escape_char, name)


def partition_directory(columns: Sequence[tuple[str, str | None]]) -> str:
    """The relative directory ``col=value/col2=value2`` of a partition (ACTION.PARTITION_VALUES).

    ``columns`` are the (physical) column names with their serialised partition values in
    partition-column order. Names and values are escaped as Spark's
    ``ExternalCatalogUtils.escapePathName`` does; a null or empty value becomes
    ``__HIVE_DEFAULT_PARTITION__``. The result is a file-system path: pass
    ``partition_directory(...) + "/" + file_name`` through :func:`encode_path` for ``add.path``.
    """
    return "/".join(
        f"{_hive_escape(name)}={_hive_escape(value) if value else HIVE_DEFAULT_PARTITION}"
        for name, value in columns
    )
