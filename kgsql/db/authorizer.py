"""Layer 3 of the SQL guard: SQLite's authorizer, the authoritative check.

While a statement is compiled, SQLite asks :func:`make_authorizer`'s callback
about every action; everything except SELECT, READ, recursive CTEs, functions
on the allow-list (:data:`kgsql.db.functions.ALLOWED_FUNCTIONS`) and a few
read-only introspection pragmas (:data:`READ_ONLY_PRAGMAS`) is denied. This
is SQLite's own view of the compiled statement, so no disagreement between
parsers (:mod:`kgsql.db.statement`) can get past it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Final

from kgsql.db.connect import sqlite3
from kgsql.db.functions import is_allowed_function

__all__ = ["READ_ONLY_PRAGMAS", "Authorizer", "make_authorizer"]

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
