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
   operation, VALUES) and contain no write/DDL/command node and no call to a
   denied function (:func:`is_denied_function`).
3. **SQLite's authorizer** (authoritative): while the statement is compiled,
   SQLite asks :func:`make_authorizer` about every action; everything except
   SELECT, READ, recursive CTEs, allowed functions and a few read-only
   introspection pragmas is denied. This is SQLite's own view of the compiled
   statement, so no parser disagreement can get past it.
4. **Connection**: a ``mode=ro`` URI plus ``PRAGMA query_only=ON`` (from
   :func:`kgsql.db.connect.open_database`), and extension loading switched off
   while user SQL runs (SpatiaLite is loaded only by kgsql's connection setup).

Error style: rejected SQL raises :class:`UnsafeSQLError` (with ``.reason``);
a statement that SQLite cannot run raises :class:`SQLQueryError`, a
``QueryExecutionError`` carrying ``.kind`` (see :data:`ERROR_KINDS`), ``.name``
(the table/column/function/token the message names, if any) and
``.sqlite_message`` (SQLite's raw text), so self-correction can act on them.

Function policy: the static deny list blocks functions with effects outside
the database file (extension loading, file I/O such as ``readfile`` /
``writefile`` / SpatiaLite's ``BlobToFile``/``Import*``/``Export*``, SQL
procedure runners) and SpatiaLite functions that rewrite metadata. Functions
that only report build information (``sqlite_compileoption_used/get``,
``sqlite_version``, ``spatialite_version``) are allowed: they reveal nothing
the user's own machine does not already expose.

Limits: the timeout is checked every few thousand SQLite VM instructions, so a
single long-running C function (one huge ``ST_Union``) is only interrupted once
it returns; memory use of one query is not capped.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Final, Literal

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from kgsql.db.connect import Connection, open_database, sqlite3
from kgsql.errors import QueryExecutionError, UnsafeSQLError

__all__ = [
    "ERROR_KINDS",
    "ErrorKind",
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

ErrorKind = Literal[
    "syntax",
    "no_such_table",
    "no_such_column",
    "ambiguous_column",
    "no_such_function",
    "wrong_arguments",
    "timeout",
    "other",
]
ERROR_KINDS: Final[tuple[str, ...]] = (
    "syntax", "no_such_table", "no_such_column", "ambiguous_column",
    "no_such_function", "wrong_arguments", "timeout", "other",
)


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


def _unsafe(reason: str) -> UnsafeSQLError:
    """An UnsafeSQLError whose ``.reason`` is the bare reason (for logs and prompts)."""
    err = UnsafeSQLError(f"SQL rejected: {reason}")
    err.reason = reason  # type: ignore[attr-defined]
    return err


@dataclass(frozen=True)
class QueryResult:
    """Rows of one guarded query; ``truncated`` means more than ``max_rows`` existed."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool = False
    elapsed_s: float = 0.0
    sql: str = field(default="", compare=False)

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
# Function policy (shared by the static check and the authorizer)
# --------------------------------------------------------------------------

DENIED_FUNCTIONS: Final = frozenset(
    {
        # SQLite core / CLI / common extensions with effects outside the query
        "load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "fts5",
        "sqlite_dbpage", "zipfile", "zipfile_cds", "fsdir", "lsmode",
        # SpatiaLite: metadata rewriting and housekeeping that writes
        "initspatialmetadata", "initspatialmetadatafull", "initfdospatialmetadata",
        "addgeometrycolumn", "addfdogeometrycolumn", "recovergeometrycolumn",
        "discardgeometrycolumn", "discardfdogeometrycolumn", "registervirtualgeometry",
        "dropvirtualgeometry", "createspatialindex", "creatembrcache", "disablespatialindex",
        "recoverspatialindex", "checkspatialindex", "updatelayerstatistics",
        "invalidatelayerstatistics", "droptable", "dropgeotable", "renametable",
        "renamecolumn", "clonetable", "createrastercoveragestable", "createvectorcoveragestables",
        "createstylingtables", "createisometadatatables", "createtopotables",
        "insertepsgsrid", "removeduplicaterows", "elementarygeometries",
        "createmetacatalogtables", "updatemetacatalogstatistics",
        "gpkgcreatebasetables", "gpkgaddgeometrycolumn", "gpkgaddspatialindex",
        "gpkginsertepsgsrid", "gpkgcreatetilestable", "gpkgcreatetilestablezoomlevel",
        "gpkgaddgeometrytriggers", "setdecimalprecision",
    }
)
#: Prefixes of function families with file-system or procedural side effects.
DENIED_FUNCTION_PREFIXES: Final = (
    "import", "export",          # SpatiaLite ImportSHP/ExportGeoJSON/... read or write files
    "blobtofile", "blobfromfile",
    "xb_loadxml", "xb_storexml",
    "sqlproc_", "storedproc_", "storedvar_",  # SpatiaLite SQL procedures run arbitrary SQL/files
    "proj_set",                  # PROJ_SetDatabasePath changes where PROJ reads files
    "sqlite_rename", "sqlite_drop",
    "st_createtopology", "st_droptopology", "st_createnetwork", "st_dropnetwork",
)
#: Substrings that mark file access in any function name.
DENIED_FUNCTION_SUBSTRINGS: Final = ("file", "extension", "shp", "dbf", "dxf")


def is_denied_function(name: str) -> bool:
    """True when ``name`` (any case) may act outside a read-only query."""
    low = name.strip().lower()
    return (
        low in DENIED_FUNCTIONS
        or low.startswith(DENIED_FUNCTION_PREFIXES)
        or any(part in low for part in DENIED_FUNCTION_SUBSTRINGS)
    )


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
        return str(node.this)
    return node.sql_name()


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
        if isinstance(node, exp.Func) and is_denied_function(_function_name(node)):
            raise _unsafe(f"function '{_function_name(node)}' is not allowed")
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

    Each denial is described in ``denied`` (if given) so the caller can say
    what SQLite refused. Used with ``conn.set_authorizer``.
    """

    def authorize(action: int, arg1: str | None, arg2: str | None, _db: str | None, _src: str | None) -> int:
        if action in (_SELECT, _READ, _RECURSIVE):
            return sqlite3.SQLITE_OK
        if action == _FUNCTION:
            if arg2 is not None and not is_denied_function(arg2):
                return sqlite3.SQLITE_OK
            reason = f"function {arg2}()"
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

_ERROR_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("no_such_table", re.compile(r"^no such table: (?P<name>.+)$")),
    ("no_such_column", re.compile(r"^no such column: (?P<name>.+)$")),
    ("ambiguous_column", re.compile(r"^ambiguous column name: (?P<name>.+)$")),
    ("no_such_function", re.compile(r"^no such function: (?P<name>.+)$")),
    ("wrong_arguments", re.compile(r"^wrong number of arguments to function (?P<name>[^\s(]+)\(\)")),
    ("syntax", re.compile(r'^near "(?P<name>.*)": syntax error$', re.S)),
    ("syntax", re.compile(r'^unrecognized token: "(?P<name>.*)"$', re.S)),
    ("syntax", re.compile(r"^incomplete input$")),
    ("syntax", re.compile(r"^SELECTs to the left and right of \w+ do not have the same number of result columns$")),
)


def classify_sqlite_error(message: str) -> tuple[ErrorKind, str | None]:
    """Map SQLite's error text to a kind and the name it mentions (if any)."""
    text = message.strip()
    for kind, pattern in _ERROR_PATTERNS:
        match = pattern.match(text)
        if match:
            name = match.groupdict().get("name")
            return kind, name  # type: ignore[return-value]
    if text == "interrupted":
        return "timeout", None
    return "other", None


# --------------------------------------------------------------------------
# Execution
# --------------------------------------------------------------------------


def execute_query(
    db: str | os.PathLike[str] | Connection,
    sql: str,
    *,
    timeout_s: float = 30.0,
    max_rows: int = 10_000,
) -> QueryResult:
    """Run one read-only query through all guard layers and return its rows.

    ``db`` is a database path (opened read-only, SpatiaLite loaded when the
    file is spatial, closed afterwards) or an open connection (used as is;
    its authorizer and progress handler are removed afterwards and its
    ``query_only`` setting restored). Raises UnsafeSQLError when the SQL is
    rejected, SQLQueryError / QueryTimeoutError when SQLite cannot run it,
    DatabaseFileError when the path is not a usable database. A connection
    must not be used by another thread while this runs (the handlers are
    per connection); a caller's own authorizer is replaced, not restored.
    """
    if timeout_s <= 0:
        raise ValueError("timeout_s must be positive")
    if max_rows < 0:
        raise ValueError("max_rows must be >= 0")
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
        return _run_guarded(conn, statement, timeout_s, max_rows, explain_only=parse_failed, restore=not own)
    finally:
        if own:
            conn.close()


_AUTH_MESSAGES: Final = frozenset({"not authorized", "authorization denied"})


def _run_guarded(
    conn: Connection,
    statement: str,
    timeout_s: float,
    max_rows: int,
    *,
    explain_only: bool = False,
    restore: bool = False,
) -> QueryResult:
    """Execute under the authorizer, query_only and a deadline (layers 3 and 4).

    With ``explain_only`` the statement is only compiled (``EXPLAIN``), to get
    SQLite's own error for SQL sqlglot could not parse; if it compiles, it is
    still rejected, since only SQL both parsers understand is run.
    """
    previous_query_only = conn.execute("PRAGMA query_only").fetchone()[0] if restore else None
    denied: list[str] = []
    deadline = time.monotonic() + timeout_s
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
    conn.set_authorizer(make_authorizer(denied))
    conn.set_progress_handler(on_progress, PROGRESS_STEPS)
    started = time.perf_counter()
    cursor = None
    try:
        cursor = conn.cursor()
        if explain_only:
            cursor.execute("EXPLAIN " + statement)
            raise _unsafe("SQLite accepts this statement but sqlglot cannot parse it; rewrite it in plain SQLite SQL")
        cursor.execute(statement)
        columns = [d[0] for d in cursor.description or ()]
        rows = [tuple(r) for r in cursor.fetchmany(max_rows + 1)] if cursor.description else []
    except (sqlite3.Warning, sqlite3.ProgrammingError) as exc:
        if "one statement" in str(exc):  # Python's sqlite3 found a second statement
            raise _unsafe(f"SQLite refused the statement: {exc}") from exc
        raise SQLQueryError("other", str(exc), sql=statement) from exc  # e.g. unbound ? parameters
    except sqlite3.DatabaseError as exc:
        message = str(exc)
        kind, name = classify_sqlite_error(message)
        refused = "SQLite authorizer denied " + (", ".join(dict.fromkeys(denied)) or "an action")
        if message in _AUTH_MESSAGES:
            raise _unsafe(refused) from exc
        if timed_out:
            raise QueryTimeoutError(timeout_s, sql=statement) from exc
        if "readonly" in message.replace(" ", "").lower():
            raise _unsafe(f"attempt to write a read-only database: {message}") from exc
        if denied and kind == "other":  # e.g. a SpatiaLite function failing on a denied write
            raise _unsafe(f"{refused} ({message})") from exc
        raise SQLQueryError(kind, message, name=name, sql=statement) from exc
    finally:
        if cursor is not None:
            cursor.close()
        conn.set_progress_handler(None, PROGRESS_STEPS)
        conn.set_authorizer(None)
        if restore and not previous_query_only:
            conn.execute("PRAGMA query_only = OFF")
    truncated = len(rows) > max_rows
    return QueryResult(
        columns=columns,
        rows=rows[:max_rows],
        truncated=truncated,
        elapsed_s=time.perf_counter() - started,
        sql=statement,
    )
