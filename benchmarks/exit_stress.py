"""Many short ``deltaspec`` CLI runs under load: does any end other than cleanly?

    .venv/bin/python -m benchmarks.exit_stress [--rounds N] [--jobs J] [--burners B]
                                               [--fixtures DIR] [--commands describe-json,...]

Each round runs every chosen command on every fixture table (``describe --json``, ``describe``,
``inspect --json``: the commands that load a table, read its Parquet checkpoint with pyarrow and
replay its commits), ``--jobs`` processes at a time while ``--burners`` processes spin on the
CPU (the reported abort, "terminate called without an active exception" and exit by SIGABRT,
came at a load of about 10). A run is *bad* when it is killed by a signal, or its stderr holds
"terminate called", "Fatal Python error" or a traceback; a non-zero exit that the command means
(``describe`` of a broken table exits 2 with the error class, ``inspect`` 1 for a table that
fails a check) is counted per exit code but is not bad. Prints the counts and the first bad runs;
exits 1 if there was any. Not timed, not written to results/: a reliability probe.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path("/work/shared/fixtures/delta-spark")
CLI = Path(sys.executable).parent / "deltaspec"
COMMANDS: dict[str, tuple[str, ...]] = {
    "describe-json": ("describe", "{table}", "--json"),
    "describe": ("describe", "{table}"),
    "inspect-json": ("inspect", "{table}", "--json"),
}
BAD_MARKERS = ("terminate called", "Fatal Python error", "Traceback (most recent call last)")


@dataclass(frozen=True)
class Run:
    command: tuple[str, ...]
    returncode: int
    stderr: str

    @property
    def bad(self) -> bool:
        return self.returncode < 0 or any(m in self.stderr for m in BAD_MARKERS)


def tables(fixtures: Path) -> list[Path]:
    return sorted(p for p in fixtures.iterdir() if p.is_dir() and not p.name.startswith("_"))


def run_once(command: tuple[str, ...]) -> Run:
    done = subprocess.run(
        [str(CLI), *command], capture_output=True, text=True, errors="replace", timeout=120
    )
    return Run(command, done.returncode, done.stderr)


def _burn(stop: float) -> None:
    while time.monotonic() < stop:
        sum(i * i for i in range(10_000))


def stress(
    commands: Sequence[tuple[str, ...]], *, rounds: int, jobs: int, burners: int
) -> list[Run]:
    work = [c for _ in range(rounds) for c in commands]
    context = multiprocessing.get_context("spawn")
    hot = [context.Process(target=_burn, args=(time.monotonic() + 3600,)) for _ in range(burners)]
    for process in hot:
        process.start()
    try:
        with ThreadPoolExecutor(jobs) as pool:
            return list(pool.map(run_once, work))
    finally:
        for process in hot:
            if process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)
            process.join()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--burners", type=int, default=1)
    parser.add_argument("--fixtures", type=Path, default=FIXTURES)
    parser.add_argument("--commands", default="describe-json", help=f"of {', '.join(COMMANDS)}")
    args = parser.parse_args(argv)
    chosen = [COMMANDS[name] for name in args.commands.split(",")]
    commands = [
        tuple(part.format(table=table) for part in command)
        for table in tables(args.fixtures)
        for command in chosen
    ]
    started = time.perf_counter()
    runs = stress(commands, rounds=args.rounds, jobs=args.jobs, burners=args.burners)
    seconds = time.perf_counter() - started
    bad = [r for r in runs if r.bad]
    codes = Counter(r.returncode for r in runs)
    aborts = sum("terminate called" in r.stderr for r in runs)
    print(f"{len(runs)} runs in {seconds:.0f} s (jobs {args.jobs}, burners {args.burners}, "
          f"load {os.getloadavg()[0]:.1f}): exit codes {dict(sorted(codes.items()))}, "
          f"bad {len(bad)}, 'terminate called' {aborts}")  # fmt: skip
    for run in bad[:5]:
        print(f"  {' '.join(run.command)}: exit {run.returncode}\n    {run.stderr.strip()[-800:]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
