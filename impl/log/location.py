"""Where a table on an object store is: one canonical form of its URL, decided once at the door
(PATH.TABLE_LOCATION).

An object store has no directories: a table is every key under one prefix of one bucket or
container. Clients disagree on what a URL's path means (obstore decodes ``%2e%2e`` and then
resolves it, Hadoop's ``Path`` normalises ``..``, S3 itself keeps ``..`` as two characters of
a key), so ``s3://b/mine/%2e%2e/victim`` could be one table to the caller and another to the
store. :func:`table_location` decodes the path once, refuses every segment that a client could
resolve or drop (empty, ``.``, ``..``), and gives the :class:`TableLocation` every request of
:class:`~deltaspec.impl.log.object_store.ObjectLogStore` is built from and every error names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

from deltaspec.rules import rule

from ..errors import InvalidTableLocationError

__all__ = ["OBJECT_SCHEMES", "TableLocation", "is_object_store_url", "table_location"]

OBJECT_SCHEMES = {
    "s3": "s3",
    "s3a": "s3",  # Hadoop's name for the same bucket and key
    "az": "az",
    "azure": "azure",
    "abfs": "abfs",
    "abfss": "abfss",
    "adl": "adl",
    "gs": "gs",
    "memory": "memory",  # obstore's in-process store: the contract without a server
}
"""The URL schemes a table on an object store may have, and the scheme obstore is given for
each."""

_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_UNSAFE_SEGMENTS = ("", ".", "..")
_KEPT = "/!$&'()*+,;=:@-._~"
"""Characters of a key prefix written as they are in the canonical URL (RFC 3986 ``pchar``)."""


def is_object_store_url(table: str) -> bool:
    """Whether ``table`` is a URL an object store serves (``s3://b/t``, ``az://…``)."""
    return urlsplit(table).scheme.lower() in OBJECT_SCHEMES


@dataclass(frozen=True, slots=True)
class TableLocation:
    """A table root on an object store: the URL scheme as given (lower case), the bucket or
    container (``netloc``: ``bucket``, ``container@account.dfs.core.windows.net``) and the key
    prefix, decoded, ``/``-separated, without empty, ``.`` or ``..`` segments ("" for a table at
    the root of its bucket)."""

    scheme: str
    netloc: str
    prefix: str

    @property
    def url(self) -> str:
        """The canonical URL: what the table is called in every error and every absolute path."""
        path = quote(self.prefix, safe=_KEPT)
        return f"{self.scheme}://{self.netloc}" + (f"/{path}" if path else "")

    @property
    def store_url(self) -> str:
        """The bucket's URL in the scheme obstore knows; keys are prefixed by :meth:`key`."""
        return f"{OBJECT_SCHEMES[self.scheme]}://{self.netloc}"

    def key(self, relative: str) -> str:
        """The object key of ``relative`` (a checked, ``/``-separated name below the root)."""
        return f"{self.prefix}/{relative}" if self.prefix else relative

    def relative(self, key: str) -> str | None:
        """``key`` relative to the table root, or None when it is not below it."""
        if not self.prefix:
            return key
        head = self.prefix + "/"
        return key[len(head) :] if key.startswith(head) else None


@rule("PATH.TABLE_LOCATION")
def table_location(url: str) -> TableLocation:
    """The canonical location of the table at the object-store ``url`` (PATH.TABLE_LOCATION);
    :class:`InvalidTableLocationError` naming the URL and why for one that could name another
    table to another client: a path segment that is empty (``a//b``), ``.`` or ``..`` once
    decoded (``%2e%2e``, ``%2F..``), a malformed escape, a NUL, a query or a fragment, no bucket.
    One trailing ``/`` is allowed (``s3://b/t/`` is ``s3://b/t``)."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in OBJECT_SCHEMES:
        raise InvalidTableLocationError(f"not an object store URL: {url!r}", table=url)
    if parts.query or parts.fragment or "?" in url or "#" in url:
        raise _refused(url, "a query or fragment is no part of a table location")
    if not parts.netloc and scheme != "memory":
        raise _refused(url, "it names no bucket or container")
    if _ESCAPE.search(parts.path):
        raise _refused(url, "a '%' that is not a two-digit escape")
    try:
        path = unquote(parts.path, errors="strict")
    except UnicodeDecodeError:
        raise _refused(url, "an escape that does not decode as UTF-8") from None
    if "\0" in path:
        raise _refused(url, "a NUL character in the path")
    path = path[1:] if path.startswith("/") else path
    path = path[:-1] if path.endswith("/") else path
    if not path:
        return TableLocation(scheme, parts.netloc, "")
    bad = sorted({s for s in path.split("/") if s in _UNSAFE_SEGMENTS}, key=len)
    if bad:
        shown = " or ".join(repr(s) if s else "an empty segment" for s in bad)
        raise _refused(
            url,
            f"the decoded path {path!r} holds {shown}: clients resolve or drop such segments "
            "differently, so the URL could name another table",
        )
    return TableLocation(scheme, parts.netloc, path)


def _refused(url: str, why: str) -> InvalidTableLocationError:
    return InvalidTableLocationError(f"not a table location: {why}", table=url)
