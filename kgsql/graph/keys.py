"""Node keys: how a table or column of a database is named in the graph.

Many databases share one graph, so every Table/Column key is prefixed with
its database name. Keys are built in one place so writers and readers agree.
"""
from __future__ import annotations


def table_key(database: str, table: str) -> str:
    return f"{database}/{table}"


def column_key(database: str, table: str, column: str) -> str:
    return f"{database}/{table}/{column}"
