"""Database access: opening SQLite/SpatiaLite files and running guarded queries.

Generated SQL must only ever run through :func:`execute_query`.
"""
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
