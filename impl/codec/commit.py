"""Commit files: UTF-8 text, one JSON action per line (ACTION.LINE_FORMAT).

A commit file is the lines joined with ``\\n``, every line including the last terminated by
``\\n`` (delta-spark's log stores write ``line + "\\n"``). Reading skips blank lines and unknown
actions (ACTION.UNKNOWN) and locates every malformation by table, version, file and 1-based line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Final

from deltaspec.rules import rule

from ..actions import Action
from ..errors import CorruptLogError
from .actions import decode_action, encode_action
from .json_text import PARSER, type_name

_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")


@rule("ACTION.LINE_FORMAT")
def decode_commit(data: bytes, *, table: str, version: int | None, file: str) -> list[Action]:
    """Decode a whole commit file (ACTION.LINE_FORMAT): its known actions in file order.

    Empty (or blank) lines are skipped and unknown actions dropped (ACTION.UNKNOWN). Invalid UTF-8,
    invalid JSON on any line, a line that is not a JSON object, or a malformed known action raise
    :class:`CorruptLogError` naming ``table``, ``version``, ``file`` and the 1-based line number.
    """

    def corrupt(line: int, problem: str) -> CorruptLogError:
        return CorruptLogError(f"line {line}: {problem}", table=table, version=version, file=file)

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise corrupt(line, f"invalid UTF-8 at byte offset {exc.start}") from None
    actions: list[Action] = []
    append = actions.append
    parse = PARSER.decode
    surrogates = _SURROGATE_ESCAPE.search(text) is not None  # lines are searched only if so
    for number, line_text in enumerate(text.split("\n"), 1):
        if not line_text or line_text.isspace():
            continue
        try:
            obj = parse(line_text)
        except (ValueError, RecursionError) as exc:
            raise corrupt(number, f"invalid JSON: {exc}") from None
        if type(obj) is not dict:
            raise corrupt(number, f"a log line must be a JSON object, not {type_name(obj)}")
        if surrogates and _SURROGATE_ESCAPE.search(line_text) is not None:
            try:  # a \ud800-\udfff escape not part of a pair is no Unicode text
                json.dumps(obj, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:
                raise corrupt(number, "a lone surrogate escape (not Unicode text)") from None
        try:
            action = decode_action(obj)
        except CorruptLogError as exc:
            raise corrupt(number, exc.message) from None
        if action is not None:
            append(action)
    return actions


def encode_commit(actions: Sequence[Action]) -> bytes:
    """A commit file: one line per action, each terminated by ``\\n`` (ACTION.LINE_FORMAT)."""
    return commit_bytes([encode_action(a) for a in actions])


def commit_bytes(lines: Sequence[str]) -> bytes:
    """The bytes of a commit file of encoded action ``lines`` (:func:`encode_action`), each
    terminated by ``\\n`` (ACTION.LINE_FORMAT)."""
    if not lines:
        return b""
    return ("\n".join(lines) + "\n").encode("utf-8")
