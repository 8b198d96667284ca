"""Few-shot examples a spatial database gives itself: questions and SQL written from its own geometries.

A user with a new spatial database has no example pool, and the examples kgsql ships are Spider's, with
no spatial function in them; zero-shot the local 1.5B answers one spatial question in five (docs/eval.md,
issue 29). The database itself says what its typical questions look like: a table of points inside a
table of polygons is counted per polygon, a line's length is measured in metres on lon/lat data, the
nearest point is found by distance, and a table meets itself (the other roads crossing a named one, the
other station nearest a named one). These examples are written from the schema alone: the geometry
types and how two tables relate (:mod:`kgsql.schema.spatial_pairs`), each table's naming column and a
stored name from its value examples, and the engine's own forms and quoting (:class:`~kgsql.schema.
spatial_forms.SpatialForms`: ``Within(a, b) = 1`` on SpatiaLite, ``ST_Within(a, b)`` on PostGIS).
Nothing here knows a benchmark database; a table without a naming column or a stored name gives no
named example.
"""
from __future__ import annotations

from itertools import permutations

from kgsql.db.engine import Engine
from kgsql.schema.geometry_units import measure
from kgsql.schema.model import Column, DatabaseSchema, Table
from kgsql.schema.spatial_forms import SpatialForms
from kgsql.schema.spatial_pairs import geometry_column, pairing
from kgsql.sql.dialects import dialect_of, engine_of_dialect
from kgsql.text.words import identifier_words, stem

__all__ = ["MAX_EXAMPLES", "derived_examples"]

#: At most this many examples a database (the selection then picks the question's nearest).
MAX_EXAMPLES = 12
_TEXT_TYPES = ("CHAR", "TEXT", "CLOB", "STRING")


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def naming_column(table: Table) -> Column | None:
    """The text column that names a table's rows: one called ``name`` (or ending in ``name``; a text key
    too), else the first text column that is no key; None without one."""
    text = [c for c in table.columns if c.spatial is None and any(t in (c.type or "").upper() for t in _TEXT_TYPES)]
    picks = (lambda c: c.name.lower() == "name", lambda c: c.name.lower().endswith("name"),
             lambda c: not c.is_primary_key)
    return next((c for pick in picks for c in text if pick(c)), None)


def _stored_names(column: Column | None, count: int = 2) -> list[str]:
    """Up to ``count`` different short names the column stores (its value examples)."""
    if column is None:
        return []
    names = [str(v) for v in column.value_examples if v is not None and 0 < len(str(v)) <= 40]
    return list(dict.fromkeys(names))[:count]


def _stored_name(column: Column | None) -> str | None:
    """A name the column stores (its first short value example), or None."""
    return next(iter(_stored_names(column, 1)), None)


def _words(table: Table, *, one: bool = False) -> str:
    """The table's name in words; ``one``: its last word singular ("each city")."""
    said = identifier_words(table.name)
    if not one:
        return said
    head, _, last = said.rpartition(" ")
    return f"{head} {stem(last)}".strip()


def _relations(tables: list[Table], forms: SpatialForms, engine: type[Engine]) -> dict[str, list[tuple[str, str]]]:
    """Examples of two tables related by location, by kind: counting, listing and the nearest."""
    out: dict[str, list[tuple[str, str]]] = {"per": [], "in": [], "through": [], "nearest": []}
    for a, b in permutations(tables, 2):
        found = pairing(a, b)
        if found is None or found.first is not a:  # each pair once, the way the relation reads
            continue
        ga, gb = engine.ref(found.first_geometry.name), engine.ref(found.second_geometry.name)
        ta, tb = engine.table_ref(a.name), engine.table_ref(b.name)
        name_a, name_b = naming_column(a), naming_column(b)
        value_a, value_b = _stored_name(name_a), _stored_name(name_b)
        condition = found.condition(f"{ta}.{ga}", f"{tb}.{gb}", forms)
        if found.verb == "inside" and name_b is not None:
            nb = f"{tb}.{engine.ref(name_b.name)}"
            out["per"].append((f"How many {_words(a)} are there in each {_words(b, one=True)}?",
                        f"SELECT {nb}, COUNT(*) FROM {tb} JOIN {ta} ON {condition} GROUP BY {nb}"))
            if value_b is not None:
                out["in"].append((f"How many {_words(a)} are in {value_b}?",
                            f"SELECT COUNT(*) FROM {ta} JOIN {tb} ON {condition} WHERE {nb} = {_literal(value_b)}"))
        elif found.verb in ("crossing", "overlapping") and name_a is not None and name_b is not None and value_a:
            out["through"].append((f"Which {_words(b)} does {value_a} pass through?",
                        f"SELECT DISTINCT {tb}.{engine.ref(name_b.name)} FROM {ta} JOIN {tb} ON {condition} "
                        f"WHERE {ta}.{engine.ref(name_a.name)} = {_literal(value_a)}"))
        elif found.measured and name_a is not None and name_b is not None and value_a:
            out["nearest"].append((f"Which {_words(b, one=True)} is closest to {value_a}, and how far away is it?",
                        f"SELECT {tb}.{engine.ref(name_b.name)}, {condition} AS distance FROM {ta}, {tb} "
                        f"WHERE {ta}.{engine.ref(name_a.name)} = {_literal(value_a)} ORDER BY distance LIMIT 1"))
    return out


def _measures(tables: list[Table], forms: SpatialForms, engine: type[Engine]) -> dict[str, list[tuple[str, str]]]:
    """A named line's length, a named polygon's area (in metres where the units are known)."""
    out: dict[str, list[tuple[str, str]]] = {"length": [], "area": []}
    for table in tables:
        geometry = geometry_column(table)
        name = naming_column(table)
        value = _stored_name(name)
        t = engine.table_ref(table.name)
        found = measure(geometry, f"{t}.{engine.ref(geometry.name)}", forms) if geometry is not None else None
        if found is None or name is None or value is None:
            continue
        what, expression = found
        out[what].append((f"What is the {what} of {value}?",
                    f"SELECT SUM({expression}) FROM {t} WHERE {t}.{engine.ref(name.name)} = {_literal(value)}"))
    return out


def _within_tables(tables: list[Table], forms: SpatialForms, engine: type[Engine]) -> dict[str, list[tuple[str, str]]]:
    """A table related to itself: the other lines or polygons a named one meets, the other point nearest a
    named one, the distance between two named points (the same table twice, as ``a`` and ``b``)."""
    out: dict[str, list[tuple[str, str]]] = {"others": [], "apart": []}
    for table in tables:
        found = pairing(table, table)
        name = naming_column(table)
        values = _stored_names(name)
        if found is None or name is None or not values:
            continue
        t, g, n = engine.table_ref(table.name), engine.ref(found.first_geometry.name), engine.ref(name.name)
        condition = found.condition(f"a.{g}", f"b.{g}", forms)
        named = f"a.{n} = {_literal(values[0])}"
        if not found.measured:
            out["others"].append((f"Which other {_words(table)} intersect {values[0]}?",
                                  f"SELECT DISTINCT b.{n} FROM {t} AS a JOIN {t} AS b ON {condition} "
                                  f"WHERE {named} AND b.{n} <> a.{n}"))
            continue
        out["others"].append((f"Which other {_words(table, one=True)} is closest to {values[0]}, "
                              "and how far away is it?",
                              f"SELECT b.{n}, {condition} AS distance FROM {t} AS a, {t} AS b "
                              f"WHERE {named} AND b.{n} <> a.{n} ORDER BY distance LIMIT 1"))
        if len(values) > 1:
            out["apart"].append((f"How far is {values[0]} from {values[1]}?",
                                 f"SELECT {condition} FROM {t} AS a, {t} AS b "
                                 f"WHERE {named} AND b.{n} = {_literal(values[1])}"))
    return out


def derived_examples(schema: DatabaseSchema, dialect: str | None = None) -> list[tuple[str, str]]:
    """(question, SQL) pairs written from ``schema``'s geometry tables in ``dialect``'s engine (default: the
    schema's); [] for a database without geometry or an engine without spatial forms. The kinds take
    turns (a count per polygon, a count in a named one, what a line passes through, the nearest, a
    length, an area, the others of a table that a named row meets or is nearest to, two named points
    apart), each in schema order, at most :data:`MAX_EXAMPLES`."""
    engine = engine_of_dialect(dialect or dialect_of(schema))
    forms = engine.spatial_forms
    if forms is None:
        return []
    tables = [t for t in schema.tables if geometry_column(t) is not None]
    kinds = [*_relations(tables, forms, engine).values(), *_measures(tables, forms, engine).values(),
             *_within_tables(tables, forms, engine).values()]
    out: list[tuple[str, str]] = []
    for turn in range(max((len(k) for k in kinds), default=0)):
        out += [k[turn] for k in kinds if turn < len(k)]
    return list(dict.fromkeys(out))[:MAX_EXAMPLES]
