"""Symlink-format manifests (``DeltaTable.generate("symlink_format_manifest")``): for engines
that read a table through a list of its data files (Presto, Athena, Redshift Spectrum).

``_symlink_format_manifest/manifest`` (or ``.../<partition directory>/manifest`` per partition of
a partitioned table) lists the absolute URI of every live file, one a line, as delta-spark's
GenerateSymlinkManifest writes it; manifests of partitions that no longer exist are deleted.
With ``delta.compatibility.symlinkFormatManifest.enabled=true`` every commit of the Spark path
regenerates them (delta-spark's post-commit hook).
"""

from __future__ import annotations

import os
import stat
import uuid
import warnings
from collections import defaultdict

from ..impl import codec
from ..impl.errors import DeltaError, UnsupportedFeatureError
from ..impl.snapshot.delta_log import DeltaLog
from ..impl.snapshot.state import Snapshot
from .files import safe_directory
from .read import file_path
from .s3a import local_root

MANIFEST_DIR = "_symlink_format_manifest"
ENABLED = "delta.compatibility.symlinkFormatManifest.enabled"


def generate(snapshot: Snapshot) -> list[str]:
    """Write the manifests of ``snapshot``; returns the manifest files written (relative)."""
    root = local_root(snapshot.table_path, "a symlink manifest")
    live = list(snapshot.files.values())
    if any(f.deletion_vector is not None for f in live):
        raise UnsupportedFeatureError(
            "symlink manifests cannot describe a table with deletion vectors",
            table=root,
            version=snapshot.version,
        )
    columns = snapshot.metadata.partition_columns
    groups: dict[str, list[str]] = defaultdict(list)
    for add in live:
        directory = codec.partition_directory([(c, add.partition_values.get(c)) for c in columns])
        groups[directory].append("file:" + file_path(root, add))
    if not columns:
        groups.setdefault("", [])
    written = []
    for directory, uris in sorted(groups.items()):
        parts = [MANIFEST_DIR, *(directory.split("/") if directory else [])]
        folder = safe_directory(root, parts)
        temporary = os.path.join(folder, f".manifest.{uuid.uuid4()}.tmp")
        with open(temporary, "w", encoding="utf-8") as out:
            out.write("".join(u + "\n" for u in sorted(uris)))
        os.replace(temporary, os.path.join(folder, "manifest"))
        written.append("/".join([*parts, "manifest"]))
    _delete_stale(root, set(written))
    return written


def _delete_stale(root: str, keep: set[str]) -> None:
    """Manifests of partitions that are gone: deleted, never following a symlink."""
    top = os.path.join(root, MANIFEST_DIR)
    for folder, dirnames, filenames in os.walk(top, followlinks=False):
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(folder, d))]
        for name in filenames:
            full = os.path.join(folder, name)
            relative = os.path.relpath(full, root).replace(os.sep, "/")
            stale = name == "manifest" and relative not in keep
            if stale and stat.S_ISREG(os.lstat(full).st_mode):
                os.unlink(full)


def after_commit(root: str, version: int | None, log: DeltaLog | None = None) -> None:
    """The post-commit hook: regenerate when the table asks for it (``ENABLED``). The commit is
    in the log whatever happens here, so a failure is a warning, never an error a caller would
    retry (``generate`` rebuilds every manifest the next time)."""
    if version is None:
        return
    try:
        snapshot = (log or DeltaLog(root)).snapshot(version)
        if snapshot.metadata.configuration.get(ENABLED, "false").strip().lower() == "true":
            generate(snapshot)
    except (OSError, DeltaError) as error:
        warnings.warn(
            f"version {version} of {root} is committed; its symlink manifest was not updated: "
            f"{error}",
            stacklevel=2,
        )
