"""Choosing the cases a conformance run covers: ``--case PATTERN`` and ``-k EXPR``.

``--case`` takes shell-style globs matched against the whole case id (``conflict/app-txn/*``,
``fixtures/golden-basic-update/*``), repeatable, any match selects. ``-k`` takes an expression
as pytest does: words joined by ``and``, ``or``, ``not`` and parentheses, each word true when it
is a substring of the case id or of one of the rule IDs the case cites
(``-k "APPEND and not retry"``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")
WILDCARD = re.compile(r"[*?\[]")
OPERATORS = {"and", "or", "not", "(", ")"}


class SelectionError(ValueError):
    """A ``-k`` expression that does not parse."""


@dataclass(frozen=True)
class Selection:
    cases: tuple[str, ...] = ()
    keyword: str | None = None

    def __post_init__(self) -> None:
        if self.keyword is not None:
            self.matches("", ())  # parse once, so a bad expression fails before the run

    @property
    def everything(self) -> bool:
        return not self.cases and self.keyword is None

    def matches(self, case: str, rules: Sequence[str]) -> bool:
        if self.cases and not any(fnmatchcase(case, pattern) for pattern in self.cases):
            return False
        if self.keyword is None:
            return True
        return keyword_matches(self.keyword, [case, *rules])

    def may_select_under(self, prefix: str) -> bool:
        """Whether some case whose id starts with ``prefix`` could be selected: false only when
        every ``--case`` glob's literal head rules the prefix out (``-k`` is not consulted, as a
        case's rules are only known once it ran). A suite skips what cannot be selected."""
        if not self.cases:
            return True
        for pattern in self.cases:
            head = WILDCARD.split(pattern, maxsplit=1)[0]
            if head.startswith(prefix) or prefix.startswith(head):
                return True
        return False

    def arguments(self) -> list[str]:
        """The command-line arguments that make this selection again."""
        out = [arg for pattern in self.cases for arg in ("--case", pattern)]
        return out + (["-k", self.keyword] if self.keyword is not None else [])


def keyword_matches(expression: str, haystack: Sequence[str]) -> bool:
    tokens = TOKEN.findall(expression)
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        if position >= len(tokens):
            raise SelectionError(f"-k {expression!r}: the expression ends too early")
        position += 1
        return str(tokens[position - 1])

    def disjunction() -> bool:
        value = conjunction()
        while peek() == "or":
            take()
            value = conjunction() or value
        return value

    def conjunction() -> bool:
        value = negation()
        while peek() == "and":
            take()
            value = negation() and value
        return value

    def negation() -> bool:
        if peek() == "not":
            take()
            return not negation()
        token = take()
        if token == "(":
            value = disjunction()
            if take() != ")":
                raise SelectionError(f"-k {expression!r}: a parenthesis is not closed")
            return value
        if token in OPERATORS:
            raise SelectionError(f"-k {expression!r}: unexpected {token!r}")
        return any(token.lower() in text.lower() for text in haystack)

    if not tokens:
        raise SelectionError("-k needs an expression")
    result = disjunction()
    if position != len(tokens):
        raise SelectionError(f"-k {expression!r}: unexpected {tokens[position]!r}")
    return result
