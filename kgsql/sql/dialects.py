"""The SQL a database speaks, named once: for prompts, sqlglot and the correction rules.

A schema carries its engine (``DatabaseSchema.dialect``: sqlite, postgres,
duckdb) and whether it has geometry columns; together they give one of five
dialects. Each has a name the model reads ("PostGIS"), sqlglot's reader
("postgres"), the system line of the SQL prompt, and — for the two spatial
ones — a function knowledge base (:mod:`kgsql.sql.spatialite`). SQLite's
texts are the ones kgsql always used, so SQLite prompts do not change.
"""
from __future__ import annotations

from typing import Final

from kgsql.schema.model import DatabaseSchema

__all__ = ["DIALECTS", "dialect_of", "expert_line", "function_kb", "label", "sqlglot_name"]

#: dialect -> (what the model reads, sqlglot's reader, the spatial function KB or "")
DIALECTS: Final[dict[str, tuple[str, str, str]]] = {
    "sqlite": ("SQLite", "sqlite", ""),
    "spatialite": ("SpatiaLite", "sqlite", "spatialite"),
    "postgres": ("PostgreSQL", "postgres", ""),
    "postgis": ("PostGIS", "postgres", "postgis"),
    "duckdb": ("DuckDB", "duckdb", ""),
}


def dialect_of(schema: DatabaseSchema) -> str:
    """The schema's dialect: its engine, made spatial (SpatiaLite, PostGIS) when it has geometry."""
    engine = (schema.dialect or "sqlite").lower()
    if engine in ("postgres", "postgresql", "postgis"):
        return "postgis" if schema.is_spatial else "postgres"
    if engine == "duckdb":
        return "duckdb"
    return "spatialite" if schema.is_spatial else "sqlite"


def _entry(dialect: str) -> tuple[str, str, str]:
    return DIALECTS.get(dialect.lower(), DIALECTS["sqlite"])


def label(dialect: str) -> str:
    """The name the prompt and tips use: SQLite, SpatiaLite, PostgreSQL, PostGIS, DuckDB."""
    return _entry(dialect)[0]


def sqlglot_name(dialect: str) -> str:
    """sqlglot's reader/writer for the dialect."""
    return _entry(dialect)[1]


def function_kb(dialect: str) -> str:
    """The spatial function knowledge base's name ("spatialite", "postgis"), "" for plain SQL."""
    return _entry(dialect)[2]


def expert_line(dialect: str) -> str:
    """The SQL prompt's system line for a database without spatial knowledge."""
    name = "PostgreSQL" if dialect.lower() == "postgis" else label(dialect)
    if name == "SpatiaLite":
        name = "SQLite"
    return f"You are an expert in {name} and highly skilled in writing SQL queries."
