"""Database access: opening SQLite/SpatiaLite files and running guarded queries.

Generated SQL must only ever run through :func:`execute_query`.
"""
from kgsql.db import engines as _engines, guard as _guard
from kgsql.db.connect import is_spatial_database, open_database
from kgsql.db.guard import (
    QueryResult,
    QueryTimeoutError,
    SQLQueryError,
    execute_query,
    validate_query,
)

__all__ = [
    "QueryResult",
    "QueryTimeoutError",
    "SQLQueryError",
    "execute_query",
    "is_spatial_database",
    "open_database",
    "validate_query",
]

# The guard runs SQLite itself and every other engine's query through kgsql.db.engines, which imports the guard.
_guard.run_on_engine = _engines.execute
