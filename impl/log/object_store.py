"""The log store on an object store (:class:`ObjectLogStore`): S3, Azure Blob / ADLS Gen2 and GCS
keep the :class:`~deltaspec.impl.log.store.LogStore` contract through their conditional writes.

LOG.PUT_IF_ABSENT is the store's create-only PUT: ``If-None-Match: *`` on S3 and on Azure,
``ifGenerationMatch=0`` on GCS. The server decides which of several writers of one name wins and
answers every other one ``412 Precondition Failed`` (or ``409``), which becomes
:class:`VersionExistsError`. LOG.ATOMIC_VISIBILITY holds because an object appears whole when its
PUT completes; LOG.LISTING because S3, Azure and GCS list with read-after-write consistency,
sorted by key.

The requests go through `obstore <https://developmentseed.org/obstore/>`_, the Python binding of
the Rust ``object_store`` crate that delta-rs and delta-kernel-rs use: one well-kept client for
the three clouds' signing, credentials, conditional PUT modes and listing, instead of three
hand-written HTTP clients. It is the optional extra ``objectstore``.

Two choices keep a commit that is in the log from being reported as failed:

- A create-only PUT is sent **once** (no client retry). A retried PUT whose first attempt landed
  would be answered 412 and look like a lost race, though the commit is ours. A PUT that fails
  without an answer raises :class:`StorageOutcomeUnknownError`, an ``OSError``: the commit loop
  reads the version back and recognises its own commit (RETRY.ATTEMPT_VERSION).
- Every request has a time limit (connect and whole request), so nothing hangs on a silent server.

A store **without** conditional writes (an S3-compatible server that ignores ``If-None-Match``, or
an S3 bucket used as delta-spark's ``S3SingleDriverLogStore`` does) can only check for the name and
then write it: two processes can both "create" one commit and the later PUT silently replaces the
earlier one, a lost commit. Such a store is refused (:class:`UnsupportedLogStoreError`) unless the
caller declares ``single_writer=True``: one process writes the table, and within it a lock orders
the check and the write, which is exactly the single-driver guarantee and no more.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import timedelta
from types import ModuleType
from typing import Any

from deltaspec.rules import rule

from ..errors import (
    LogAccessError,
    LogFileTooLargeError,
    StorageOutcomeUnknownError,
    UnsupportedLogStoreError,
)
from . import key_listing
from .location import OBJECT_SCHEMES, TableLocation, is_object_store_url, table_location
from .names import LAST_CHECKPOINT, LOG_DIR, leading_version
from .store import (
    LAST_CHECKPOINT_MAX_BYTES,
    FileInfo,
    LogStore,
    check_data,
    check_name,
    check_overwritable,
)

__all__ = ["OBJECT_SCHEMES", "ObjectLogStore", "is_object_store_url"]

REQUEST_TIMEOUT = timedelta(seconds=30)
"""The longest one request may take, answer included: a silent server is an error, not a hang."""
CONNECT_TIMEOUT = timedelta(seconds=5)

_SINGLE_WRITER_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _obstore() -> ModuleType:
    try:
        import obstore
    except ImportError:  # the optional extra is not installed
        raise UnsupportedLogStoreError(
            "tables on object stores need the optional extra 'objectstore' "
            "(pip install './deltaspec[objectstore]' from the repository, which installs obstore)"
        ) from None
    return obstore


def _single_writer_lock(table_url: str) -> threading.Lock:
    with _LOCKS_GUARD:
        return _SINGLE_WRITER_LOCKS.setdefault(table_url, threading.Lock())


class ObjectLogStore(LogStore):
    """A :class:`LogStore` on S3, Azure Blob / ADLS Gen2 or GCS, safe across processes and
    machines when the store has conditional writes (the default, ``conditional_writes=True``).

    ``table_url`` names the table root (``s3://bucket/path/to/table``, ``az://container/path``,
    ``abfss://container@account.dfs.core.windows.net/path``, ``gs://bucket/path``); ``options``
    are obstore's configuration keys for that store (``endpoint``, ``access_key_id``,
    ``secret_access_key``, ``region``, ``account_name``, ``account_key``, ``allow_http``, …; the
    same names delta-rs takes as storage options), or its environment variables where absent.

    ``conditional_writes=False`` declares a store whose PUT cannot be made create-only; it is
    refused unless ``single_writer=True`` (see the module docstring). ``request_timeout`` bounds
    each request, retries included (:data:`REQUEST_TIMEOUT` by default).
    """

    def __init__(
        self,
        table_url: str,
        options: Mapping[str, str] | None = None,
        *,
        conditional_writes: bool = True,
        single_writer: bool = False,
        request_timeout: timedelta = REQUEST_TIMEOUT,
    ) -> None:
        location = table_location(table_url)  # refused here, before any request
        if not conditional_writes and not single_writer:
            raise UnsupportedLogStoreError(
                "a store without conditional writes has no put-if-absent: two writers of one "
                "version can both succeed and the later write replaces the earlier commit "
                "(LOG.PUT_IF_ABSENT). Use a store with conditional writes, or declare "
                "single_writer=True when exactly one process writes this table",
                table=location.url,
            )
        self._location = location
        self._table_path = location.url
        self._conditional = conditional_writes
        self._timeout = request_timeout
        obstore = _obstore()
        url = location.store_url
        config = dict(options or {})
        client: dict[str, Any] = {
            "timeout": request_timeout,
            "connect_timeout": min(CONNECT_TIMEOUT, request_timeout),
        }
        if config.pop("allow_http", "false").lower() == "true":
            client["allow_http"] = True
        build: Callable[..., Any] = obstore.store.from_url

        def store(retries: int) -> Any:
            retry = {"max_retries": retries, "retry_timeout": request_timeout}
            if location.scheme == "memory":
                return build(url)
            return build(url, config=config, client_options=client, retry_config=retry)

        try:
            self._reads = store(3)
            # a create-only PUT is sent once: a retry of one that landed would look like a loss
            self._writes = self._reads if location.scheme == "memory" else store(0)
        except (obstore.exceptions.BaseError, ValueError) as exc:
            raise UnsupportedLogStoreError(
                f"cannot open the object store: {exc}", table=location.url
            ) from None
        self._errors = obstore.exceptions
        self._api = obstore

    def __repr__(self) -> str:
        return f"ObjectLogStore({self._table_path!r})"

    @property
    def table_path(self) -> str:
        return self._table_path

    @property
    def location(self) -> TableLocation:
        """The table's canonical location (PATH.TABLE_LOCATION): every key is built from it."""
        return self._location

    def _key(self, name: str) -> str:
        return self._location.key("/".join([LOG_DIR, *check_name(name)]))

    @contextmanager
    def _request(self, name: str, *, writing: bool = False) -> Iterator[None]:
        """obstore's errors as the store contract's: absent is FileNotFoundError, refused
        (permissions, credentials) LogAccessError; anything else on a write is an unknown
        outcome (StorageOutcomeUnknownError, an OSError), on a read LogAccessError."""
        errors = self._errors
        table, version = self._table_path, leading_version(name)
        try:
            yield
        except (errors.NotFoundError, FileNotFoundError):
            raise FileNotFoundError(f"{self._table_path}/{LOG_DIR}/{name}") from None
        except (errors.AlreadyExistsError, errors.PreconditionError):
            raise self._exists_error(name) from None
        except (errors.PermissionDeniedError, errors.UnauthenticatedError) as exc:
            raise LogAccessError(
                f"the object store refused: {exc}", table=table, version=version, file=name
            ) from None
        except errors.BaseError as exc:
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if writing:
                raise StorageOutcomeUnknownError(
                    f"the write may or may not have happened: {message}",
                    table=table,
                    version=version,
                    file=name,
                ) from None
            raise LogAccessError(
                f"the object store failed: {message}", table=table, version=version, file=name
            ) from None

    # --- reading -----------------------------------------------------------------------------

    def read(self, name: str) -> bytes:
        key = self._key(name)
        with self._request(name):
            if name == LAST_CHECKPOINT:
                size = self._api.head(self._reads, key)["size"]
                if size > LAST_CHECKPOINT_MAX_BYTES:
                    raise LogFileTooLargeError(
                        f"{name} is {size} bytes, more than {LAST_CHECKPOINT_MAX_BYTES}",
                        table=self._table_path,
                        file=name,
                    )
            return bytes(self._api.get(self._reads, key).bytes())

    def exists(self, name: str) -> bool:
        return self.stat(name) is not None

    def stat(self, name: str) -> FileInfo | None:
        key = self._key(name)
        try:
            with self._request(name):
                meta = self._api.head(self._reads, key)
        except FileNotFoundError:
            return None
        return _info(name, meta)

    def local_path(self, name: str) -> str | None:
        return None

    @rule("LOG.LISTING")
    def list_from(self, start: str = "") -> list[FileInfo]:
        prefix = LOG_DIR + "/"
        # the server lists keys strictly after the offset: a proper prefix of ``start`` sorts
        # before it, and what lies between is dropped below
        offset = prefix + start[:-1] if start else None
        return [
            info
            for info in self._listed(prefix, offset)
            if "/" not in info.name and _addressable(info.name) and info.name >= start
        ]

    def list_dir(self, subdir: str) -> list[FileInfo]:
        if len(check_name(subdir)) != 1:
            raise ValueError(f"not a subdirectory of {LOG_DIR}/: {subdir!r}")
        return [
            FileInfo(f"{subdir}/{info.name}", info.size, info.modification_time)
            for info in self._listed(f"{LOG_DIR}/{subdir}/", None)
            if "/" not in info.name and _addressable(info.name)
        ]

    def _listed(self, prefix: str, offset: str | None) -> list[FileInfo]:
        """The objects below ``prefix`` (relative to the table root, "" or ending in ``/``),
        named relative to it, sorted; ``offset`` (relative to the root too) lists only keys
        after it. Keys whose names obstore cannot parse are listed too (PATH.STRAY_KEYS: the
        callers ignore what is no name of theirs)."""
        head = self._location.key(prefix)
        stray = None
        with self._request(prefix.rstrip("/")):
            listing = self._api.list(
                self._reads,
                prefix=head.rstrip("/") or None,
                offset=None if offset is None else self._location.key(offset),
                chunk_size=1000,
            )
            try:
                metas = [meta for batch in listing for meta in batch]
            except self._errors.InvalidPathError as refused:  # a key obstore cannot name
                stray = _quoted_path(str(refused))
        if stray is not None:
            infos = self._listed_past(head, stray, offset)
        else:
            infos = [_info(meta["path"][len(head) :], meta) for meta in metas]
        infos.sort(key=lambda info: info.name)
        return infos

    def _listed_past(self, head: str, stray: str, offset: str | None) -> list[FileInfo]:
        """The listing of ``head`` when obstore refused a key it lists (``stray``): the same
        prefix listed by :mod:`~deltaspec.impl.log.key_listing`, keys byte for byte."""
        after = None if offset is None else self._location.key(offset)
        try:
            keys = key_listing.list_keys(
                OBJECT_SCHEMES[self._location.scheme],
                getattr(self._reads, "config", {}),
                head,
                self._timeout.total_seconds(),
            )
        except key_listing.KeyListingUnavailable as why:
            raise LogAccessError(
                f"the stray object {stray!r} under the table cannot be listed past: {why}; "
                "remove it, or give the store an access key",
                table=self._table_path,
                file=stray,
            ) from None
        except OSError as exc:
            raise LogAccessError(
                f"the object store failed: {exc}", table=self._table_path, file=stray
            ) from None
        return [
            FileInfo(k.key[len(head) :], k.size, k.modified_ms)
            for k in keys
            if after is None or k.key > after
        ]

    # --- writing -----------------------------------------------------------------------------

    @rule("LOG.PUT_IF_ABSENT", "LOG.ATOMIC_VISIBILITY")
    def write_new(self, name: str, data: bytes) -> None:
        check_data(data)
        key = self._key(name)
        if self._conditional:
            with self._request(name, writing=True):
                self._api.put(self._writes, key, bytes(data), mode="create")
            return
        with _single_writer_lock(self._table_path):  # the single-driver guarantee, no more
            if self.exists(name):
                raise self._exists_error(name)
            with self._request(name, writing=True):
                self._api.put(self._writes, key, bytes(data), mode="overwrite")

    def write_overwrite(self, name: str, data: bytes) -> None:
        check_overwritable(name)
        check_data(data)
        with self._request(name, writing=True):
            self._api.put(self._reads, self._key(name), bytes(data), mode="overwrite")

    def delete(self, name: str) -> None:
        try:
            with self._request(name, writing=True):
                self._api.delete(self._reads, self._key(name))
        except FileNotFoundError:
            return

    # --- the table's other files (VACUUM) ----------------------------------------------------

    def list_table_files(self) -> list[FileInfo]:
        """Every object under the table root outside ``_delta_log/``, named by its path relative
        to the root (``/``-separated), sorted. An object store has no links and no directories:
        a name is an object of this table and nothing else."""
        return [
            info
            for info in self._listed("", None)
            if _addressable(info.name) and not info.name.startswith(LOG_DIR + "/")
        ]

    def delete_table_file(self, relative: str) -> None:
        """Delete the object ``relative`` to the table root (absent: nothing to do). A name that
        is not a plain relative path, or lies under ``_delta_log/``, is a ValueError."""
        parts = relative.split("/")
        if not relative or any(p in {"", ".", ".."} for p in parts) or parts[0] == LOG_DIR:
            raise ValueError(f"not a data file of the table: {relative!r}")
        try:
            with self._request(relative, writing=True):
                self._api.delete(self._reads, self._location.key(relative))
        except FileNotFoundError:
            return


@rule("PATH.STRAY_KEYS")
def _addressable(name: str) -> bool:
    """Whether the listed ``name`` (relative to a listed prefix) can be a file of the table:
    no empty, ``.`` or ``..`` segment (PATH.STRAY_KEYS). Any other key is a stray object that
    listings ignore: never read, never deleted, never a gap or a version."""
    return all(part not in ("", ".", "..") for part in name.split("/"))


def _quoted_path(message: str) -> str:
    """The key obstore names in an invalid-path error (``… Path "k" …``), else the message."""
    _, quote_open, rest = message.partition('Path "')
    return rest.partition('"')[0] if quote_open else message.splitlines()[0]


def _info(name: str, meta: Mapping[str, Any]) -> FileInfo:
    modified = meta["last_modified"]
    return FileInfo(name, int(meta["size"]), int(modified.timestamp() * 1000))
