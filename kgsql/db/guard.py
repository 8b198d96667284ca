"""Guarded execution of LLM-written SQL: the only way kgsql runs generated SQL.

Generated SQL is untrusted input run against people's data, so every path
(pipeline, schema tips, the agent's ExecuteSQL tool, eval) goes through
:func:`execute_query`. Four independent layers stand between the SQL and a
write; any one of them alone stops it:

1. **Lexical** (:func:`split_statements`): a tokenizer that follows SQLite's
   own rules for strings, quoted identifiers and comments splits on ``;`` and
   requires exactly one non-empty statement starting with SELECT, WITH or
   VALUES. It exists because sqlglot's tokenizer and SQLite's disagree on some
   inputs (sqlglot reads ``'a\\'`` as an escaped quote; SQLite does not), and
   a disagreement is exactly what an attacker would aim for.
2. **Parse** (sqlglot): the statement must parse as one query (SELECT, a set
   operation, VALUES) and contain no write/DDL/command node, no call to a
   known non-allowed function (:func:`is_denied_function`) and no argument
   past a bound (:func:`kgsql.db.functions.argument_problem`).
3. **SQLite's authorizer** (authoritative): while the statement is compiled,
   SQLite asks :func:`make_authorizer` about every action; everything except
   SELECT, READ, recursive CTEs, functions on the allow-list
   (:data:`kgsql.db.functions.ALLOWED_FUNCTIONS`) and a few read-only
   introspection pragmas is denied. This is SQLite's own view of the compiled
   statement, so no parser disagreement can get past it.
4. **Connection**: a ``mode=ro`` URI plus ``PRAGMA query_only=ON`` (from
   :func:`kgsql.db.connect.open_database`), defensive mode and
   ``trusted_schema=OFF`` (:func:`kgsql.db.connect.harden`, applied to a
   caller's connection for the duration of the query too), and extension
   loading switched off while user SQL runs (SpatiaLite is loaded only by
   kgsql's connection setup).

Error style: rejected SQL raises :class:`UnsafeSQLError` (with ``.reason``);
a statement that SQLite cannot run raises :class:`SQLQueryError`, a
``QueryExecutionError`` carrying ``.kind`` (see :data:`ERROR_KINDS`), ``.name``
(the table/column/function/token the message names, if any) and
``.sqlite_message`` (SQLite's raw text), so self-correction can act on them.
Running out of time raises :class:`QueryTimeoutError` (kind ``timeout``),
running out of memory :class:`QueryResourceError` (kind ``resource``).

Function policy (:mod:`kgsql.db.functions`): the authorizer allows only the
functions on an allow-list of read-only SQLite and SpatiaLite functions; the
static layers reject the known non-allowed names and bound the arguments of
functions whose cost grows with a literal (``ST_Buffer``'s quadrant segments).

Resource limits (defaults in ``docs/limits.md``), per query:

* **time** -- ``timeout_s``: a progress handler checks the deadline every
  :data:`PROGRESS_STEPS` VM instructions, and a watchdog thread calls
  ``conn.interrupt()`` at the deadline; values are capped in size, so a
  single ``randomblob``/``zeroblob``/``printf`` call cannot run long, and
  ``ST_Buffer``'s segment count is bounded at validation.
* **memory** -- ``memory_mb`` (default :data:`MEMORY_MB`, split by the
  ``*_SHARE`` constants): SQLite's heap may grow by an eighth of it
  (``sqlite3_hard_heap_limit64``; this limit is PROCESS-WIDE in SQLite, so it
  is raised by each running guarded query's share and restored when the last
  one ends: other SQLite work in the process at the same time counts
  against it); no value may exceed a sixteenth of it (``SQLITE_LIMIT_LENGTH``,
  per connection); the fetched rows may take ``max_bytes`` (default an eighth
  of it) before fetching stops and the result is marked truncated; and the
  watchdog interrupts the query when the process's resident memory has grown
  by a quarter of it (memory SpatiaLite/GEOS take with malloc, outside
  SQLite's heap; it measures the whole process, so concurrent work counts
  too), leaving the rest for what C code allocates before it stops.

Exhaustion (SQLite's "out of memory", "string or blob too big", Python's
MemoryError, the watchdog) is raised as :class:`QueryResourceError`.

Limits: one C call that never returns to SQLite's VM (a GEOS union or
buffer over a large input, e.g. the final step of ``GUnion`` over thousands
of rows, which SQLite runs even after an interrupt; RTTOPO and PROJ calls;
``instr``/``LIKE`` on megabyte strings, which are quadratic) can still
outlast the timeout and, for GEOS, allocate past the budget. GEOS's own
interrupt flag is deliberately not used: GEOS 3.11's robust overlay catches
the interrupt and retries with snap-rounding, which turned a 1.8 s union
into 240 s. PRAGMA temp_store=FILE is ignored by SQLite builds with
SQLITE_TEMP_STORE=3 (pysqlite3-binary), where large sorts and temporary
b-trees stay in memory and fail against the heap limit instead of spilling.
"""
from __future__ import annotations

import os
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Final, Literal, get_args

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from kgsql.db.connect import (
    SQLITE_LIMIT_LENGTH,
    SQLITE_LIMIT_LIKE_PATTERN_LENGTH,
    Connection,
    open_database,
    set_defensive,
    set_limit,
    sqlite3,
    sqlite_heap_limits,
    sqlite_memory_used,
)
from kgsql.db.functions import argument_problem, is_allowed_function, is_denied_function
from kgsql.errors import QueryExecutionError, UnsafeSQLError

__all__ = [
    "ERROR_KINDS",
    "ErrorKind",
    "QueryResourceError",
    "QueryResult",
    "QueryTimeoutError",
    "SQLQueryError",
    "classify_sqlite_error",
    "execute_query",
    "is_denied_function",
    "make_authorizer",
    "split_statements",
    "validate_query",
]

MAX_SQL_CHARS: Final = 100_000
#: SQLite VM instructions between two timeout checks (cheap: one clock read).
PROGRESS_STEPS: Final = 2_000
#: Memory budget of one query in MiB when ``execute_query`` gets no ``memory_mb``
#: (read at call time, so assigning it changes the default for every caller).
MEMORY_MB: float = 512.0
#: Shares of the budget. The watchdog interrupts a query once the process's
#: resident memory has grown by WATCH_SHARE of it; the rest is headroom for what
#: C code allocates before it returns to SQLite's VM (SQLite runs an interrupted
#: aggregate's final step, which for SpatiaLite's Collect/GUnion copies all it
#: gathered, ~3x; a GEOS call runs to its end). SQLite's heap and
#: the fetched rows each get an eighth (together the watchdog's share), one
#: value a sixteenth.
WATCH_SHARE: Final = 1 / 4
HEAP_SHARE: Final = 1 / 8
RESULT_SHARE: Final = 1 / 8
VALUE_SHARE: Final = 1 / 16
#: Longest LIKE/GLOB pattern (SQLITE_LIMIT_LIKE_PATTERN_LENGTH; SQLite's default is 50,000).
LIKE_PATTERN_LIMIT: Final = 10_000
#: How often the watchdog thread looks at the clock and the process's memory.
WATCHDOG_POLL_S: Final = 0.01

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


def _unsafe(reason: str) -> UnsafeSQLError:
    """An UnsafeSQLError whose ``.reason`` is the bare reason (for logs and prompts)."""
    err = UnsafeSQLError(f"SQL rejected: {reason}")
    err.reason = reason  # type: ignore[attr-defined]
    return err


@dataclass(frozen=True)
class QueryResult:
    """Rows of one guarded query; ``truncated`` means more rows existed.

    ``truncated_by`` says which cap stopped the fetch: ``"rows"`` (more than
    ``max_rows``) or ``"bytes"`` (the next row would pass ``max_bytes``).
    """

    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool = False
    elapsed_s: float = 0.0
    sql: str = field(default="", compare=False)
    truncated_by: Literal["", "rows", "bytes"] = field(default="", compare=False)

    @property
    def row_count(self) -> int:
        return len(self.rows)


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
    ``dialect`` only changes sqlglot's parse: statement splitting always
    follows SQLite, the one engine kgsql executes on.
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
        if is_denied_function(name):
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
            if is_denied_function(name):
                raise _unsafe(f"function '{name}' is not allowed")
            if isinstance(node, exp.Anonymous):
                problem = argument_problem(name, [_literal_number(a) for a in node.expressions])
                if problem:
                    raise _unsafe(problem)
    return statement


# --------------------------------------------------------------------------
# Layer 3: SQLite authorizer
# --------------------------------------------------------------------------

#: Pragmas that only describe the schema; SpatiaLite functions use them internally
#: and ``pragma_table_info('t')`` table-valued functions need them. The argument
#: of these names a schema object, never a setting.
READ_ONLY_PRAGMAS: Final = frozenset(
    {
        "table_info", "table_xinfo", "table_list", "index_list", "index_info",
        "index_xinfo", "foreign_key_list", "collation_list", "function_list",
        "module_list", "pragma_list", "database_list",
    }
)

_ACTION_NAMES: Final = {
    getattr(sqlite3, name): name[len("SQLITE_"):]
    for name in (
        "SQLITE_CREATE_INDEX", "SQLITE_CREATE_TABLE", "SQLITE_CREATE_TEMP_INDEX",
        "SQLITE_CREATE_TEMP_TABLE", "SQLITE_CREATE_TEMP_TRIGGER", "SQLITE_CREATE_TEMP_VIEW",
        "SQLITE_CREATE_TRIGGER", "SQLITE_CREATE_VIEW", "SQLITE_DELETE", "SQLITE_DROP_INDEX",
        "SQLITE_DROP_TABLE", "SQLITE_DROP_TEMP_INDEX", "SQLITE_DROP_TEMP_TABLE",
        "SQLITE_DROP_TEMP_TRIGGER", "SQLITE_DROP_TEMP_VIEW", "SQLITE_DROP_TRIGGER",
        "SQLITE_DROP_VIEW", "SQLITE_INSERT", "SQLITE_PRAGMA", "SQLITE_READ", "SQLITE_SELECT",
        "SQLITE_TRANSACTION", "SQLITE_UPDATE", "SQLITE_ATTACH", "SQLITE_DETACH",
        "SQLITE_ALTER_TABLE", "SQLITE_REINDEX", "SQLITE_ANALYZE", "SQLITE_CREATE_VTABLE",
        "SQLITE_DROP_VTABLE", "SQLITE_FUNCTION", "SQLITE_SAVEPOINT", "SQLITE_RECURSIVE",
    )
    if hasattr(sqlite3, name)
}
_SELECT: Final = getattr(sqlite3, "SQLITE_SELECT", 21)
_READ: Final = getattr(sqlite3, "SQLITE_READ", 20)
_FUNCTION: Final = getattr(sqlite3, "SQLITE_FUNCTION", 31)
_RECURSIVE: Final = getattr(sqlite3, "SQLITE_RECURSIVE", 33)
_PRAGMA: Final = getattr(sqlite3, "SQLITE_PRAGMA", 19)


Authorizer = Callable[[int, "str | None", "str | None", "str | None", "str | None"], int]


def make_authorizer(denied: list[str] | None = None) -> Authorizer:
    """An authorizer callback allowing only what a read-only query needs.

    Functions must be on :data:`kgsql.db.functions.ALLOWED_FUNCTIONS`.

    Each denial is described in ``denied`` (if given) so the caller can say
    what SQLite refused. Used with ``conn.set_authorizer``.
    """

    def authorize(action: int, arg1: str | None, arg2: str | None, _db: str | None, _src: str | None) -> int:
        if action in (_SELECT, _READ, _RECURSIVE):
            return sqlite3.SQLITE_OK
        if action == _FUNCTION:
            if arg2 is not None and is_allowed_function(arg2):
                return sqlite3.SQLITE_OK
            reason = f"function {arg2}() (not on the allow-list of read-only functions)"
        elif action == _PRAGMA and arg1 is not None and arg1.lower() in READ_ONLY_PRAGMAS:
            if arg1.lower() != "database_list" or arg2 is None:
                return sqlite3.SQLITE_OK
            reason = f"PRAGMA {arg1}"
        else:
            target = " ".join(a for a in (arg1, arg2) if a)
            reason = f"{_ACTION_NAMES.get(action, f'action {action}')} {target}".strip()
        if denied is not None:
            denied.append(reason)
        return sqlite3.SQLITE_DENY

    return authorize


# --------------------------------------------------------------------------
# Error classification
# --------------------------------------------------------------------------

_ERROR_PATTERNS: Final[tuple[tuple[ErrorKind, re.Pattern[str]], ...]] = (
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
)


def classify_sqlite_error(message: str) -> tuple[ErrorKind, str | None]:
    """Map SQLite's error text to a kind and the name it mentions (if any)."""
    text = message.strip()
    for kind, pattern in _ERROR_PATTERNS:
        match = pattern.match(text)
        if match:
            name = match.groupdict().get("name")
            return kind, name
    if text == "interrupted":
        return "timeout", None
    return "other", None


# --------------------------------------------------------------------------
# Execution
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Budget:
    """One query's memory budget, split into the parts each mechanism enforces (bytes)."""

    total: int   # the budget
    watch: int   # growth of the process's resident memory that trips the watchdog
    heap: int    # growth of SQLite's heap (hard heap limit)
    result: int  # fetched rows (Python objects)
    value: int   # one string or blob (SQLITE_LIMIT_LENGTH)

    @classmethod
    def of(cls, memory_mb: float, max_bytes: int | None) -> _Budget:
        total = int(memory_mb * 2**20)

        def share(x: float) -> int:
            return max(1, int(total * x))
        result = share(RESULT_SHARE) if max_bytes is None else max_bytes
        return cls(total, share(WATCH_SHARE), share(HEAP_SHARE), result, share(VALUE_SHARE))


def execute_query(
    db: str | os.PathLike[str] | Connection,
    sql: str,
    *,
    timeout_s: float = 30.0,
    max_rows: int = 10_000,
    memory_mb: float | None = None,
    max_bytes: int | None = None,
) -> QueryResult:
    """Run one read-only query through all guard layers and return its rows.

    ``db`` is a database path (opened read-only, SpatiaLite loaded when the
    file is spatial, closed afterwards) or an open connection (used as is;
    its authorizer and progress handler are removed afterwards and its
    ``query_only``, ``trusted_schema``, defensive mode and value-size limits
    restored). ``memory_mb`` is the query's memory budget (default
    :data:`MEMORY_MB`), ``max_bytes`` the size of the fetched rows after which
    fetching stops (default an eighth of the budget; see the module docstring
    for how the budget is split). Raises UnsafeSQLError when the SQL is
    rejected, SQLQueryError / QueryTimeoutError / QueryResourceError when
    SQLite cannot run it, DatabaseFileError when the path is not a usable
    database. A connection must not be used by another thread while this
    runs (the handlers are per connection); a caller's own authorizer is
    replaced, not restored.
    """
    if timeout_s <= 0:
        raise ValueError("timeout_s must be positive")
    if max_rows < 0:
        raise ValueError("max_rows must be >= 0")
    memory_mb = MEMORY_MB if memory_mb is None else memory_mb
    if memory_mb <= 0:
        raise ValueError("memory_mb must be positive")
    if max_bytes is not None and max_bytes < 0:
        raise ValueError("max_bytes must be >= 0")
    budget = _Budget.of(memory_mb, max_bytes)
    try:
        statement = validate_query(sql)
        parse_failed = False
    except UnsafeSQLError as exc:
        if not getattr(exc, "parse_error", False):
            raise
        # sqlglot could not parse it; let SQLite say what is wrong (below).
        statement, parse_failed = split_statements(sql)[0], True

    own = isinstance(db, (str, os.PathLike, Path))
    conn = open_database(db, read_only=True) if own else db
    try:
        try:
            return _run_guarded(
                conn, statement, timeout_s, max_rows, budget, explain_only=parse_failed, restore=not own
            )
        except _SchemaNeedsTrust:  # a view calls an allowed function SpatiaLite did not mark innocuous
            return _run_guarded(
                conn, statement, timeout_s, max_rows, budget, explain_only=parse_failed, restore=not own,
                trust_schema=True,
            )
    finally:
        if own:
            conn.close()


_AUTH_MESSAGES: Final = frozenset({"not authorized", "authorization denied"})
_UNSAFE_USE: Final = re.compile(r"^unsafe use of (?P<name>[^\s(]+)\(\)$")


class _SchemaNeedsTrust(Exception):
    """Internal: retry the statement with ``trusted_schema=ON``.

    With ``trusted_schema=OFF`` SQLite refuses functions not marked innocuous
    inside views, and SpatiaLite marks none of its functions, so a view using
    ``ST_Area`` fails with "unsafe use of ST_Area()". The functions of a view
    pass the authorizer's allow-list like the query's own, so when the function
    SQLite names is on the allow-list the statement is retried once with
    ``trusted_schema=ON`` (the authorizer still checks every function).
    """


# --------------------------------------------------------------------------
# Memory and time enforcement
# --------------------------------------------------------------------------

_heap_lock = threading.Lock()
_heap_shares: dict[int, int] = {}  # id of a running query -> its SQLite heap allowance
_heap_saved: tuple[int, int] | None = None  # (hard, soft) limits before the first of them
_heap_base = 0  # sqlite3_memory_used() when the first of them started


def _heap_set(limit: int) -> None:
    saved_hard = _heap_saved[0] if _heap_saved else 0
    sqlite_heap_limits(min(limit, saved_hard) if saved_hard > 0 else limit)


def _heap_acquire(token: int, allowance: int) -> bool:
    """Raise SQLite's process-wide hard heap limit by ``allowance`` for one query.

    The limit is the memory SQLite held when the first of the queries running
    now started, plus the allowances of all of them; a stricter limit the
    application set itself is kept. False when the limit cannot be set.
    """
    global _heap_saved, _heap_base
    with _heap_lock:
        if not _heap_shares:
            base = sqlite_memory_used()
            if base is None:
                return False
            _heap_base = base
            _heap_saved = sqlite_heap_limits()
        _heap_shares[token] = allowance
        _heap_set(_heap_base + sum(_heap_shares.values()))
        return True


def _heap_release(token: int) -> None:
    global _heap_saved
    with _heap_lock:
        if _heap_shares.pop(token, None) is None:
            return
        if _heap_shares:
            _heap_set(_heap_base + sum(_heap_shares.values()))
        elif _heap_saved is not None:
            sqlite_heap_limits(*_heap_saved)
            _heap_saved = None


_PAGE_SIZE: Final = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _rss_bytes() -> int | None:
    """Resident memory of this process (Linux /proc), or None where unknown."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE_SIZE
    except (OSError, ValueError, IndexError):
        return None


class _Watchdog:
    """A thread that interrupts the query at its deadline or when memory passes the budget.

    ``conn.interrupt()`` is safe from another thread; it stops the VM at its
    next instruction. It fires once, and never after :meth:`stop`.
    """

    def __init__(self, conn: Connection, deadline: float, rss_limit: int | None) -> None:
        self.conn = conn
        self.deadline = deadline
        self.rss_limit = rss_limit
        self.fired: Literal["timeout", "memory"] | None = None
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="kgsql-query-watchdog", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        while True:
            left = self.deadline - time.monotonic()
            wait = min(WATCHDOG_POLL_S, left) if self.rss_limit is not None else left
            if self._stop.wait(max(0.0, wait)):
                return
            reason: Literal["timeout", "memory"] | None = None
            if time.monotonic() >= self.deadline:
                reason = "timeout"
            elif self.rss_limit is not None:
                rss = _rss_bytes()
                if rss is not None and rss > self.rss_limit:
                    reason = "memory"
            if reason is None:
                continue
            with self._lock:
                if self._stop.is_set():
                    return
                self.fired = reason
                try:
                    self.conn.interrupt()
                except sqlite3.ProgrammingError:  # pragma: no cover - connection closed under us
                    return
            return

    def stop(self) -> None:
        """Stop for good (idempotent): once this returns, no interrupt will come."""
        with self._lock:
            self._stop.set()
        if self._thread.ident is not None:
            self._thread.join()


def _row_bytes(row: tuple[Any, ...]) -> int:
    """Memory one fetched row holds in Python (the tuple and each value)."""
    return sys.getsizeof(row) + sum(map(sys.getsizeof, row))


def _harden_for_query(conn: Connection, budget: _Budget, trust_schema: bool) -> Callable[[], None]:
    """Per-query connection settings; returns the function that restores them."""
    trusted = conn.execute("PRAGMA trusted_schema").fetchone()[0]
    conn.execute(f"PRAGMA trusted_schema = {'ON' if trust_schema else 'OFF'}")
    defensive = set_defensive(conn, True)
    length = set_limit(conn, SQLITE_LIMIT_LENGTH, budget.value)
    like = set_limit(conn, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, LIKE_PATTERN_LIMIT)

    def restore() -> None:
        if like is not None:
            set_limit(conn, SQLITE_LIMIT_LIKE_PATTERN_LENGTH, like)
        if length is not None:
            set_limit(conn, SQLITE_LIMIT_LENGTH, length)
        if defensive is False:
            set_defensive(conn, False)
        if bool(trusted) != trust_schema:
            conn.execute(f"PRAGMA trusted_schema = {'ON' if trusted else 'OFF'}")

    return restore


def _run_guarded(
    conn: Connection,
    statement: str,
    timeout_s: float,
    max_rows: int,
    budget: _Budget,
    *,
    explain_only: bool = False,
    restore: bool = False,
    trust_schema: bool = False,
) -> QueryResult:
    """Execute under the authorizer, query_only, a deadline and the memory budget (layers 3 and 4).

    With ``explain_only`` the statement is only compiled (``EXPLAIN``), to get
    SQLite's own error for SQL sqlglot could not parse; if it compiles, it is
    still rejected, since only SQL both parsers understand is run.
    """
    previous_query_only = conn.execute("PRAGMA query_only").fetchone()[0] if restore else None
    denied: list[str] = []
    timed_out = False

    def on_progress() -> int:
        nonlocal timed_out
        if time.monotonic() > deadline:
            timed_out = True
            return 1
        return 0

    try:
        conn.enable_load_extension(False)
    except AttributeError:  # pragma: no cover - sqlite3 built without extension support
        pass
    conn.execute("PRAGMA query_only = ON")
    undo_settings = _harden_for_query(conn, budget, trust_schema)
    token = id(on_progress)
    heap_limited = False
    watchdog: _Watchdog | None = None
    cursor = None
    columns: list[str] = []
    rows: list[tuple[Any, ...]] = []
    truncated_by: Literal["", "rows", "bytes"] = ""

    def resource_error(message: str) -> QueryResourceError:
        return QueryResourceError(message, budget_bytes=budget.total, sql=statement)

    try:
        heap_limited = _heap_acquire(token, budget.heap)
        rss = _rss_bytes()
        deadline = time.monotonic() + timeout_s
        watchdog = _Watchdog(conn, deadline, None if rss is None else rss + budget.watch)
        conn.set_authorizer(make_authorizer(denied))
        conn.set_progress_handler(on_progress, PROGRESS_STEPS)
        started = time.perf_counter()
        watchdog.start()
        try:
            cursor = conn.cursor()
            if explain_only:
                cursor.execute("EXPLAIN " + statement)
                raise _unsafe("SQLite accepts this statement but sqlglot cannot parse it; rewrite it in plain SQLite SQL")
            cursor.execute(statement)
            columns = [d[0] for d in cursor.description or ()]
            size = 0
            for row in cursor if cursor.description else ():
                if len(rows) >= max_rows:
                    truncated_by = "rows"
                    break
                size += _row_bytes(row)
                if size > budget.result:
                    truncated_by = "bytes"
                    break
                rows.append(tuple(row))
            row = None
        except BaseException:
            rows.clear()  # the traceback keeps this frame, so drop the fetched rows now
            row = None
            watchdog.stop()
            raise
    except MemoryError as exc:
        raise resource_error(f"out of memory{': ' + str(exc) if str(exc) else ''}") from exc
    except (sqlite3.Warning, sqlite3.ProgrammingError) as exc:
        if "one statement" in str(exc):  # Python's sqlite3 found a second statement
            raise _unsafe(f"SQLite refused the statement: {exc}") from exc
        raise SQLQueryError("other", str(exc), sql=statement) from exc  # e.g. unbound ? parameters
    except sqlite3.DatabaseError as exc:
        message = str(exc)
        kind, name = classify_sqlite_error(message)
        refused = "SQLite authorizer denied " + (", ".join(dict.fromkeys(denied)) or "an action")
        if message in _AUTH_MESSAGES or message.startswith("not authorized to use"):
            raise _unsafe(refused) from exc
        unsafe_use = _UNSAFE_USE.match(message.strip())
        if unsafe_use and not is_allowed_function(unsafe_use.group("name")):
            raise _unsafe(f"the database schema calls {unsafe_use.group('name')}(), which is not allowed") from exc
        if unsafe_use and not trust_schema:
            raise _SchemaNeedsTrust(message) from exc
        if watchdog is not None and watchdog.fired == "memory":
            raise resource_error("process memory grew past the budget") from exc
        if timed_out or (watchdog is not None and watchdog.fired == "timeout"):
            raise QueryTimeoutError(timeout_s, sql=statement) from exc
        if kind == "resource":
            raise resource_error(message) from exc
        if "readonly" in message.replace(" ", "").lower():
            raise _unsafe(f"attempt to write a read-only database: {message}") from exc
        if denied and kind == "other":  # e.g. a SpatiaLite function failing on a denied write
            raise _unsafe(f"{refused} ({message})") from exc
        raise SQLQueryError(kind, message, name=name, sql=statement) from exc
    finally:
        if watchdog is not None:
            watchdog.stop()
        if cursor is not None:
            cursor.close()
        conn.set_progress_handler(None, PROGRESS_STEPS)
        conn.set_authorizer(None)
        if heap_limited:
            _heap_release(token)
        if restore:
            undo_settings()
            if not previous_query_only:
                conn.execute("PRAGMA query_only = OFF")
    return QueryResult(
        columns=columns,
        rows=rows,
        truncated=bool(truncated_by),
        elapsed_s=time.perf_counter() - started,
        sql=statement,
        truncated_by=truncated_by,
    )
