"""What a writer ended with, typed: committed at a version, a conflict with its winner, an error,
skipped (an empty commit not recorded) or still pending.

The same values are what an adapter reports and what a vector expects (the schema's
``outcome``); :func:`meets` says whether a reported outcome is an expected one. The vectors'
JSON spelling is :func:`outcome_json` / :func:`parse_outcome` (harness/wire.py uses them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Json = dict[str, Any]


@dataclass(frozen=True)
class Committed:
    """Committed at ``version``. Reported: the commitInfo written; expected: the fields it must
    carry (a subset; None: not checked)."""

    version: int
    commit_info: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Conflict:
    """A conflict of ``kind`` (CONFLICT.KINDS) with the winning commit ``winner``."""

    kind: str
    winner: int | None = None


@dataclass(frozen=True)
class Error:
    """A failure that is no conflict: ``kind`` names it (``ENGINE_ERROR`` for one the spec does
    not name, with the engine's ``message``)."""

    kind: str
    message: str | None = None


@dataclass(frozen=True)
class Skipped:
    """``commitIfNeeded`` with nothing to record (TXN.EMPTY_COMMIT)."""


@dataclass(frozen=True)
class Pending:
    """Begun, not committed (yet)."""


Outcome = Committed | Conflict | Error | Skipped | Pending
PENDING = Pending()
SKIPPED = Skipped()


def outcome_kind(outcome: Outcome) -> str:
    """``committed``, ``skipped``, ``pending`` or ``failed`` (a conflict or an error)."""
    match outcome:
        case Committed():
            return "committed"
        case Skipped():
            return "skipped"
        case Pending():
            return "pending"
    return "failed"


def meets(actual: Outcome, expected: Outcome) -> bool:
    """Whether ``actual`` is ``expected``: the same kind and the fields the expectation gives,
    its commitInfo fields a subset of the written ones."""
    if isinstance(expected, Committed) and isinstance(actual, Committed):
        written = actual.commit_info or {}
        wanted = expected.commit_info or {}
        return actual.version == expected.version and all(
            written.get(k) == v for k, v in wanted.items()
        )
    if isinstance(expected, Conflict) and isinstance(actual, Conflict):
        return actual.kind == expected.kind and expected.winner in (None, actual.winner)
    if isinstance(expected, Error) and isinstance(actual, Error):
        return actual.kind == expected.kind
    return actual == expected


def outcome_json(outcome: Outcome) -> Json:
    """The outcome as the vectors spell it."""
    match outcome:
        case Committed(version=version, commit_info=info):
            return {"committed": version} if info is None else {
                "committed": version, "commit_info": dict(info)}  # fmt: skip
        case Conflict(kind=kind, winner=winner):
            return {"conflict": kind} if winner is None else {"conflict": kind, "winner": winner}
        case Error(kind=kind, message=message):
            return {"error": kind} if message is None else {"error": kind, "message": message}
        case Skipped():
            return {"skipped": True}
    return {"pending": True}


def parse_outcome(data: Mapping[str, Any]) -> Outcome:
    """An outcome in the vectors' JSON (a vector's expectation or a bridge's answer)."""
    if "committed" in data:
        return Committed(data["committed"], data.get("commit_info"))
    if "conflict" in data:
        return Conflict(data["conflict"], data.get("winner"))
    if "error" in data:
        return Error(data["error"], data.get("message"))
    if "skipped" in data:
        return SKIPPED
    if "pending" in data:
        return PENDING
    raise ValueError(f"not an outcome: {data!r}")
