"""SQL predicates over partition columns, read without Spark: for ``format("deltaspec")``,
whose writer runs in a Python worker that has no SparkSession and so no Spark SQL parser.

The language is what a ``replaceWhere`` over partitions is written in: comparisons
(``= == != <> < <= > >=``) between a column and a literal, ``IN (...)``, ``IS [NOT] NULL``,
``AND``, ``OR``, ``NOT``, parentheses, string (``'...'``, ``''`` for a quote), number, ``TRUE``,
``FALSE`` and ``NULL`` literals, backquoted names. Anything else is InvalidConditionError: the
caller then points the user to DeltaWriter, which parses with Spark.
"""

from __future__ import annotations

import re
from typing import Any

from ..impl import predicates
from .errors import InvalidConditionError

_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?)|(?P<name>`[^`]+`|[A-Za-z_]\w*)"
    r"|(?P<op><=|>=|<>|!=|==|=|<|>|\(|\)|,))"
)
_COMPARE = {"=": "=", "==": "=", "!=": "!=", "<>": "!=", "<": "<", "<=": "<=", ">": ">",
            ">=": ">="}  # fmt: skip
_FLIP = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _tokens(sql: str) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    position = 0
    while position < len(sql.rstrip()):
        match = _TOKEN.match(sql, position)
        if match is None or match.end() == position:
            raise InvalidConditionError(f"cannot read {sql!r} at {sql[position:]!r}")
        kind = match.lastgroup or ""
        text = match.group(kind)
        if kind == "string":
            out.append(("literal", text[1:-1].replace("''", "'")))
        elif kind == "number":
            out.append(("literal", float(text) if "." in text else int(text)))
        elif kind == "name" and text.upper() in {"AND", "OR", "NOT", "IN", "IS", "NULL", "TRUE",
                                                 "FALSE"}:  # fmt: skip
            upper = text.upper()
            value = {"NULL": None, "TRUE": True, "FALSE": False}
            out.append(("literal", value[upper]) if upper in value else ("keyword", upper))
        elif kind == "name":
            out.append(("name", text.strip("`")))
        else:
            out.append(("op", text))
        position = match.end()
    return out


class _Parser:
    def __init__(self, sql: str, columns: dict[str, str]) -> None:
        self.sql = sql
        self.tokens = _tokens(sql)
        self.at = 0
        self.columns = columns

    def fail(self, why: str) -> InvalidConditionError:
        return InvalidConditionError(f"cannot read {self.sql!r} as a partition predicate: {why}")

    def peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, kind: str, value: Any = None) -> Any:
        token = self.peek()
        if token is None or token[0] != kind or (value is not None and token[1] != value):
            raise self.fail(f"expected {value or kind}")
        self.at += 1
        return token[1]

    def accept(self, kind: str, value: Any) -> bool:
        if self.peek() == (kind, value):
            self.at += 1
            return True
        return False

    def parse(self) -> list[Any]:
        form = self.disjunction()
        if self.peek() is not None:
            raise self.fail(f"unexpected {self.peek()}")
        return form

    def disjunction(self) -> list[Any]:
        parts = [self.conjunction()]
        while self.accept("keyword", "OR"):
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else ["or", *parts]

    def conjunction(self) -> list[Any]:
        parts = [self.negation()]
        while self.accept("keyword", "AND"):
            parts.append(self.negation())
        return parts[0] if len(parts) == 1 else ["and", *parts]

    def negation(self) -> list[Any]:
        if self.accept("keyword", "NOT"):
            return ["not", self.negation()]
        if self.accept("op", "("):
            inner = self.disjunction()
            self.take("op", ")")
            return inner
        if self.peek() in {("literal", True), ("literal", False)}:
            return ["true"] if self.take("literal") else ["false"]
        return self.comparison()

    def column(self) -> str:
        name = self.take("name")
        if name.lower() not in self.columns:
            raise self.fail(f"{name!r} is not a partition column ({sorted(self.columns.values())})")
        return self.columns[name.lower()]

    def comparison(self) -> list[Any]:
        token = self.peek()
        if token is not None and token[0] == "literal":  # 'a' = p
            value = self.take("literal")
            op = _COMPARE.get(self.take("op"))
            if op is None:
                raise self.fail("expected a comparison")
            return [_FLIP[op], self.column(), _text(value)]
        column = self.column()
        if self.accept("keyword", "IS"):
            negated = self.accept("keyword", "NOT")
            if self.take("literal") is not None:
                raise self.fail("IS takes NULL")
            return ["is_not_null" if negated else "is_null", column]
        negated = self.accept("keyword", "NOT")
        if self.accept("keyword", "IN"):
            self.take("op", "(")
            values = [_text(self.take("literal"))]
            while self.accept("op", ","):
                values.append(_text(self.take("literal")))
            self.take("op", ")")
            form: list[Any] = ["in", column, values]
            return ["not", form] if negated else form
        op = _COMPARE.get(self.take("op"))
        if op is None or negated:
            raise self.fail("expected a comparison")
        return [op, column, _text(self.take("literal"))]


def _text(value: Any) -> Any:
    if value is None:
        raise InvalidConditionError("a comparison with NULL is never true: use IS NULL")
    return value


def parse(sql: str, partition_columns: list[str] | tuple[str, ...]) -> predicates.Expr:
    """``sql`` as a predicate over ``partition_columns`` (names case-insensitive)."""
    columns = {c.lower(): c for c in partition_columns}
    form = _Parser(sql, columns).parse()
    try:
        return predicates.parse(form)
    except predicates.InvalidPredicateError as error:
        raise InvalidConditionError(f"cannot read {sql!r}: {error}") from None
