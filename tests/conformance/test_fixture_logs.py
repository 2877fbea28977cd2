"""The ACTION.* and SNAPSHOT.* rules checked against logs that delta-spark wrote.

Reads the JSON commits of every fixture in ../shared/fixtures/delta-spark and
replays them through the model.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from deltaspec.conformance.engines.model.adapter import read_log_action
from deltaspec.model.actions import Action, AddFile, Commit, Metadata
from deltaspec.model.log import commit_name
from deltaspec.model.snapshot import Snapshot, apply_commit, replay
from deltaspec.model.values import decode_partition_value, partition_keys, partition_schema

COMMIT = re.compile(r"^(\d{20})\.json$")
REQUIRED_FIELDS = {
    "add": {"path", "partitionValues", "size", "modificationTime", "dataChange"},
    "remove": {"path", "dataChange"},
    "metaData": {"id", "format", "schemaString", "partitionColumns"},
    "protocol": {"minReaderVersion", "minWriterVersion"},
    "txn": {"appId", "version"},
    "commitInfo": {"timestamp"},
    "domainMetadata": {"domain", "configuration", "removed"},
    "cdc": {"path", "partitionValues", "size", "dataChange"},
}


def manifest(fixtures: Path) -> list[dict[str, Any]]:
    tables: list[dict[str, Any]] = json.loads((fixtures / "MANIFEST.json").read_text())["tables"]
    return tables


def commit_files(table: Path) -> dict[int, Path]:
    log = table / "_delta_log"
    found = {int(m[1]): p for p in log.iterdir() if (m := COMMIT.match(p.name))}
    return dict(sorted(found.items()))


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def replayable(fixtures: Path) -> list[str]:
    """Tables whose JSON commits run contiguously from version 0."""
    names = []
    for table in manifest(fixtures):
        versions = list(commit_files(fixtures / table["name"]))
        if versions and versions == list(range(len(versions))):
            names.append(table["name"])
    return names


def model_commits(table: Path) -> list[Commit]:
    commits: list[Commit] = []
    snapshot = Snapshot()
    for version, path in commit_files(table).items():
        actions: list[Action] = []
        for line in lines(path):
            action = read_log_action(line, snapshot)
            if action is not None:
                actions.append(action)
        commit = Commit(version, tuple(actions))
        snapshot = apply_commit(snapshot, commit)
        commits.append(commit)
    return commits


@pytest.mark.rules("LOG.COMMIT_FILE_NAME")
def test_commit_files_are_named_by_twenty_digit_versions(fixtures_dir: Path) -> None:
    seen = 0
    for table in manifest(fixtures_dir):
        for version, path in commit_files(fixtures_dir / table["name"]).items():
            assert path.name == commit_name(version)
            seen += 1
    assert seen > 200


@pytest.mark.rules("ACTION.LINE_FORMAT", "ACTION.UNKNOWN")
def test_every_line_is_one_object_with_at_most_one_known_action(fixtures_dir: Path) -> None:
    kinds: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    for table in manifest(fixtures_dir):
        for path in commit_files(fixtures_dir / table["name"]).values():
            for line in lines(path):
                assert isinstance(line, dict)
                action = read_log_action(line, Snapshot())
                kinds.update(k for k in line if k in REQUIRED_FIELDS)
                unknown.update(k for k in line if k not in REQUIRED_FIELDS)
                assert (action is None) == (not set(line) & set(REQUIRED_FIELDS))
    assert set(kinds) == set(REQUIRED_FIELDS)
    assert unknown, "the schema-evolvability fixture carries unknown actions to tolerate"


@pytest.mark.rules(
    "ACTION.PROTOCOL", "ACTION.METADATA", "ACTION.ADD", "ACTION.REMOVE", "ACTION.TXN",
    "ACTION.COMMIT_INFO", "ACTION.DOMAIN_METADATA", "ACTION.CDC",
)  # fmt: skip
def test_actions_carry_their_required_fields(fixtures_dir: Path) -> None:
    for table in manifest(fixtures_dir):
        if table["category"] == "negative":
            continue  # hand-edited logs that delta-spark must refuse
        for path in commit_files(fixtures_dir / table["name"]).values():
            for line in lines(path):
                for kind, body in line.items():
                    missing = REQUIRED_FIELDS.get(kind, set()) - set(body)
                    assert not missing, f"{path}: {kind} lacks {sorted(missing)}"
                    if kind == "protocol":
                        table_features = body["minWriterVersion"] == 7
                        assert ("writerFeatures" in body) == table_features, path
                        assert ("readerFeatures" in body) == (body["minReaderVersion"] == 3), path


@pytest.mark.rules("ACTION.PARTITION_VALUES")
def test_partition_values_are_strings_read_in_their_column_type(fixtures_dir: Path) -> None:
    checked = 0
    for name in replayable(fixtures_dir):
        snapshot = replay(model_commits(fixtures_dir / name))
        if snapshot.metadata is None or not snapshot.metadata.partition_columns:
            continue
        schema = partition_schema(snapshot.metadata)
        keys = partition_keys(snapshot.metadata)
        for add in snapshot.files.values():
            values = dict(add.partition_values)
            assert set(values) == set(keys.values()), name
            for column, key in keys.items():
                assert values[key] is None or isinstance(values[key], str)
                decode_partition_value(values[key], schema[column])
                checked += 1
    assert checked > 20


@pytest.mark.rules("SNAPSHOT.REPLAY", "SNAPSHOT.RECONCILE", "CHECKPOINT.LAST_CHECKPOINT")
def test_replay_matches_the_checkpoint_file_counts_delta_spark_recorded(fixtures_dir: Path) -> None:
    compared = 0
    for name in replayable(fixtures_dir):
        pointer = fixtures_dir / name / "_delta_log" / "_last_checkpoint"
        if not pointer.exists():
            continue
        try:
            recorded = json.loads(pointer.read_text())
        except json.JSONDecodeError:
            continue  # golden-corrupted-last-checkpoint: covered by the impl's reader
        if "numOfAddFiles" not in recorded:
            continue
        commits = model_commits(fixtures_dir / name)
        snapshot = replay(commits[: recorded["version"] + 1])
        assert len(snapshot.files) == recorded["numOfAddFiles"], name
        compared += 1
    assert compared >= 5


@pytest.mark.rules("SNAPSHOT.FILE_KEY", "SNAPSHOT.TOMBSTONES")
def test_a_path_deleted_and_added_again_is_live(fixtures_dir: Path) -> None:
    commits = model_commits(fixtures_dir / "golden-delete-re-add-same-path")
    snapshot = replay(commits)
    removed_then_added = {
        a.path
        for later in commits
        for a in later.actions
        if isinstance(a, AddFile)
        and any(
            getattr(b, "path", None) == a.path and type(b).__name__ == "RemoveFile"
            for earlier in commits[: later.version]
            for b in earlier.actions
        )
    }
    assert removed_then_added
    assert removed_then_added <= snapshot.live_paths()
    assert not removed_then_added & {path for path, _ in snapshot.tombstones}


@pytest.mark.rules("SNAPSHOT.PROTOCOL_METADATA", "SNAPSHOT.TIME_TRAVEL")
def test_every_version_has_the_latest_protocol_and_metadata(fixtures_dir: Path) -> None:
    for name in replayable(fixtures_dir):
        commits = model_commits(fixtures_dir / name)
        snapshot = Snapshot()
        for commit in commits:
            snapshot = apply_commit(snapshot, commit)
            latest = [a for a in commit.actions if isinstance(a, Metadata)]
            if latest:
                assert snapshot.metadata == latest[-1]
            assert snapshot == replay(commits[: commit.version + 1])
        if name != "golden-invalid-protocol-version":
            assert snapshot.protocol is not None and snapshot.metadata is not None, name
