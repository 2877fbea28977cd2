"""Everything a commit leaves, in a form two engines' commits can be compared in: each action
with what legitimately differs between two writers of the same table taken out, and nothing
else. What is taken out, and why:

- a data file's name (a UUID) and its modification time; its directory (the partition, as
  escaped) stays;
- a file's ``size``, and the bytes it counts in metrics: Parquet files the two engines write
  for the same rows differ in size (delta-spark's writer puts its own key-value metadata in the
  footer), so only whether a tombstone carries a size is compared;
- a tombstone's deletionTimestamp and a commit's timestamp (wall clock): only whether it is
  there;
- a deletion vector's file name, offset and size (random prefix, layout in its file): its
  storage type and cardinality stay;
- ids and times: the table id and createdTime of metaData, a txn's app id (a streaming query's
  id) and lastUpdated, commitInfo's txnId, engineInfo and timings (``…TimeMs``);
- expression ids and quoting in operationParameters (see ``_normalised``).

Statistics are compared whole, parsed (numRecords, minValues, maxValues, nullCount,
tightBounds), in adds and in the tombstones that carry them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

# what a predicate in operationParameters prints differently on the two engines (_normalised)
_EXPR_ID = re.compile(r"#\d+L?")
_QUALIFIER = re.compile(r"\b[A-Za-z_]\w*\.(?=[A-Za-z_`])")
_NULL_TEST = re.compile(r"\((\w+) IS (NOT )?NULL\)")
_TYPED_LITERAL = re.compile(r"\b(?:TIMESTAMP|TIMESTAMP_NTZ|DATE) (?=\d)")
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?$")


def _normalised(value: Any) -> Any:
    """A parameter value with what legitimately varies taken out: expression ids, qualifiers and
    quotes in predicates (delta-spark prints resolved expressions, ``(id#12L = b)``; we print
    Spark's SQL, ``(t.id = 'b')``), JSON spacing, the wall-clock time of a timestamp."""
    if not isinstance(value, str):
        return value
    if _TIMESTAMP.match(value):
        return "<timestamp>"
    try:
        decoded = json.loads(value)
    except ValueError:
        decoded = None
    if isinstance(decoded, list | dict):
        return _normalised_json(decoded)
    text = _QUALIFIER.sub("", _EXPR_ID.sub("", value)).replace("'", "")
    # Spark's SQL prints a typed literal and a null test as TIMESTAMP '…' and (x IS NULL);
    # delta-spark's resolved expression as the bare value and isnull(x)
    text = _NULL_TEST.sub(lambda m: f"is{(m[2] or '').replace(' ', '').lower()}null({m[1]})", text)
    return _TYPED_LITERAL.sub("", text)


def _normalised_json(value: Any) -> Any:
    if isinstance(value, list):
        return [_normalised_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalised_json(v) for k, v in value.items()}
    return _normalised(value)


def _stats(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _vector(descriptor: dict[str, Any] | None) -> Any:
    if descriptor is None:
        return None
    return {"storageType": descriptor.get("storageType"), "cardinality": descriptor["cardinality"]}


_FILE_KEPT = ("dataChange", "partitionValues", "tags", "baseRowId", "defaultRowCommitVersion",
              "clusteringProvider", "extendedFileMetadata")  # fmt: skip


def file_action(kind: str, action: dict[str, Any]) -> dict[str, Any]:
    """An add, remove or cdc action as compared: its directory, the fields of
    :data:`_FILE_KEPT` it has, its stats parsed, its deletion vector's type and cardinality, and
    for a tombstone whether it has a size and a deletionTimestamp."""
    shape: dict[str, Any] = {
        "kind": kind,
        "directory": action["path"].rpartition("/")[0],  # the partition directory, as escaped
        **{key: action[key] for key in _FILE_KEPT if key in action},
    }
    if "stats" in action:
        shape["stats"] = _stats(action["stats"])
    if "deletionVector" in action:
        shape["deletionVector"] = _vector(action["deletionVector"])
    if kind == "remove":
        shape["has size"] = action.get("size") is not None
        shape["has deletionTimestamp"] = action.get("deletionTimestamp") is not None
    return shape


def _combined(values: list[Any], how: Callable[[list[Any]], Any]) -> Any:
    """Per-column statistics of several files as one file holding their rows would have them:
    nested maps merged key by key, ``how`` over the values present."""
    if all(isinstance(v, dict) for v in values):
        keys = sorted({k for v in values for k in v})
        return {k: _combined([v[k] for v in values if k in v], how) for k in keys}
    return how(values)


_HOW: dict[str, Callable[[list[Any]], Any]] = {"minValues": min, "maxValues": max,
                                               "tightBounds": all}  # fmt: skip


def _merged_stats(group: list[Any]) -> Any:
    """The stats of a partition's files of one kind taken together: counts summed, bounds
    widened, tightBounds true only if every file's is; as listed where they do not merge
    (a file without stats, bounds of kinds that do not order)."""
    if len(group) == 1:
        return group[0]
    listed = sorted(json.dumps(g, sort_keys=True) for g in group)
    if not all(isinstance(g, dict) for g in group):
        return listed
    merged: dict[str, Any] = {}
    try:
        for key in sorted({k for g in group for k in g}):
            values = [g[key] for g in group if key in g]
            if len(values) < len(group):
                return listed
            merged[key] = _combined(values, _HOW.get(key, sum))
    except TypeError:
        return listed
    return merged


def file_groups(shapes: list[dict[str, Any]]) -> list[str]:
    """The file actions of a commit as compared (JSON, sorted keys, sorted): those alike but
    for their stats and deletion vector's cardinality taken together (:func:`_merged_stats`,
    cardinalities summed). How many files a writer splits a partition's rows into is its
    physical plan's choice (delta-spark's MERGE repartitions by the partition columns and lets
    adaptive execution coalesce; its number of files follows the shuffle settings), not the
    protocol's; what the log states about the rows of each partition is."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for shape in shapes:
        rest = {k: v for k, v in shape.items() if k not in {"stats", "deletionVector"}}
        rest["has stats"] = "stats" in shape
        vector = shape.get("deletionVector")
        rest["deletion vector"] = None if vector is None else vector["storageType"]
        groups.setdefault(json.dumps(rest, sort_keys=True), []).append(shape)
    out = []
    for key, group in groups.items():
        merged = json.loads(key)
        if merged.pop("has stats"):
            merged["stats"] = _merged_stats([g["stats"] for g in group])
        if merged["deletion vector"] is not None:
            merged["deletion vector cardinality"] = sum(
                g["deletionVector"]["cardinality"] for g in group
            )
        out.append(json.dumps(merged, sort_keys=True))
    return sorted(out)


VARYING_METRIC = re.compile(r"TimeMs$|Bytes|FileSize$|FilesSize$|^sizeOf|^tableSizeAfter")
"""operationMetrics whose values depend on the machine (timings) or the Parquet writer (bytes,
file sizes): their names are compared, not their values."""


FILE_COUNT_METRIC = re.compile(r"Files|^numFiles$")
"""operationMetrics that count files (numFiles, numAddedFiles, numTargetFilesRemoved …)."""


def commit_info(info: dict[str, Any]) -> dict[str, Any]:
    """commitInfo as compared: operation, parameters (normalised), readVersion, isolationLevel,
    isBlindAppend, userMetadata and operationMetrics, the values of those not
    :data:`VARYING_METRIC` and only the names of those that are."""
    metrics = info.get("operationMetrics", {})
    return {
        "operation": info.get("operation"),
        "parameters": {k: _normalised(v) for k, v in info.get("operationParameters", {}).items()},
        "readVersion": info.get("readVersion"),
        "isolationLevel": info.get("isolationLevel"),
        "isBlindAppend": info.get("isBlindAppend"),
        "userMetadata": info.get("userMetadata"),
        "metrics": {k: None if VARYING_METRIC.search(k) else v for k, v in metrics.items()},
    }


def other_action(kind: str, action: dict[str, Any]) -> str:
    """Any other action as compared (JSON, sorted keys): metaData without its id and
    createdTime, with its schema parsed; a txn by its version alone; the rest whole."""
    if kind == "metaData":
        kept = {k: v for k, v in action.items() if k not in {"id", "createdTime"}}
        kept["schemaString"] = json.loads(kept.get("schemaString", "null"))
        action = kept
    elif kind == "txn":
        action = {"version": action.get("version"), "has appId": "appId" in action}
    return json.dumps({kind: action}, sort_keys=True)


def commit(actions: list[dict[str, Any]]) -> dict[str, Any]:
    """One commit's actions as compared: commitInfo, then the file actions and the others, each
    sorted (their order in a commit carries no meaning)."""
    info: dict[str, Any] = next((a["commitInfo"] for a in actions if "commitInfo" in a), {})
    files: list[dict[str, Any]] = []
    others: list[str] = []
    for action in actions:
        for kind, body in action.items():
            if kind in {"add", "remove", "cdc"}:
                files.append(file_action(kind, body))
            elif kind != "commitInfo":
                others.append(other_action(kind, body))
    counts = {kind: sum(1 for f in files if f["kind"] == kind) for kind in ("add", "remove")}
    return {
        "commitInfo": commit_info(info),
        "files": file_groups(files),
        "file counts": counts,
        "others": sorted(others),
    }


def log_shape(root: str) -> list[dict[str, Any]]:
    """Every commit of the table at ``root``, oldest first, as :func:`commit` compares it."""
    shape = []
    for path in sorted((Path(root) / "_delta_log").glob("*.json")):
        actions = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        shape.append({"version": int(path.stem), **commit(actions)})
    return shape


def tables(parent: str) -> dict[str, str]:
    """The Delta tables a script left under ``parent`` (its table and any sibling it wrote), by
    path relative to ``parent``."""
    return {
        str(log.parent.relative_to(parent)): str(log.parent)
        for log in sorted(Path(parent).rglob("_delta_log"))
    }


def comparable(mine: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    """``reference`` (a commit as :func:`commit` gives it) with only the operationMetrics
    ``mine`` has: our Spark path records a subset of delta-spark's metrics (not its timings,
    OPTIMIZE's file-size percentiles, or deletion-vector and change-file counts on a table
    without them), so a metric it leaves out is no difference; one it has that delta-spark
    does not is, and so is a value that differs. Where the two commits hold different numbers
    of files (a layout, :func:`file_groups`), the metrics that count files are not compared."""
    ours = mine.get("commitInfo", {}).get("metrics", {})
    info = reference.get("commitInfo")
    if info is None:
        return reference
    metrics = {k: v for k, v in info["metrics"].items() if k in ours}
    if mine.get("file counts") != reference.get("file counts"):
        # the rows split into other files (see file_groups): file counts are the layout's
        metrics |= {k: ours[k] for k in metrics if FILE_COUNT_METRIC.search(k)}
        reference = {**reference, "file counts": mine.get("file counts")}
    return {**reference, "commitInfo": {**info, "metrics": metrics}}


def differing(mine: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    """The parts of two commits' shapes that differ, as {part: (ours, delta-spark's)}; within
    commitInfo and the file and other actions, only the entries that differ."""
    out: dict[str, Any] = {}
    for key in sorted(set(mine) | set(reference)):
        a, b = mine.get(key), reference.get(key)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out[key] = {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b))
                        if a.get(k) != b.get(k)}  # fmt: skip
        elif isinstance(a, list) and isinstance(b, list):
            out[key] = {"ours only": [x for x in a if x not in b],
                        "delta-spark only": [x for x in b if x not in a]}  # fmt: skip
        else:
            out[key] = (a, b)
    return out
