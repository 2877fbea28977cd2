"""What can go wrong fetching, verifying or locating a pinned delta-spark engine."""

from __future__ import annotations

from pathlib import Path


class EngineError(Exception):
    """A pinned engine cannot be fetched, verified or located; the message says why."""


class UnknownRelease(EngineError, LookupError):
    """A delta-spark release with no entry in engines.json."""

    def __init__(self, release: str, pinned: list[str]) -> None:
        super().__init__(
            f"delta-spark {release} is not pinned in engines.json (pinned: {', '.join(pinned)})"
        )
        self.release = release


class NotPinned(EngineError):
    """An engines.json entry without checksums yet (a maintainer fills them with --pin)."""

    def __init__(self, release: str, missing: str) -> None:
        super().__init__(
            f"delta-spark {release} has no pinned {missing} in engines.json; "
            f"run `deltaspec engines fetch --pin {release}` to record them"
        )
        self.release = release


class EngineNotFetched(EngineError, FileNotFoundError):
    """The engine's jars or its Python environment are not in the cache."""

    def __init__(self, release: str, missing: Path) -> None:
        super().__init__(
            f"delta-spark {release} is not fetched ({missing} is missing or incomplete); "
            f"run `deltaspec engines fetch {release}`"
        )
        self.release = release
        self.missing = missing


class NotRunnable(EngineError, ValueError):
    """A release engines.json pins as not running here (``runs: false``, with why)."""

    def __init__(self, release: str, why: str | None) -> None:
        super().__init__(f"delta-spark {release} does not run here: {why} (engines.json)")
        self.release = release


class ChecksumMismatch(EngineError, ValueError):
    """A fetched file's sha256 is not the pinned one."""

    def __init__(self, path: Path, expected: str, got: str) -> None:
        super().__init__(f"sha256 of {path} is {got}, engines.json pins {expected}")
        self.path = path
        self.expected = expected
        self.got = got


class UnexpectedJars(EngineError):
    """Maven resolved a different set of jars (after filtering) than engines.json pins."""

    def __init__(self, release: str, extra: list[str], missing: list[str]) -> None:
        super().__init__(
            f"delta-spark {release}: Maven brought jars engines.json does not pin {extra} and "
            f"not the pinned {missing}; re-pin with `deltaspec engines fetch --pin {release}`"
        )
        self.release = release
        self.extra = extra
        self.missing = missing


class CommandFailed(EngineError):
    """A tool the fetch runs (mvn, pip, venv, the engine's Python) exited nonzero."""

    def __init__(self, command: list[str], code: int, output: str) -> None:
        tail = "\n".join(output.strip().splitlines()[-15:])
        super().__init__(f"`{' '.join(command)}` exited with {code}:\n{tail}")
        self.command = command
        self.code = code
        self.output = output


class UnexpectedOutput(EngineError):
    """A tool the fetch runs succeeded but did not leave what it should have (named here)."""
