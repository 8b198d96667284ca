"""The SQL a database speaks, named once: for prompts, sqlglot and the correction rules.

A schema carries its engine (``DatabaseSchema.dialect``: sqlite, postgres,
duckdb) and whether it has geometry columns; together they give a dialect:
the engine's name, or its spatial name ("spatialite", "postgis") when it
has geometry and the engine has a spatial flavour. What each dialect is
called ("PostGIS"), sqlglot's reader and the spatial function knowledge base
(:mod:`kgsql.sql.spatialite`) are the engine class's
(:mod:`kgsql.db.engine`), so a new engine brings its own. SQLite's texts are
the ones kgsql always used, so SQLite prompts do not change; an unknown
dialect reads as the default engine's (SQLite).
"""
from __future__ import annotations

from kgsql.db.engine import Engine, default_engine, engine_for_dialect
from kgsql.schema.model import DatabaseSchema
from kgsql.schema.spatial_forms import SpatialForms

__all__ = ["dialect_of", "engine_of_dialect", "expert_line", "function_kb", "label", "spatial_forms", "sqlglot_name"]


def engine_of_dialect(dialect: str) -> type[Engine]:
    """The engine class a dialect name belongs to; the default engine (SQLite) for an unknown name."""
    return engine_for_dialect(dialect) or default_engine()


def _is_spatial(dialect: str, engine: type[Engine]) -> bool:
    return bool(engine.spatial_name) and dialect.lower() == engine.spatial_name


def dialect_of(schema: DatabaseSchema) -> str:
    """The schema's dialect: its engine, made spatial (SpatiaLite, PostGIS) when it has geometry."""
    engine = engine_of_dialect(schema.dialect or "")
    return engine.spatial_name if schema.is_spatial and engine.spatial_name else engine.name


def label(dialect: str) -> str:
    """The name the prompt and tips use: SQLite, SpatiaLite, PostgreSQL, PostGIS, DuckDB."""
    engine = engine_of_dialect(dialect)
    return engine.spatial_label if _is_spatial(dialect, engine) else engine.label


def sqlglot_name(dialect: str) -> str:
    """sqlglot's reader/writer for the dialect: its engine's name."""
    return engine_of_dialect(dialect).name


def function_kb(dialect: str) -> str:
    """The spatial function knowledge base's name ("spatialite", "postgis"), "" for plain SQL."""
    engine = engine_of_dialect(dialect)
    return engine.function_kb if _is_spatial(dialect, engine) else ""


def spatial_forms(dialect: str) -> SpatialForms | None:
    """How the dialect's engine writes a spatial relation or a measure in metres; None when it has no
    spatial flavour (DuckDB)."""
    return engine_of_dialect(dialect).spatial_forms


def expert_line(dialect: str) -> str:
    """The SQL prompt's system line for a database without spatial knowledge: the engine's own name."""
    return f"You are an expert in {engine_of_dialect(dialect).label} and highly skilled in writing SQL queries."
