"""What live delta-spark said of every vector, release by release: spec/data/verified_live.json.

The file holds, per delta-spark release, the adapter that ran it, each suite's last full run (date,
command, seconds, counts) and every vector's verdict with its label under today's known issues and
gate (``pass``, ``skipped``, ``known``, ``spec stricter``, …) and the digest of the vector it
judged, plus the rules each passing vector verifies. It is written only from real runs:

    python -m deltaspec.conformance.tools.verified_live record --release 4.4.0 --full
    python -m deltaspec.conformance.tools.verified_live record --release 4.4.0 --changed
    python -m deltaspec.conformance.tools.verified_live record --release 3.3.2 --suite logs --full

``--full`` runs the whole suite and replaces that release's record of it; ``--changed`` runs only
the vectors with no verdict or whose digest changed (a vector added or edited since), and records
them as ``"run": "changed"``; ``take REPORT.json --release R --suite S --date D --seconds N``
records a full run already made (its ``--json`` report). The primary release is the in-process
``deltaspark`` adapter; every other release is ``deltaspark@RELEASE`` (``deltaspec engines fetch
RELEASE`` first). tests/conformance/engines/deltaspark/test_adapter_deltaspark.py fails when a
vector has no verdict for the primary release, and re-runs on the engine the vectors recorded by
``--changed`` runs.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from deltaspec.rules import load_rules

from ..engines.deltaspark.session import RELEASE
from ..engines.registry import PINNED_ENGINE
from ..harness.gate import not_for_release, parse_release
from ..harness.logvectors import load_log_vectors
from ..harness.scenarios import load_scenarios
from ..harness.verdicts import (
    CaseResult,
    Verdict,
    apply_known,
    load_known_issues,
)
from ..releases.cache import cache_root

TARGET = Path(__file__).resolve().parents[2] / "spec" / "data" / "verified_live.json"
PRIMARY = RELEASE
"""The release of the in-process ``deltaspark`` adapter (the published engine in the cache, or
``$DELTASPEC_DELTA_SPARK``); its record is the one every vector must have."""
SUITES = ("scenarios", "logs")
Json = dict[str, Any]
Corpora = dict[str, dict[str, Any]]
"""Suite → vector id → the vector (a Scenario or a LogVector), loaded once per command."""


def digest(data: Mapping[str, Any]) -> str:
    """A vector's digest: its JSON, canonically encoded (formatting does not change it)."""
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def corpora() -> Corpora:
    """Both suites' vectors by id."""
    loaded: dict[str, Iterable[Any]] = {"scenarios": load_scenarios(), "logs": load_log_vectors()}
    return {suite: {v.id: v for v in vectors} for suite, vectors in loaded.items()}


def adapter_for(release: str) -> str:
    return "deltaspark" if release == PRIMARY else f"{PINNED_ENGINE}{release}"


def load(path: Path = TARGET) -> Json:
    if not path.exists():
        return {"primary": PRIMARY, "releases": {}}
    data: Json = json.loads(path.read_text(encoding="utf-8"))
    return data


DESCRIPTION = (
    "What live delta-spark said of every vector, release by release: each vector's verdict, its "
    "label under today's known issues and gate, and the digest of the vector judged; each suite's "
    "full run; the rules its passing vectors verify. Written by python -m "
    "deltaspec.conformance.tools.verified_live (record, take, relabel); checked by "
    "tests/conformance/engines/deltaspark/test_adapter_deltaspark.py."
)


def save(record: Json, path: Path = TARGET) -> None:
    """The record as JSON, one line per vector and per rule (a diff shows what moved)."""

    def one(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    out = ["{", f' "description": {one(DESCRIPTION)},', f' "primary": {one(record["primary"])},']
    out.append(' "releases": {')
    releases = list(record["releases"].items())
    for i, (release, entry) in enumerate(releases):
        out.append(f"  {one(release)}: {{")
        fields = []
        for key, value in entry.items():
            if key in (*SUITES, "rules") and value:
                inner = ",\n".join(f"    {one(k)}: {one(v)}" for k, v in value.items())
                fields.append(f"   {one(key)}: {{\n{inner}\n   }}")
            else:
                fields.append(f"   {one(key)}: {one(value)}")
        out.append(",\n".join(fields))
        out.append("  }" + ("," if i < len(releases) - 1 else ""))
    out += [" }", "}"]
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def unrecorded(record: Json, release: str, suite: str) -> dict[str, str]:
    """Vectors of ``suite`` with no verdict for ``release``, or judged in another version
    (id → ``"new"`` or ``"changed"``)."""
    judged = record["releases"].get(release, {}).get(suite, {})
    out = {}
    for vector, loaded in corpora()[suite].items():
        if vector not in judged:
            out[vector] = "new"
        elif judged[vector]["digest"] != digest(loaded.data):
            out[vector] = "changed"
    return out


def merge(record: Json, release: str, suite: str, report: Json, run: Json, *, full: bool) -> Json:
    """``record`` with one run's verdicts of ``suite`` on ``release`` taken in."""
    found = corpora()
    corpus = found[suite]
    record["primary"] = PRIMARY
    entry = record["releases"].setdefault(release, {"adapter": adapter_for(release)})
    judged: dict[str, Json] = {} if full else dict(entry.get(suite, {}))
    kind = "full" if full else "changed"
    for case in report["suites"][suite]:
        if case["case"] in corpus:
            digest_now = digest(corpus[case["case"]].data)
            judged[case["case"]] = {"verdict": case["verdict"], "digest": digest_now, "run": kind}
    entry[suite] = dict(sorted(judged.items()))
    if full:
        entry.setdefault("runs", {})[suite] = dict(run)
    ordered = sorted(record["releases"].items(), key=lambda kv: parse_release(kv[0]))
    record["releases"] = dict(ordered)
    return relabel(record, found)


def relabel(record: Json, found: Corpora | None = None) -> Json:
    """Every recorded verdict labelled as its release's adapter judges it now: against the known
    issues and the gate as they are (``label``), with the counts and verified rules that follow.
    A run made by hand, through a plain ``cmd:`` bridge, or before a correction of the known
    issues or of the gate is judged as ``deltaspark@RELEASE`` would judge it today."""
    found = found if found is not None else corpora()
    rules = {rule.id: rule for rule in load_rules()}
    for release, entry in record["releases"].items():
        known = load_known_issues(adapter_for(release))
        for suite in SUITES:
            judged = {v: j for v, j in entry.get(suite, {}).items() if v in found[suite]}
            if suite in entry:
                entry[suite] = judged  # a vector removed from the corpus drops out
            results = [CaseResult(vector, Verdict(j["verdict"])) for vector, j in judged.items()]
            for result in apply_known(results, known):
                gated = not_for_release(found[suite][result.case], parse_release(release), rules)
                judged[result.case]["label"] = result.label if gated is None else "skipped"
            if suite in entry.get("runs", {}):
                entry["runs"][suite]["counts"] = tally(judged)
        entry["rules"] = rules_verified(entry, found)
    return record


def tally(judged: Mapping[str, Json]) -> dict[str, int]:
    return dict(sorted(Counter(j["label"] for j in judged.values()).items()))


def rules_verified(entry: Mapping[str, Any], found: Corpora) -> dict[str, list[str]]:
    """Rule ID → the vectors citing it that passed (a known issue verifies nothing)."""
    out: dict[str, list[str]] = {}
    for suite in SUITES:
        for vector, judged in entry.get(suite, {}).items():
            if judged["label"] == "pass" and vector in found[suite]:
                for rule in found[suite][vector].rules:
                    out.setdefault(rule, []).append(vector)
    return {rule: sorted(vectors) for rule, vectors in sorted(out.items())}


def conformance_command(release: str, suite: str, cases: Iterable[str], report: Path) -> list[str]:
    command = [
        "deltaspec", "conformance", "--adapter", adapter_for(release), "--suite", suite,
        "--json", str(report),
    ]  # fmt: skip
    for case in cases:
        command += ["--case", case]
    return command


def record_run(release: str, suite: str, *, full: bool, path: Path = TARGET) -> int:
    """Run ``suite`` on ``release`` (all of it, or the unrecorded vectors) and take it in."""
    record = load(path)
    cases = [] if full else sorted(unrecorded(record, release, suite))
    if not full and not cases:
        print(f"{release} {suite}: every vector has its live verdict")
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        report_path = Path(scratch) / "report.json"
        command = conformance_command(release, suite, cases, report_path)
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "deltaspec", *command[1:]], check=False)
        seconds = round(time.monotonic() - started)
        if not report_path.exists():
            print(f"the run wrote no report (exit {done.returncode})", file=sys.stderr)
            return 2
        report = json.loads(report_path.read_text(encoding="utf-8"))
        kept = cache_root() / "reports" / f"{release}-{suite}{'' if full else '-changed'}.json"
        kept.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(report_path, kept)
    run = {
        "date": datetime.date.today().isoformat(),
        "command": " ".join(conformance_command(release, suite, cases, Path("REPORT.json"))),
        "seconds": seconds,
    }
    merged = merge(load(path), release, suite, report, run, full=full)  # as it is now
    save(merged, path)
    counts = tally(merged["releases"][release][suite])
    print(f"{release} {suite}: {counts} in {seconds} s; wrote {path} (the report: {kept})")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m deltaspec.conformance.tools.verified_live")
    commands = parser.add_subparsers(dest="command", required=True)
    record = commands.add_parser("record", help="run a suite on a release and record it")
    record.add_argument("--release", default=PRIMARY)
    record.add_argument("--suite", choices=SUITES, default="scenarios")
    which = record.add_mutually_exclusive_group(required=True)
    which.add_argument("--full", action="store_true", help="the whole suite")
    which.add_argument("--changed", action="store_true", help="only vectors without a verdict")
    commands.add_parser("missing", help="list vectors without a verdict on the primary release")
    commands.add_parser("relabel", help="judge every recorded verdict by today's known issues")
    take = commands.add_parser("take", help="record a full run already made (its --json report)")
    take.add_argument("report", type=Path)
    take.add_argument("--release", required=True)
    take.add_argument("--suite", choices=SUITES, required=True)
    take.add_argument("--date", required=True, help="the day it ran (YYYY-MM-DD)")
    take.add_argument("--seconds", type=int, help="how long it ran (omitted: not measured)")
    args = parser.parse_args(argv)
    if args.command == "relabel":
        save(relabel(load()))
        return 0
    if args.command == "take":
        report = json.loads(args.report.read_text(encoding="utf-8"))
        command = " ".join(conformance_command(args.release, args.suite, [], args.report))
        run = {"date": args.date, "command": command, "seconds": args.seconds}
        merged = merge(load(), args.release, args.suite, report, run, full=True)
        save(merged)
        return 0
    if args.command == "missing":
        record_data = load()
        missing = {s: unrecorded(record_data, PRIMARY, s) for s in SUITES}
        for suite, found in missing.items():
            for vector, why in sorted(found.items()):
                print(f"{suite}\t{why}\t{vector}")
        return 1 if any(missing.values()) else 0
    return record_run(args.release, args.suite, full=args.full)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
