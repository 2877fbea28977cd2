"""Rendering and comparing runner results: the markdown table, the plots, the baseline check.

A results file (``bench.json``) holds the machine description and, per case, its metrics as
:meth:`benchmarks.harness.Metric.to_json` writes them. :func:`compare` checks a run against a
recorded baseline on the *ratios* (ours / peer measured in the same run), which carry over from
one machine load to another far better than absolute times; a ratio that moved the wrong way
by ``threshold`` (15 % by default) or more, beyond the baseline's own spread, is a regression.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

Json = dict[str, Any]

CURVE_TITLES = {
    "snapshot_replay_scaling": (
        "Latest snapshot + file list, no checkpoint",
        "commits in the log",
    ),
    "conflict_check_scaling": (
        "Conflict check, winners of 1k adds each (no conflict)",
        "winning adds checked",
    ),
}


def metrics_of(results: Json) -> list[Json]:
    """Every metric of a results file, by case number, each case's in the order it ran them."""
    out: list[Json] = []
    for case in results.get("cases", {}).values():
        out.extend(case.get("metrics", []))
    return sorted(out, key=lambda m: m["case"])


def _unit(value: float, quantity: str) -> tuple[float, str]:
    """The scale and unit to print a quantity whose median is ``value`` in."""
    if quantity == "seconds":
        if value < 1e-3:
            return 1e6, "µs"
        return (1e3, "ms") if value < 1 else (1.0, "s")
    if quantity == "bytes":
        return 1e-6, "MB"
    if quantity == "rows/s" and value >= 1e6:
        return 1e-6, "M rows/s"
    return 1.0, quantity


def _number(value: float, scale: float) -> str:
    if math.isnan(value):
        return "—"
    scaled = value * scale
    if scaled >= 100:
        return f"{scaled:,.0f}"
    return f"{scaled:.1f}" if scaled >= 10 else f"{scaled:.2f}"


def _spread(summary: Json, side: str, quantity: str) -> str:
    scale, unit = _unit(summary[f"{side}_median"], quantity)
    median = _number(summary[f"{side}_median"], scale)
    if summary["pairs"] <= 1:
        return f"{median} {unit}"
    low = _number(summary[f"{side}_min"], scale)
    high = _number(summary[f"{side}_max"], scale)
    return f"{median} {unit} ({low}–{high})"


def _ratio(summary: Json) -> str:
    if summary["pairs"] <= 1:
        return f"**{summary['ratio_median']:.2f}×**"
    return (
        f"**{summary['ratio_median']:.2f}×** "
        f"({summary['ratio_min']:.2f}–{summary['ratio_max']:.2f})"
    )


def markdown(results: Json) -> str:
    """The results as one markdown table per run, with the machine description."""
    machine = results.get("machine", {})
    packages = ", ".join(f"{k} {v}" for k, v in machine.get("packages", {}).items() if v)
    lines = [
        "# Benchmark results",
        "",
        f"`{results.get('command', 'python -m benchmarks')}` — {machine.get('date', '?')}, "
        f"{results.get('seconds', 0):.0f} s"
        + (" (**quick** sizes: a smoke run, not figures)" if results.get("quick") else ""),
        "",
        f"Machine: {machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, "
        f"{machine.get('memory_gb', '?')} GB, {machine.get('platform', '?')}; "
        f"Python {machine.get('python', '?')}; {machine.get('java') or 'no Java'}; {packages}. "
        f"Load average at start: {machine.get('load_average', '?')} (the machine is shared).",
        "",
        "Every ratio is ours / peer in the metric's quantity, one per pair of alternated runs "
        "(A B, B A, ...), median with min–max over the pairs; below 1 is better for seconds "
        "and bytes, above 1 for rates. Both sides' figures are median (min–max).",
        "",
        "| case | what | quantity | deltaspec | peer | ratio ours/peer | target | status |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for metric in metrics_of(results):
        summary = metric["summary"]
        quantity = metric["quantity"]
        target = metric.get("target")
        status = metric.get("status")
        mark = {"met": "met", "missed": "**missed**"}.get(status or "", "")
        lines.append(
            f"| {metric['case']} | {metric['title']} | {quantity}, "
            f"{'higher' if metric['higher_is_better'] else 'lower'} is better "
            f"| {_spread(summary, 'ours', quantity)} "
            f"| {metric['peer_name']}: {_spread(summary, 'peer', quantity)} "
            f"| {_ratio(summary)} | {target['text'] if target else ''} | {mark} |"
        )
    errors = {name: case["error"] for name, case in results["cases"].items() if case.get("error")}
    if errors:
        lines += ["", "Cases that failed:", ""]
        lines += [f"- `{name}`: {error}" for name, error in errors.items()]
    notes = [(m["id"], m["notes"]) for m in metrics_of(results) if m.get("notes")]
    if notes:
        lines += ["", "Notes:", ""]
        lines += [f"- `{id}`: {note}" for id, note in notes]
    return "\n".join(lines) + "\n"


def plot(results: Json, out: Path) -> list[Path]:
    """One PNG per curve (ours and the peer, median with min–max, log–log) and one of all
    ratios; returns the files written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written: list[Path] = []
    metrics = metrics_of(results)
    curves: dict[str, list[Json]] = {}
    for metric in metrics:
        if metric.get("curve"):
            curves.setdefault(metric["curve"], []).append(metric)
    for name, points in curves.items():
        points.sort(key=lambda m: m["x"])
        title, x_label = CURVE_TITLES.get(name, (name, "x"))
        figure, axes = plt.subplots(figsize=(7, 4.5))
        xs = [m["x"] for m in points]
        for side, label, style in (
            ("ours", "deltaspec", "o-"),
            ("peer", points[0]["peer_name"], "s--"),
        ):
            medians = [m["summary"][f"{side}_median"] for m in points]
            low = [m["summary"][f"{side}_median"] - m["summary"][f"{side}_min"] for m in points]
            high = [m["summary"][f"{side}_max"] - m["summary"][f"{side}_median"] for m in points]
            axes.errorbar(xs, medians, yerr=[low, high], fmt=style, capsize=3, label=label)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel(x_label)
        axes.set_ylabel("seconds (median, min–max)")
        axes.set_title(title)
        axes.grid(True, which="both", alpha=0.3)
        axes.legend()
        figure.tight_layout()
        path = out / f"{name}.png"
        figure.savefig(path, dpi=100)
        plt.close(figure)
        written.append(path)
    if metrics:
        figure, axes = plt.subplots(figsize=(8, 0.35 * len(metrics) + 1.5))
        labels = [m["id"] for m in metrics]
        medians = [m["summary"]["ratio_median"] for m in metrics]
        low = [m["summary"]["ratio_median"] - m["summary"]["ratio_min"] for m in metrics]
        high = [m["summary"]["ratio_max"] - m["summary"]["ratio_median"] for m in metrics]
        positions = list(range(len(metrics)))
        for good, colour in ((True, "tab:green"), (False, "tab:red")):
            chosen = [i for i, m in enumerate(metrics) if _good(m) == good]
            axes.errorbar(
                [medians[i] for i in chosen],
                chosen,
                xerr=[[low[i] for i in chosen], [high[i] for i in chosen]],
                fmt="o",
                color=colour,
                capsize=3,
            )
        axes.set_yticks(positions, labels, fontsize=8)
        axes.set_ylim(len(metrics) - 0.5, -0.5)
        axes.axvline(1.0, color="black", linewidth=0.8)
        axes.set_xscale("log")
        axes.grid(True, axis="x", which="both", alpha=0.3)
        axes.set_xlabel(
            "ours / peer (median, min–max); green: target met, or ahead where there is none"
        )
        axes.set_title("deltaspec against its peers")
        figure.tight_layout()
        path = out / "ratios.png"
        figure.savefig(path, dpi=100)
        plt.close(figure)
        written.append(path)
    return written


def _good(metric: Json) -> bool:
    if metric.get("status"):
        return bool(metric["status"] == "met")
    ratio = metric["summary"]["ratio_median"]
    return bool(ratio >= 1.0 if metric["higher_is_better"] else ratio <= 1.0)


def _quartiles(metric: Json) -> tuple[float, float]:
    """The first and third quartiles of a metric's per-pair ratios (its range below 4 pairs)."""
    ratios = [a / b for a, b in zip(metric["ours"], metric["peer"], strict=True) if b]
    if len(ratios) < 4:
        return min(ratios), max(ratios)
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    return q1, q3


def compare(baseline: Json, current: Json, threshold: float = 0.15) -> tuple[list[str], list[str]]:
    """Lines of a comparison table and the ids of the regressions.

    A regression is a metric whose median ratio moved the wrong way by ``threshold`` or more
    relative to the baseline's median ratio *and* lies beyond the baseline's interquartile
    range on that side: the second condition keeps the run-to-run noise of this shared machine
    (a ratio's median moves by up to a quarter between two runs of the same code for the
    millisecond-scale loads) from being reported, as a benchmark tool's confidence interval
    does; metrics with fewer than 4 pairs use their whole range.
    """
    base = {m["id"]: m for m in metrics_of(baseline)}
    lines = [
        f"{'metric':<36} {'baseline (IQR)':>22} {'current':>9} {'change':>7}  verdict",
    ]
    regressions: list[str] = []
    for metric in metrics_of(current):
        before = base.pop(metric["id"], None)
        now = metric["summary"]["ratio_median"]
        if before is None:
            lines.append(f"{metric['id']:<36} {'—':>22} {now:>9.3f} {'':>7}  new")
            continue
        then = before["summary"]["ratio_median"]
        q1, q3 = _quartiles(before)
        change = now / then if then else float("nan")
        if metric["higher_is_better"]:
            worse = change <= 1 - threshold and now < q1
            better = change >= 1 + threshold and now > q3
        else:
            worse = change >= 1 + threshold and now > q3
            better = change <= 1 - threshold and now < q1
        verdict = "REGRESSION" if worse else "improved" if better else "ok"
        if worse:
            regressions.append(metric["id"])
        if metric.get("status") == "missed":
            verdict += " (target missed)"
        spread = f"{then:.3f} ({q1:.3f}-{q3:.3f})"
        lines.append(f"{metric['id']:<36} {spread:>22} {now:>9.3f} {change:>6.2f}x  {verdict}")
    for missing in _sorted(base):
        lines.append(f"{missing:<36} {'':>22} {'—':>9} {'':>7}  not measured")
    return lines, regressions


def _sorted(names: Iterable[str]) -> list[str]:
    return sorted(names)
