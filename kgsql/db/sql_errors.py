"""What SQLite said, as a kind: the typed errors of a guarded query.

Self-correction (:mod:`kgsql.correct`) acts on why a query failed, not on
SQLite's wording, so the wording is mapped to a kind here, once. A statement
that SQLite cannot run raises :class:`SQLQueryError`, a
``QueryExecutionError`` carrying ``.kind`` (see :data:`ERROR_KINDS`),
``.name`` (the table/column/function/token the message names, if any) and
``.sqlite_message`` (SQLite's raw text); :func:`classify_sqlite_error` reads
the kind and the name from SQLite's message. Running out of time raises
:class:`QueryTimeoutError` (kind ``timeout``), running out of memory
:class:`QueryResourceError` (kind ``resource``).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Literal, get_args

from kgsql.errors import QueryExecutionError

__all__ = [
    "ERROR_KINDS",
    "ErrorKind",
    "Pattern",
    "QueryResourceError",
    "SQLITE_ERROR_PATTERNS",
    "QueryTimeoutError",
    "SQLQueryError",
    "classify_message",
    "classify_sqlite_error",
]

ErrorKind = Literal[
    "syntax",
    "no_such_table",
    "no_such_column",
    "ambiguous_column",
    "no_such_function",
    "wrong_arguments",
    "timeout",
    "resource",
    "other",
]
#: The kinds, in declaration order: adding one is an edit of ErrorKind (plus a rule in kgsql.correct).
ERROR_KINDS: Final[tuple[str, ...]] = get_args(ErrorKind)


class SQLQueryError(QueryExecutionError):
    """SQLite could not run a (safe) query; ``kind``/``name`` say why, for self-correction."""

    def __init__(self, kind: ErrorKind, sqlite_message: str, *, name: str | None = None, sql: str = "") -> None:
        self.kind: ErrorKind = kind
        self.name = name
        self.sqlite_message = sqlite_message
        self.sql = sql
        super().__init__(f"query failed ({kind}): {sqlite_message}")


class QueryTimeoutError(SQLQueryError):
    """The query ran past its wall-clock budget and was interrupted."""

    def __init__(self, timeout_s: float, *, sql: str = "") -> None:
        self.timeout_s = timeout_s
        super().__init__("timeout", f"interrupted after {timeout_s:g}s time limit", sql=sql)


class QueryResourceError(SQLQueryError):
    """The query needed more memory, or a bigger value, than its budget allows."""

    def __init__(self, message: str, *, budget_bytes: int | None = None, sql: str = "") -> None:
        self.budget_bytes = budget_bytes
        if budget_bytes is not None:
            message = f"{message} (query memory budget {budget_bytes / 2**20:g} MB)"
        super().__init__("resource", message, sql=sql)


#: How one message of an engine reads as a kind: (kind, regex with an optional ``name`` group).
Pattern = tuple[ErrorKind, re.Pattern[str]]

#: SQLite's messages (each engine class carries its own: ``Engine.error_patterns``).
SQLITE_ERROR_PATTERNS: Final[tuple[Pattern, ...]] = (
    ("no_such_table", re.compile(r"^no such table: (?P<name>.+)$")),
    ("no_such_column", re.compile(r"^no such column: (?P<name>.+)$")),
    ("ambiguous_column", re.compile(r"^ambiguous column name: (?P<name>.+)$")),
    ("no_such_function", re.compile(r"^no such function: (?P<name>.+)$")),
    ("wrong_arguments", re.compile(r"^wrong number of arguments to function (?P<name>[^\s(]+)\(\)")),
    ("syntax", re.compile(r'^near "(?P<name>.*)": syntax error$', re.S)),
    ("syntax", re.compile(r'^unrecognized token: "(?P<name>.*)"$', re.S)),
    ("syntax", re.compile(r"^incomplete input$")),
    ("resource", re.compile(r"^(out of memory|string or blob too big)$")),
    ("syntax", re.compile(r"^SELECTs to the left and right of \w+ do not have the same number of result columns$")),
    ("timeout", re.compile(r"^interrupted$")),
)


def classify_message(message: str, patterns: Sequence[Pattern]) -> tuple[ErrorKind, str | None]:
    """The first pattern's kind whose regex finds ``message``, with its ``name`` group; "other" otherwise."""
    for kind, pattern in patterns:
        match = pattern.search(message)
        if match:
            return kind, match.groupdict().get("name")
    return "other", None


def classify_sqlite_error(message: str) -> tuple[ErrorKind, str | None]:
    """Map SQLite's error text to a kind and the name it mentions (if any)."""
    return classify_message(message.strip(), SQLITE_ERROR_PATTERNS)
