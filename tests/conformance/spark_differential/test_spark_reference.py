"""The recorded delta-spark side of the Spark differential (conformance/spark_differential/
reference.py): used by ``deltaspec mutants`` only, recorded by the baseline, replayed by each
mutant; ``deltaspec check`` never replays."""

from __future__ import annotations

from pathlib import Path

import pytest

from deltaspec.conformance.spark_differential import reference
from deltaspec.conformance.spark_differential.reference import ENV, ReferenceCache


def test_only_a_record_or_replay_setting_turns_the_cache_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert reference.from_environment() is None
    for value in ("", "replay", "replay:", f"reuse:{tmp_path}"):
        monkeypatch.setenv(ENV, value)
        assert reference.from_environment() is None, value
    monkeypatch.setenv(ENV, reference.setting("replay", tmp_path))
    assert reference.from_environment() == ReferenceCache("replay", tmp_path)


def test_a_recorded_outcome_and_table_come_back_on_replay_only(tmp_path: Path) -> None:
    table = tmp_path / "delta"
    (table / "table" / "_delta_log").mkdir(parents=True)
    (table / "table" / "_delta_log" / "00000000000000000000.json").write_text("{}\n")
    outcome = {"observed": {"n": 1}, "rows": [(1, "a", None)], "log": []}
    folder = tmp_path / "cache"
    ReferenceCache("record", folder).save("delete", outcome, str(table))

    assert ReferenceCache("record", folder).load("delete") is None  # a baseline always runs
    replayed = tmp_path / "replayed"
    assert ReferenceCache("replay", folder).load("delete", str(replayed)) == outcome
    assert (replayed / "table" / "_delta_log" / "00000000000000000000.json").read_text() == "{}\n"
    assert ReferenceCache("replay", folder).load("merge") is None  # not recorded: run it


def test_a_second_recording_replaces_the_first(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    ReferenceCache("record", folder).save("conflict same app id", "committed")
    ReferenceCache("record", folder).save("conflict same app id", "ConcurrentAppendException")
    replayed = ReferenceCache("replay", folder).load("conflict same app id")
    assert replayed == "ConcurrentAppendException"
    assert [p.name for p in folder.iterdir() if p.name.startswith(".staging")] == []
