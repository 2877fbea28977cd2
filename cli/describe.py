"""``deltaspec describe``: load a Delta table and describe its snapshot."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..impl.errors import DeltaError


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "describe", help="load a Delta table and describe its snapshot"
    )
    parser.add_argument("path", help="the table's root directory")
    parser.add_argument("--version", type=int, default=None, help="time travel to this version")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def run(args: argparse.Namespace) -> int:
    from ..impl.snapshot.delta_log import DeltaLog  # lazy: CLI start-up (0.7 s)

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
