"""The unified KG-based schema: how a (sub-)schema is written into a prompt.

Format from the KG paper (Figure 1), one block per table:

    # Table: frpm, <table description>. <geographic description>
    (CDSCode: type is TEXT, primary key, <description>, Value examples: ['01100170109835', ...]),
    (Free Meal Count (K-12): type is REAL, <description>, <value explanation>),
    ...
    # relationships
    frpm.`CDSCode` = satscores.`cds`
    eligible free rate for K-12 = frpm.`Free Meal Count (K-12)` / frpm.`Enrollment (K-12)`

Relationship lines come from foreign keys (the graph's FOREIGN_KEY/RELATES_TO
edges) and mined join edges; derived expressions from profiles and mined
knowledge. Identifiers in relationship lines are quoted the way the
database's engine quotes them (``Engine.quote``; SQLite: backticks, which
SQLite accepts and BIRD's own SQL uses).
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from kgsql.db.engine import Engine, default_engine, engine_for_dialect
from kgsql.schema.model import Column, DatabaseSchema, Table


@dataclass(frozen=True)
class RenderOptions:
    """What the unified schema shows; each switch is an ablation knob."""

    value_examples: int = 3
    descriptions: bool = True
    geo_descriptions: bool = True
    value_explanations: bool = True
    relationships: bool = True
    derived: bool = True
    max_example_chars: int = 40


#: The engine whose identifier quoting the text being rendered uses (set for one question by
#: :func:`identifier_quoting`; None: the default engine, SQLite's backticks).
_QUOTING: ContextVar[type[Engine] | None] = ContextVar("kgsql_identifier_quoting", default=None)


@contextmanager
def identifier_quoting(dialect: str) -> Iterator[None]:
    """Render identifiers the way ``dialect`` (a :mod:`kgsql.sql.dialects` name) reads them, in this block."""
    token = _QUOTING.set(engine_for_dialect(dialect) or default_engine())
    try:
        yield
    finally:
        _QUOTING.reset(token)


def _quoting() -> type[Engine]:
    return _QUOTING.get() or default_engine()


def quote_column(name: str) -> str:
    """A column in the kg style's relationship lines: always quoted (backticks on SQLite)."""
    return _quoting().quote(name)


def table_ref(name: str) -> str:
    """A table's name as written in SQL: bare when plain, quoted otherwise.

    Each engine says what is plain and how it quotes (``Engine.ref``): SQLite
    backticks (which SQLite accepts and BIRD's own SQL uses); PostgreSQL folds
    bare names to lower case, so any other name is double-quoted there, and
    writes a table outside the search path with its schema (``hr.staff``);
    DuckDB matches bare names case-insensitively.
    """
    return _quoting().table_ref(name)


def column_ref(name: str) -> str:
    """A column's name as written in SQL: bare when plain, quoted otherwise (:func:`table_ref`)."""
    return _quoting().ref(name)


def _example(value: str, column: Column, limit: int) -> str:
    text = value if len(value) <= limit else value[: limit - 1] + "…"
    numeric = column.stats.min is not None and isinstance(column.stats.min, (int, float))
    if numeric and re.fullmatch(r"-?\d+(\.\d+)?", text):
        return text
    return "'" + text.replace("'", "''") + "'"


def _squash(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _informative(readable: str, name: str, description: str) -> bool:
    """A readable name adds something only if it is not the column name or the description again."""
    return _squash(readable) not in (_squash(name), _squash(description))


def _column_line(column: Column, opts: RenderOptions) -> str:
    parts = [f"type is {column.type or 'ANY'}"]
    if column.is_primary_key:
        parts.append("primary key")
    if column.spatial is not None:
        srid = f", SRID {column.spatial.srid}" if column.spatial.srid is not None else ""
        parts.append(f"SpatiaLite geometry {column.spatial.geometry_type}{srid}")
    if opts.descriptions:
        if column.readable_name and _informative(column.readable_name, column.name, column.description):
            parts.append(column.readable_name)
        if column.description:
            parts.append(column.description)
    if opts.value_examples and column.value_examples and column.spatial is None:
        shown = [_example(v, column, opts.max_example_chars) for v in column.value_examples[: opts.value_examples]]
        parts.append(f"Value examples: [{', '.join(shown)}]")
    if opts.value_explanations and column.value_explanation:
        parts.append(column.value_explanation)
    body = ", ".join(p.strip().rstrip(".") if i < len(parts) - 1 else p.strip() for i, p in enumerate(parts))
    return f"({column.name}: {body})"


def _table_header(table: Table, opts: RenderOptions) -> str:
    notes = []
    if opts.descriptions and table.description:
        notes.append(table.description.strip().rstrip("."))
    if opts.geo_descriptions and table.geo_description:
        notes.append(table.geo_description.strip().rstrip("."))
    header = f"# Table: {table.name}"
    return header + (", " + ". ".join(notes) + "." if notes else "")


def relationship_lines(schema: DatabaseSchema) -> list[str]:
    """``t1.`a` = t2.`b``` for every foreign key among the schema's tables."""
    names = {t.name for t in schema.tables}
    lines = []
    for fk in schema.foreign_keys:
        if fk.table in names and fk.ref_table in names:
            line = (f"{table_ref(fk.table)}.{quote_column(fk.column)} = "
                    f"{table_ref(fk.ref_table)}.{quote_column(fk.ref_column)}")
            if line not in lines:
                lines.append(line)
    return lines


def derived_lines(schema: DatabaseSchema) -> list[str]:
    """``name = expression`` for derived expressions that only use the shown tables."""
    names = {t.name.lower() for t in schema.tables}
    lines = []
    for d in schema.derived:
        used = {m.lower() for m in re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*\.", d.expression)}
        if used and not used <= names:
            continue
        lines.append(f"{d.name} = {d.expression}")
    return lines


def render_kg_schema(schema: DatabaseSchema, options: RenderOptions | None = None) -> str:
    """The unified KG-based schema text of ``schema`` (whole database or a selection)."""
    opts = options or RenderOptions()
    blocks = []
    for table in schema.tables:
        lines = [_table_header(table, opts)]
        cols = [_column_line(c, opts) for c in table.columns]
        lines.append(",\n".join(cols))
        blocks.append("\n".join(lines))
    extra: list[str] = []
    if opts.relationships:
        extra += relationship_lines(schema)
    if opts.derived:
        extra += derived_lines(schema)
    if extra:
        blocks.append("# relationships\n" + "\n".join(extra))
    return "\n".join(blocks)


def render_geo_descriptions(schema: DatabaseSchema) -> str:
    """SSpa §3.5: one sentence per table on the region its rows cover."""
    return "\n".join(t.geo_description.strip() for t in schema.tables if t.geo_description.strip())
