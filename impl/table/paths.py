"""The one checked resolver of data paths: every data file the implementation opens, keeps or
deletes.

**Data paths** (``add.path``, ``remove.path``, deletion-vector locations) have one rule here,
decided once: :func:`resolve_data_path` turns the URI the log holds into the one canonical
location relative to the table root, or refuses it (PATH.DATA_FILE). Replay, VACUUM, scans and
deletion-vector reads all call it, so a path the loader accepts is the same path VACUUM keeps and
a scan opens; one that it refuses is never live. :func:`deletion_vector_location` names a
deletion vector's file as such a path. :func:`data_file` adds the file-system check: no component
below the root is a symbolic link (PATH.NO_SYMLINKS); :func:`open_data_file` opens the file as
:mod:`deltaspec.impl.log.regular_files` opens every file of the table (PATH.REGULAR_FILES).
"""

from __future__ import annotations

import os
import posixpath
import re
import uuid
from typing import BinaryIO
from urllib.parse import urlsplit

from deltaspec.rules import rule

from .. import codec
from ..actions import AddFile, DeletionVector, RemoveFile
from ..codec.roaring import check_inline_vector
from ..codec.z85 import z85_decode
from ..errors import CorruptLogError, DataFileNotFoundError, UnsafePathError
from ..log.regular_files import check_real_dirs, open_regular

__all__ = [
    "SUSPICIOUS_PATH",
    "canonical_path",
    "check_deletion_vector",
    "check_file_action",
    "data_file",
    "deletion_vector_location",
    "is_suspicious",
    "open_data_file",
    "resolve_data_path",
]

# --- data paths (PATH.DATA_FILE) -----------------------------------------------------------------

_URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
SUSPICIOUS_PATH = (
    r"^$|^/|^[A-Za-z][A-Za-z0-9+.\-]*:|(?:^|/)\.\.?(?:/|$)|//|^_delta_log(?:/|$)|\x00"
    r"|%(?:2[eEfF]|5[cCfF]|00)|%(?:$|[^0-9A-Fa-f]|[0-9A-Fa-f](?:$|[^0-9A-Fa-f]))"
)
"""A raw path that :func:`resolve_data_path` must look at: empty, absolute, a URI, a ``.``/``..``
or empty segment, ``_delta_log``, NUL, an escape decoding to ``.``, ``/``, ``\\``, ``_`` or NUL,
or a ``%`` that is not an escape. Every other path is already canonical and safe (writers produce
``%20``, ``%25``, ``%3A``...), which lets replay check millions of paths with one regex."""
_SUSPICIOUS = re.compile(SUSPICIOUS_PATH)


def is_suspicious(path: str) -> bool:
    """Whether ``path`` needs :func:`resolve_data_path` (else it is its own canonical form)."""
    return _SUSPICIOUS.search(path) is not None


@rule("PATH.DATA_FILE")
def resolve_data_path(table_root: str, path: str) -> str:
    """The canonical location of a data file named by ``path``, relative to the table root,
    decoded, ``/``-separated; ValueError saying why for a path that is not safe (PATH.DATA_FILE).

    The protocol allows a relative URI or an absolute one (ACTION.ADD). Safe means: it decodes
    (no malformed escape such as a bare ``%``, no NUL), a relative one has no ``..`` segment, an
    absolute one (``/x`` or ``file:/x``) lies inside the table root, it is not the root itself,
    and it is not inside ``_delta_log``. Any other URI scheme (``s3:``, ``hdfs:``...) names a
    file outside a local table. ``.`` segments and repeated ``/`` are dropped, as
    ``java.net.URI.normalize`` drops them. Nothing here touches the file system, except that an
    absolute path is also compared with the root's real path (the root itself may be a link).
    """
    scheme = _URI_SCHEME.match(path)
    if scheme is not None and _object_store_root(table_root):
        path = _inside_object_store_root(table_root, path)
    elif scheme is not None:
        if scheme[0].lower() != "file:":
            raise ValueError(f"a {scheme[0]} URI names a file outside the table")
        rest = path[scheme.end() :]
        if rest.startswith("//"):
            authority, _, rest = rest[2:].partition("/")
            if authority not in ("", "localhost"):
                raise ValueError(f"a file URI on host {authority!r} is outside the table")
            rest = "/" + rest
        if not rest.startswith("/"):
            raise ValueError("a relative file: URI")
        path = rest
    decoded = codec.decode_path(path)
    if not decoded:
        raise ValueError("an empty path")
    if "\0" in decoded:
        raise ValueError("a NUL character in the path")
    if decoded.startswith("/") and _object_store_root(table_root):
        raise ValueError("a local absolute path is outside a table on an object store")
    if decoded.startswith("/"):
        target = posixpath.normpath(decoded)
        for root in {posixpath.normpath(table_root), os.path.realpath(table_root)}:
            if target.startswith(root.rstrip("/") + "/"):
                relative = target[len(root.rstrip("/")) + 1 :]
                break
        else:
            raise ValueError("an absolute path outside the table root")
    else:
        if ".." in decoded.split("/"):
            raise ValueError("a '..' segment leaves the table root")
        relative = posixpath.normpath(decoded)
    if relative in ("", ".") or relative.split("/", 1)[0] == "_delta_log":
        raise ValueError("a path into _delta_log or the table root itself")
    return relative


_SAME_STORE = {"s3a": "s3", "abfs": "abfss"}
"""URI schemes that name the same objects as another (Hadoop's ``s3a`` is S3)."""


def _object_store_root(table_root: str) -> bool:
    scheme = _URI_SCHEME.match(table_root)
    return scheme is not None and scheme[0].lower() != "file:"


def _inside_object_store_root(table_root: str, uri: str) -> str:
    """The part of the absolute ``uri`` below the object-store table root, still encoded; a URI
    of another store, bucket or container, or beside the root's path, is outside the table."""
    root, target = urlsplit(table_root), urlsplit(uri)
    schemes = (_SAME_STORE.get(s.lower(), s.lower()) for s in (root.scheme, target.scheme))
    if len(set(schemes)) != 1 or root.netloc != target.netloc:
        raise ValueError(f"a {target.scheme}: URI of another store or bucket is outside the table")
    prefix = root.path.rstrip("/") + "/"
    if not target.path.startswith(prefix) or target.query or target.fragment:
        raise ValueError(f"a {target.scheme}: URI outside the table root")
    return target.path[len(prefix) :]


def data_file(table_root: str, relative: str, *, version: int | None = None) -> str:
    """The absolute location of the data file at canonical ``relative`` (a
    :func:`resolve_data_path` result), after checking that no directory between the root and it is
    a symbolic link (PATH.NO_SYMLINKS): UnsafePathError otherwise. The file itself is opened by the
    caller with ``O_NOFOLLOW`` (:func:`open_regular`) or deleted only if it is a regular file."""
    parts = relative.split("/")
    check_real_dirs(table_root, parts[:-1], version=version, file=relative)
    return os.path.join(table_root, *parts)


@rule("SNAPSHOT.CANONICAL_PATH")
def canonical_path(path: str) -> str:
    """The key a relative ``add``/``remove`` path is known by (SNAPSHOT.CANONICAL_PATH):
    ``.`` segments and empty segments (``//``) dropped, as delta-spark's
    ``new Path(new URI(path))`` drops them, so ``p/x``, ``./p/x`` and ``p//x`` are one file.
    Absolute paths and URIs are returned as they are: delta-spark keys them apart from the
    relative spelling too (it qualifies them with the file system instead)."""
    if path.startswith("/") or _URI_SCHEME.match(path) is not None:
        return path
    segments = [segment for segment in path.split("/") if segment not in ("", ".")]
    return "/".join(segments) if segments else path


_INT64_MAX = 2**63 - 1


def check_file_action(
    action: AddFile | RemoveFile, table: str, version: int | None, file: str | None
) -> str:
    """Refuse an add/remove whose path is unsafe (PATH.DATA_FILE) or whose size or
    modification time is negative or beyond int64; returns its canonical path
    (SNAPSHOT.CANONICAL_PATH). The same check for a reader and for the write boundary."""
    kind = "add" if isinstance(action, AddFile) else "remove"
    path = action.path
    if is_suspicious(path):
        try:
            resolve_data_path(table, path)
        except ValueError as exc:
            raise UnsafePathError(
                f"{kind}.path {path[:200]!r}: {exc}", table=table, version=version, file=file
            ) from None
        path = canonical_path(path)
    dv = action.deletion_vector
    if dv is not None:
        check_deletion_vector(dv, table, version, file)
    numbers = [("size", action.size)]
    if isinstance(action, AddFile):
        numbers.append(("modificationTime", action.modification_time))
    for name, value in numbers:
        if value is not None and not 0 <= value <= _INT64_MAX:
            raise CorruptLogError(
                f"{kind}.{name} is out of range ({value}) for {action.path[:200]!r}",
                table=table,
                version=version,
                file=file,
            )
    return path


def open_data_file(table_root: str, path: str, *, version: int | None = None) -> BinaryIO:
    """The data or deletion-vector file a log ``path`` names, opened for reading through the
    whole resolver: PATH.DATA_FILE (UnsafePathError for a path the rule refuses),
    PATH.NO_SYMLINKS, PATH.REGULAR_FILES; a file that is not there is DataFileNotFoundError."""
    try:
        relative = resolve_data_path(table_root, path)
    except ValueError as exc:
        raise UnsafePathError(
            f"path {path[:200]!r}: {exc}", table=table_root, version=version, file=path[:200]
        ) from None
    location = data_file(table_root, relative, version=version)
    try:
        return open_regular(location, table=table_root, version=version, file=relative)
    except FileNotFoundError:
        raise DataFileNotFoundError(
            "a file the table names is not there", table=table_root, version=version, file=relative
        ) from None


def deletion_vector_location(dv: DeletionVector) -> str | None:
    """The ``path`` (as ``add.path`` would hold it) of a deletion vector's file, for
    :func:`resolve_data_path` to decide (PATH.DATA_FILE), so that a ``u``
    prefix or a ``p`` path leaving the table is refused like any other path; None for an inline
    DV or an unknown storage type. ``u``: ``<prefix>/deletion_vector_<uuid>.bin`` from the Z85
    id (ValueError for a malformed id); ``p``: the stored URI itself."""
    if dv.storage_type == "u":
        prefix, encoded = dv.path_or_inline_dv[:-20], dv.path_or_inline_dv[-20:]
        try:
            decoded = z85_decode(encoded)
        except ValueError:
            raise ValueError(f"not a Z85 deletion vector id: {encoded!r}") from None
        name = f"deletion_vector_{uuid.UUID(bytes=decoded)}.bin"
        return f"{prefix}/{name}" if prefix else name
    if dv.storage_type == "p":
        return dv.path_or_inline_dv
    return None


def check_deletion_vector(
    dv: DeletionVector, table: str, version: int | None, file: str | None
) -> None:
    """Refuse a deletion vector stored in a file (``u`` or ``p``) whose location the path rule
    refuses (PATH.DATA_FILE): a ``p`` path or a ``u`` prefix leaving the table, or a ``u`` id
    that is not Z85 (UnsafePathError); and an inline (``i``) vector that is not the Z85 of a
    serialised DV holding ``cardinality`` rows (CorruptLogError). Checked at load, so such a DV
    is never live, never opened, never kept."""
    if dv.storage_type == "i":
        try:
            check_inline_vector(dv)
        except ValueError as exc:
            raise CorruptLogError(
                f"inline deletionVector {dv.path_or_inline_dv[:60]!r}: {exc}",
                table=table,
                version=version,
                file=file,
            ) from None
        return
    try:
        location = deletion_vector_location(dv)
        if location is not None:
            resolve_data_path(table, location)
    except ValueError as exc:
        raise UnsafePathError(
            f"deletionVector {dv.storage_type}:{dv.path_or_inline_dv[:200]!r}: {exc}",
            table=table,
            version=version,
            file=file,
        ) from None
