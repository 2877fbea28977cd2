"""The ``deltaspec`` command."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deltaspec import __version__
from deltaspec.rules import load_rules


def _spec(args: argparse.Namespace) -> int:
    rules = load_rules()
    if args.json:
        print(json.dumps([r.__dict__ for r in rules], indent=2))
        return 0
    width = max(len(r.id) for r in rules)
    for rule in rules:
        print(f"{rule.id:<{width}}  {rule.releases:<22}  {rule.title}")
    print(f"{len(rules)} rules")
    return 0


def _check(args: argparse.Namespace) -> int:
    from deltaspec.conformance.adapters.model import run
    from deltaspec.conformance.scenarios import load_scenarios, run_all

    scenarios = load_scenarios(args.scenarios)
    verdicts = run_all(scenarios, run)
    failed = [v for v in verdicts if not v.passed]
    for verdict in failed:
        print(f"FAIL {verdict.scenario.id} ({verdict.scenario.source})")
        for line in verdict.failures:
            print(f"     {line}")
        if verdict.error:
            print(f"     error: {verdict.error}")
    print(f"model: {len(verdicts) - len(failed)} passed, {len(failed)} failed")
    if args.json:
        report = [
            {
                "id": v.scenario.id,
                "passed": v.passed,
                "failures": list(v.failures),
                "error": v.error,
            }
            for v in verdicts
        ]
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 1 if failed else 0


def _describe(args: argparse.Namespace) -> int:
    from deltaspec.impl.errors import DeltaError
    from deltaspec.impl.snapshot import DeltaLog

    try:
        snapshot = DeltaLog(args.path).snapshot(args.version)
    except DeltaError as error:
        print(f"{error.error_class}: {error}", file=sys.stderr)
        return 2
    protocol, metadata = snapshot.protocol, snapshot.metadata
    files = sorted(f.path for f in snapshot.files.values())
    described: dict[str, Any] = {
        "version": snapshot.version,
        "protocol": {
            "minReaderVersion": protocol.min_reader_version,
            "minWriterVersion": protocol.min_writer_version,
            "readerFeatures": list(protocol.reader_features or []),
            "writerFeatures": list(protocol.writer_features or []),
        },
        "metadata": {
            "id": metadata.id,
            "name": metadata.name,
            "schema": json.loads(metadata.schema_string or "null"),
            "partitionColumns": list(metadata.partition_columns),
            "configuration": dict(metadata.configuration),
        },
        "num_files": len(files),
        "size_bytes": sum(f.size for f in snapshot.files.values()),
        "files": files,
        "app_transactions": {a: t.version for a, t in sorted(snapshot.app_transactions.items())},
        "domains": {d: m.configuration for d, m in sorted(snapshot.domains.items())},
        "checkpoint_version": snapshot.checkpoint_version,
    }
    if args.json:
        print(json.dumps(described, indent=2))
        return 0
    features = ", ".join([*described["protocol"]["readerFeatures"],
                          *described["protocol"]["writerFeatures"]]) or "none"  # fmt: skip
    schema = described["metadata"]["schema"] or {"fields": []}
    print(f"table        {args.path}")
    print(f"version      {snapshot.version}"
          + (f" (from checkpoint {snapshot.checkpoint_version})"
             if snapshot.checkpoint_version is not None else ""))  # fmt: skip
    print(f"protocol     reader {protocol.min_reader_version}, "
          f"writer {protocol.min_writer_version}; features: {features}")  # fmt: skip
    print(f"table id     {metadata.id}")
    print("schema       " + ", ".join(f"{f['name']} {f['type']}" for f in schema["fields"]))
    print(f"partitioned  {', '.join(metadata.partition_columns) or 'no'}")
    for key, value in sorted(metadata.configuration.items()):
        print(f"property     {key} = {value}")
    print(f"files        {len(files)} live, {described['size_bytes']} bytes")
    for app, version in described["app_transactions"].items():
        print(f"app txn      {app} at {version}")
    for domain, configuration in described["domains"].items():
        print(f"domain       {domain}: {configuration}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="deltaspec",
        description="Executable specification and test oracle for the Delta Lake transaction log.",
    )
    parser.add_argument("--version", action="version", version=f"deltaspec {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    spec = commands.add_parser("spec", help="list the spec's rule IDs")
    spec.add_argument("--json", action="store_true", help="print the rules as JSON")
    spec.set_defaults(handler=_spec)
    check = commands.add_parser("check", help="run every scenario vector against the model")
    check.add_argument("--scenarios", type=Path, action="append", default=[],
                       help="another directory of scenario vectors (repeatable)")  # fmt: skip
    check.add_argument("--json", metavar="PATH", help="write a JSON report")
    check.set_defaults(handler=_check)
    describe = commands.add_parser("describe", help="load a Delta table and describe its snapshot")
    describe.add_argument("path", help="the table's root directory")
    describe.add_argument("--version", type=int, default=None, help="time travel to this version")
    describe.add_argument("--json", action="store_true", help="print one JSON object")
    describe.set_defaults(handler=_describe)
    args = parser.parse_args(argv)
    code: int = args.handler(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
