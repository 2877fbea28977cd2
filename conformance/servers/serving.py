"""One entry for every object-store server: :func:`serving` starts the one a store kind names
and yields an :class:`ObjectStoreServer` that hands out fresh table URLs on it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from deltaspec.impl.log.object_store import ObjectLogStore

from .azurite import CONTAINER, azurite_server
from .moto_s3 import BUCKET, s3_server

__all__ = ["STORE_KINDS", "ObjectStoreServer", "serving"]

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

    def log_store(self, root: Path | None = None) -> ObjectLogStore:
        """The log store of a fresh table on the server, named after ``root`` where given (for
        callers that make a local directory per table: the data files stay there)."""
        return ObjectLogStore(self.table_url(root.name if root else ""), self.options)


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
