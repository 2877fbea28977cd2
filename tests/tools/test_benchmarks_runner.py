"""The benchmark runner (``python -m benchmarks``): a smoke run on tiny sizes, the markdown and
the baseline comparison. Speed itself is never asserted here (benchmarks/README.md)."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import report, runner  # noqa: E402
from benchmarks.harness import Metric, Target, alternate  # noqa: E402


def _metric(id: str, ours: list[float], peer: list[float], higher: bool = False) -> dict[str, Any]:
    return Metric(
        id=id,
        case=1,
        title=id,
        quantity="commits/s" if higher else "seconds",
        higher_is_better=higher,
        ours=ours,
        peer=peer,
        peer_name="peer",
        target=Target("ratio", ">=" if higher else "<=", 1.0, "at least as good as the peer"),
    ).to_json()


def _results(*metrics: dict[str, Any]) -> dict[str, Any]:
    return {"command": "test", "quick": True, "machine": {}, "cases": {"x": {"metrics": metrics}}}


def test_ratios_statuses_and_alternation() -> None:
    slow = _metric("slow", [2.0, 3.0, 4.0], [1.0, 1.0, 1.0])
    assert slow["summary"]["ratio_median"] == 3.0
    assert (slow["summary"]["ratio_min"], slow["summary"]["ratio_max"]) == (2.0, 4.0)
    assert slow["status"] == "missed"
    assert _metric("fast", [1.0], [4.0])["status"] == "met"
    assert _metric("rate", [300.0], [100.0], higher=True)["status"] == "met"
    order: list[str] = []

    def side(name: str) -> float:
        order.append(name)
        return 1.0

    a, b = alternate(lambda: side("A"), lambda: side("B"), rounds=3, warmup=1)
    assert (len(a), len(b)) == (3, 3)
    assert order == ["A", "B", "B", "A", "A", "B", "B", "A"]


def test_compare_flags_a_ratio_that_moved_the_wrong_way_by_15_percent() -> None:
    baseline = _results(
        _metric("time", [1.0], [2.0]),
        _metric("rate", [200.0], [100.0], higher=True),
        _metric("gone", [1.0], [1.0]),
    )
    same = copy.deepcopy(baseline)
    lines, regressions = report.compare(baseline, same)
    assert regressions == []
    assert all("REGRESSION" not in line for line in lines)
    worse = _results(
        _metric("time", [1.2], [2.0]),  # 0.5 -> 0.6: +20 % time ratio
        _metric("rate", [180.0], [100.0], higher=True),  # 2.0 -> 1.8: -10 %, within 15 %
        _metric("new", [1.0], [1.0]),
    )
    lines, regressions = report.compare(baseline, worse)
    assert regressions == ["time"]
    assert any(line.startswith("time") and "REGRESSION" in line for line in lines)
    assert any(line.startswith("rate") and line.endswith("ok") for line in lines)
    assert any(line.startswith("new") and "new" in line.split()[-1] for line in lines)
    assert any(line.startswith("gone") and "not measured" in line for line in lines)
    markdown = report.markdown(worse)
    assert "| 1 | time |" in markdown and "**0.60×**" in markdown


def test_the_runner_runs_cases_writes_results_and_compares(tmp_path: Path) -> None:
    out = tmp_path / "results"
    code = runner.main(["--quick", "--cases", "conflicts,checkpoint", "--out", str(out)])
    assert code == 0
    results = json.loads((out / "bench.json").read_text())
    assert set(results["cases"]) == {"conflicts", "checkpoint"}
    ids = {m["id"] for m in report.metrics_of(results)}
    assert {"conflicts.1_winners", "checkpoint.write_time", "checkpoint.size"} <= ids
    for metric in report.metrics_of(results):
        assert metric["summary"]["ratio_median"] > 0
    assert results["machine"]["cores"]
    assert (out / "bench.md").read_text().startswith("# Benchmark results")
    assert (out / "ratios.png").stat().st_size > 0
    assert (out / "conflict_check_scaling.png").stat().st_size > 0
    baseline = out / "bench.json"
    assert runner.main(["compare", "--baseline", str(baseline), "--current", str(baseline)]) == 0
