"""Schema prompt styles, registered by name (like sqlglot dialects).

Every style renders a ``DatabaseSchema`` (from the graph, possibly a
selection), so every method sees the same knowledge and differs only in how
it is written down. Styles quoted from ACT-SQL's ``util/prompt.py`` (§7.3):

* ``table-column``  ``# singer(Singer_ID, Name, Country)`` (OpenAI's API-doc form)
* ``create``        ``create table singer (\\n    Singer_ID number,\\n ...\\n)``
* ``create-eoc``    keys at the end of each column: ``Singer_ID number primary key``,
  ``Song_ID number references song(Song_ID)``
* ``create-eot``    keys at the end of the table: ``primary key (Singer_ID)``,
  ``foreign key (Song_ID) references song(Song_ID)``

ACT-SQL's ``create`` family writes Spider's coarse column types (number,
text, time, boolean, others), mapped here from the declared SQLite types;
geometry columns keep their geometry type (``point``), which Spider lacks.

* ``code``          DAIL-SQL's code representation: ``CREATE TABLE`` statements
  with the declared types, NOT NULL, primary and foreign keys, as the
  database declares them (rebuilt from the schema, not copied from
  ``sqlite_master``, so a selected sub-schema renders the same way).
* ``code-values``   the code representation with the graph's value knowledge as
  comments on low-cardinality text columns (``-- values: 'Africa', 'Asia'``
  when the examples are every distinct value, ``-- e.g. ...`` otherwise); key
  and id columns, numbers and long free text get none (kgsql's default).
* ``code-knowledge`` ``code-values`` plus each column's description and value
  meaning from the database's documentation in the same comment
  (``-- the id of the hero's eye colour; values: ...``; units, codes and
  missing markers in their structured form, ``unit: dollar``,
  ``1 = yes, 0 = no``, ``NULL or 0 = missing``); identical to ``code-values``
  on a schema without descriptions.
* ``code-measures`` ``code-knowledge`` plus, on each geometry column, what its
  coordinates are in and how to measure it in metres, derived from its SRID or
  extent (``-- lon/lat degrees (SRID 4326); length in metres: GLength(Shape, 1)``).
* ``kg``            kgsql's unified KG-based schema (``render.render_kg_schema``).

``render_schema(style, schema, example_rows=c)`` adds ACT-SQL's
``/* c example rows from table t: ... */`` block after each table.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import partial
from typing import Callable

from kgsql.generate.render import RenderOptions, column_ref, render_kg_schema, table_ref
from kgsql.generate.rows import DEFAULT_MAX_CHARS, render_rows, sample_rows
from kgsql.registry import Registry
from kgsql.schema.geometry_units import measure_note
from kgsql.schema.meanings import ValueMeaning
from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.sql.dialects import spatial_forms

__all__ = [
    "SchemaStyle", "register_style", "get_style", "available_styles", "render_schema", "render_example_rows",
    "spider_type",
]

TableRenderer = Callable[[DatabaseSchema, Table], str]


@dataclass(frozen=True)
class SchemaStyle:
    """A named way to write a schema: one block per table, or the whole schema at once."""

    name: str
    table: TableRenderer | None = None
    whole: Callable[[DatabaseSchema], str] | None = None
    separator: str = "\n"  # between table blocks
    description: str = ""

    def render(self, schema: DatabaseSchema, *, example_rows: int = 0,
               max_value_chars: int = DEFAULT_MAX_CHARS) -> str:
        if self.whole is not None:
            rows = render_example_rows(schema, example_rows, max_value_chars=max_value_chars)
            return "\n".join(p for p in (self.whole(schema), rows) if p)
        assert self.table is not None
        blocks = []
        for t in schema.tables:
            if not t.columns:
                continue
            block = self.table(schema, t)
            rows = _rows_block(schema, t, example_rows, max_value_chars)
            blocks.append(block + ("\n" + rows if rows else ""))
        return self.separator.join(blocks)


def render_example_rows(schema: DatabaseSchema, n: int, *, max_value_chars: int = DEFAULT_MAX_CHARS) -> str:
    """Just the example-row blocks of every table (for schemas rendered elsewhere)."""
    if n <= 0:
        return ""
    return "\n".join(b for b in (_rows_block(schema, t, n, max_value_chars) for t in schema.tables) if b)


def _rows_block(schema: DatabaseSchema, table: Table, n: int, max_chars: int) -> str:
    sample = sample_rows(schema, table, n, max_chars=max_chars) if n > 0 else None
    return render_rows(sample) if sample is not None else ""


_STYLES: Registry[SchemaStyle] = Registry("schema style", sorted_names=True)
_ALIASES = {"api-doc": "table-column", "table(column)": "table-column", "cr": "code",
            "create-noPF": "create", "create-nopf": "create", "unified": "kg"}


def register_style(style: SchemaStyle) -> SchemaStyle:
    """Make ``render_schema(style.name, ...)`` use ``style`` (replaces one of the same name)."""
    return _STYLES.register(style.name, style)


def available_styles() -> list[str]:
    return _STYLES.names()


def get_style(name: str) -> SchemaStyle:
    return _STYLES.get(_ALIASES.get(name, _ALIASES.get(name.lower(), name)))


def render_schema(style: str, schema: DatabaseSchema, *, example_rows: int = 0,
                  max_value_chars: int = DEFAULT_MAX_CHARS) -> str:
    """``schema`` written in the named style, with ``example_rows`` rows after each table."""
    return get_style(style).render(schema, example_rows=example_rows, max_value_chars=max_value_chars)


# --------------------------------------------------------------------------- types

_SPIDER_TYPES = (  # SQLite affinity order: INT first, then text, then dates, ...
    (re.compile(r"INT|REAL|FLOA|DOUB|NUM|DEC|BIT"), "number"),
    (re.compile(r"BOOL"), "boolean"),
    (re.compile(r"DATE|TIME|YEAR"), "time"),
    (re.compile(r"CHAR|CLOB|TEXT|STRING"), "text"),
)


def spider_type(declared: str) -> str:
    """Spider's coarse type (number/text/time/boolean/others) of a declared SQLite type."""
    upper = (declared or "").upper()
    if upper.startswith("BOOL"):
        return "boolean"
    for pattern, name in _SPIDER_TYPES:
        if pattern.search(upper):
            return name
    return "others"


# --------------------------------------------------------------------------- ACT-SQL styles


def _table_column(schema: DatabaseSchema, table: Table) -> str:
    return f"# {table_ref(table.name)}({', '.join(column_ref(c.name) for c in table.columns)})"


def _fks(schema: DatabaseSchema, table: Table) -> list:  # type: ignore[type-arg]
    names = {c.name for c in table.columns}
    return [fk for fk in schema.foreign_keys if fk.table == table.name and fk.column in names]


def _create(keys: str) -> TableRenderer:
    def render(schema: DatabaseSchema, table: Table) -> str:
        lines = []
        fks = _fks(schema, table)
        for col in table.columns:
            kind = col.spatial.geometry_type.lower() if col.spatial is not None else spider_type(col.type)
            line = f"    {column_ref(col.name)} {kind}"
            if keys == "eoc":
                if col.is_primary_key:
                    line += " primary key"
                for fk in fks:
                    if fk.column == col.name:
                        line += f" references {table_ref(fk.ref_table)}({column_ref(fk.ref_column)})"
            lines.append(line)
        if keys == "eot":
            if table.primary_key:
                lines.append(f"    primary key ({', '.join(column_ref(c) for c in table.primary_key)})")
            for fk in fks:
                lines.append(f"    foreign key ({column_ref(fk.column)}) references "
                             f"{table_ref(fk.ref_table)}({column_ref(fk.ref_column)})")
        return f"create table {table_ref(table.name)} (\n" + ",\n".join(lines) + "\n)"

    return render


# --------------------------------------------------------------------------- DAIL-SQL code representation


def _code(schema: DatabaseSchema, table: Table) -> str:
    lines = []
    for col in table.columns:
        line = f"  {column_ref(col.name)} {col.type}".rstrip()
        if col.not_null and not col.is_primary_key:
            line += " NOT NULL"
        lines.append(line)
    if table.primary_key:
        lines.append(f"  PRIMARY KEY ({', '.join(column_ref(c) for c in table.primary_key)})")
    for fk in _fks(schema, table):
        lines.append(f"  FOREIGN KEY ({column_ref(fk.column)}) REFERENCES "
                     f"{table_ref(fk.ref_table)}({column_ref(fk.ref_column)})")
    return f"CREATE TABLE {table_ref(table.name)} (\n" + ",\n".join(lines) + "\n);"


#: Text columns with at most this many distinct values get a values comment.
LOW_CARDINALITY = 40
_ID_NAME = re.compile(r"(^|_)(id|code|key|no|num|number)$|id$", re.I)


def _values_comment(schema: DatabaseSchema, table: Table, column_name: str) -> str:
    """`` -- values: 'a', 'b'`` for a low-cardinality text column; "" where values would not help."""
    col = table.column(column_name)
    keys = {fk.column for fk in _fks(schema, table)}
    distinct = col.stats.distinct_count
    if (col.is_primary_key or col.name in keys or col.spatial is not None or not col.value_examples
            or col.stats.min is not None or spider_type(col.type) not in ("text", "others")
            or _ID_NAME.search(col.name) or distinct is None or distinct > LOW_CARDINALITY):
        return ""
    shown = [v for v in col.value_examples[:5] if len(v) <= 30 and "\n" not in v]
    if not shown:
        return ""
    quoted = ", ".join("'" + v.replace("'", "''") + "'" for v in shown)
    return f" -- values: {quoted}" if distinct <= len(shown) else f" -- e.g. {quoted}"


def _code_values(schema: DatabaseSchema, table: Table) -> str:
    """DAIL's CREATE TABLE with value comments (a comment ends its line, so it follows the comma)."""
    lines = _code(schema, table).split("\n")
    out = [lines[0]]
    for line, col in zip(lines[1:], table.columns):
        comment = _values_comment(schema, table, col.name)
        out.append(line + comment if comment else line)
    out.extend(lines[1 + len(table.columns):])
    return "\n".join(out)


#: Characters of a column's note (its description and what its values mean) in a knowledge comment.
NOTE_CHARS = 200
_FILLER = {"the", "a", "an", "of", "its", "this", "column"}


def _words(text: str) -> set[str]:
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return {w for w in re.split(r"[^0-9a-z]+", spaced.lower()) if w} - _FILLER


def _restates(text: str, column: str) -> bool:
    """A description that only repeats the column's name ("member id" for member_id) tells nothing."""
    return _words(text) <= _words(column)


#: Labels and bullets documentation writers put before a note (BIRD's "commonsense evidence:").
_NOTE_NOISE = re.compile(r"\b(commonsense (evidence|reasoning))\s*:?\s*|[\u2022\u00b7\ufffd]\s*", re.I)


def _plain(text: str) -> str:
    return " ".join(_NOTE_NOISE.sub(" ", text).split()).strip(" .;")


def _leftover(prose: str, structured: ValueMeaning) -> str:
    """The sentences of ``prose`` its structured form does not already say (the unit's sentence,
    the missing-value sentence and the date example go; "if remaining < 0 ..." stays)."""
    if structured.format:
        prose = re.sub(r"(\be\.\s?g\.?|\bfor example|\bsuch as)?[\s:,]*" + re.escape(structured.format), " ",
                       prose, flags=re.I)
    said = [(bool(structured.unit), re.compile(r"\bunits?\b", re.I)),
            (bool(structured.missing), re.compile(r"\b(missing|unknown)\b", re.I))]
    pieces = (_plain(p) for p in re.split(r"[\r\n]+|(?<=[.;])\s+", prose))
    return " ".join(p for p in pieces if p and not any(on and rule.search(p) for on, rule in said)).strip(" .;")


def _column_note(column: Column, *, data_values_shown: bool = False) -> str:
    """The column's description and what its values mean as one line (empty when the graph has
    neither, or only a restated name). The structured meaning (unit, missing markers, codes, format;
    :mod:`kgsql.schema.meanings`) comes first, so clipping drops prose, not codes."""
    description, meaning = _plain(column.description), _plain(column.value_explanation)
    parts = [description] if description and not _restates(description, column.name) else []
    structured = column.value_meaning
    summary = structured.summary(with_values=not data_values_shown)
    if summary:
        parts.append(summary)
    if structured:
        meaning = "" if structured.codes or structured.values else _leftover(column.value_explanation, structured)
    if meaning and _words(meaning) != _words(description):
        parts.append(meaning)
    note = "; ".join(parts)
    if len(note) > NOTE_CHARS:
        note = note[:NOTE_CHARS - 3].rsplit(" ", 1)[0] + "..."
    return note


def _code_knowledge(schema: DatabaseSchema, table: Table, *, measures: bool = False) -> str:
    """``code-values`` plus what the graph knows of each column from the database's documentation:
    its description and what its values mean (BIRD's description CSVs, ``ingest --descriptions``,
    a profile), in the same end-of-line comment. A schema without descriptions renders exactly as
    ``code-values``. ``measures``: a geometry column also says what its coordinates are in and how to
    measure it in metres (:mod:`kgsql.schema.geometry_units`)."""
    lines = _code(schema, table).split("\n")
    out = [lines[0]]
    for line, col in zip(lines[1:], table.columns):
        values = _values_comment(schema, table, col.name)
        note = _column_note(col, data_values_shown=bool(values)).replace("\n", " ")
        measure = measure_note(col, spatial_forms(schema.dialect or "")) if measures else ""
        note = "; ".join(p for p in (note, measure) if p)
        if note:
            out.append(f"{line} -- {note}" + ("; " + values.removeprefix(" -- ") if values else ""))
        else:
            out.append(line + values)
    out.extend(lines[1 + len(table.columns):])
    return "\n".join(out)


def _kg(schema: DatabaseSchema) -> str:
    return render_kg_schema(schema, RenderOptions())


register_style(SchemaStyle("table-column", table=_table_column,
                           description="ACT-SQL/OpenAI Table(Column): # t(c1, c2)"))
register_style(SchemaStyle("create", table=_create("none"), description="ACT-SQL Create, no keys"))
register_style(SchemaStyle("create-eoc", table=_create("eoc"), description="ACT-SQL Create, keys at end of column"))
register_style(SchemaStyle("create-eot", table=_create("eot"), description="ACT-SQL Create, keys at end of table"))
register_style(SchemaStyle("code", table=_code, separator="\n\n",
                           description="DAIL-SQL code representation: CREATE TABLE statements"))
register_style(SchemaStyle("code-values", table=_code_values, separator="\n\n",
                           description="code representation + values of low-cardinality text columns as comments"))
register_style(SchemaStyle("code-knowledge", table=_code_knowledge, separator="\n\n",
                           description="code-values + each column's description and value meaning as comments"))
register_style(SchemaStyle("code-measures", table=partial(_code_knowledge, measures=True), separator="\n\n",
                           description="code-knowledge + each geometry column's units and metre measure"))
register_style(SchemaStyle("kg", whole=_kg, description="kgsql unified KG-based schema"))
