"""The log store for a table's address: an object-store URL (``s3://``, ``s3a://``, ``az://``,
``abfss://``, ``gs://``) gets an :class:`~deltaspec.impl.log.object_store.ObjectLogStore`,
anything else (a path, or a ``file:`` URL) a :class:`~deltaspec.impl.log.local_store.LocalLogStore`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import unquote, urlsplit

from .local_store import LocalLogStore
from .object_store import ObjectLogStore, is_object_store_url
from .store import LogStore

__all__ = ["log_store_for"]


def log_store_for(
    table_root: str | os.PathLike[str], storage_options: Mapping[str, str] | None = None
) -> LogStore:
    """The store of the table at ``table_root``; ``storage_options`` configure an object store
    (obstore's keys: ``endpoint``, ``access_key_id``, ``account_name``, …) and are refused for a
    local table, where they would be silently meaningless."""
    root = os.fspath(table_root)
    if is_object_store_url(root):
        return ObjectLogStore(root, storage_options)
    if storage_options:
        raise ValueError(f"storage options are for object stores, not the local table {root!r}")
    if root.startswith("file:"):
        root = unquote(urlsplit(root).path)
    return LocalLogStore(root)
