"""deltaspec.strategies: drawn actions and interleavings are valid scenario vectors that the
model runs."""

from __future__ import annotations

from hypothesis import given, settings

from deltaspec import strategies as ds
from deltaspec.conformance.engines.model.adapter import run
from deltaspec.conformance.harness.outcomes import outcome_kind


@settings(max_examples=40, deadline=None)
@given(ds.scenarios())
def test_drawn_scenarios_are_schema_valid_and_run_on_the_model(vector):
    result = run(vector)  # as the implementer guide shows: the drawn JSON itself
    assert set(result.outcomes) == set(vector["writers"])
    for outcome in result.outcomes.values():
        assert outcome_kind(outcome) in {"committed", "failed", "skipped"}


@given(ds.interleavings(["a", "b", "c"]))
def test_interleavings_begin_each_writer_before_it_commits(steps):
    assert len(steps) == 6
    for writer in "abc":
        begin = steps.index({"begin": writer})
        assert begin < steps.index({"commit": writer})


@given(ds.actions(["x.parquet", "y.parquet"]))
def test_actions_remove_only_live_files_once(staged):
    removed = [a["remove"]["path"] for a in staged if "remove" in a]
    assert len(removed) == len(set(removed)) and set(removed) <= {"x.parquet", "y.parquet"}


def test_the_implementer_guide_example_runs():
    """docs/guides/implementer.md's Hypothesis example, run as written."""
    from pathlib import Path

    guide = Path(__file__).resolve().parents[2] / "docs" / "guides" / "implementer.md"
    text = guide.read_text(encoding="utf-8")
    (example,) = [block.split("```", 1)[0] for block in text.split("```python\n")[1:]]
    namespace: dict = {}
    exec(compile(example, str(guide), "exec"), namespace)
    namespace["test_my_engine_agrees_with_the_model"]()  # the @given test, run by Hypothesis
