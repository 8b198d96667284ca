"""Names rule: unknown tables and columns, ambiguous columns, tables missing from FROM,
unknown qualifiers and double-quoted strings (SSpa §3.7's schema tips, and more).

SSpa handles three SQLite messages with fixed sentences; those are kept word
for word (:data:`TABLE_TIP`, :data:`COLUMN_TIP`, :data:`AMBIGUOUS_TIP`) and
any improvement (a "Did you mean ...?" hint) is a separate :class:`Tip`, so
the SSpa sentence stays exact. :func:`precheck` finds the same problems
statically, all at once (SQLite stops at the first), without running the
query; names are resolved by :mod:`kgsql.sql.names`.
"""
from __future__ import annotations

import difflib
from typing import Iterable, Sequence

from sqlglot import exp

from kgsql.correct.context import CheckContext, ErrorRule
from kgsql.correct.tip import Tip, quoted, unique
from kgsql.schema.model import DatabaseSchema
from kgsql.sql.names import Problem, SchemaNames, analyse, graph_name

__all__ = ["AMBIGUOUS_TIP", "COLUMN_TIP", "ON_ERROR", "TABLE_TIP", "precheck", "problem_tips", "static_tips"]

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
    return [Tip("suggestion", f"Did you mean {quoted(candidates, 'or')}?", candidates[0])]


def _table_hint(name: str, names: SchemaNames) -> list[Tip]:
    close = _close(name.rpartition(".")[2], [t.name for t in names.schema.tables])
    return _did_you_mean([c for _r, c in close[:2]])


def _column_hint(column: str, refs: Sequence[str], names: SchemaNames, *, exact_ok: bool = False) -> list[Tip]:
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


def problem_tips(p: Problem, names: SchemaNames) -> list[Tip]:
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
        qualify = QUALIFY_TIP.format(c=p.name, tables=quoted(p.tables), t=p.tables[0])
        return [Tip("ambiguous_column", AMBIGUOUS_TIP, p.name), Tip("suggestion", qualify, p.name)]
    if p.kind == "quoted_string":
        return [Tip("quoted_string", QUOTED_STRING_TIP.format(v=p.name), p.name)]
    return []  # pragma: no cover - every kind is handled above


# ---------------------------------------------------------------------------- static check


def static_tips(ctx: CheckContext, sql: str) -> list[Tip]:
    """SSpa's schema tips for every naming problem of ``sql``, without running it; none when it does not parse."""
    tree = ctx.tree(sql)
    if tree is None:
        return []
    names = ctx.names
    return unique(t for p in analyse(tree, names) for t in problem_tips(p, names))


def precheck(sql: str, schema: DatabaseSchema, *, allow_tables: Iterable[str] = ()) -> list[Tip]:
    """SSpa's schema tips for every unknown table/column and ambiguous column, without running ``sql``.

    SQL that does not parse gives no tips (SQLite's own syntax error is more
    precise). ``allow_tables``: tables the file has but the schema does not
    list (views, say); SQLite's and SpatiaLite's system tables are always
    allowed, with any columns.
    """
    return static_tips(CheckContext(schema, allow_tables=allow_tables), sql)


# ---------------------------------------------------------------------------- execution errors


def table_error(ctx: CheckContext, sql: str, name: str | None, message: str) -> list[Tip] | None:
    """SQLite's "no such table: t"; also PostgreSQL's "missing FROM-clause entry for table t", which names
    a qualifier no FROM item has (``cities.shape`` over ``FROM gdps``): SQLite's "no such column: t.c",
    answered the same way (join it; or the alias it should have been), not as a table that does not exist."""
    if not name:
        return None
    tree = ctx.tree(sql)
    qualifier = [p for p in (analyse(tree, ctx.names) if tree is not None else [])
                 if p.kind in ("unknown_qualifier", "table_not_in_from") and p.qualifier.lower() == name.lower()]
    if qualifier:
        return unique(t for p in qualifier for t in problem_tips(p, ctx.names))
    return problem_tips(Problem("no_such_table", name), ctx.names)


def _qualified(name: str) -> tuple[str, str]:
    """('T1', 'c') for SQLite's 'T1.c'; ('', 'c') for a bare name."""
    qualifier, _, column = name.rpartition(".")
    return qualifier.strip('"`[]'), column.strip('"`[]')


def column_error(ctx: CheckContext, sql: str, name: str | None, message: str) -> list[Tip] | None:
    """SSpa's column tip for SQLite's "no such column: [T1.]c"; the table comes from the query."""
    if not name:
        return None
    names = ctx.names
    qualifier, column = _qualified(name)
    tree = ctx.tree(sql)
    kinds = ("no_such_column", "unknown_qualifier", "table_not_in_from")
    matching = [p for p in (analyse(tree, names) if tree is not None else [])
                if p.kind in kinds and p.name.lower() == column.lower() and p.qualifier.lower() == qualifier.lower()]
    if matching:
        return unique(t for p in matching for t in problem_tips(p, names))
    # The analysis disagrees with SQLite (a name the schema lacks, SQL sqlglot reads differently):
    # fall back to the table the column was written with.
    table = _fallback_table(qualifier, tree)
    known = names.tables.get(table.lower()) if table else None
    refs = tuple(f"{known.name}.{c.name}" for c in known.columns) if known else ()
    return problem_tips(Problem("no_such_column", column, (table,) if table else (), qualifier, (), refs), names)


def _fallback_table(qualifier: str, tree: exp.Expression | None) -> str | None:
    """The table behind ``qualifier``, or the only table of the query."""
    if tree is None:
        return None
    by_alias: dict[str, str] = {}
    for t in tree.find_all(exp.Table):
        if isinstance(t.this, exp.Identifier):
            by_alias.setdefault((t.alias or t.name).lower(), graph_name(t))
    if qualifier:
        return by_alias.get(qualifier.lower(), qualifier)
    tables = list(dict.fromkeys(by_alias.values()))
    return tables[0] if len(tables) == 1 else None


def ambiguous_error(ctx: CheckContext, sql: str, name: str | None, message: str) -> list[Tip] | None:
    """SQLite's "ambiguous column name: c": SSpa's sentence plus which tables have it."""
    column = name or ""
    tree = ctx.tree(sql)
    for p in analyse(tree, ctx.names) if tree is not None and column else []:
        if p.kind == "ambiguous_column" and p.name.lower() == column.lower():
            return problem_tips(p, ctx.names)
    return [Tip("ambiguous_column", AMBIGUOUS_TIP, column or None)]


#: Error kinds (see kgsql.db.guard.ErrorKind) this rule answers.
ON_ERROR: dict[str, ErrorRule] = {
    "no_such_table": table_error,
    "no_such_column": column_error,
    "ambiguous_column": ambiguous_error,
}
