"""Layers 1 and 2 of the SQL guard: one read-only statement, checked before SQLite runs it.

1. **Lexical** (:func:`split_statements`): a tokenizer that follows SQLite's
   own rules for strings, quoted identifiers and comments splits on ``;`` and
   requires exactly one non-empty statement starting with SELECT, WITH or
   VALUES. It exists because sqlglot's tokenizer and SQLite's disagree on some
   inputs (sqlglot reads ``'a\\'`` as an escaped quote; SQLite does not), and
   a disagreement is exactly what an attacker would aim for.
2. **Parse** (:func:`validate_query`, sqlglot): the statement must parse as
   one query (SELECT, a set operation, VALUES) and contain no write/DDL/command
   node, no call to a known non-allowed function
   (:func:`kgsql.db.functions.is_denied_function`) and no argument past a
   bound (:func:`kgsql.db.functions.argument_problem`).

These are static pre-checks; SQLite's authorizer (:mod:`kgsql.db.authorizer`)
is the authoritative one, and :func:`kgsql.db.guard.execute_query` runs all
of them. Rejected SQL raises :class:`~kgsql.errors.UnsafeSQLError` with
``.reason`` (built by ``_unsafe``, which the guard uses too).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from kgsql.db.functions import argument_problem, is_denied_function
from kgsql.errors import UnsafeSQLError

__all__ = ["MAX_SQL_CHARS", "called_names", "split_statements", "validate_query"]

MAX_SQL_CHARS: Final = 100_000


def _unsafe(reason: str) -> UnsafeSQLError:
    """An UnsafeSQLError whose ``.reason`` is the bare reason (for logs and prompts)."""
    err = UnsafeSQLError(f"SQL rejected: {reason}")
    err.reason = reason  # type: ignore[attr-defined]
    return err


# --------------------------------------------------------------------------
# Layer 1: SQLite-faithful tokenizer
# --------------------------------------------------------------------------

_QUOTE_CLOSERS: Final = {"'": "'", '"': '"', "`": "`", "[": "]"}
#: Exactly SQLite's whitespace; other Unicode spaces are identifier characters to it.
_SQLITE_SPACE: Final = frozenset(" \t\n\f\r")


@dataclass(frozen=True)
class _Token:
    kind: str  # "ws", "comment", "string", "ident", "word", "semi", "punct"
    text: str


def _tokenize(sql: str) -> list[_Token]:
    """Tokenize as SQLite does for the parts that matter: quotes, comments, ``;``.

    Quotes end only at the same character (doubled to escape; ``[..]`` has no
    escape) and backslash means nothing; an unterminated quote or ``/*``
    comment runs to the end of the input, as in SQLite.
    """
    tokens: list[_Token] = []
    i, n = 0, len(sql)
    while i < n:
        ch = sql[i]
        if ch in _SQLITE_SPACE:
            j = i + 1
            while j < n and sql[j] in _SQLITE_SPACE:
                j += 1
            tokens.append(_Token("ws", sql[i:j]))
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            j = n if j < 0 else j + 1
            tokens.append(_Token("comment", sql[i:j]))
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            j = n if j < 0 else j + 2
            tokens.append(_Token("comment", sql[i:j]))
        elif ch in _QUOTE_CLOSERS:
            close = _QUOTE_CLOSERS[ch]
            j = i + 1
            while j < n:
                if sql[j] == close:
                    if close != "]" and j + 1 < n and sql[j + 1] == close:
                        j += 2
                        continue
                    j += 1
                    break
                j += 1
            else:
                j = n
            tokens.append(_Token("string" if ch == "'" else "ident", sql[i:j]))
        elif ch == ";":
            j = i + 1
            tokens.append(_Token("semi", ";"))
        elif ch.isalnum() or ch in "_$" or ord(ch) > 127:
            j = i + 1
            while j < n and (sql[j].isalnum() or sql[j] in "_$" or ord(sql[j]) > 127):
                j += 1
            tokens.append(_Token("word", sql[i:j]))
        else:
            j = i + 1
            tokens.append(_Token("punct", ch))
        i = j
    return tokens


def split_statements(sql: str) -> list[str]:
    """Split ``sql`` into statements the way SQLite would, dropping empty ones.

    A statement made only of whitespace and comments is empty, so a trailing
    ``;`` or ``; -- note`` does not count as a second statement.
    """
    statements: list[str] = []
    current: list[_Token] = []
    for tok in _tokenize(sql) + [_Token("semi", ";")]:
        if tok.kind != "semi":
            current.append(tok)
            continue
        if any(t.kind not in ("ws", "comment") for t in current):
            statements.append("".join(t.text for t in current).strip(" \t\n\f\r"))
        current = []
    return statements


def _unquote(token: _Token) -> str:
    if token.kind == "ident":
        body = token.text[1:-1] if len(token.text) >= 2 else token.text[1:]
        return body.replace(token.text[0] * 2, token.text[0]) if token.text[0] != "[" else body
    return token.text


def called_names(sql: str) -> list[str]:
    """The names ``sql`` calls as functions, read with SQLite's quoting rules (a second reading for
    other engines' own checks, :mod:`kgsql.db.engines.pg_functions`)."""
    return _called_names(_tokenize(sql))


def _called_names(tokens: list[_Token]) -> list[str]:
    """Every word or quoted identifier followed by ``(``: the possible function calls."""
    names: list[str] = []
    significant = [t for t in tokens if t.kind not in ("ws", "comment")]
    for tok, nxt in zip(significant, significant[1:]):
        if tok.kind in ("word", "ident") and nxt.kind == "punct" and nxt.text == "(":
            names.append(_unquote(tok))
    return names


# --------------------------------------------------------------------------
# Layer 2: static validation
# --------------------------------------------------------------------------

_QUERY_START: Final = ("select", "with", "values")
#: Every keyword a SQLite statement can start with. A statement starting with
#: anything else is a syntax error in SQLite, so it is reported as one.
_STATEMENT_KEYWORDS: Final = frozenset(
    {
        "alter", "analyze", "attach", "begin", "commit", "create", "delete", "detach",
        "drop", "end", "explain", "insert", "pragma", "reindex", "release", "replace",
        "rollback", "savepoint", "select", "update", "vacuum", "values", "with",
    }
)

_FORBIDDEN_NODES: tuple[type[exp.Expression], ...] = tuple(
    getattr(exp, name)
    for name in (
        "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "Command",
        "Pragma", "Attach", "Detach", "Transaction", "Commit", "Rollback", "Set",
        "Use", "Into", "LoadData", "Copy", "TruncateTable", "Analyze", "Grant",
    )
    if hasattr(exp, name)
)


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        return node.name  # the name as written, also when quoted ("Buffer")
    return node.sql_name()


def _literal_number(node: exp.Expression) -> float | None:
    """The value of a number literal (signed, parenthesized), else None."""
    while isinstance(node, exp.Paren):
        node = node.this
    sign = 1.0
    while isinstance(node, exp.Neg):
        sign, node = -sign, node.this
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return sign * float(node.this)
        except ValueError:
            return None
    return None


def validate_query(sql: str, dialect: str = "sqlite") -> str:
    """Return the single read-only statement in ``sql`` (trailing ``;`` removed).

    Raises :class:`UnsafeSQLError` naming why otherwise. This is the static
    pre-check; only :func:`execute_query` adds SQLite's authoritative check.
    ``dialect`` is sqlglot's name of the engine ("sqlite", "postgres",
    "duckdb"): it chooses the parse and adds the engine's denied functions.
    Statement splitting always follows SQLite's tokenizer, which is stricter
    than the others' (a ``;`` in a PostgreSQL dollar-quoted string splits,
    so such SQL is refused, never run).
    """
    if not isinstance(sql, str):
        raise _unsafe(f"SQL must be a string, got {type(sql).__name__}")
    if "\x00" in sql:
        raise _unsafe("SQL contains a NUL byte")
    if len(sql) > MAX_SQL_CHARS:
        raise _unsafe(f"SQL is {len(sql)} characters long (limit {MAX_SQL_CHARS})")

    statements = split_statements(sql)
    if not statements:
        raise _unsafe("no SQL statement (empty or only comments)")
    if len(statements) > 1:
        raise _unsafe(f"{len(statements)} statements; only one query is allowed (stacked ';')")
    statement = statements[0]

    tokens = _tokenize(statement)
    first = next((t for t in tokens if t.kind not in ("ws", "comment")), None)
    if first is None:  # pragma: no cover - split_statements drops empty statements
        raise _unsafe("no SQL statement (empty or only comments)")
    if first.kind != "word" or first.text.lower() not in _STATEMENT_KEYWORDS:
        err = _unsafe(f"not SQL: statement starts with '{first.text[:30]}'")
        err.parse_error = True  # type: ignore[attr-defined]  # SQLite will call it a syntax error
        raise err
    if first.text.lower() not in _QUERY_START:
        raise _unsafe(f"not a read-only query: {first.text.upper()} statement (only SELECT/WITH/VALUES)")
    for name in _called_names(tokens):
        if is_denied_function(name, dialect):
            raise _unsafe(f"function '{name}' is not allowed")

    try:
        trees = [t for t in sqlglot.parse(statement, read=dialect) if t is not None]
    except SqlglotError as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        err = _unsafe(f"cannot parse SQL: {first_line}")
        err.parse_error = True  # type: ignore[attr-defined]
        raise err from exc
    except RecursionError as exc:  # sqlglot recurses ~20 frames per nesting level
        raise _unsafe("SQL is nested too deeply to check; flatten nested parentheses/subqueries") from exc
    if len(trees) != 1:
        raise _unsafe(f"{len(trees)} statements after parsing; only one query is allowed")
    tree = trees[0]
    if not isinstance(tree, (exp.Query, exp.Values)):
        raise _unsafe(f"not a read-only query ({type(tree).__name__.upper()})")
    for node in tree.walk():
        if isinstance(node, _FORBIDDEN_NODES):
            what = "SELECT ... INTO" if isinstance(node, exp.Into) else type(node).__name__.upper()
            raise _unsafe(f"query contains a {what} (writes are not allowed)")
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if is_denied_function(name, dialect):
                raise _unsafe(f"function '{name}' is not allowed")
            if isinstance(node, exp.Anonymous):
                problem = argument_problem(name, [_literal_number(a) for a in node.expressions])
                if problem:
                    raise _unsafe(problem)
    return statement

