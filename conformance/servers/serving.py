"""One entry for every object-store server: :func:`serving` starts the one a store kind names
and yields an :class:`ObjectStoreServer` that hands out fresh table URLs on it."""

from __future__ import annotations

import urllib.request
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from urllib.parse import quote, urlencode

from ...impl.log.object_store import ObjectLogStore
from .azurite import CONTAINER, azurite_server, shared_key_request
from .moto_s3 import BUCKET, s3_server

__all__ = ["STORE_KINDS", "ObjectStoreServer", "StoredObject", "serving"]

STORE_KINDS = ("s3", "azure")
"""The object stores a server can be started for here. GCS has no emulator that installs from
this machine's registries (fake-gcs-server is a Go program released on GitHub, not on the Go
module proxy under a usable path); a GCS table URL works against a real bucket."""


@dataclass(frozen=True)
class ObjectStoreServer:
    """A running server: its kind, the storage options that reach it, and its base URL."""

    kind: str
    options: dict[str, str]
    base_url: str

    def table_url(self, name: str = "") -> str:
        """A fresh table root on the server (``name`` plus a random suffix)."""
        return f"{self.base_url}/{name or 'table'}-{uuid.uuid4().hex[:12]}"

    def put_raw(self, key: str, data: bytes = b"x") -> None:
        """An object at ``key`` of the bucket, written by a plain HTTP request that no client's
        path rules touch: ``..``, ``.`` and empty segments stay in the key (sent escaped where
        an HTTP stack would resolve them). For stray keys no table's store could write."""
        sent = quote(key, safe="/").replace("/../", "/%2E%2E/").replace("/./", "/%2E/")
        endpoint = self.options["endpoint"]
        if self.kind == "azure":
            headers = {"x-ms-blob-type": "BlockBlob"}
            shared_key_request(endpoint, "PUT", f"{CONTAINER}/{sent}", body=data, headers=headers)
            return
        request = urllib.request.Request(f"{endpoint}/{BUCKET}/{sent}", method="PUT", data=data)
        with urllib.request.urlopen(request, timeout=10):  # moto checks no signature
            pass

    def list_raw(self, prefix: str) -> list[StoredObject]:
        """Every object whose key starts with ``prefix``, as the server itself lists them (one
        plain request per page, no client's path rules): the ground truth a store's keys, sizes
        and modification times are held to."""
        if self.kind == "azure":
            return _azure_listing(self.options["endpoint"], prefix)
        return _s3_listing(self.options["endpoint"], prefix)

    def log_store(self, root: Path | None = None) -> ObjectLogStore:
        """The log store of a fresh table on the server, named after ``root`` where given (for
        callers that make a local directory per table: the data files stay there)."""
        return ObjectLogStore(self.table_url(root.name if root else ""), self.options)


@dataclass(frozen=True)
class StoredObject:
    """One object as the server lists it: its full key, size and modification time (ms)."""

    key: str
    size: int
    modification_time: int


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def _s3_listing(endpoint: str, prefix: str) -> list[StoredObject]:
    found: list[StoredObject] = []
    token: str | None = None
    while True:
        query = {
            "list-type": "2",
            "prefix": prefix,
            **({"continuation-token": token} if token else {}),
        }
        with urllib.request.urlopen(
            f"{endpoint}/{BUCKET}?{urlencode(query)}", timeout=10
        ) as answer:
            root = ET.fromstring(answer.read())
        ns = {"s3": root.tag.partition("}")[0].lstrip("{")}
        for item in root.findall("s3:Contents", ns):
            when = datetime.fromisoformat(
                item.findtext("s3:LastModified", "", ns).replace("Z", "+00:00")
            )
            found.append(
                StoredObject(
                    item.findtext("s3:Key", "", ns),
                    int(item.findtext("s3:Size", "0", ns)),
                    _ms(when),
                )
            )
        token = root.findtext("s3:NextContinuationToken", None, ns)
        if root.findtext("s3:IsTruncated", "false", ns) != "true" or not token:
            return found


def _azure_listing(endpoint: str, prefix: str) -> list[StoredObject]:
    found: list[StoredObject] = []
    marker = ""
    while True:
        query = {
            "comp": "list",
            "prefix": prefix,
            "restype": "container",
            **({"marker": marker} if marker else {}),
        }
        body = shared_key_request(endpoint, "GET", CONTAINER, query=query)
        root = ET.fromstring(body)
        for blob in root.iter("Blob"):
            props = blob.find("Properties")
            size = int(props.findtext("Content-Length", "0")) if props is not None else 0
            when = props.findtext("Last-Modified", "") if props is not None else ""
            found.append(
                StoredObject(blob.findtext("Name", ""), size, _ms(parsedate_to_datetime(when)))
            )
        marker = root.findtext("NextMarker", "") or ""
        if not marker:
            return found


@contextmanager
def serving(kind: str) -> Iterator[ObjectStoreServer]:
    """Start the server for ``kind`` (``s3`` or ``azure``) until the context ends."""
    if kind == "s3":
        with s3_server() as options:
            yield ObjectStoreServer(kind, options, f"s3://{BUCKET}")
    elif kind == "azure":
        with azurite_server() as options:
            yield ObjectStoreServer(kind, options, f"az://{CONTAINER}")
    else:
        raise ValueError(f"no server for store {kind!r}; known: {', '.join(STORE_KINDS)}")
