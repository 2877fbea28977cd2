"""``deltaspec engines``: fetch and list the pinned live delta-spark releases (engines.json),
each with its own pyspark venv, for ``--adapter deltaspark@X.Y.Z``."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..conformance.releases.cache import engine_dir, installed, venv_dir
from ..conformance.releases.errors import EngineError, UnknownRelease
from ..conformance.releases.pins import Pins, load_pins, write_pins

if TYPE_CHECKING:
    from ..conformance.releases.fetch import FetchResult
    from ..conformance.releases.pins import EnginePin


def add_parser(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "engines",
        help="fetch and list the pinned live delta-spark releases",
        description="Published delta-spark releases as live engines for --adapter "
        "deltaspark@X.Y.Z: the delta jars from Maven Central and a pyspark venv from PyPI, "
        "checked against engines.json, in $DELTASPEC_CACHE (default ~/.cache/deltaspec).",
    )
    actions = parser.add_subparsers(dest="engines_command", required=True)
    fetch = actions.add_parser("fetch", help="fetch (or reuse) pinned engines",
                               epilog="exit codes: 0 every release works or is pinned as not "
                               "runnable; 1 a release failed; 2 an unknown release")  # fmt: skip
    fetch.add_argument("releases", nargs="*", metavar="RELEASE", help="default: all pinned")
    fetch.add_argument("--smoke", action="store_true", help="also write and read a Delta table "
                       "with each engine (about a minute each, one at a time)")  # fmt: skip
    fetch.add_argument("--pin", action="store_true", help="maintainers: (re)write engines.json's "
                       "checksums from what was fetched, and runs/why_not from what was "
                       "measured (import check; with --smoke, the smoke check)")  # fmt: skip
    actions.add_parser("list", help="the pinned releases: fetched or not, paths, runs or why not")
    return parser


def run(args: argparse.Namespace) -> int:
    pins = load_pins()
    try:
        if args.engines_command == "list":
            return _list(pins)
        return _fetch(pins, args.releases or pins.releases(), args.pin, args.smoke)
    except UnknownRelease as error:
        print(f"deltaspec engines: {error}", file=sys.stderr)
        return 2


def _fetch(pins: Pins, releases: list[str], repin: bool, check: bool) -> int:
    from ..conformance.releases.fetch import (  # lazy: CLI start-up (0.16 s)
        Status,
        fetch,
    )

    unknown = [r for r in releases if r not in pins.by_release]
    if unknown:
        raise UnknownRelease(unknown[0], pins.releases())
    failed = 0
    for release in releases:
        print(f"delta-spark {release}: fetching …", flush=True)
        result = fetch(pins.by_release[release], repin=repin, check=check)
        print(_describe(result), flush=True)
        failed += result.status is Status.FAILED
        if repin and result.status is not Status.FAILED:
            pins = _replaced(pins, result.pin)
            write_pins(pins)
    return 1 if failed else 0


def _replaced(pins: Pins, pin: EnginePin) -> Pins:
    engines = tuple(pin if e.release == pin.release else e for e in pins.engines)
    return Pins(engines, pins.description)


def _describe(result: FetchResult) -> str:
    from ..conformance.releases.fetch import (  # lazy: CLI start-up (0.16 s)
        Status,
    )

    pin = result.pin
    head = f"delta-spark {pin.release} (pyspark {pin.pyspark.version}): {result.status.value}"
    if result.status is not Status.OK:
        return f"{head}: {result.detail}"
    size = sum(jar.stat().st_size for jar in result.jars)
    lines = [
        f"{head} in {result.seconds:.0f} s",
        f"  jars  {', '.join(j.name for j in result.jars)} ({size / 1e6:.1f} MB)",
        f"  venv  {result.venv}",
    ]
    return "\n".join(lines + ([f"  {result.detail}"] if result.detail else []))


def _list(pins: Pins) -> int:
    for pin in pins.engines:
        try:
            installed(pin)
            state = "fetched"
        except EngineError as error:
            state = f"not fetched ({type(error).__name__})"
        runs = "runs" if pin.runs else f"does not run: {pin.why_not}"
        print(f"{pin.release:7} {pin.maven:36} spark {pin.spark:6} pyspark "
              f"{pin.pyspark.version:6} {state}; {runs}")  # fmt: skip
        print(f"        jars {engine_dir(pin.release) / 'jars'}")
        print(f"        venv {venv_dir(pin.pyspark.version)}")
    return 0
