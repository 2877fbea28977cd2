"""What ``deltaspec conformance`` prints and writes about a run: the console summary (failures
with the broken rule and a repro command, skips grouped by reason, the coverage gate) and JUnit
XML for CI systems."""

from __future__ import annotations

import shlex
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from deltaspec.rules import load_rules

from .gate import skips_by_reason
from .verdicts import CaseResult, Verdict

if TYPE_CHECKING:
    from .suites import Report


def suite_of(report: Report, result: CaseResult) -> str:
    return next((s for s, results in report.suites.items() if result in results), "all")


def repro(report: Report, result: CaseResult, corpus: Sequence[str] = ()) -> str:
    """A command that reruns exactly this case."""
    args = [
        "deltaspec",
        "conformance",
        "--adapter",
        report.adapter,
        "--suite",
        suite_of(report, result),
        *corpus,
        "--case",
        result.case,
    ]
    if report.strict:
        args.append("--strict")
    return shlex.join(args)


def broken_rule(result: CaseResult) -> str | None:
    """The rule the case shows broken: the first it cites, with its title."""
    if not result.rules:
        return None
    titles = {rule.id: rule.title for rule in load_rules()}
    first = result.rules[0]
    return f"{first} — {titles.get(first, '(not in the spec)')}"


def console(report: Report, corpus: Sequence[str] = ()) -> list[str]:
    lines = [report.table(), *real_bugs(report)]
    for result in report.failures():
        lines.append(f"FAIL {result.case}: {result.verdict.value}")
        rule = broken_rule(result)
        if rule is not None:
            lines.append(f"     rule: {rule} (deltaspec spec {result.rules[0]})")
        for detail in result.details[:3]:
            lines.append(f"     {detail[:300]}")
        lines.append(f"     rerun: {repro(report, result, corpus)}")
    stale = [r.case for rs in report.suites.values() for r in rs if r.stale]
    if stale:
        lines.append(f"stale known issues (they pass now; remove them): {', '.join(stale)}")
    skips = skips_by_reason(r for rs in report.suites.values() for r in rs if r.known is None)
    if skips:
        lines.append(f"skipped {sum(n for _, n in skips)} cases:")
        lines += [f"  {n:>4}  {reason[:160]}" for reason, n in skips[:10]]
        if len(skips) > 10:
            lines.append(f"  … and {len(skips) - 10} other reasons (see --json)")
    coverage = report.coverage
    if coverage is not None:
        caps = ", ".join(sorted(coverage.capabilities)) or "none"
        lines.append(f"coverage: {coverage.ran} cases ran; capabilities: {caps}")
        lines += [f"COVERAGE NOT MET: {problem}" for problem in coverage.problems]
    verdict = "PASS" if report.passed() else "FAIL"
    lines.append(f"{report.adapter}: {verdict}; {len(report.unsafe())} unsafe")
    return lines


def real_bugs(report: Report) -> list[str]:
    """The published bugs the run's vectors reproduce, each with its verdict and citation: all
    of them when the run chose real-bug vectors alone (``-k real-bugs``), else only those that
    did not pass (a bug come back is news; 15 passing citations on every run are not)."""
    results = [r for rs in report.suites.values() for r in rs]
    cited = [(r, r.bug) for r in results if r.bug is not None]
    if len(cited) < len(results):
        cited = [(r, bug) for r, bug in cited if r.verdict not in (Verdict.PASS, Verdict.SKIPPED)]
    if not cited:
        return []
    lines = [f"real bugs: {len(cited)} vectors"]
    for result, bug in cited:
        lines += [f"  {result.label:<8} {result.case}", f"           {bug.citation()}"]
    return lines


def junit(report: Report, path: Path) -> None:
    """JUnit XML: one testsuite per suite, one testcase per case; failing cases are failures,
    adapter crashes errors, skips skipped (with their reason); unmet coverage is a failing
    ``coverage`` testcase."""
    root = ET.Element("testsuites", name=f"deltaspec conformance {report.adapter}")
    for suite, results in report.suites.items():
        element = ET.SubElement(root, "testsuite", name=suite, tests=str(len(results)))
        failures = errors = skipped = 0
        for result in results:
            case = ET.SubElement(element, "testcase", classname=suite, name=result.case)
            message = "; ".join(result.details)
            if result.fails(report.strict):
                kind = "error" if result.verdict is Verdict.ERROR else "failure"
                errors += kind == "error"
                failures += kind == "failure"
                child = ET.SubElement(case, kind, message=result.verdict.value, type=kind)
                child.text = f"{message}\nrerun: {repro(report, result)}"
            elif result.verdict is Verdict.SKIPPED or result.known is not None:
                skipped += 1
                ET.SubElement(case, "skipped", message=result.known or message)
        element.set("failures", str(failures))
        element.set("errors", str(errors))
        element.set("skipped", str(skipped))
    if report.coverage is not None:
        element = ET.SubElement(root, "testsuite", name="coverage", tests="1")
        case = ET.SubElement(element, "testcase", classname="coverage", name="gate")
        element.set("failures", str(int(bool(report.coverage.problems))))
        if report.coverage.problems:
            failure = ET.SubElement(case, "failure", message="coverage not met", type="failure")
            failure.text = "\n".join(report.coverage.problems)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
