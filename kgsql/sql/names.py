"""SQLite-faithful name resolution over sqlglot's scopes.

Names are resolved the way SQLite does: case-insensitively; a column is
looked up in its own SELECT's FROM items, then in the enclosing SELECTs
(correlated subqueries); select aliases, USING/NATURAL columns and ``rowid``
count. :func:`analyse` lists *every* unknown table, unknown or ambiguous
column and double-quoted string of a query as a :class:`Problem`, where
SQLite stops at the first. sqlglot's own ``qualify`` is not used for this:
it stops at the first problem and reports an unknown and an ambiguous column
with the same message.

Typical use::

    tree = parse_sqlite(sql)
    problems = analyse(tree, SchemaNames(schema)) if tree is not None else []
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope

from kgsql.db.connect import SPATIALITE_SYSTEM_TABLES
from kgsql.schema.model import Column, DatabaseSchema, Table

__all__ = [
    "PREFIX_SEPARATOR",
    "ROWID_NAMES",
    "SYSTEM_TABLES",
    "Problem",
    "SchemaNames",
    "Source",
    "SourceCache",
    "analyse",
    "is_natural",
    "parse_sql",
    "parse_sqlite",
    "columns_of",
    "graph_name",
    "output_names",
    "own_name",
    "prefixed_name",
    "reads_no_table",
    "resolve",
    "resolved_columns",
    "schema_table",
    "scopes",
    "sources",
]

#: Tables every SQLite/SpatiaLite file may have that a user schema does not list.
SYSTEM_TABLES = frozenset({"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_sequence",
                           "sqlite_stat1", "sqlite_stat4"})
#: Implicit columns of every rowid table.
ROWID_NAMES = frozenset({"rowid", "oid", "_rowid_"})
#: Schemas whose tables the graph names without the schema: SQLite's attached files, PostgreSQL's default.
DEFAULT_SCHEMAS = frozenset({"main", "temp", "public"})


def graph_name(node: exp.Table) -> str:
    """The graph's name for a table reference: ``hr.staff`` for a table of a schema outside the search path
    (as the PostgreSQL reader names it), the bare name otherwise (``main.city`` is ``city``)."""
    db = node.db
    return f"{db}.{node.name}" if db and db.lower() not in DEFAULT_SCHEMAS else node.name


#: What separates a merged database's name from its table's (``kgsql.lab.wide_set --prefix``, dbt-style names).
PREFIX_SEPARATOR = "__"


def prefixed_name(db: str, table: str) -> str:
    """``table`` of database ``db`` in a schema that merges many databases: ``<db>__<table>``."""
    return f"{db}{PREFIX_SEPARATOR}{table}"


def own_name(table: str) -> str:
    """A table's name without its schema (``hr.staff``) or a merged database's prefix (``db__staff``)."""
    return table.rpartition(".")[2].rpartition(PREFIX_SEPARATOR)[2]


def schema_table(node: exp.Table, tables: dict[str, Table]) -> Table | None:
    """The table of ``tables`` (by lower-case name) that ``node`` names: ``hr.staff`` by its schema and
    name; ``public.city`` / ``main.city`` as ``city`` unless the graph holds it qualified."""
    db, name = node.db.lower(), node.name.lower()
    if db:
        found = tables.get(f"{db}.{name}")
        if found is not None or db not in DEFAULT_SCHEMAS:
            return found
    return tables.get(name)


def parse_sql(sql: str, dialect: str = "sqlite") -> exp.Expression | None:
    """The sqlglot tree of ``sql`` in ``dialect`` (sqlglot's name), or None when it does not parse."""
    try:
        return sqlglot.parse_one(sql, read=dialect)
    except (SqlglotError, RecursionError, ValueError):
        return None


def parse_sqlite(sql: str) -> exp.Expression | None:
    """The sqlglot tree of ``sql`` (SQLite dialect), or None when it does not parse."""
    return parse_sql(sql, "sqlite")


def reads_no_table(tree: exp.Expression | None) -> bool:
    """Whether a parsed query names no table at all (``SELECT 1``, ``SELECT '南京市'``): a small model sometimes
    answers the question itself instead of looking the answer up. False for None (a query that does not parse
    is judged by running it)."""
    return isinstance(tree, exp.Query) and next(tree.find_all(exp.Table), None) is None


def scopes(tree: exp.Expression) -> list[Scope]:
    """sqlglot's scopes of ``tree``, innermost first; [] when sqlglot cannot build them."""
    try:
        return list(traverse_scope(tree))
    except (SqlglotError, RecursionError, ValueError, KeyError, AttributeError):
        return []


class SchemaNames:
    """Case-insensitive view of the schema, as SQLite resolves names.

    ``allow_tables``: tables the file has but the schema does not list (views,
    say); SQLite's and SpatiaLite's system tables are always allowed.
    """

    def __init__(self, schema: DatabaseSchema, allow_tables: Iterable[str] = ()) -> None:
        self.schema = schema
        self.tables: dict[str, Table] = {t.name.lower(): t for t in schema.tables}
        self.columns: dict[str, dict[str, Column]] = {
            t.name.lower(): {c.name.lower(): c for c in t.columns} for t in schema.tables
        }
        self.allowed = {n.lower() for n in allow_tables} | SYSTEM_TABLES | SPATIALITE_SYSTEM_TABLES

    def real_table(self, table: str) -> str:
        t = self.tables.get(table.lower())
        return t.name if t else table


@dataclass
class Source:
    """One FROM/JOIN item of a scope: a schema table, a derived table/CTE, or unknown."""

    alias: str
    table: str | None = None  # schema table name (real spelling) when a base table
    columns: frozenset[str] | None = None  # lower-case output names; None = any (unknown, star)
    label: str = ""  # how a tip names it
    shown: tuple[str, ...] = ()  # its column names as spelt, for did-you-mean hints


def output_names(query: exp.Expression) -> list[str] | None:
    """Column names a CTE/derived table exposes; None when unknown (``*``, unnamed)."""
    holder = query.parent
    alias = holder.args.get("alias") if isinstance(holder, (exp.CTE, exp.Subquery)) else None
    if isinstance(alias, exp.TableAlias) and alias.columns:  # WITH n(x) AS ..., (...) AS d(y)
        return [c.name for c in alias.columns]
    if not isinstance(query, exp.Query):
        return None
    star = any(isinstance(e, exp.Star) or (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
               for e in query.selects)
    names = query.named_selects
    return None if star or not names else names


#: The key of :func:`sources` for a scope whose FROM items sqlglot cannot list: every name resolves in it.
UNLISTED = "*unlisted*"


def sources(scope: Scope, names: SchemaNames) -> dict[str, Source]:
    """The FROM items of ``scope`` by lower-case alias; one item of unknown columns when sqlglot cannot
    list them (an alias used twice, ``FROM event e JOIN expense e``), so nothing is flagged wrongly."""
    out: dict[str, Source] = {}
    try:
        selected = scope.selected_sources
    except (SqlglotError, KeyError, ValueError, AttributeError):
        return {UNLISTED: Source(UNLISTED, None, None, UNLISTED)}
    for alias, (_node, source) in selected.items():
        key = alias.lower()
        if isinstance(source, Scope):
            selects = output_names(source.expression)
            cols = None if selects is None else frozenset(s.lower() for s in selects)
            out[key] = Source(alias, None, cols, alias, tuple(s for s in selects or () if s))
        elif isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
            table = schema_table(source, names.tables)
            if table is not None:
                cols = frozenset(names.columns[table.name.lower()]) | ROWID_NAMES
                out[key] = Source(alias, table.name, cols, table.name, tuple(c.name for c in table.columns))
            else:  # a system table or one the schema does not list: its columns are unknown
                out[key] = Source(alias, None, None, source.name)
        else:  # a table-valued function or something sqlglot cannot name
            out[key] = Source(alias or "?", None, None, alias)
    return out


def columns_of(scope: Scope) -> list[exp.Column]:
    """The column references of ``scope``: sqlglot's ``scope.columns`` plus unqualified ones in
    HAVING, which sqlglot leaves out (they might name a SELECT alias; :func:`resolve` checks)."""
    found = list(scope.columns)
    if isinstance(scope.expression, exp.Select) and scope.expression.args.get("having") is not None:
        seen = {id(c) for c in found}
        for column in scope.expression.args["having"].find_all(exp.Column):
            if id(column) not in seen and column.find_ancestor(exp.Select) is scope.expression:
                found.append(column)
    return found


def is_natural(join: exp.Expression) -> bool:
    """A NATURAL join."""
    return bool(join.args.get("method")) and str(join.args["method"]).upper() == "NATURAL"


def _shared_columns(scope: Scope) -> tuple[set[str], bool]:
    """Columns in USING (...) lists, and whether a NATURAL join is present: never ambiguous in SQLite."""
    using: set[str] = set()
    natural = False
    if isinstance(scope.expression, exp.Select):
        for join in scope.expression.args.get("joins") or []:
            using.update(i.name.lower() for i in join.args.get("using") or [])
            natural = natural or is_natural(join)
    return using, natural


def _select_aliases(scope: Scope) -> set[str]:
    if not isinstance(scope.expression, exp.Select):
        return set()
    return {e.alias.lower() for e in scope.expression.expressions if isinstance(e, exp.Alias) and e.alias}


#: :func:`sources` per scope (by ``id``), shared by the lookups of one query.
SourceCache = dict[int, dict[str, Source]]


def resolve(column: exp.Column, scope: Scope, names: SchemaNames, cache: SourceCache) -> tuple[str, list[Source]]:
    """('ok'|'missing'|'ambiguous'|'unknown_qualifier', sources) for one column reference.

    Looks in the column's own scope first, then outwards (correlated
    subqueries), as SQLite does. For 'missing' the sources are the FROM items
    of the column's own scope (where it was meant to be).
    """
    qualifier = column.table.lower()
    name = column.name.lower()
    current: Scope | None = scope
    own: list[Source] = []
    while current is not None:
        srcs = cache.setdefault(id(current), sources(current, names))
        if UNLISTED in srcs:  # nothing known about this scope: nothing to flag
            return "ok", [srcs[UNLISTED]]
        if qualifier:
            src = srcs.get(qualifier)
            if src is not None:
                return ("ok" if src.columns is None or name in src.columns else "missing"), [src]
        else:
            having = [s for s in srcs.values() if s.columns is not None and name in s.columns]
            unknown = [s for s in srcs.values() if s.columns is None]
            using, natural = _shared_columns(current)
            if len(having) > 1 and name not in using and not natural:
                return "ambiguous", having
            if having or unknown:
                return "ok", having or unknown
            if current is scope:
                if name in _select_aliases(current):
                    return "ok", []
                own = list(srcs.values())
        current = current.parent
    return ("unknown_qualifier", []) if qualifier else ("missing", own)


def resolved_columns(tree: exp.Expression, names: SchemaNames, *,
                     innermost: bool = False) -> dict[int, tuple[str, Column]]:
    """Each column reference of ``tree`` (by node id) that resolves to one schema column: (its table, it).
    ``innermost``: a reference is read in the first scope that lists it (an outer scope's list may hold a
    subquery's columns too)."""
    found: dict[int, tuple[str, Column]] = {}
    cache: SourceCache = {}
    for scope in scopes(tree):
        for column in columns_of(scope):
            if innermost and id(column) in found:
                continue
            status, srcs = resolve(column, scope, names, cache)
            if status == "ok" and len(srcs) == 1 and srcs[0].table:
                col = names.columns.get(srcs[0].table.lower(), {}).get(column.name.lower())
                if col is not None:
                    found[id(column)] = (names.real_table(srcs[0].table), col)
    return found


@dataclass
class Problem:
    """One naming problem found in the query."""

    kind: str  # no_such_table, no_such_column, unknown_qualifier, table_not_in_from, ambiguous_column, quoted_string
    name: str  # the table or column as written
    tables: tuple[str, ...] = ()  # tables concerned (real names / CTE names)
    qualifier: str = ""
    aliases: tuple[str, ...] = ()  # aliases defined in the scope (unknown qualifiers)
    refs: tuple[str, ...] = ()  # "table.column" candidates in scope, for hints


def _unknown_tables(tree: exp.Expression, names: SchemaNames) -> list[Problem]:
    cte_names = {c.alias.lower() for c in tree.find_all(exp.CTE)}
    problems = []
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue
        low, db = table.name.lower(), table.db.lower()
        known = schema_table(table, names.tables) is not None or (
            db in ("", "main", "temp") and (low in cte_names or low in names.allowed))
        if not known:
            problems.append(Problem("no_such_table", ".".join(p for p in (table.db, table.name) if p)))
    return problems


def _is_dqs_string(column: exp.Column) -> bool:
    """A lone double-quoted name in a comparison: SQLite reads it as a string when no column matches."""
    ident = column.this
    if column.table or not (isinstance(ident, exp.Identifier) and ident.quoted):
        return False
    comparisons = (exp.EQ, exp.NEQ, exp.Like, exp.In, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Glob)
    return isinstance(column.parent, comparisons)


def analyse(tree: exp.Expression, names: SchemaNames) -> list[Problem]:
    """Every unknown table, unknown/ambiguous column and double-quoted string in the query."""
    problems = _unknown_tables(tree, names)
    cache: SourceCache = {}
    for scope in scopes(tree):
        srcs = cache.setdefault(id(scope), sources(scope, names))
        in_scope = tuple(f"{s.label}.{c}" for s in srcs.values() for c in s.shown)
        for column in columns_of(scope):
            if isinstance(column.this, exp.Star) or not column.name:
                continue
            if isinstance(scope.expression, exp.Select) and column.find_ancestor(exp.Select) is not scope.expression:
                continue  # a subquery's column: its own scope reports it
            if isinstance(scope.expression, exp.SetOperation) and not column.table:
                # ORDER BY of a UNION names the result columns of its first SELECT
                if column.name.lower() in {n.lower() for n in output_names(scope.expression) or ()}:
                    continue
            status, found = resolve(column, scope, names, cache)
            if status == "ok":
                continue
            if status == "ambiguous":
                problems.append(Problem("ambiguous_column", column.name, tuple(s.label for s in found)))
            elif status == "unknown_qualifier":
                table = names.tables.get(column.table.lower())
                if table is not None:
                    problems.append(Problem("table_not_in_from", column.name, (table.name,), column.table))
                else:
                    problems.append(Problem("unknown_qualifier", column.name, tuple(s.label for s in srcs.values()),
                                            column.table, tuple(s.alias for s in srcs.values()), in_scope))
            elif _is_dqs_string(column):
                problems.append(Problem("quoted_string", column.name))
            else:
                refs = tuple(f"{s.label}.{c}" for s in found for c in s.shown)
                problems.append(Problem("no_such_column", column.name, tuple(s.label for s in found if s.label),
                                        column.table, (), refs))
    return problems
