"""Schema tips for self-correction (SSpa §3.7), and the feedback kinds SSpa left out.

When a candidate query fails, the next prompt carries short sentences that
say what was wrong. SSpa handles three SQLite messages with fixed sentences;
those are kept word for word (:data:`TABLE_TIP`, :data:`COLUMN_TIP`,
:data:`AMBIGUOUS_TIP`) and any improvement (a "Did you mean ...?" hint) is a
separate :class:`Tip`, so the SSpa sentence stays exact. Added here:

* :func:`precheck`: the same tips found statically, for every problem at
  once (SQLite stops at the first), without running the query;
* unknown functions mapped back to the SpatiaLite name through the function
  KB's aliases, wrong argument counts answered with the KB signature, syntax
  errors quoting SQLite's token (plus hints for other dialects' syntax),
  timeouts (cross joins, index-friendly spatial filters);
* :func:`value_tips`: string literals that occur nowhere in their column,
  with the closest real values; :func:`empty_result_tip` for empty answers.

Names are resolved the way SQLite does (case-insensitive; a column is looked
up in its own SELECT's FROM items, then in enclosing SELECTs; select aliases,
USING/NATURAL columns and rowid count) by walking sqlglot's scopes. sqlglot's
own ``qualify`` is not used for this: it stops at the first problem and
reports an unknown and an ambiguous column with the same message.
"""
from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope

from kgsql.errors import KgsqlError, UnsafeSQLError
from kgsql.schema.model import Column, DatabaseSchema, Table

__all__ = [
    "AMBIGUOUS_TIP",
    "COLUMN_TIP",
    "TABLE_TIP",
    "Tip",
    "empty_result_tip",
    "precheck",
    "render_tips",
    "tips_from_error",
    "value_tips",
]

# ---------------------------------------------------------------------------- sentences

# SSpa §3.7, word for word (with ASCII quotes).
TABLE_TIP = "The table '{t}' does not exist in the database and should not be used."
COLUMN_TIP = "The column '{c}' does not exist in the table '{t}' and should not be used."
AMBIGUOUS_TIP = "Columns in multiple tables may have the same name, so ambiguity should be avoided."

#: A missing column whose table cannot be told.
COLUMN_TIP_NO_TABLE = "The column '{c}' does not exist in the database and should not be used."
NOT_IN_FROM_TIP = "The table '{t}' is not in the FROM clause; join it before using '{ref}'."
UNKNOWN_ALIAS_TIP = "The table or alias '{q}' is not defined in the query (defined: {known})."
QUALIFY_TIP = ("The column '{c}' exists in the tables {tables}; qualify it with its table name or alias, "
               "e.g. '{t}.{c}'.")
QUOTED_STRING_TIP = "Write string values in single quotes ('{v}'); double quotes are for column names."
UNSAFE_TIP = "The query was rejected ({reason}); write exactly one read-only SQLite SELECT statement."
OTHER_TIP = "SQLite reported an error: {message}; fix the query so that it runs."
FUNCTION_RENAMED_TIP = "The function '{name}' does not exist in {system}; use '{good}' instead: {call}"
FUNCTION_EQUIVALENT_TIP = "The function '{name}' does not exist in {system}; use {good} instead."
FUNCTION_UNKNOWN_TIP = "The function '{name}' does not exist in {system} and should not be used."
FUNCTION_NOT_LOADED_TIP = "The function '{name}' is not available: SpatiaLite is not loaded for this database."
FUNCTION_NOT_SPATIAL_TIP = "The function '{name}' does not exist in SQLite: this database has no spatial functions."
ARGUMENTS_TIP = "The function '{name}' was called with the wrong number of arguments{given}; {advice}"
SYNTAX_NEAR_TIP = 'There is a syntax error near "{token}"; write a single valid SQLite SELECT statement.'
SYNTAX_TOKEN_TIP = ('SQLite cannot read the token "{token}"; check quotes and brackets, and write a single '
                    "valid SQLite SELECT statement.")
SYNTAX_INCOMPLETE_TIP = "The query is incomplete (it ends too early); write a single complete SQLite SELECT statement."
SYNTAX_COMPOUND_TIP = "The SELECTs combined with UNION, INTERSECT or EXCEPT must return the same number of columns."
SYNTAX_OTHER_TIP = "SQLite reported a syntax error ({message}); write a single valid SQLite SELECT statement."
TIMEOUT_SPATIAL_TIP = (
    "The query took too long and was stopped; avoid cross joins (join tables on their key columns) and filter "
    "with cheap conditions before exact spatial functions, e.g. MbrIntersects(g1, g2) AND Intersects(g1, g2), "
    "or PtDistWithin(g1, g2, radius, 1) instead of computing Distance for every pair."
)
TIMEOUT_TIP = ("The query took too long and was stopped; avoid cross joins (join tables on their key columns) "
               "and filter rows as early as possible.")
CROSS_JOIN_TIP = "The tables {tables} are combined without any join condition (a cross join)."
EMPTY_RESULT_TIP = ("The query returned no rows; check the filter values against the value examples "
                    "(spelling, case, full names) and check that the join conditions are right.")

#: Tables every SQLite/SpatiaLite file may have that a user schema does not list.
_SYSTEM_TABLES = frozenset({"sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_sequence",
                            "sqlite_stat1", "sqlite_stat4"})
#: Implicit columns of every rowid table.
_ROWID_NAMES = frozenset({"rowid", "oid", "_rowid_"})

#: Functions of other SQL dialects that SQLite lacks -> what to write instead.
SQLITE_EQUIVALENTS: dict[str, str] = {
    "year": "strftime('%Y', d)",
    "month": "strftime('%m', d)",
    "day": "strftime('%d', d)",
    "datediff": "julianday(d1) - julianday(d2)",
    "date_part": "strftime(format, d)",
    "to_char": "strftime(format, d)",
    "getdate": "date('now')",
    "now": "datetime('now')",
    "curdate": "date('now')",
    "isnull": "ifnull(x, y)",
    "nvl": "ifnull(x, y)",
    "len": "length(x)",
    "char_length": "length(x)",
    "if": "iif(condition, x, y)",
    "left": "substr(x, 1, n)",
    "right": "substr(x, -n)",
    "position": "instr(x, y)",
    "locate": "instr(x, y)",
    "charindex": "instr(x, y)",
    "ceiling": "ceil(x)",
    "stddev": "a subquery (SQLite has no standard deviation)",
    "array_agg": "group_concat(x)",
    "string_agg": "group_concat(x, separator)",
    "listagg": "group_concat(x, separator)",
}

#: A few SQLite core signatures for wrong-argument-count tips.
SQLITE_SIGNATURES: dict[str, str] = {
    "substr": "substr(x, start, length)",
    "substring": "substr(x, start, length)",
    "round": "round(x, digits)",
    "strftime": "strftime(format, time, modifier, ...)",
    "instr": "instr(x, y)",
    "replace": "replace(x, from, to)",
    "ifnull": "ifnull(x, y)",
    "iif": "iif(condition, x, y)",
    "nullif": "nullif(x, y)",
    "length": "length(x)",
    "abs": "abs(x)",
    "upper": "upper(x)",
    "lower": "lower(x)",
    "trim": "trim(x) or trim(x, characters)",
    "julianday": "julianday(time, modifier, ...)",
    "date": "date(time, modifier, ...)",
    "count": "count(x) or count(*)",
    "sum": "sum(x)",
    "avg": "avg(x)",
}


@dataclass(frozen=True)
class Tip:
    """One sentence for the next prompt; ``kind`` says which check produced it."""

    kind: str
    text: str
    name: str | None = None


def render_tips(tips: Iterable[Tip]) -> str:
    """One sentence per line, duplicates dropped, first-seen order kept."""
    seen: dict[str, None] = {}
    for tip in tips:
        text = tip.text.strip()
        if text:
            seen.setdefault(text, None)
    return "\n".join(seen)


def _unique(tips: Iterable[Tip]) -> list[Tip]:
    out: dict[str, Tip] = {}
    for t in tips:
        out.setdefault(t.text, t)
    return list(out.values())


def _quoted(items: Sequence[str], last: str = "and") -> str:
    """'a', 'b' and 'c' (items are quoted unless they already are)."""
    q = [i if i.startswith("'") else f"'{i}'" for i in items]
    return q[0] if len(q) == 1 else ", ".join(q[:-1]) + f" {last} " + q[-1]


# ---------------------------------------------------------------------------- name resolution


def _parse(sql: str) -> exp.Expression | None:
    """The sqlglot tree of ``sql`` (SQLite dialect), or None when it does not parse."""
    try:
        return sqlglot.parse_one(sql, read="sqlite")
    except (SqlglotError, RecursionError, ValueError):
        return None


def _scopes(tree: exp.Expression) -> list[Scope]:
    try:
        return list(traverse_scope(tree))
    except (SqlglotError, RecursionError, ValueError, KeyError, AttributeError):
        return []


class _Names:
    """Case-insensitive view of the schema, as SQLite resolves names."""

    def __init__(self, schema: DatabaseSchema, allow_tables: Iterable[str] = ()) -> None:
        from kgsql.ingest.reader import SPATIALITE_SYSTEM_TABLES

        self.schema = schema
        self.tables: dict[str, Table] = {t.name.lower(): t for t in schema.tables}
        self.columns: dict[str, dict[str, Column]] = {
            t.name.lower(): {c.name.lower(): c for c in t.columns} for t in schema.tables
        }
        self.allowed = {n.lower() for n in allow_tables} | _SYSTEM_TABLES | SPATIALITE_SYSTEM_TABLES

    def real_table(self, table: str) -> str:
        t = self.tables.get(table.lower())
        return t.name if t else table


@dataclass
class _Source:
    """One FROM/JOIN item of a scope: a schema table, a derived table/CTE, or unknown."""

    alias: str
    table: str | None = None  # schema table name (real spelling) when a base table
    columns: frozenset[str] | None = None  # lower-case output names; None = any (unknown, star)
    label: str = ""  # how a tip names it
    shown: tuple[str, ...] = ()  # its column names as spelt, for did-you-mean hints


def _output_names(query: exp.Expression) -> list[str] | None:
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


def _sources(scope: Scope, names: _Names) -> dict[str, _Source]:
    out: dict[str, _Source] = {}
    for alias, (_node, source) in scope.selected_sources.items():
        key = alias.lower()
        if isinstance(source, Scope):
            selects = _output_names(source.expression)
            cols = None if selects is None else frozenset(s.lower() for s in selects)
            out[key] = _Source(alias, None, cols, alias, tuple(s for s in selects or () if s))
        elif isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
            table = names.tables.get(source.name.lower())
            if table is not None:
                cols = frozenset(names.columns[table.name.lower()]) | _ROWID_NAMES
                out[key] = _Source(alias, table.name, cols, table.name, tuple(c.name for c in table.columns))
            else:  # a system table or one the schema does not list: its columns are unknown
                out[key] = _Source(alias, None, None, source.name)
        else:  # a table-valued function or something sqlglot cannot name
            out[key] = _Source(alias or "?", None, None, alias)
    return out


def _is_natural(join: exp.Expression) -> bool:
    return bool(join.args.get("method")) and str(join.args["method"]).upper() == "NATURAL"


def _shared_columns(scope: Scope) -> tuple[set[str], bool]:
    """Columns in USING (...) lists, and whether a NATURAL join is present: never ambiguous in SQLite."""
    using: set[str] = set()
    natural = False
    if isinstance(scope.expression, exp.Select):
        for join in scope.expression.args.get("joins") or []:
            using.update(i.name.lower() for i in join.args.get("using") or [])
            natural = natural or _is_natural(join)
    return using, natural


def _select_aliases(scope: Scope) -> set[str]:
    if not isinstance(scope.expression, exp.Select):
        return set()
    return {e.alias.lower() for e in scope.expression.expressions if isinstance(e, exp.Alias) and e.alias}


_SourceCache = dict[int, dict[str, _Source]]


def _resolve(column: exp.Column, scope: Scope, names: _Names, cache: _SourceCache) -> tuple[str, list[_Source]]:
    """('ok'|'missing'|'ambiguous'|'unknown_qualifier', sources) for one column reference.

    Looks in the column's own scope first, then outwards (correlated
    subqueries), as SQLite does. For 'missing' the sources are the FROM items
    of the column's own scope (where it was meant to be).
    """
    qualifier = column.table.lower()
    name = column.name.lower()
    current: Scope | None = scope
    own: list[_Source] = []
    while current is not None:
        srcs = cache.setdefault(id(current), _sources(current, names))
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


@dataclass
class _Problem:
    """One naming problem found in the query."""

    kind: str  # no_such_table, no_such_column, unknown_qualifier, table_not_in_from, ambiguous_column, quoted_string
    name: str  # the table or column as written
    tables: tuple[str, ...] = ()  # tables concerned (real names / CTE names)
    qualifier: str = ""
    aliases: tuple[str, ...] = ()  # aliases defined in the scope (unknown qualifiers)
    refs: tuple[str, ...] = ()  # "table.column" candidates in scope, for hints


def _unknown_tables(tree: exp.Expression, names: _Names) -> list[_Problem]:
    cte_names = {c.alias.lower() for c in tree.find_all(exp.CTE)}
    problems = []
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue
        low, db = table.name.lower(), table.db.lower()
        known = low in names.tables or low in cte_names or low in names.allowed
        if (db and db not in ("main", "temp")) or not known:
            problems.append(_Problem("no_such_table", ".".join(p for p in (table.db, table.name) if p)))
    return problems


def _is_dqs_string(column: exp.Column) -> bool:
    """A lone double-quoted name in a comparison: SQLite reads it as a string when no column matches."""
    ident = column.this
    if column.table or not (isinstance(ident, exp.Identifier) and ident.quoted):
        return False
    comparisons = (exp.EQ, exp.NEQ, exp.Like, exp.In, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Glob)
    return isinstance(column.parent, comparisons)


def _analyse(tree: exp.Expression, names: _Names) -> list[_Problem]:
    """Every unknown table, unknown/ambiguous column and double-quoted string in the query."""
    problems = _unknown_tables(tree, names)
    cache: _SourceCache = {}
    for scope in _scopes(tree):
        srcs = cache.setdefault(id(scope), _sources(scope, names))
        in_scope = tuple(f"{s.label}.{c}" for s in srcs.values() for c in s.shown)
        for column in scope.columns:
            if isinstance(column.this, exp.Star) or not column.name:
                continue
            if isinstance(scope.expression, exp.Select) and column.find_ancestor(exp.Select) is not scope.expression:
                continue  # a subquery's column: its own scope reports it
            if isinstance(scope.expression, exp.SetOperation) and not column.table:
                # ORDER BY of a UNION names the result columns of its first SELECT
                if column.name.lower() in {n.lower() for n in _output_names(scope.expression) or ()}:
                    continue
            status, found = _resolve(column, scope, names, cache)
            if status == "ok":
                continue
            if status == "ambiguous":
                problems.append(_Problem("ambiguous_column", column.name, tuple(s.label for s in found)))
            elif status == "unknown_qualifier":
                table = names.tables.get(column.table.lower())
                if table is not None:
                    problems.append(_Problem("table_not_in_from", column.name, (table.name,), column.table))
                else:
                    problems.append(_Problem("unknown_qualifier", column.name, tuple(s.label for s in srcs.values()),
                                             column.table, tuple(s.alias for s in srcs.values()), in_scope))
            elif _is_dqs_string(column):
                problems.append(_Problem("quoted_string", column.name))
            else:
                refs = tuple(f"{s.label}.{c}" for s in found for c in s.shown)
                problems.append(_Problem("no_such_column", column.name, tuple(s.label for s in found if s.label),
                                         column.table, (), refs))
    return problems


# ---------------------------------------------------------------------------- did-you-mean hints


def _close(word: str, options: Iterable[str], cutoff: float = 0.6) -> list[tuple[float, str]]:
    """(similarity, option) pairs, best first; containment counts as close."""
    w = word.lower()
    scored = []
    for opt in options:
        o = opt.lower()
        ratio = difflib.SequenceMatcher(None, w, o).ratio()
        if len(w) >= 3 and len(o) >= 3 and (w in o or o in w):
            ratio = max(ratio, 0.8)
        if ratio >= cutoff:
            scored.append((ratio, opt))
    return sorted(scored, key=lambda p: (-p[0], p[1]))


def _did_you_mean(candidates: Sequence[str]) -> list[Tip]:
    if not candidates:
        return []
    return [Tip("suggestion", f"Did you mean {_quoted(candidates, 'or')}?", candidates[0])]


def _table_hint(name: str, names: _Names) -> list[Tip]:
    close = _close(name.rpartition(".")[2], [t.name for t in names.schema.tables])
    return _did_you_mean([c for _r, c in close[:2]])


def _column_hint(column: str, refs: Sequence[str], names: _Names, *, exact_ok: bool = False) -> list[Tip]:
    """Close names among the columns in scope (``refs``: "table.column") first, then the
    same name in another table, then close names elsewhere.

    ``exact_ok``: the name itself is fine in scope (only its qualifier was
    wrong), so suggest it there too.
    """
    low = column.lower()
    in_scope = {r.rpartition(".")[0].lower() for r in refs}
    inside = [(ratio, r) for r in refs for ratio, _c in _close(column, [r.rpartition(".")[2]])
              if exact_ok or r.rpartition(".")[2].lower() != low]
    same_name: list[tuple[float, str]] = []
    elsewhere: list[tuple[float, str]] = []
    for t in names.schema.tables:
        if t.name.lower() in in_scope:
            continue
        for ratio, c in _close(column, [c.name for c in t.columns]):
            if c.lower() == low:
                same_name.append((ratio, f"{t.name}.{c}"))
            elif ratio >= 0.75:
                elsewhere.append((ratio, f"{t.name}.{c}"))
    for group in (inside, same_name, elsewhere):
        if group:
            group.sort(key=lambda p: (-p[0], p[1]))
            return _did_you_mean(list(dict.fromkeys(c for _r, c in group))[:2])
    return []


def _problem_tips(p: _Problem, names: _Names) -> list[Tip]:
    """The tips for one problem (shared by the static check and the error path)."""
    if p.kind == "no_such_table":
        return [Tip("no_such_table", TABLE_TIP.format(t=p.name), p.name)] + _table_hint(p.name, names)
    if p.kind == "no_such_column":
        if p.tables:
            tips = [Tip("no_such_column", COLUMN_TIP.format(c=p.name, t=t), p.name) for t in p.tables]
        else:
            tips = [Tip("no_such_column", COLUMN_TIP_NO_TABLE.format(c=p.name), p.name)]
        return tips + _column_hint(p.name, p.refs, names)
    ref = f"{p.qualifier}.{p.name}"
    if p.kind == "table_not_in_from":
        return [Tip("no_such_column", NOT_IN_FROM_TIP.format(t=p.tables[0], ref=ref), ref)]
    if p.kind == "unknown_qualifier":
        known = ", ".join(f"'{a}'" for a in p.aliases) or "none"
        return ([Tip("no_such_column", UNKNOWN_ALIAS_TIP.format(q=p.qualifier, known=known), ref)]
                + _column_hint(p.name, p.refs, names, exact_ok=True))
    if p.kind == "ambiguous_column":
        qualify = QUALIFY_TIP.format(c=p.name, tables=_quoted(p.tables), t=p.tables[0])
        return [Tip("ambiguous_column", AMBIGUOUS_TIP, p.name), Tip("suggestion", qualify, p.name)]
    if p.kind == "quoted_string":
        return [Tip("quoted_string", QUOTED_STRING_TIP.format(v=p.name), p.name)]
    return []  # pragma: no cover - every kind is handled above


# ---------------------------------------------------------------------------- static check


def precheck(sql: str, schema: DatabaseSchema, *, allow_tables: Iterable[str] = ()) -> list[Tip]:
    """SSpa's schema tips for every unknown table/column and ambiguous column, without running ``sql``.

    SQL that does not parse gives no tips (SQLite's own syntax error is more
    precise). ``allow_tables``: tables the file has but the schema does not
    list (views, say); SQLite's and SpatiaLite's system tables are always
    allowed, with any columns.
    """
    tree = _parse(sql)
    if tree is None:
        return []
    names = _Names(schema, allow_tables)
    return _unique(t for p in _analyse(tree, names) for t in _problem_tips(p, names))


# ---------------------------------------------------------------------------- execution errors


def tips_from_error(error: BaseException, sql: str, schema: DatabaseSchema, *,
                    dialect: str = "spatialite") -> list[Tip]:
    """Tips for the next round from a failed execution of ``sql``.

    ``error`` is what :func:`kgsql.db.guard.execute_query` raised
    (``SQLQueryError``/``QueryTimeoutError``/``UnsafeSQLError``); other
    exceptions give one generic tip. ``dialect`` ("spatialite" or "sqlite")
    decides whether spatial function names are suggested.
    """
    if isinstance(error, UnsafeSQLError):
        return [Tip("unsafe", UNSAFE_TIP.format(reason=getattr(error, "reason", str(error))))]
    kind = getattr(error, "kind", None)
    message = getattr(error, "sqlite_message", None) or str(error)
    name = getattr(error, "name", None)
    names = _Names(schema)
    if kind == "no_such_table" and name:
        return _problem_tips(_Problem("no_such_table", name), names)
    if kind == "no_such_column" and name:
        return _column_error_tips(name, sql, names)
    if kind == "ambiguous_column":
        return _ambiguous_error_tips(name or "", sql, names)
    if kind == "no_such_function" and name:
        return _function_tips(name, dialect)
    if kind == "wrong_arguments" and name:
        return _argument_tips(name, sql, dialect)
    if kind == "syntax":
        return _syntax_tips(name, message, sql)
    if kind == "timeout":
        return _timeout_tips(sql, names, dialect)
    return [Tip("other", OTHER_TIP.format(message=message.strip().rstrip(".")))]


def _qualified(name: str) -> tuple[str, str]:
    """('T1', 'c') for SQLite's 'T1.c'; ('', 'c') for a bare name."""
    qualifier, _, column = name.rpartition(".")
    return qualifier.strip('"`[]'), column.strip('"`[]')


def _column_error_tips(message_name: str, sql: str, names: _Names) -> list[Tip]:
    """SSpa's column tip for SQLite's "no such column: [T1.]c"; the table comes from the query."""
    qualifier, column = _qualified(message_name)
    tree = _parse(sql)
    kinds = ("no_such_column", "unknown_qualifier", "table_not_in_from")
    matching = [p for p in (_analyse(tree, names) if tree is not None else [])
                if p.kind in kinds and p.name.lower() == column.lower() and p.qualifier.lower() == qualifier.lower()]
    if matching:
        return _unique(t for p in matching for t in _problem_tips(p, names))
    # The analysis disagrees with SQLite (a name the schema lacks, SQL sqlglot reads differently):
    # fall back to the table the column was written with.
    table = _fallback_table(qualifier, tree)
    known = names.tables.get(table.lower()) if table else None
    refs = tuple(f"{known.name}.{c.name}" for c in known.columns) if known else ()
    return _problem_tips(_Problem("no_such_column", column, (table,) if table else (), qualifier, (), refs), names)


def _fallback_table(qualifier: str, tree: exp.Expression | None) -> str | None:
    """The table behind ``qualifier``, or the only table of the query."""
    if tree is None:
        return None
    by_alias: dict[str, str] = {}
    for t in tree.find_all(exp.Table):
        if isinstance(t.this, exp.Identifier):
            by_alias.setdefault((t.alias or t.name).lower(), t.name)
    if qualifier:
        return by_alias.get(qualifier.lower(), qualifier)
    tables = list(dict.fromkeys(by_alias.values()))
    return tables[0] if len(tables) == 1 else None


def _ambiguous_error_tips(column: str, sql: str, names: _Names) -> list[Tip]:
    tree = _parse(sql)
    for p in _analyse(tree, names) if tree is not None and column else []:
        if p.kind == "ambiguous_column" and p.name.lower() == column.lower():
            return _problem_tips(p, names)
    return [Tip("ambiguous_column", AMBIGUOUS_TIP, column or None)]


def _dialect_name(dialect: str) -> str:
    return "SpatiaLite" if dialect.lower() == "spatialite" else "SQLite"


def _knowledge() -> Any:
    """The SpatiaLite function KB, or None when it cannot be loaded."""
    try:
        from kgsql.generate.spatial import SpatialKnowledge

        return SpatialKnowledge.load("spatialite")
    except (KgsqlError, OSError, ValueError):  # pragma: no cover - KB missing from a broken install
        return None


def _function_tips(name: str, dialect: str) -> list[Tip]:
    system = _dialect_name(dialect)
    kb = _knowledge()
    if kb is not None and dialect.lower() == "spatialite":
        f = kb.suggest(name)
        if f is not None and f.name.lower() != name.lower():
            tip = FUNCTION_RENAMED_TIP.format(name=name, system=system, good=f.name, call=kb.call_hint(f))
            return [Tip("no_such_function", tip, name)]
        if f is not None:
            return [Tip("no_such_function", FUNCTION_NOT_LOADED_TIP.format(name=name), name)]
    elif kb is not None and kb.function(name) is not None:
        return [Tip("no_such_function", FUNCTION_NOT_SPATIAL_TIP.format(name=name), name)]
    equivalent = SQLITE_EQUIVALENTS.get(name.lower())
    if equivalent:
        tip = FUNCTION_EQUIVALENT_TIP.format(name=name, system=system, good=equivalent)
        return [Tip("no_such_function", tip, name)]
    return [Tip("no_such_function", FUNCTION_UNKNOWN_TIP.format(name=name, system=system), name)]


def _argument_count(sql: str, name: str) -> int | None:
    """How many arguments the first call of ``name`` in ``sql`` has."""
    tree = _parse(sql)
    low = name.lower()
    for node in tree.find_all(exp.Func) if tree is not None else []:
        if isinstance(node, exp.Anonymous):
            if str(node.this).lower() == low:
                return len(node.expressions)
        elif low in {n.lower() for n in type(node).sql_names()} | {node.sql_name().lower()}:
            return sum(len(v) if isinstance(v, list) else 1 for v in node.args.values() if v is not None)
    return None


def _argument_tips(name: str, sql: str, dialect: str) -> list[Tip]:
    count = _argument_count(sql, name)
    given = f" ({count} given)" if count is not None else ""
    kb = _knowledge() if dialect.lower() == "spatialite" else None
    f = kb.function(name) if kb is not None else None
    if f is None:
        sig = SQLITE_SIGNATURES.get(name.lower())
        advice = f"call it as {sig}." if sig else "check how many arguments it takes."
        return [Tip("wrong_arguments", ARGUMENTS_TIP.format(name=name, given=given, advice=advice), name)]
    use = "call it as" if f.name.lower() == name.lower() else "use"
    returns = f", which returns {f.returns.rstrip('.')}" if f.returns else ""
    advice = f"{use} {f.signature}{returns}."
    tips = [Tip("wrong_arguments", ARGUMENTS_TIP.format(name=name, given=given, advice=advice), name)]
    note = next((v for k, v in kb.alias_notes.items() if k.lower() == name.lower()), None)
    if note:
        tips.append(Tip("suggestion", f"Note: {name} {note}", name))
    return tips


_STRING_OR_COMMENT = re.compile(r"'(?:[^']|'')*'|--[^\n]*|/\*.*?\*/", re.S)


def _syntax_tips(token: str | None, message: str, sql: str) -> list[Tip]:
    shown = (token or "").strip()[:40]
    if message.startswith("unrecognized token"):
        first = Tip("syntax", SYNTAX_TOKEN_TIP.format(token=shown), token)
    elif message == "incomplete input":
        first = Tip("syntax", SYNTAX_INCOMPLETE_TIP)
    elif message.startswith("SELECTs to the left and right"):
        first = Tip("syntax", SYNTAX_COMPOUND_TIP)
    elif token is not None:
        first = Tip("syntax", SYNTAX_NEAR_TIP.format(token=shown), token)
    else:
        first = Tip("syntax", SYNTAX_OTHER_TIP.format(message=message))
    return [first] + _foreign_syntax(sql)


def _foreign_syntax(sql: str) -> list[Tip]:
    """Hints for other dialects' syntax that SQLite rejects."""
    code = _STRING_OR_COMMENT.sub("''", sql)
    tips: list[Tip] = []
    top = re.search(r"\bSELECT\s+(?:DISTINCT\s+)?TOP\s*\(?\s*(\d+)", code, re.I)
    if top:
        tips.append(Tip("syntax", f"SQLite has no TOP; write LIMIT {top.group(1)} at the end of the query instead."))
    if "::" in code:
        tips.append(Tip("syntax", "SQLite has no '::' casts; use CAST(x AS type)."))
    if re.search(r"\bILIKE\b", code, re.I):
        tips.append(Tip("syntax", "SQLite has no ILIKE; LIKE already ignores the case of ASCII letters."))
    method = re.search(r"[\w\"\]`]\s*\.\s*(ST[A-Za-z_]+)\s*\(", code)
    if method:
        kb = _knowledge()
        f = kb.suggest(method.group(1)) if kb is not None else None
        instead = f"call it as a function, e.g. {f.signature}" if f else "call spatial functions as functions"
        tips.append(Tip("syntax", f"SpatiaLite has no method calls such as '.{method.group(1)}()'; {instead}."))
    if re.search(r"\bFETCH\s+(?:FIRST|NEXT)\b", code, re.I):
        tips.append(Tip("syntax", "SQLite has no FETCH FIRST; use LIMIT n."))
    return tips


def _timeout_tips(sql: str, names: _Names, dialect: str) -> list[Tip]:
    tips = [Tip("timeout", TIMEOUT_SPATIAL_TIP if dialect.lower() == "spatialite" else TIMEOUT_TIP)]
    tree = _parse(sql)
    for group in _cross_joins(tree, names) if tree is not None else []:
        tips.append(Tip("timeout", CROSS_JOIN_TIP.format(tables=_quoted(group))))
    return tips


def _join_conditions(select: exp.Select) -> list[exp.Expression]:
    conditions = [j.args["on"] for j in select.args.get("joins") or [] if j.args.get("on") is not None]
    if select.args.get("where") is not None:
        conditions.append(select.args["where"].this)
    return [p for c in conditions for p in (c.flatten() if isinstance(c, exp.And) else [c])]


def _cross_joins(tree: exp.Expression, names: _Names) -> list[list[str]]:
    """Per SELECT, its FROM items when no ON/USING/WHERE condition connects them all."""
    out: list[list[str]] = []
    cache: _SourceCache = {}
    for scope in _scopes(tree):
        select = scope.expression
        srcs = cache.setdefault(id(scope), _sources(scope, names)) if isinstance(select, exp.Select) else {}
        if len(srcs) < 2:
            continue
        group = {a: a for a in srcs}  # union-find over FROM items

        def root(x: str) -> str:
            while group[x] != x:
                x = group[x]
            return x

        def link(items: Iterable[str]) -> None:
            items = sorted(items)
            for other in items[1:]:
                group[root(other)] = root(items[0])

        first = next(iter(srcs))
        for join in select.args.get("joins") or []:
            if join.args.get("using") or _is_natural(join):  # joined to the items before it
                link({first, (join.this.alias_or_name or "").lower()} & set(group))
        for pred in _join_conditions(select):
            used = set()
            for col in pred.find_all(exp.Column):
                status, found = _resolve(col, scope, names, cache)
                used.update(s.alias.lower() for s in found if status == "ok" and s.alias.lower() in group)
            link(used)
        roots: dict[str, _Source] = {}
        for alias, src in srcs.items():
            roots.setdefault(root(alias), src)
        if len(roots) > 1:
            out.append([s.label if s.alias.lower() == s.label.lower() else f"{s.label} {s.alias}"
                        for s in roots.values()])
    return out


# ---------------------------------------------------------------------------- values


def _q_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _q_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _literal_filters(tree: exp.Expression, names: _Names) -> list[tuple[str, str, str, str]]:
    """(table, column, operator, text) for each ``col = 'text'`` / IN / LIKE on a schema column."""
    out: list[tuple[str, str, str, str]] = []
    cache: _SourceCache = {}
    for scope in _scopes(tree):
        for node in scope.expression.find_all(exp.EQ, exp.In, exp.Like):
            if isinstance(node, exp.In):
                pairs = [(node.this, e, "=") for e in node.expressions]
            elif isinstance(node, exp.Like):
                pairs = [(node.this, node.expression, "LIKE")]
            else:
                pairs = [(node.this, node.expression, "="), (node.expression, node.this, "=")]
            for col, lit, op in pairs:
                if not (isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string):
                    continue
                if col.find_ancestor(exp.Select) is not scope.expression:
                    continue
                status, found = _resolve(col, scope, names, cache)
                if status != "ok" or len(found) != 1 or found[0].table is None:
                    continue
                column = names.columns[found[0].table.lower()].get(col.name.lower())
                if column is not None and column.spatial is None:
                    out.append((found[0].table, column.name, op, lit.this))
    return list(dict.fromkeys(out))


def value_tips(sql: str, schema: DatabaseSchema, db_path: str | os.PathLike[str] | None, *,
               value_index: Any = None, max_checks: int = 8, timeout_s: float = 2.0) -> list[Tip]:
    """Tips for string literals the query compares with a column that never holds them.

    Each ``col = 'text'`` (or IN / LIKE) is checked with a one-row probe on
    the read-only database through the guard; a miss names the closest real
    values: from ``value_index`` (a :class:`kgsql.retrieve.values.ValueIndex`)
    when given, else by ``difflib`` over at most 2000 distinct values.
    Checks that fail (timeout, unreadable file) are skipped silently.
    """
    tree = _parse(sql) if db_path else None
    if tree is None:
        return []
    filters = _literal_filters(tree, _Names(schema))[:max_checks]
    if not filters:
        return []
    from kgsql.db.connect import open_database
    from kgsql.db.guard import execute_query

    try:
        conn = open_database(db_path, read_only=True)  # type: ignore[arg-type]
    except KgsqlError:
        return []
    tips: list[Tip] = []
    try:
        for table, column, op, text in filters:
            probe = f"SELECT 1 FROM {_q_ident(table)} WHERE {_q_ident(column)} {op} {_q_text(text)} LIMIT 1"
            try:
                if execute_query(conn, probe, timeout_s=timeout_s, max_rows=1).rows:
                    continue
                similar = _similar_values(conn, table, column, text, op, value_index, timeout_s)
            except KgsqlError:
                continue
            tips.append(_value_tip(table, column, op, text, similar))
    finally:
        conn.close()
    return tips


def _value_tip(table: str, column: str, op: str, text: str, similar: list[str]) -> Tip:
    shown = text if len(text) <= 60 else text[:57] + "..."
    where = f"{table}.{column}"
    if op == "LIKE":
        sentence = f"No value of the column '{where}' matches the pattern '{shown}'"
    else:
        sentence = f"The value '{shown}' does not occur in the column '{where}'"
    if len(similar) == 1:
        sentence += f"; the closest value is '{similar[0]}'."
    elif similar:
        sentence += f"; similar values are {', '.join(_quote_value(v) for v in similar)}."
    else:
        sentence += "."
    return Tip("value_not_found", sentence, where)


def _quote_value(value: str) -> str:
    """A cell value in single quotes, as the tips quote values."""
    return f"'{value}'"


def _similar_values(conn: Any, table: str, column: str, text: str, op: str, value_index: Any,
                    timeout_s: float) -> list[str]:
    """Up to 3 real values of ``table.column`` closest to ``text``: same text in another case first."""
    from kgsql.db.guard import execute_query

    needle = text.replace("%", " ").replace("_", " ").strip() if op == "LIKE" else text
    if not needle:
        return []
    if value_index is not None:
        try:
            matches = value_index.search(needle, top_k=50, min_score=0.5)
            found = [m.value for m in matches
                     if m.table.lower() == table.lower() and m.column.lower() == column.lower()]
            if found:
                return list(dict.fromkeys(found))[:3]
        except Exception:  # noqa: BLE001 - the index is an optional speed-up; fall back to scanning
            pass
    c = _q_ident(column)
    sql = f"SELECT DISTINCT {c} FROM {_q_ident(table)} WHERE typeof({c}) = 'text' LIMIT 2000"
    values = [str(r[0]) for r in execute_query(conn, sql, timeout_s=timeout_s, max_rows=2000).rows]
    low = needle.lower()
    same = [v for v in values if v.lower() == low]
    if same:
        return same[:3]
    scored = []
    for v in values:
        ratio = difflib.SequenceMatcher(None, low, v.lower()).ratio()
        if len(low) >= 3 and (low in v.lower() or v.lower() in low):
            ratio = max(ratio, 0.85)
        if ratio >= 0.6:
            scored.append((ratio, v))
    scored.sort(key=lambda p: (-p[0], p[1]))
    return [v for _r, v in scored[:3]]


# ---------------------------------------------------------------------------- empty results

_YES_NO = re.compile(r"^\s*(is|are|was|were|does|do|did|has|have|had|can|could|will)\b|\bwhether\b", re.I)


def empty_result_tip(question: str, sql: str = "", result: Any = None) -> Tip | None:
    """A soft tip when the query found nothing but the question expects rows.

    ``result`` (a QueryResult or a list of rows) is optional; one row of only
    NULLs (an aggregate over no rows) counts as empty. Yes/no questions ("Is
    there ...", "Does ...") may rightly have an empty answer, so they get none.
    ``sql`` is accepted for callers that pass it; the tip does not depend on it.
    """
    if result is not None:
        rows = getattr(result, "rows", result)
        if any(any(v is not None for v in row) for row in rows):
            return None
    if _YES_NO.search(question or ""):
        return None
    return Tip("empty_result", EMPTY_RESULT_TIP)
