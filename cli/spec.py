"""``deltaspec spec``: list the spec's rule IDs, or print rules."""

from __future__ import annotations

import argparse
import json
import sys
from difflib import get_close_matches
from typing import Any

from ..rules import (
    Rule,
    live_releases,
    load_rules,
    release_of,
    rule_text,
    verified_live,
)
from ..trace import trace


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "spec", help="list the spec's rule IDs, or print rules"
    )
    parser.add_argument("ids", nargs="*", metavar="RULE", help="print these rules' text")
    parser.add_argument("--json", action="store_true", help="print the rules as JSON")
    parser.add_argument(
        "--trace",
        metavar="RULE",
        help="print where a rule lives: spec line → model → impl (→ Spark path) → tests → vectors",
    )
    return parser


def run(args: argparse.Namespace) -> int:
    rules = load_rules()
    if args.trace is not None:
        return print_trace(rules, args.trace)
    if args.ids:
        return print_rules(rules, args.ids)
    live = verified_live()
    releases = live_releases()
    if args.json:
        rows = [
            {
                **r.__dict__,
                "verified_live": list(live.get(r.id, ())),
                "live_releases": list(releases.get(r.id, ())),
            }
            for r in rules
        ]
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r.id) for r in rules)
    for rule in rules:
        checked = ",".join(releases.get(rule.id, ())) or "paper"
        print(f"{rule.id:<{width}}  {rule.releases:<22}  {checked:<12}  {rule.title}")
    every = sorted({r for found in releases.values() for r in found}, key=release_of)
    print(
        f"{len(rules)} rules; {sum(r.id in releases for r in rules)} verified on live delta-spark "
        f"(a vector citing them passes on it; releases run: {', '.join(every) or 'none'}), "
        "the rest on paper"
    )
    return 0


def print_rules(rules: list[Rule], ids: list[str]) -> int:
    """``deltaspec spec RULE ...``: each rule's heading, Releases line and prose."""
    by_id = {rule.id: rule for rule in rules}
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        close = {i: get_close_matches(i, by_id, n=3) for i in unknown}
        for rule_id, near in close.items():
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            print(f"deltaspec spec: no rule {rule_id!r}{hint}", file=sys.stderr)
        return 2
    live = verified_live()
    releases = live_releases()

    def status(rule_id: str) -> str:
        if rule_id not in releases:
            return "Verified on paper only (no vector citing it passes on live delta-spark)."
        vectors = live.get(rule_id, ())
        return (
            f"Verified on live delta-spark {', '.join(releases[rule_id])}; on the reference "
            f"engine by {len(vectors)} vector(s): {', '.join(vectors) or 'none'}"
        )

    print(
        "\n\n".join(f"{rule_text(by_id[i])}\n\n(spec/{by_id[i].source}) {status(i)}" for i in ids)
    )
    return 0


def print_trace(rules: list[Rule], rule_id: str) -> int:
    """``deltaspec spec --trace RULE``: the rule's chain, one line per place."""
    if rule_id not in {rule.id for rule in rules}:
        return print_rules(rules, [rule_id])  # the unknown-rule message and exit code

    print("\n".join(trace(rule_id)))
    return 0
