"""The recorded delta-spark side of the Spark differential (conformance/spark_differential/
reference.py): ``deltaspec check`` replays it from the engines cache where recorded and records
it where not (``--live``: always live, recorded); ``deltaspec mutants`` records what is missing
in its baseline and replays it in each mutant."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from deltaspec.conformance.spark_differential import reference
from deltaspec.conformance.spark_differential.reference import (
    ENV,
    FOLDER,
    ReferenceCache,
    for_check,
)


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


def test_auto_replays_what_is_recorded_and_records_what_is_not(tmp_path: Path) -> None:
    table = tmp_path / "delta"
    (table / "table").mkdir(parents=True)
    folder = tmp_path / "cache"
    first = ReferenceCache("auto", folder)
    assert first.load("delete", str(tmp_path / "a")) is None  # not recorded: run it live
    first.save("delete", {"rows": [(1,)]}, str(table))
    assert first.replayed == []
    second = ReferenceCache("auto", folder)
    assert second.load("delete", str(tmp_path / "b")) == {"rows": [(1,)]}
    assert second.load("merge") is None
    assert second.replayed == ["delete"]


def test_replay_records_nothing(tmp_path: Path) -> None:
    ReferenceCache("replay", tmp_path / "cache").save("conflict same app id", "committed")
    assert ReferenceCache("auto", tmp_path / "cache").load("conflict same app id") is None


def test_check_replays_from_the_engines_cache_unless_live_or_told_otherwise(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("DELTASPEC_CACHE", str(tmp_path))
    assert for_check() == ReferenceCache("auto", tmp_path / FOLDER)
    assert for_check(live=True) == ReferenceCache("record", tmp_path / FOLDER)
    monkeypatch.setenv(ENV, reference.setting("replay", tmp_path / "mutants"))  # a mutant's run
    assert for_check(live=True) == ReferenceCache("replay", tmp_path / "mutants")


@pytest.mark.spark
def test_a_replayed_script_is_judged_against_the_recording(spark: Any, tmp_path: Path) -> None:
    """A script run live and recorded, then replayed: the same verdict, the replay named; a
    recording that says otherwise than our engine does is a difference (the replay is what our
    side is judged against, not a pass)."""
    from deltaspec.conformance.engines.registry import make_engines
    from deltaspec.conformance.spark_differential.compare import differences, run_both

    engines = make_engines(spark)
    cache = ReferenceCache("auto", tmp_path / "cache")
    live = run_both(spark, engines, "overwrite", tmp_path / "live", cache)
    assert cache.replayed == [] and differences(live) == []
    replayed = run_both(spark, engines, "overwrite", tmp_path / "replayed", cache)
    assert cache.replayed == ["overwrite"] and differences(replayed) == []
    assert replayed["delta"] == {**live["delta"], "reads ours": replayed["delta"]["reads ours"]}
    recorded = cache._entry("overwrite") / "outcome.pickle"
    outcome = pickle.loads(recorded.read_bytes())
    recorded.write_bytes(pickle.dumps({**outcome, "rows": [(9, "c", "old")]}))
    found = differences(run_both(spark, engines, "overwrite", tmp_path / "wrong", cache))
    assert found and found[0].startswith("rows: ours [(9, 'c', 'new')]"), found
